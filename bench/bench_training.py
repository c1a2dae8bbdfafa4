"""Training page benchmarks (not tests): core run times, the issue's measured facts, and
how fast a finished run scrubs.

    python bench/bench_training.py core       # run times + steps to 95 %, entropy, spread …
    python bench/bench_training.py scrub      # AppTest: snapshot-slider rerun, finished run
    python bench/bench_training.py browser    # Chromium: slider step, scrub vs reference page

Budgets (issue 12): a default run ≤ 1.5 s, the four-run √d_k comparison ≤ 4 s, scrubbing a
finished run no slower than the one-heatmap reference page. Results go into
bench/RESULTS.md (each part replaces only its own section).
"""

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_app import STEP_JS, machine, write_section  # noqa: E402
from common import CHROMIUM_ARGS, IDLE, chromium, lab_bench, median_times  # noqa: E402

import core  # noqa: E402
from core.training import steps_to  # noqa: E402

SEEDS = range(5)


def _compare() -> None:
    for d in (256, 16):
        for s in (True, False):
            core.train_attention(d_k=d, scaled=s)


def bench_core(repeats: int = 5) -> None:
    run_wall, run_cpu = median_times(core.train_attention, repeats)
    big_wall, big_cpu = median_times(lambda: core.train_attention(d_k=256), max(2, repeats // 2))
    cmp_wall, cmp_cpu = median_times(_compare, max(2, repeats // 2))
    lines = [
        "| what | median wall s | median CPU s | budget s | CPU within |",
        "|---|---:|---:|---:|---|",
        f"| default run (d_k 16, 300 steps) | {run_wall:.2f} | {run_cpu:.2f} | 1.5 | "
        f"{'yes' if run_cpu <= 1.5 else 'NO'} |",
        f"| one d_k 256 run | {big_wall:.2f} | {big_cpu:.2f} | – | – |",
        f"| √d_k comparison (4 runs) | {cmp_wall:.2f} | {cmp_cpu:.2f} | 4 | "
        f"{'yes' if cmp_cpu <= 4 else 'NO'} |",
    ]
    print("\n".join(lines))
    rows = [
        "| d_k | scaled | steps to 95 % (seeds 0–4) | loss @100 | entropy @0 | "
        "score std @0 | median grad @0 | focus @end | entropy @end |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for d in (16, 256):
        for s in (True, False):
            runs = [core.train_attention(d_k=d, scaled=s, seed=k) for k in SEEDS]
            hits = [steps_to(h) for h in runs]
            first, last = runs[0].snapshots[0], runs[0].snapshots[-1]
            reached = ", ".join("–" if x is None else str(x) for x in hits)
            rows.append(
                f"| {d} | {'yes' if s else 'no'} | {reached} "
                f"| {runs[0].loss[100]:.3f} | {first.entropy:.2f} | {first.score_std:.2f} "
                f"| {first.grad_median:.2f} | {last.focus:.3f} | {last.entropy:.2f} |"
            )
            print(rows[-1])
    write_section(
        "training: core run times and the measured facts",
        f"{machine()}\n\nMedian of {repeats} runs (comparison: {max(2, repeats // 2)}). "
        "Steps to 95 %: the first step from which 5 consecutive fresh batches average ≥ 95 %. "
        "Per-seed columns after the first are for seed 0.\n\n"
        + "\n".join(lines)
        + "\n\n"
        + "\n".join(rows),
    )


def bench_scrub(repeats: int = 15) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
    at.query_params["lang"] = "en"
    at.query_params["run"] = "1"
    at.switch_page("pages/16_training.py")
    at.run()
    slider = next(s for s in at.slider if s.key == "at")
    times = []
    for i in range(repeats + 2):
        t0 = time.perf_counter()
        slider.set_value(10 * (i % 31)).run()
        times.append((time.perf_counter() - t0) * 1e3)
        slider = next(s for s in at.slider if s.key == "at")
    assert not at.exception
    med = statistics.median(times[2:])
    print(f"scrub rerun median {med:.1f} ms, min {min(times[2:]):.1f} ms")
    write_section(
        "training: snapshot-slider rerun (AppTest, finished run)",
        f"{machine()}\n\nWhole-page AppTest rerun after moving the snapshot slider on "
        f"/training?run=1&step=2 (cached run; in the browser only the fragment reruns). "
        f"Median {med:.1f} ms, min {min(times[2:]):.1f} ms over {repeats} moves "
        f"(budget: worst-case server rerun ≤ 100 ms).",
    )


def _serve(script: str, port: int) -> subprocess.Popen:
    options = ["--server.port", str(port), "--server.headless", "true"]
    options += ["--browser.gatherUsageStats", "false"]
    command = [sys.executable, "-m", "streamlit", "run", script, *options]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(6)
    return proc


def _steps(page, label: str, presses: int) -> list[float]:
    page.wait_for_function(IDLE, timeout=120_000)
    time.sleep(1)
    slider = page.locator('[data-testid="stSlider"]').filter(has_text=label)
    slider.get_by_role("slider").first.focus()
    times = []
    for i in range(presses):
        page.keyboard.press("ArrowLeft" if (i // 5) % 2 == 0 else "ArrowRight")
        times.append(page.evaluate(STEP_JS))
        time.sleep(0.25)
    return [t for t in times if t > 0]


def bench_browser(presses: int = 30) -> None:
    from playwright.sync_api import sync_playwright

    ref = Path(tempfile.mkdtemp()) / "ref_app.py"
    ref.write_text(lab_bench().REF_SRC)  # from $LAB_TOOLS (common.py)
    app, refsrv = _serve("dashboard.py", 8661), _serve(str(ref), 8662)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto("http://127.0.0.1:8661/training?lang=en&run=1&step=2")
            page.wait_for_timeout(3000)
            page.wait_for_selector("text=Snapshot at step", timeout=180_000)
            ours = _steps(page, "Snapshot at step", presses)
            page.goto("http://127.0.0.1:8662/")
            page.wait_for_selector('[data-testid="stSlider"]', timeout=60_000)
            reference = _steps(page, "n", presses)
            browser.close()
    finally:
        app.terminate()
        refsrv.terminate()
    o, r = statistics.median(ours), statistics.median(reference)
    print(f"scrub step median {o:.0f} ms, reference {r:.0f} ms, ratio {o / r:.2f}")
    write_section(
        "training: snapshot scrub in Chromium vs the one-heatmap reference",
        f"{machine()}\n\nKey press on the snapshot slider of /training?run=1&step=2 -> script idle "
        f"and two frames drawn (bench_app's STEP_JS), {presses} presses each.\n\n"
        f"| page | median ms | steps |\n|---|---:|---:|\n"
        f"| training scrub | {o:.0f} | {len(ours)} |\n"
        f"| reference | {r:.0f} | {len(reference)} |\n\n"
        f"Ratio {o / r:.2f} (budget ≤ 1.5).",
    )


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "core"
    {"core": bench_core, "scrub": bench_scrub, "browser": bench_browser}[part]()
