# ruff: noqa: E501
"""Where a slider step's time goes, per page (a diagnostic, not a test).

    python bench/bench_step.py softmax qkv [--presses 10] [--slider 0]

Opens each page in Chromium (1920×1080, English), presses the ``--slider``-th slider of the
main area like ``$LAB_TOOLS/lab_bench.py`` does, and splits each step into:

* ``server``: key press -> the last websocket message of the rerun (script finished);
* ``client``: that message -> the last DOM change in the main area or the end of the last
  long main-thread task, whichever is later (a canvas chart redraws without a DOM change);
* ``embeds``: Vega views created from scratch on that step (a changed spec: compile and
  render again), against ``views`` drawn (a same-spec chart only swaps its data);
* ``kB``: websocket bytes received for the step (the rerun's deltas);
* ``msgs``: websocket messages received for the step (one per element sent, plus a few);
* ``main``: the tab's main-thread task time for the step (Chrome's ``TaskDuration``: less
  bent by other load on the machine than the wall times above).

A one-heatmap reference page (the same one lab_bench.py uses) runs alongside.
"""

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import chromium, press_rounds

ROOT = Path(__file__).resolve().parents[1]
QUIET = 150  # ms without a DOM change in the main area = done (as lab_bench.py)

REF_SRC = """\
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

n = st.slider("n", 1, 6, 1)
st.markdown(f"value n={n}")
rng = np.random.default_rng(n)
m = rng.random((6, 6))
df = pd.DataFrame([(i, j, float(m[i, j])) for i in range(6) for j in range(6)],
                  columns=["row", "col", "w"])
base = alt.Chart(df).encode(x=alt.X("col:O"), y=alt.Y("row:O"))
heat = base.mark_rect().encode(color=alt.Color("w:Q", scale=alt.Scale(scheme="viridis")))
text = base.mark_text(baseline="middle").encode(text=alt.Text("w:Q", format=".2f"))
st.altair_chart(heat + text)
"""

INIT_JS = r"""
window.__d = {kd: null, msgs: [], bytes: 0, lastMut: 0, embeds: 0, lastBusy: 0};
// A canvas chart draws without changing the DOM: the end of the last long task (>= 50 ms of
// main-thread work: Vega's dataflow and drawing) after the key press counts as a change too.
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__d.lastBusy = Math.max(window.__d.lastBusy, e.startTime + e.duration);
}).observe({type: 'longtask'});
window.addEventListener('keydown', () => { if (window.__d.kd === null) window.__d.kd = performance.now(); }, true);
const Orig = window.WebSocket;
window.WebSocket = function (...a) {
  const ws = new Orig(...a);
  ws.addEventListener('message', (e) => {
    window.__d.msgs.push(performance.now());
    window.__d.bytes += (e.data.byteLength || e.data.size || e.data.length || 0);
  });
  return ws;
};
window.WebSocket.prototype = Orig.prototype;
Object.assign(window.WebSocket, Orig);
new MutationObserver((muts) => {
  const now = performance.now();
  for (const m of muts) {
    const el = m.target;
    if (el.closest && el.closest("[data-testid='stMain']")) window.__d.lastMut = now;
    for (const n of m.addedNodes) {
      if (n.nodeType === 1 && (n.matches('canvas, svg.marks') || (n.querySelector && n.querySelector('canvas.marks, svg.marks')))) window.__d.embeds += 1;
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""

DONE_JS = r"""
(q) => {
  const d = window.__d;
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (d.kd === null || !d.msgs.length) return false;
  const main = document.querySelector("[data-testid='stMain']");
  if (!main || main.querySelector("[data-stale='true']")) return false;
  const last = Math.max(d.lastMut, d.lastBusy);
  if (performance.now() - last < q || performance.now() - d.msgs[d.msgs.length - 1] < q) return false;
  return [d.kd, d.msgs[d.msgs.length - 1], last, d.embeds, d.bytes,
          document.querySelectorAll("[data-testid='stMain'] .vega-embed").length, d.msgs.length];
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cwd: Path, script: str, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    options = [f"--server.port={port}", "--server.address=127.0.0.1", "--server.headless=true"]
    options += ["--browser.gatherUsageStats=false", "--server.fileWatcherType=none", *extra]
    command = [sys.executable, "-m", "streamlit", "run", script, *options]
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}_stcore/health", timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{script} did not start")


class Probe:
    """One open page and its slider."""

    def __init__(self, browser, url: str, slider: int) -> None:
        self.ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
        self.ctx.add_init_script(INIT_JS)
        self.page = self.ctx.new_page()
        self.cdp = self.ctx.new_cdp_session(self.page)
        self.cdp.send("Performance.enable")
        self.page.goto(url)
        self.page.wait_for_selector(
            "[data-testid='stMain'] [data-testid='stSlider']", timeout=300_000
        )
        self.page.wait_for_function(
            "() => document.querySelector(\"[data-testid='stApp']\")"
            ".getAttribute('data-test-script-state') === 'notRunning'",
            timeout=300_000,
        )
        time.sleep(1.0)
        sliders = self.page.locator(
            "[data-testid='stMain'] [data-testid='stSlider'] input[type='range']"
        )
        self.sl = sliders.nth(slider)
        self.dir = 1
        self.rows: list[tuple[float, ...]] = []

    def step(self, record: bool) -> None:
        pg = self.page
        pg.evaluate(
            "() => { const d = window.__d; d.kd = null; d.msgs = []; d.bytes = 0; d.embeds = 0; }"
        )
        self.sl.focus()
        busy = self.task_seconds()
        v, hi, lo = (float(self.sl.get_attribute(a) or 0) for a in ("value", "max", "min"))
        if (self.dir > 0 and v >= hi) or (self.dir < 0 and v <= lo):
            self.dir = -self.dir
        pg.keyboard.press("ArrowRight" if self.dir > 0 else "ArrowLeft")
        h = pg.wait_for_function(DONE_JS, arg=QUIET, polling="raf", timeout=30_000)
        kd, last_msg, last_mut, embeds, nbytes, views, msgs = h.json_value()
        busy = (self.task_seconds() - busy) * 1000
        if record:
            total = max(last_mut, last_msg) - kd
            times = (total, last_msg - kd, max(0.0, last_mut - last_msg))  # ms: all, server, client
            self.rows.append((*times, embeds, nbytes / 1024, views, busy, msgs))

    def task_seconds(self) -> float:
        """The tab's main-thread task time so far (Chrome's ``TaskDuration``, seconds)."""
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pages", nargs="+")
    ap.add_argument("--presses", type=int, default=10)
    ap.add_argument("--slider", type=int, default=0)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.gettempdir()) / "bench_step"
    tmp.mkdir(exist_ok=True)
    (tmp / "ref_app.py").write_text(REF_SRC)
    lab, lab_url = start(ROOT, "dashboard.py")
    ref, ref_url = start(tmp, "ref_app.py")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium(), args=["--disable-dev-shm-usage"]
            )
            probes = {"ref": Probe(browser, ref_url, 0)}
            for name in args.pages:
                path = "" if name == "home" else name
                probes[name] = Probe(browser, f"{lab_url}{path}?lang=en", args.slider)
            press_rounds(probes.values(), args.presses)
            print(
                f"{'page':14s} {'total':>6s} {'server':>6s} {'client':>6s} {'embeds':>6s} "
                f"{'views':>5s} {'kB':>6s} {'main':>6s} {'msgs':>5s}"
            )
            for name, probe in probes.items():
                cols = list(zip(*probe.rows, strict=True))
                med = [statistics.median(c) for c in cols]
                print(
                    f"{name:14s} {med[0]:6.0f} {med[1]:6.0f} {med[2]:6.0f} {med[3]:6.1f} "
                    f"{med[5]:5.0f} {med[4]:6.1f} {med[6]:6.0f} {med[7]:5.0f}"
                )
            browser.close()
    finally:
        for proc in (lab, ref):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
