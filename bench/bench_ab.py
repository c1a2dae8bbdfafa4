"""Two checkouts side by side: lab_bench's slider-step timing, interleaved (a benchmark).

    git worktree add /tmp/before HEAD~3
    python bench/bench_ab.py /tmp/before --pages qkv,homework [--presses 12] [--new DIR]

Runs the app of the old checkout, of the new one (default: this one) and the one-heatmap
reference page, opens the same pages (English) on both apps in one browser and presses
each page's first main-area slider round-robin over all of them, timed as
``../shared/tools/lab_bench.py`` times a step (its own code, imported). Two lab_bench runs
of the same code minutes apart differ by up to 0.4 × the reference on a page on this
2-core machine; interleaving both versions in one run spreads the machine's other load
over both alike, so the difference between them is what the change did.
"""

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT.parent / "shared" / "tools"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old", type=Path, help="the checkout to compare against")
    ap.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    ap.add_argument("--pages", required=True, help="comma-separated, e.g. qkv,homework")
    ap.add_argument("--presses", type=int, default=12)
    args = ap.parse_args()
    sys.path.insert(0, str(TOOLS))
    import lab_bench as lb  # ../shared/tools, on the path from here on
    from playwright.sync_api import sync_playwright

    pages = args.pages.split(",")
    tmp = Path(tempfile.gettempdir()) / "lab_bench"
    tmp.mkdir(exist_ok=True)
    (tmp / "ref_app.py").write_text(lb.REF_SRC)
    servers = [
        lb.Server(args.old.resolve(), "dashboard.py", []),
        lb.Server(args.new.resolve(), "dashboard.py", []),
        lb.Server(tmp, "ref_app.py", []),
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lb.CHROMIUM, args=["--disable-dev-shm-usage"])
        for s in servers:
            s.__enter__()
        try:
            old, new, ref = servers
            runs = {"ref": lb.Run(browser, ref.url)}
            for page in pages:
                path = "" if page == "home" else page
                runs[f"old {page}"] = lb.Run(browser, f"{old.url}{path}?lang=en")
                runs[f"new {page}"] = lb.Run(browser, f"{new.url}{path}?lang=en")
            for i in range(2 + args.presses):  # the first two presses warm up
                for run in runs.values():
                    run.step(record=i >= 2)
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
        finally:
            for s in servers:
                s.__exit__()
            browser.close()


if __name__ == "__main__":
    main()
