"""ui.charts.drawing: themed, fitted, drawn and cached per input."""

import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from ui import charts
from ui.i18n import Translator


def _drawn_text(spec: dict) -> list[str]:
    """Every text the chart draws (titles, labels, numbers), rendered as the browser would."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(json.dumps(charts.to_spec(spec, presenter=False)))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_cached_builds_are_per_input_and_return_fresh_copies() -> None:
    a = charts.build(charts.heatmap, {"w": np.eye(2)}, list("ab"), list("ab"))
    a["title"] = "changed by a caller"
    again = charts.build(charts.heatmap, {"w": np.eye(2)}, list("ab"), list("ab"))
    assert "w (2 × 2)" in _drawn_text(again)
    other = charts.build(charts.heatmap, {"w": np.eye(3)}, list("abc"), list("abc"))
    assert "w (3 × 3)" in _drawn_text(other)
    with pytest.raises(TypeError):
        charts.build(lambda: {})


def _titled(t: Translator, values: np.ndarray, scale: float = 1.0) -> dict:
    return {"title": t("app.name"), "mark": "bar", "data": {"values": list(values * scale)}}


def test_cached_builds_are_keyed_on_every_input_and_the_language() -> None:
    en, zh = Translator("en"), Translator("zh")
    assert charts.build(_titled, en, np.array([1.0, 2.0]))["title"] == en("app.name")
    assert charts.build(_titled, zh, np.array([1.0, 2.0]))["title"] == zh("app.name")
    assert charts.build(_titled, en, np.array([1.0, 3.0]))["data"]["values"] == [1.0, 3.0]
    assert charts.build(_titled, en, np.array([1.0, 3.0]), scale=2.0)["data"]["values"] == [2, 6]
    assert charts.build(_titled, en, np.array([1, 3], dtype=np.int8))["data"]["values"] == [1, 3]
    with pytest.raises(TypeError, match="plain values"):
        charts.build(_titled, en, np.array([1.0]), scale=lambda: 1)  # not a value


def test_altair_dataset_names_become_their_order_so_new_values_keep_the_spec() -> None:
    def spec(ys: list[float]) -> dict:
        frame = pd.DataFrame({"x": [1, 2, 3], "y": ys, "run": "a"})
        return charts.to_spec(charts.lines(frame, "x", "y", "run"), False)

    a, b = spec([1.0, 2.0, 3.0]), spec([3.0, 1.0, 2.0])
    assert list(a["datasets"]) == ["data-0"] and a["data"] == {"name": "data-0"}
    hashed = "data-" + "f" * 32  # a chart that already has a "data-0" keeps it
    mixed = charts.stable_names(
        {"datasets": {hashed: [1], "data-0": [2]}, "data": {"name": hashed}}
    )
    assert mixed == {"datasets": {"data-1": [1], "data-0": [2]}, "data": {"name": "data-1"}}
    assert a["datasets"] != b["datasets"]
    assert {k: v for k, v in a.items() if k != "datasets"} == {
        k: v for k, v in b.items() if k != "datasets"
    }


@pytest.mark.parametrize(("present", "renderer"), [("0", "canvas"), ("1", None)])
def test_charts_are_drawn_on_canvas_for_students_and_as_svg_on_slides(
    page, present: str, renderer: str | None
) -> None:
    at = page("pages/5_weighted_sum.py", present=present, lang="en")
    specs = [json.loads(e.proto.spec) for e in at.get("vega_lite_chart")]
    assert specs
    drawn = {s.get("usermeta", {}).get("embedOptions", {}).get("renderer") for s in specs}
    assert drawn == {renderer}  # None: Vega's default renderer, SVG
    # a canvas has no element per mark: no per-mark ARIA descriptions (SVG keeps them)
    assert {s["config"].get("aria", True) for s in specs} == {renderer is None}
