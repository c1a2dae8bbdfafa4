"""Every step's first screen, measured against the student's-screen rule (a report, not a test).

    python bench/layout_report.py --base http://127.0.0.1:8501 [--size 1366x768]
        [--lang en zh] [--pages qkv softmax] [--shots artifacts/layout]

Opens every step of every page (or of ``--pages``) by its URL in the student view against
a running server, and prints one row per step: page, step, language, the main chart's top
and bottom y (on a step without a chart, its table's or metric's, marked so), the lowest
control's bottom y, pass or FAIL; then each failing step's violations and a summary.
With ``--shots DIR`` it saves a screenshot of each step's first screen there
(``<page>_<lang>_step<k>_<WxH>.png``).

The rule and its measurement live in ``tests/e2e/layout.py`` (``tests/e2e/test_layout.py``
enforces it); this script imports them from there, so the table and the test cannot
disagree. Exit status: 0 when every step passes, 1 otherwise.
"""

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import streamlit.logger
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the tests package is here
streamlit.logger.set_log_level("error")  # ui's caches warn that no server runs here

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.e2e.layout import PAGES, StepResult, walk  # noqa: E402  (the rule, measured)


def _size(text: str) -> tuple[int, int]:
    width, height = text.lower().split("x")
    return int(width), int(height)


def _y(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _row(r: StepResult) -> str:
    """page, step, lang, the main view's top and bottom y, the lowest control's bottom y."""
    main = r.layout.main
    mark = "" if main is None or main.kind == "chart" else f" ({main.kind})"
    top, bottom = (main.box.top, main.box.bottom) if main else (None, None)
    verdict = "FAIL" if r.problems else "pass"
    return (
        f"{r.page:13s} {r.step:4d} {r.lang:4s} {_y(top):>9s} {_y(bottom):>6s} "
        f"{_y(r.layout.lowest_control):>8s}  {verdict}{mark}"
    )


def _summary(results: list[StepResult], size: tuple[int, int]) -> None:
    failing = [r for r in results if r.problems]
    if failing:
        print("\nViolations:")
        for r in failing:
            print("\n".join(f"  {p}" for p in r.problems))
    print(f"\nSummary: {len(failing)} of {len(results)} steps fail at {size[0]}x{size[1]}")
    per_page: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        per_page[r.page][r.lang].append(bool(r.problems))
    for page, langs in per_page.items():
        counts = ", ".join(f"{lang} {sum(v)}/{len(v)}" for lang, v in langs.items())
        print(f"  {page:13s} failing steps: {counts}")
    tops = sorted(
        ((r.layout.main.box.top, r.page, r.step, r.lang) for r in results if r.layout.main),
        reverse=True,
    )
    lowest = ", ".join(f"{page} {step} {lang} {top:.0f}" for top, page, step, lang in tops[:10])
    print(f"Lowest main views (top y): {lowest}")


def main() -> int:
    """Measure every step, print the table and the summary; 1 if any step fails."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="URL of a running server")
    ap.add_argument("--size", type=_size, default=(1366, 768), help="WIDTHxHEIGHT")
    ap.add_argument("--lang", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    ap.add_argument("--pages", nargs="+", help="page ids (default: every page)")
    ap.add_argument("--shots", type=Path, help="folder for a screenshot of each step")
    args = ap.parse_args()

    pages = [p for p in PAGES if not args.pages or p.id in args.pages]
    if unknown := set(args.pages or ()) - {p.id for p in pages}:
        ap.error(f"unknown pages {sorted(unknown)}; known: {[p.id for p in PAGES]}")
    width, height = args.size
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    results: list[StepResult] = []
    print(
        f"{'page':13s} {'step':>4s} {'lang':4s} {'chart top':>9s} {'bottom':>6s} "
        f"{'controls':>8s}  result  ({width}x{height})"
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_context(viewport={"width": width, "height": height}).new_page()

            def record(r: StepResult) -> None:
                print(_row(r), flush=True)
                if args.shots:
                    name = f"{r.page}_{r.lang}_step{r.step}_{width}x{height}.png"
                    tab.screenshot(path=str(args.shots / name))
                results.append(r)

            for lang in args.lang:
                for info in pages:
                    walk(tab, args.base.rstrip("/"), info, lang, on_step=record)
        finally:
            browser.close()
    _summary(results, args.size)
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
