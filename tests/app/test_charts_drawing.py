"""ui.charts.drawing: themed, fitted, drawn and cached per input."""

import html
import json
import re

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from ui import charts
from ui.context import PageContext
from ui.i18n import Translator


def _drawn_text(spec: dict) -> list[str]:
    """Every text the chart draws (titles, labels, numbers), rendered as the browser would."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(json.dumps(charts.to_spec(spec, presenter=False)))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def _context(lang: str = "en") -> PageContext:
    return PageContext("test", lang, Translator(lang), False, st.container(), st.sidebar)


def test_cached_charts_are_per_input_and_return_fresh_copies() -> None:
    ctx = _context()
    a = charts.show_cached(ctx, charts.heatmap, {"w": np.eye(2)}, list("ab"), list("ab"))
    a["title"] = "changed by a caller"
    again = charts.show_cached(ctx, charts.heatmap, {"w": np.eye(2)}, list("ab"), list("ab"))
    assert "w (2 × 2)" in _drawn_text(again)
    other = charts.show_cached(ctx, charts.heatmap, {"w": np.eye(3)}, list("abc"), list("abc"))
    assert "w (3 × 3)" in _drawn_text(other)
    with pytest.raises(TypeError, match="module-level"):
        charts.show_cached(ctx, lambda: {})


def _titled(t: Translator, values: np.ndarray, scale: float = 1.0) -> dict:
    return {"title": t("app.name"), "mark": "bar", "data": {"values": list(values * scale)}}


def test_cached_charts_are_keyed_on_every_input_and_the_language() -> None:
    en, zh = Translator("en"), Translator("zh")

    def shown(*args: object, **kwargs: object) -> dict:
        return charts.show_cached(_context(), _titled, *args, **kwargs)

    assert shown(en, np.array([1.0, 2.0]))["title"] == en("app.name")
    assert shown(zh, np.array([1.0, 2.0]))["title"] == zh("app.name")
    assert shown(en, np.array([1.0, 3.0]))["data"]["values"] == [1.0, 3.0]
    assert shown(en, np.array([1.0, 3.0]), scale=2.0)["data"]["values"] == [2, 6]
    assert shown(en, np.array([1, 3], dtype=np.int8))["data"]["values"] == [1, 3]
    with pytest.raises(TypeError, match="plain values"):
        shown(en, np.array([1.0]), scale=lambda: 1)  # not a value


def test_new_values_keep_the_spec_so_the_browser_only_swaps_the_data() -> None:
    def spec(ys: list[float]) -> dict:
        frame = pd.DataFrame({"x": [1, 2, 3], "y": ys, "run": "a"})
        return charts.show_cached(_context(), charts.lines, frame, "x", "y", "run")

    a, b = spec([1.0, 2.0, 3.0]), spec([3.0, 1.0, 2.0])
    assert list(a["datasets"]) == ["lines"] and a["data"] == {"name": "lines"}
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
