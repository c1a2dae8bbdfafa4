"""Every step of every page: lab_bench's slider-step timing on each step (a benchmark).

    python bench/bench_every_step.py [--pages qkv,softmax] [--presses 8]

A page shows one step at a time (``?step=N``), and a slider redraws only the step on
screen, so ``$LAB_TOOLS/lab_bench.py`` (which opens each page on its first step)
times step 1 alone. This opens every step of every page (English, 1920×1080), presses the
first slider visible on that step (in the sidebar, where a student's controls are, or in
the main area: the page's settings or the step's own) and times it as lab_bench times a
step (its own code, imported), round-robin with the one-heatmap reference page. A step
without a visible slider is listed as such; a page that stacks its steps for students
(/homework) is timed once. /encoder has no slider at all (its controls are choices), so
it is not among the default pages: lab_bench waits for a slider on every page it opens
(120 s, then it stops with a timeout), so run that with ``--pages`` without encoder.

Two of lab_bench's conditions are loosened here, and only these (:func:`_adapt`): its
page-load wait needs no slider (a step may have none: it is then listed, not timed), and a
press counts as done without the app's running → notRunning transition when the main area
changed after the press and the app is idle. A fragment rerun whose charts all come from
the cache ends within one animation frame, and React then never renders the "running"
state: lab_bench waits its 30 s timeout and drops the press (measured on /softmax: about
one press in six), so the fastest presses went missing and a run of every page took an
hour instead of minutes.

lab_bench.py is one of the external tools in ``$LAB_TOOLS`` (common.py).
"""

import argparse
from types import ModuleType

from common import ROOT, lab_bench, lab_bench_browser, press_rounds, reference_server

STEP_BAR = ".st-key-_step_choice button"
NO_SLIDER = {"encoder"}  # its controls are choices: nothing for lab_bench to press
PAGES = tuple(  # the navigation's order: pages/<n>_<name>.py
    p.stem.split("_", 1)[1]
    for p in sorted((ROOT / "pages").glob("*.py"), key=lambda p: int(p.stem.split("_")[0]))
    if p.stem.split("_", 1)[1] not in NO_SLIDER
)
VISIBLE_SLIDER = "[data-testid='stSlider'] input[type='range']:visible"  # sidebar or main


def _adapt(lb: ModuleType) -> None:
    """lab_bench's page-load and press-done conditions, loosened as the docstring says."""
    lb.IDLE_JS = lb.IDLE_JS.replace(
        "if (!document.querySelector(\"[data-testid='stSlider']\")) return false;", ""
    )
    no_run = "if (ran < 0) return false;"
    fast = "if (ran < 0 && !(lb.lastMut > s)) return false;"  # too fast to render "running"
    after = "if (!tr.slice(ran).some(t => t[1] === 'notRunning')) return false;"
    assert no_run in lb.DONE_JS and after in lb.DONE_JS, "lab_bench changed: adapt again"
    last = "tr[tr.length - 1][0]"  # the last transition: none when there was none
    assert last in lb.DONE_JS, "lab_bench changed: adapt again"
    lb.DONE_JS = (
        lb.DONE_JS.replace(no_run, fast)
        .replace(after, f"if (ran >= 0) {{ {after} }}")
        .replace(last, f"(tr.length ? {last} : 0)")
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=",".join(("home", *PAGES)), help="comma-separated")
    ap.add_argument("--presses", type=int, default=8)
    args = ap.parse_args()
    lb = lab_bench()
    _adapt(lb)
    pages = args.pages.split(",")
    lab, ref = lb.Server(ROOT, "dashboard.py", []), reference_server(lb)
    with lab_bench_browser(lb, [lab, ref]) as browser:
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
        press_rounds(runs.values(), args.presses)
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


if __name__ == "__main__":
    main()
