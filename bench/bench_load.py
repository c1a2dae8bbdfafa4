# ruff: noqa: E501
"""A fresh page load per page in Chromium: navigation -> the page stops changing (a
benchmark, not a test; issue 8 asks for first loads under 2 s).

    python bench/bench_load.py [--repeats 3] [--pages qkv,softmax] [--cached] [--serve]
                               [--lang zh] [--present] [--write]

One server; each page is opened once to warm it (a real model loads on its page's first
visit: that cold load is reported too), then ``--repeats`` times in a brand-new browser
context (a new session, as a student opening a prepared link). ``--cached``: each load is a
new tab (a new session) of one browser that has opened the app before, so Streamlit's
frontend (~5 MB of JavaScript, served ``immutable``, cached for a year) comes from the
browser's cache, as for every link after a student's first one. A load ends at the last DOM
change of the main area once the script has finished and nothing changed for 150 ms
(the same rule as ``$LAB_TOOLS/lab_bench.py``); the first chart drawn (the moment a
student sees the page's title and its first figure) is reported too. 1920×1080, English
(``--lang zh``: Chinese; ``--present``: presenter mode, as a lecturer's prepared link).

The one-heatmap reference page of ``bench_step.py`` (with a title) is loaded the same way
in the same run: its time is what Streamlit's frontend costs on this machine before any
page of ours adds to it. Each load is split at the first websocket message (the frontend
is up and connected) and the last one (the script has finished).

``--serve``: our pages through the class recipe, ``deploy/serve --replicas 1`` (nginx in
front of one replica, sending Streamlit's ~130 frontend files itself, gzipped), instead of
a bare ``streamlit run``; the reference stays a bare server.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_step import QUIET, REF_SRC, free_port, start  # noqa: E402
from common import chromium  # noqa: E402

from ui.pages import PAGES  # noqa: E402

HEADING = "## app: fresh page load in Chromium"
RESULTS = ROOT / "bench" / "RESULTS.md"
SERVE = ROOT / "deploy" / "serve"

# The websocket hooks of bench_step.INIT_JS, with a lighter observer: only added and removed
# nodes, and a callback that just notes the time. Recording every attribute change of every
# chart's SVG cost this tab about a second of main-thread time per load (a CPU profile),
# which is not what a student's browser does.
INIT_JS = r"""
window.__d = {msgs: [], lastMut: 0, chart: 0};
const Orig = window.WebSocket;
window.WebSocket = function (...a) {
  const ws = new Orig(...a);
  ws.addEventListener('message', () => window.__d.msgs.push(performance.now()));
  return ws;
};
window.WebSocket.prototype = Orig.prototype;
Object.assign(window.WebSocket, Orig);
const CHART = "[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg.marks";
new MutationObserver(() => {
  const d = window.__d, now = performance.now();
  d.lastMut = now;
  if (!d.chart && document.querySelector(CHART)) d.chart = now;  // the first chart on screen
}).observe(document, {subtree: true, childList: true});
"""

LOADED_JS = r"""
(q) => {
  const d = window.__d;
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const main = document.querySelector("[data-testid='stMain']");
  if (!d.msgs.length || !main || !main.querySelector('h1')) return false;
  if (main.querySelector("[data-stale='true'], [data-testid='stSkeleton']")) return false;
  if (performance.now() - d.lastMut < q || performance.now() - d.msgs[d.msgs.length - 1] < q) return false;
  return [d.msgs[0], d.msgs[d.msgs.length - 1], d.lastMut, d.chart];
}
"""


def _context(browser):
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    ctx.add_init_script(INIT_JS)
    return ctx


def load_ms(browser, url: str, cached=None) -> tuple[float, float, float, float]:
    """Milliseconds from navigation start to the first websocket message, the last one,
    the last change of the main area, and the first chart drawn (what a student sees
    first): in a new browser context, or in a new tab of the context ``cached``."""
    ctx = cached or _context(browser)
    page = ctx.new_page()
    page.goto(url, wait_until="commit")
    first, last, done, chart = page.wait_for_function(
        LOADED_JS, arg=QUIET, timeout=300_000, polling=20
    ).json_value()
    page.close()
    if cached is None:
        ctx.close()
    return float(first), float(last), max(float(last), float(done)), float(chart)


def _measure(browser, name: str, link: str, repeats: int, cached: bool) -> tuple:
    """The page's first visit, then the median and max of ``repeats`` fresh sessions, each
    as (first message, last message, done, first chart) in ms; the medians are per column."""
    ctx = _context(browser) if cached else None
    cold = load_ms(browser, link, ctx)
    warm = [load_ms(browser, link, ctx) for _ in range(repeats)]
    if ctx is not None:
        ctx.close()
    med = tuple(statistics.median(col) for col in zip(*warm, strict=True))
    worst = max(done for _, _, done, _ in warm)
    print(
        f"{name:13s} first visit {cold[2]:6.0f} ms | fresh session median {med[2]:6.0f} "
        f"(connected {med[0]:5.0f}, first chart {med[3]:5.0f}, script done {med[1]:5.0f}) "
        f"max {worst:6.0f} ms",
        flush=True,
    )
    return name, cold[2], med, worst


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pages", default="")
    parser.add_argument("--cached", action="store_true")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--present", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    wanted = [p for p in args.pages.split(",") if p]
    pages = [p for p in PAGES if not wanted or p.id in wanted]
    tmp = Path(tempfile.gettempdir()) / "bench_load"
    tmp.mkdir(exist_ok=True)
    (tmp / "ref_app.py").write_text('import streamlit as st\n\nst.title("reference")\n' + REF_SRC)
    where = ["--port", str(free_port()), "--run-dir", str(tmp / "deploy")]
    if args.serve:
        subprocess.run(
            [str(SERVE), "--replicas", "1", *where], cwd=ROOT, check=True, stdout=subprocess.DEVNULL
        )
        proc, url = None, f"http://127.0.0.1:{where[1]}/"
    else:
        proc, url = start(ROOT, "dashboard.py")
    ref, ref_url = start(tmp, "ref_app.py")
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            rows.append(_measure(browser, "reference", ref_url, args.repeats, args.cached))
            for info in pages:
                query = f"lang={args.lang}" + ("&present=1" if args.present else "")
                link = f"{url.rstrip('/')}{info.url_path}?{query}"
                rows.append(_measure(browser, info.id, link, args.repeats, args.cached))
            browser.close()
    finally:
        if proc is None:
            subprocess.run([str(SERVE), "stop", *where], cwd=ROOT, check=True)
        else:
            proc.terminate()
        ref.terminate()
    ref_ms = rows[0][2][2]
    table = "\n".join(
        [
            "| page | first visit after start, ms | fresh session: connected, ms | script done, ms "
            "| first chart, ms | loaded, ms | × reference | max, ms | under 2 s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|",
            *(
                f"| {p} | {c:.0f} | {m[0]:.0f} | {m[1]:.0f} | {m[3]:.0f} | {m[2]:.0f} "
                f"| {m[2] / ref_ms:.2f} "
                f"| {x:.0f} | {'yes' if x < 2000 else 'NO'} |"
                for p, c, m, x in rows
            ),
        ]
    )
    machine = (
        f"{os.cpu_count()} cores, 1-min load average {os.getloadavg()[0]:.1f} when written, "
        f"{args.repeats} new sessions per page, "
        + ("our pages through deploy/serve (nginx, 1 replica), " if args.serve else "")
        + ("in Chinese, " if args.lang == "zh" else "")
        + ("in presenter mode, " if args.present else "")
        + (
            "each a new tab of a browser with the app cached"
            if args.cached
            else "each in a new browser context (nothing cached)"
        )
    )
    print(table, machine, sep="\n")
    if args.write:
        heading = HEADING + (" through deploy/serve" if args.serve else "")
        heading += ", the app in the browser's cache" if args.cached else ""
        heading += ", in Chinese" if args.lang == "zh" else ""
        heading += ", presenter mode" if args.present else ""
        section = f"{heading}\n\n{machine}\n\n{table}\n"
        text = RESULTS.read_text()
        pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
        text = pattern.sub(section + "\n", text) if pattern.search(text) else text + "\n" + section
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
