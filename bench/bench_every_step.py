"""Every step of every page: lab_bench's slider-step timing on each step (a benchmark).

    python bench/bench_every_step.py [--pages qkv,softmax] [--presses 8]

A page shows one step at a time (``?step=N``), and a slider redraws only the step on
screen, so ``../shared/tools/lab_bench.py`` (which opens each page on its first step)
times step 1 alone. This opens every step of every page (English, 1920×1080), presses the
first slider visible on that step (one from the page's settings or the step's own) and
times it as lab_bench times a step (its own code, imported), round-robin with the
one-heatmap reference page. A step without a visible slider is listed as such; a page
that stacks its steps for students (/homework) is timed once. /encoder has no slider at
all (its controls are choices), so it is not among the default pages, as in lab_bench.
"""

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT.parent / "shared" / "tools"
STEP_BAR = ".st-key-_step_choice button"
PAGES = (
    "home",
    "lookup",
    "qkv",
    "scaling",
    "softmax",
    "weighted_sum",
    "masking",
    "multi_head",
    "kv_cache",
    "decoder",
    "training",
    "homework",
)
VISIBLE_SLIDER = "[data-testid='stMain'] [data-testid='stSlider'] input[type='range']:visible"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated")
    ap.add_argument("--presses", type=int, default=8)
    args = ap.parse_args()
    sys.path.insert(0, str(TOOLS))
    import lab_bench as lb  # ../shared/tools, on the path from here on
    from playwright.sync_api import sync_playwright

    pages = args.pages.split(",")
    tmp = Path(tempfile.gettempdir()) / "lab_bench"
    tmp.mkdir(exist_ok=True)
    (tmp / "ref_app.py").write_text(lb.REF_SRC)
    lab, ref = lb.Server(ROOT, "dashboard.py", []), lb.Server(tmp, "ref_app.py", [])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lb.CHROMIUM, args=["--disable-dev-shm-usage"])
        lab.__enter__()
        ref.__enter__()
        try:
            runs = {"ref": lb.Run(browser, ref.url)}
            missing = []
            for page in pages:
                path = "" if page == "home" else page
                probe = lb.Run(browser, f"{lab.url}{path}?lang=en")
                count = probe.page.locator(STEP_BAR).count()  # 0: stacked steps
                probe.close()
                for step in range(1, max(count, 1) + 1):
                    query = f"&step={step}" if count else ""
                    run = lb.Run(browser, f"{lab.url}{path}?lang=en{query}")
                    sliders = run.page.locator(VISIBLE_SLIDER)
                    if not sliders.count():
                        missing.append(f"{page} {step}")
                        run.close()
                        continue
                    run.sl = sliders.first
                    runs[f"{page} {step}"] = run
            for i in range(2 + args.presses):  # the first two presses warm up
                for run in runs.values():
                    run.step(record=i >= 2)
            base = lb.pct(runs["ref"].times, 50)
            print(f"reference p50 {base * 1e3:.0f} ms")
            print(f"{'page step':16s} {'p50 ms':>7s} {'p95 ms':>7s} {'× ref':>6s} fails")
            for name, run in runs.items():
                p50, p95 = lb.pct(run.times, 50), lb.pct(run.times, 95)
                print(f"{name:16s} {p50 * 1e3:7.0f} {p95 * 1e3:7.0f} {p50 / base:6.2f} {run.fails}")
            if missing:
                print("no slider on screen:", ", ".join(missing))
            for run in runs.values():
                run.close()
        finally:
            lab.__exit__()
            ref.__exit__()
            browser.close()


if __name__ == "__main__":
    main()
