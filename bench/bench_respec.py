"""Which charts the browser must build again when a page's first slider moves one step
(a diagnostic, not a test).

    python bench/bench_respec.py                # every page
    python bench/bench_respec.py masking qkv    # some pages

Streamlit's frontend builds a chart's Vega view from scratch (compile, dataflow, draw)
when the spec without its datasets changes, or the datasets' names do; when only their
rows change it swaps the new rows into the view it has, which costs a fraction. For each
page (English, default settings) this moves the first slider of the main area (the one
``$LAB_TOOLS/lab_bench.py`` presses) one step and prints, per chart, "same" or the
places where the spec changed.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui.pages import available_pages  # noqa: E402


def _charts(at) -> list[tuple[dict, list[str]]]:
    """(spec without data, dataset names) of every chart on the page."""
    return [
        (json.loads(el.proto.spec), [d.name for d in el.proto.datasets])
        for el in at.get("vega_lite_chart")
    ]


def _changes(a: object, b: object, path: str = "") -> list[str]:
    """Where two JSON values differ, as paths (a list of another length counts once)."""
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        keys = sorted(set(a) | set(b))
        return [
            p
            for k in keys
            for p in (_changes(a[k], b[k], f"{path}/{k}") if k in a and k in b else [f"{path}/{k}"])
        ]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}[{len(a)} -> {len(b)} items]"]
        return [
            p
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for p in _changes(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {str(a)[:40]!r} -> {str(b)[:40]!r}"]


def main(wanted: list[str]) -> None:
    from streamlit.testing.v1 import AppTest

    for info in available_pages():
        if wanted and info.id not in wanted:
            continue
        at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
        at.query_params["lang"] = "en"
        if info.file != "dashboard.py":
            at.switch_page(info.file)
        at.run()
        sliders = list(at.main.slider)
        if not sliders:
            print(f"{info.id}: no slider")
            continue
        w, step = sliders[0], sliders[0].step or 1
        before, old = _charts(at), w.value
        w.set_value(old + step if old + step <= w.max else old - step).run()
        after = _charts(at)
        print(f"{info.id}: {w.label!r} {old} -> {w.value}")
        for k, ((s1, n1), (s2, n2)) in enumerate(zip(before, after, strict=False)):
            changed = _changes(s1, s2) + ([f"dataset names {n1} -> {n2}"] if n1 != n2 else [])
            print(f"  chart {k}: " + ("same" if not changed else "built again"))
            for where in changed[:8]:
                print(f"      {where}")
        if len(before) != len(after):
            print(f"  {len(before)} -> {len(after)} charts")


if __name__ == "__main__":
    main(sys.argv[1:])
