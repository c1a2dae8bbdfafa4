"""App benchmarks (not tests): AppTest rerun time per page, and a slider step in Chromium.

    python bench/bench_app.py apptest            # median rerun per page at default settings
    python bench/bench_app.py browser            # slider step, postScriptGC on vs off

Results go into bench/RESULTS.md (each part replaces only its own section).
"""

import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import CHROMIUM_ARGS, chromium, rss_mb, wait_idle  # noqa: E402

from ui.pages import available_pages  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
BUDGET_MS = {"masking": 150, "multi_head": 150, "kv_cache": 150}


def write_section(heading: str, body: str) -> None:
    """Replace the ``## heading`` section of RESULTS.md (or append it)."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    section = f"## {heading}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.M | re.S)
    text = pattern.sub(section + "\n", text) if pattern.search(text) else text + "\n" + section
    RESULTS.write_text(text.rstrip() + "\n")


def machine() -> str:
    load = os.getloadavg()[0]
    return (
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load:.1f} at start, "
        f"{time.strftime('%Y-%m-%d')}"
    )


def bench_apptest(repeats: int = 15) -> None:
    from streamlit.testing.v1 import AppTest

    rows = []
    for info in available_pages():
        at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=60)
        at.query_params["lang"] = "en"
        if info.file != "dashboard.py":
            at.switch_page(info.file)
        at.run()
        at.run()  # warm caches
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - t0) * 1e3)
        assert not at.exception, info.id
        budget = BUDGET_MS.get(info.id, 100)
        med = statistics.median(times)
        rows.append((info.id, med, min(times), budget))
        print(f"{info.id:14s} median {med:6.1f} ms  min {min(times):6.1f} ms  budget {budget}")
    table = ["| page | median ms | min ms | budget ms | within |", "|---|---:|---:|---:|---|"]
    table += [
        f"| {p} | {m:.1f} | {lo:.1f} | {b} | {'yes' if m <= b else 'NO'} |" for p, m, lo, b in rows
    ]
    write_section(
        "app: AppTest rerun per page (default settings)",
        f"{machine()}\n\nMedian of {repeats} reruns after two warm-up runs.\n\n" + "\n".join(table),
    )


STEP_JS = """async () => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = () => app.getAttribute('data-test-script-state');
  const t0 = performance.now();
  let sawRunning = false;
  return await new Promise(resolve => {
    const tick = () => {
      const s = state();
      if (s === 'running') sawRunning = true;
      if (sawRunning && s === 'notRunning') {
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
      } else if (performance.now() - t0 > 10000) { resolve(-1); }
      else { setTimeout(tick, 1); }
    };
    tick();
  });
}"""


def _server(gc: bool, port: int) -> subprocess.Popen:
    options = ["--server.port", str(port), "--server.headless", "true"]
    options += ["--runner.postScriptGC", str(gc).lower()]
    command = [sys.executable, "-m", "streamlit", "run", "dashboard.py", *options]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(5)
    return proc


def bench_browser(path: str = "/softmax?lang=en", steps: int = 40) -> None:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        for gc in (True, False):
            port = 8650 + int(gc)
            proc = _server(gc, port)
            try:
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.goto(f"http://127.0.0.1:{port}{path}")
                wait_idle(page)
                thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
                thumb.focus()
                times = []
                for i in range(steps):
                    key = "ArrowRight" if (i // 5) % 2 == 0 else "ArrowLeft"
                    page.keyboard.press(key)
                    times.append(page.evaluate(STEP_JS))
                    time.sleep(0.2)
                good = [t for t in times if t > 0]
                rows.append((gc, statistics.median(good), len(good), rss_mb(proc.pid)))
                print(
                    f"postScriptGC={gc}: median {rows[-1][1]:.0f} ms over {len(good)} steps,"
                    f" server RSS {rows[-1][3]:.0f} MB"
                )
                page.close()
            finally:
                proc.terminate()
                proc.wait(timeout=10)
        browser.close()
    table = [
        "| runner.postScriptGC | median ms per slider step | steps | server RSS MB after |",
        "|---|---:|---:|---:|",
    ]
    table += [f"| {gc} | {m:.0f} | {n} | {rss:.0f} |" for gc, m, n, rss in rows]
    write_section(
        "app: slider step in Chromium",
        f"{machine()}\n\nPage `{path}`, keyboard steps on the first slider, time from key press "
        "to the end of the rerun plus two animation frames.\n\n" + "\n".join(table),
    )


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "apptest"
    bench_browser() if part == "browser" else bench_apptest()
