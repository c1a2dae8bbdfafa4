"""Two checkouts side by side: lab_bench's slider-step timing, interleaved (a benchmark).

    git worktree add /tmp/before HEAD~3
    python bench/bench_ab.py /tmp/before --pages qkv,homework [--presses 12] [--new DIR]

Runs the app of the old checkout, of the new one (default: this one) and the one-heatmap
reference page, opens the same pages (English) on both apps in one browser and presses
each page's first main-area slider round-robin over all of them, timed as
``$LAB_TOOLS/lab_bench.py`` times a step (its own code, imported). Two lab_bench runs
of the same code minutes apart differ by up to 0.4 × the reference on a page on this
2-core machine; interleaving both versions in one run spreads the machine's other load
over both alike, so the difference between them is what the change did.

lab_bench.py is one of the external tools in ``$LAB_TOOLS`` (common.py).
"""

import argparse
from pathlib import Path

from common import ROOT, lab_bench, lab_bench_browser, press_rounds, reference_server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old", type=Path, help="the checkout to compare against")
    ap.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    ap.add_argument("--pages", required=True, help="comma-separated, e.g. qkv,homework")
    ap.add_argument("--presses", type=int, default=12)
    args = ap.parse_args()
    lb = lab_bench()
    pages = args.pages.split(",")
    old, new, ref = servers = [
        lb.Server(args.old.resolve(), "dashboard.py", []),
        lb.Server(args.new.resolve(), "dashboard.py", []),
        reference_server(lb),
    ]
    with lab_bench_browser(lb, servers) as browser:
        runs = {"ref": lb.Run(browser, ref.url)}
        for page in pages:
            path = "" if page == "home" else page
            runs[f"old {page}"] = lb.Run(browser, f"{old.url}{path}?lang=en")
            runs[f"new {page}"] = lb.Run(browser, f"{new.url}{path}?lang=en")
        press_rounds(runs.values(), args.presses)
        base = lb.pct(runs["ref"].times, 50)
        print(f"reference p50 {base * 1e3:.0f} ms")
        print(f"{'page':14s} {'old ms':>7s} {'× ref':>6s} {'new ms':>7s} {'× ref':>6s} fails")
        for page in pages:
            a, b = runs[f"old {page}"], runs[f"new {page}"]
            pa, pb = lb.pct(a.times, 50), lb.pct(b.times, 50)
            print(
                f"{page:14s} {pa * 1e3:7.0f} {pa / base:6.2f} {pb * 1e3:7.0f} "
                f"{pb / base:6.2f} {a.fails}/{b.fails}"
            )
        for run in runs.values():
            run.close()


if __name__ == "__main__":
    main()
