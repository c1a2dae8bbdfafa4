"""ui helpers without a running app: charts, exports, params specs, safe text, page registry."""

import html
import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from ui import charts, exports
from ui.i18n import Translator
from ui.pages import PAGES, page_info
from ui.params import Choice, Flag, Float, Int, Text, divisor_choice
from ui.safe import plain


def test_repeated_tokens_get_unique_axis_labels() -> None:
    assert charts.unique_labels(["the", "cat", "the"]) == ["the₀", "cat", "the₂"]
    assert charts.unique_labels(["我", "爱", "我"]) == ["我₀", "爱", "我₂"]


def test_fmt_spells_out_infinities_and_uses_a_real_minus() -> None:
    assert charts.fmt(-np.inf) == "−∞"
    assert charts.fmt(np.inf) == "+∞"
    assert charts.fmt(-0.5) == "−0.50"


def _spec(chart) -> dict:
    """The chart as the browser gets it: plain JSON."""
    return json.loads(json.dumps(chart) if isinstance(chart, dict) else chart.to_json())


def _drawn_text(spec: dict) -> list[str]:
    """Every text the chart draws (titles, labels, numbers), rendered as the browser would."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(json.dumps(charts.to_spec(spec, presenter=False)))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def _marks(spec: dict) -> list[str]:
    return [layer["mark"]["type"] for layer in spec["layer"]]


def test_weight_heatmap_has_fixed_unit_scale_numbers_and_shape_title() -> None:
    w = np.full((6, 6), 1 / 6)
    spec = _spec(charts.heatmap({"weights": w}, list("abcdef"), list("abcdef")))
    assert "weights (6 × 6)" in _drawn_text(spec)
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert text["mark"]["type"] == "text"
    cells = spec["datasets"][spec["data"]["name"]]
    assert len(cells) == 36 and cells[1] == {
        "panel": "weights", "row": "a", "col": "b", "i": 0, "j": 1, "value": 1 / 6, "text": "0.17"
    }  # fmt: skip


def test_score_heatmap_is_diverging_and_symmetric() -> None:
    s = np.array([[1.0, -3.0], [0.5, 2.0]])
    spec = _spec(charts.heatmap({"scores": s}, ["a", "b"], ["a", "b"], kind="scores"))
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-3.0, 3.0]
    fixed = _spec(charts.heatmap({"s": s}, ["a", "b"], ["a", "b"], "scores", domain=[-5, 5]))
    assert fixed["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-5, 5]


def test_masked_scores_show_minus_infinity_not_nan() -> None:
    s = np.array([[1.0, -np.inf], [0.5, 2.0]])
    spec = _spec(charts.heatmap({"s": s}, ["a", "b"], ["a", "b"], kind="scores"))
    cells = spec["datasets"][spec["data"]["name"]]
    assert [c["value"] for c in cells] == [1.0, None, 0.5, 2.0]  # JSON null, never NaN
    assert [c["text"] for c in cells] == ["1.00", "−∞", "0.50", "2.00"]
    grey = [layer for layer in spec["layer"] if layer["mark"].get("color") == charts.MASKED]
    assert grey and grey[0]["transform"] == [{"filter": "!isValid(datum.value)"}]


def test_cells_without_a_value_are_blank_in_a_colour_of_choice() -> None:
    m = np.array([[0.2, np.nan]])
    spec = _spec(charts.heatmap({"m": m}, ["a"], ["x", "y"], "values", blank="#ebebeb"))
    cells = spec["datasets"][spec["data"]["name"]]
    assert [(c["value"], c["text"]) for c in cells] == [(0.2, "0.20"), (None, "")]
    assert any(layer["mark"].get("color") == "#ebebeb" for layer in spec["layer"])


def test_vectorised_cell_text_matches_fmt() -> None:
    values = np.array([[-0.004, 1.005, -np.inf], [np.inf, np.nan, -12.5]])
    assert charts.fmt_cells(values) == [charts.fmt(v) for v in values.ravel()]
    assert charts.fmt_cells(values, 3)[0] == "−0.004"


def test_large_heatmaps_drop_cell_numbers() -> None:
    n = charts.MAX_ANNOTATED + 1
    spec = _spec(
        charts.heatmap({"w": np.eye(n)}, [str(i) for i in range(n)], [str(i) for i in range(n)])
    )
    assert _marks(spec) == ["rect"]


def test_small_cells_drop_numbers_unless_asked() -> None:
    labels = list("abc")
    small = charts.MIN_ANNOTATED_CELL - 1
    assert _marks(charts.heatmap({"w": np.eye(3)}, labels, labels, cell=small)) == ["rect"]
    forced = charts.heatmap({"w": np.eye(3)}, labels, labels, cell=small, annotate=True)
    assert _marks(forced) == ["rect", "text"]
    assert _marks(charts.heatmap({"w": np.eye(3)}, labels, labels, annotate=False)) == ["rect"]


def _number_font(spec: dict) -> int:
    (text,) = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    return text["mark"]["fontSize"]


def test_cell_numbers_are_as_large_as_their_widest_text_fits_the_cell() -> None:
    labels = list("ab")
    signed = np.array([[-0.75, 0.5], [0.25, 1.0]])  # "−0.75": 2.52 em
    assert charts.text_em(["0.75", "−0.75", "1"]) == pytest.approx(2.52)
    assert _number_font(charts.heatmap({"w": signed}, labels, labels, "scores", cell=50)) == 15
    slide = charts.heatmap({"w": signed}, labels, labels, "scores", cell=50, max_font=30)
    assert _number_font(slide) == pytest.approx(17.9, abs=0.05)  # "−0.75" fits 50 px
    weights = charts.heatmap({"w": np.abs(signed)}, labels, labels, cell=50, max_font=30)
    assert _number_font(weights) == pytest.approx(23.0, abs=0.05), "no sign: larger"
    assert charts.cell_font(["−0.75"], 10) == 9, "never below 9 px"


def test_cells_lower_than_wide_keep_their_numbers_within_the_height() -> None:
    labels = list("ab")
    low = charts.heatmap({"w": np.eye(2)}, labels, labels, cell=50, max_font=30, aspect=0.5)
    assert (low["width"], low["height"]) == ({"step": 50}, {"step": 25})
    assert _number_font(low) == pytest.approx(50 * 0.5 * 0.6), "60 % of the 25 px row"


def test_log_axes_label_only_powers_of_ten() -> None:
    data = pd.DataFrame({"n": [1, 2, 2048], "y": [1.0, 4.0, 9.0], "s": ["a"] * 3})
    enc = charts.lines(data, "n", "y", "s", log_x=True).to_dict(validate=False)["encoding"]
    assert enc["x"]["axis"]["labelExpr"].endswith("? datum.label : ''")
    assert enc["x"]["axis"]["labelOverlap"] == "greedy"
    assert "labelExpr" not in enc["y"].get("axis", {}), "a linear axis keeps every label"


def test_a_framed_row_is_outlined_across_the_panel() -> None:
    spec = charts.heatmap({"w": np.eye(3)}, list("abc"), list("abc"), cell=30, frame=1)
    (frame,) = [layer for layer in spec["layer"] if layer["mark"].get("stroke") == charts.FRAME]
    assert frame["transform"] == [{"filter": "datum.i == 1"}]
    assert frame["encoding"]["x2"] == {"value": "width"}, "to the view's right edge"


def test_legend_can_be_hidden() -> None:
    spec = charts.heatmap({"w": np.eye(2)}, list("ab"), list("ab"), legend=False)
    assert spec["layer"][0]["encoding"]["color"]["legend"] is None


def test_facets_wrap_to_a_maximum_width() -> None:
    panels = {f"h{i}": np.eye(4) for i in range(6)}
    spec = charts.heatmap(panels, list("abcd"), list("abcd"), cell=30, columns=5, max_width=300)
    assert spec["columns"] == 2  # 4 cells of 30 px + 20 px gap = 140 px per panel
    assert len(spec["datasets"][spec["data"]["name"]]) == 6 * 16


def test_heatmaps_have_no_row_limit() -> None:
    n = 40
    labels = [str(i) for i in range(n)]
    panels = {f"h{i}": np.full((n, n), 1 / n) for i in range(9)}  # 14 400 cells > Altair's 5000
    spec = charts.to_spec(charts.heatmap(panels, labels, labels), False)
    assert len(charts.table(spec)) == 9 * n * n
    assert exports.chart_png(spec).startswith(b"\x89PNG")


def test_strip_gives_each_matrix_its_own_scale_dataset_and_frame() -> None:
    items = [
        ("X", np.arange(6.0).reshape(2, 3), ["a", "b"], ["d0", "d1", "d2"]),
        ("A", np.full((2, 2), 0.5), ["a", "b"], ["a", "b"]),
    ]
    spec = _spec(charts.matrix_strip(items, kinds={"A": "weights"}, frames={"X": 1}))
    x, a = spec["hconcat"]
    assert spec["resolve"] == {"scale": {"color": "independent"}}
    assert x["data"]["name"] != a["data"]["name"] and len(spec["datasets"]) == 2
    assert x["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-5.0, 5.0]
    assert a["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1]
    drawn = _drawn_text(spec)
    assert "X (2 × 3)" in drawn and "A (2 × 2)" in drawn, "each title from its own cells"
    assert any("datum.i == 1" in str(layer.get("transform")) for layer in x["layer"])
    assert list(charts.table(spec).panel) == ["X"] * 6 + ["A"] * 4


def _tooltips(node: object) -> list[dict]:
    """Every tooltip field definition anywhere in a spec."""
    if isinstance(node, dict):
        own = node.get("tooltip") if isinstance(node.get("tooltip"), list) else []
        return own + [tip for child in node.values() for tip in _tooltips(child)]
    if isinstance(node, list):
        return [tip for child in node for tip in _tooltips(child)]
    return []


def test_tooltips_are_titled_with_symbols_or_given_text_not_field_names() -> None:
    import pandas as pd

    data = pd.DataFrame({"distance": [1, 2], "steps": [1, 2], "model": ["a", "b"]})
    for chart in (
        charts.heatmap({"w": np.eye(2)}, list("ab"), list("ab")),
        charts.lines(data, "distance", "steps", "model"),
        charts.bars(data, "model", "steps"),
        charts.histogram(np.arange(3.0), {"a": np.ones(2)}, "t", "x"),
        charts.vectors_2d(
            pd.DataFrame({"label": ["k"], "x": [1], "y": [0], "role": ["key"], "size": [1],
                          "text": [""]}), "t", 1.0
        ),
    ):  # fmt: skip
        tips = _tooltips(_spec(chart))
        assert tips and all("title" in tip and tip["title"] != tip["field"] for tip in tips)


def test_histogram_overlays_series_from_zero_in_fixed_colours() -> None:
    edges = np.array([0.0, 1.0, 2.0])
    spec = _spec(charts.histogram(edges, {"a": np.array([3, 1]), "b": np.array([1, 2])}, "t", "x"))
    assert spec["encoding"]["y2"] == {"datum": 0}, "bars start at 0, one series over the other"
    assert spec["encoding"]["color"]["scale"]["domain"] == ["a", "b"]
    rows = spec["datasets"][spec["data"]["name"]]
    assert [(r["start"], r["end"], r["count"], r["series"]) for r in rows] == [
        (0.0, 1.0, 3, "a"), (1.0, 2.0, 1, "a"), (0.0, 1.0, 1, "b"), (1.0, 2.0, 2, "b")
    ]  # fmt: skip


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


def test_panels_become_one_faceted_chart() -> None:
    spec = _spec(charts.heatmap({"h1": np.eye(3), "h2": np.eye(3)}, list("abc"), list("abc")))
    assert spec["facet"]["field"] == "panel"
    assert all("data" not in layer for layer in spec["spec"]["layer"]), "each panel its own cells"


def test_presenter_theme_makes_axis_labels_at_least_16px() -> None:
    chart = charts.lines(
        __import__("pandas").DataFrame({"x": [1, 2], "y": [1, 2], "s": ["a", "a"]}), "x", "y", "s"
    )
    assert charts.to_spec(chart, presenter=True)["config"]["axis"]["labelFontSize"] >= 16
    assert charts.to_spec(chart, presenter=False)["config"]["axis"]["labelFontSize"] < 16


def test_png_and_svg_exports_render_offline() -> None:
    import pandas as pd

    heat = charts.heatmap({"weights": np.eye(3)}, list("abc"), list("abc"))
    line = charts.lines(pd.DataFrame({"x": [1, 2], "y": [1, 2], "s": ["a", "a"]}), "x", "y", "s")
    for spec in (charts.to_spec(heat, False), charts.to_spec(line, True), line):
        assert exports.chart_png(spec).startswith(b"\x89PNG")
        assert exports.chart_svg(spec).lstrip().startswith("<svg")


def test_npz_export_loads_without_pickle() -> None:
    blob = exports.npz_bytes({"q": np.ones((2, 3)), "tokens": np.array(["a", "b"])})
    with np.load(io.BytesIO(blob), allow_pickle=False) as f:
        assert f["q"].shape == (2, 3)
        assert list(f["tokens"]) == ["a", "b"]


def test_csv_export_starts_with_bom_for_spreadsheets() -> None:
    import pandas as pd

    assert exports.csv_text(pd.DataFrame({"词": [1]})).startswith("\ufeff词")


@pytest.mark.parametrize(
    ("spec", "raw", "value"),
    [
        (Int("n", 6, 2, 32), "12", 12),
        (Int("n", 6, 2, 32), "-3", None),
        (Int("n", 6, 2, 32), "1e99", None),
        (Int("n", 6, 2, 32), "99999999999999999999", None),
        (Int("n", 6, 2, 32), "6.0", None),
        (Float("t", 1.0, 0.01, 10.0), "nan", None),
        (Float("t", 1.0, 0.01, 10.0), "inf", None),
        (Float("t", 1.0, 0.01, 10.0), "0.5", 0.5),
        (Float("t", 1.0, 0.01, 10.0), "abc", None),
        (Choice("h", "2", ("1", "2", "4")), "abc", None),
        (Choice("h", "2", ("1", "2", "4")), "4", "4"),
        (Text("s", "x", 5), "toolong", None),
        (Flag("f", False), "true", True),
        (Flag("f", False), "yes", None),
    ],
)
def test_url_specs_accept_only_valid_values(spec, raw, value) -> None:
    assert spec.parse(raw) == value


def test_divisor_choice_offers_only_divisors() -> None:
    spec = divisor_choice("heads", 12, 5)
    assert spec.options == ("1", "2", "3", "4", "6", "12")
    assert spec.default == "1"


def test_plain_escapes_markdown_and_html() -> None:
    shown = plain("<img src=x> [a](http://e) **b**")
    assert "<" not in shown.replace("\\<", "") and "](" not in shown
    assert len(plain("x" * 500)) <= 40


def test_page_urls_follow_file_names() -> None:
    assert page_info("home").url_path == "/"
    assert page_info("softmax").url_path == "/softmax"
    assert len({p.url_path for p in PAGES}) == len(PAGES)


def test_faceted_bars_draw_each_panel_from_its_own_rows() -> None:
    import pandas as pd

    data = pd.DataFrame({"x": ["a", "b", "a", "b"], "y": [1, 2, 3, 4], "p": ["P", "P", "Q", "Q"]})
    spec = _spec(charts.bars(data, "x", "y", column="p"))
    assert all("data" not in layer for layer in spec["spec"]["layer"])


def test_series_colours_keep_their_order_in_every_language() -> None:
    import pandas as pd

    data = pd.DataFrame({"x": [1, 2], "y": [1, 2], "s": ["缓存", "无缓存"]})
    spec = _spec(charts.lines(data, "x", "y", "s", color_domain=["无缓存", "缓存"]))
    assert spec["encoding"]["color"]["scale"]["domain"] == ["无缓存", "缓存"]


def test_nan_cells_print_blank() -> None:
    assert charts.fmt(float("nan")) == ""


def test_fmt_never_shows_negative_zero_and_keeps_integers_whole() -> None:
    assert charts.fmt(-0.001) == "0.00"
    assert charts.fmt(np.float32(-0.004), 2) == "0.00"
    assert charts.fmt(1000) == "1000" and charts.fmt(np.int64(-3)) == "−3"
    assert charts.fmt(1000.0, 3) == "1000.000", "a float keeps the view's precision"
    assert charts.fmt_cells(np.array([-1.8369701987210297e-16, -0.5])) == ["0.00", "−0.50"]
    assert charts.fmt_cells(np.array([[1, -2]])) == ["1", "−2"]
    assert charts.fmt_list([3, 4]) == "[3, 4]"


def _three_panels(cell: int = 56) -> dict:
    m = np.linspace(-1, 1, 36).reshape(6, 6)
    return charts.concat(
        [charts.heatmap({f"p{i}": m}, list("abcdef"), list("abcdef"), "scores", cell=cell)
         for i in range(3)]
    )  # fmt: skip


def test_a_chart_too_wide_for_a_laptop_wraps_or_shrinks_to_the_room() -> None:
    spec = charts.to_spec(_three_panels(), presenter=False)
    wide = charts._extent(spec, spec["datasets"])[0]
    space = charts.Room(charts.PAGE_WIDTH)
    assert wide > space.width, "the test chart must start too wide"
    fitted = charts.fit(spec, space)
    assert charts._extent(fitted, fitted["datasets"])[0] <= space.width
    parts = fitted.get("concat") or fitted.get("hconcat")
    assert len(parts) == 3, "no panel is dropped"
    assert fitted["datasets"] is spec["datasets"], "data is shared, not copied"
    assert exports.chart_png(fitted).startswith(b"\x89PNG"), "still a valid spec"


def test_presenter_room_grows_a_small_chart_cells_text_and_frame() -> None:
    m = np.eye(4)
    small = charts.heatmap({"w": m}, list("abcd"), list("abcd"), cell=30, frame=1)
    spec = charts.to_spec(small, presenter=True)
    grown = charts.fit(spec, charts.Room(1600, 600, grow=True))
    f = grown["width"]["step"] / spec["width"]["step"]
    assert 1.5 < f <= charts.MAX_GROWTH
    assert grown["height"]["step"] == pytest.approx(spec["height"]["step"] * f, abs=0.2)
    text = next(layer for layer in grown["layer"] if layer["mark"]["type"] == "text")
    assert text["mark"]["fontSize"] > 11
    frame = grown["layer"][-1]["encoding"]["x2"]["value"]
    assert frame == "width", "the frame still spans the row"
    assert charts.fit(spec, charts.Room(1600)) == spec, "without grow a chart that fits is kept"


def test_facet_panels_keep_the_data_order_in_every_language() -> None:
    import pandas as pd

    orders = []
    for first, second in (("with mask", "without mask"), ("有掩码", "无掩码")):
        data = pd.DataFrame({"k": ["a", "b"] * 2, "w": [0.1, 0.9, 0.5, 0.5],
                             "panel": [first] * 2 + [second] * 2})  # fmt: skip
        chart = charts.bars(data, "k", "w", column="panel")
        spec = charts.fit(charts.to_spec(chart, False), charts.Room(2000))
        facet = spec["facet"].get("column", spec["facet"])
        orders.append(facet["sort"])
    assert orders[0] == ["with mask", "without mask"] and orders[1] == ["有掩码", "无掩码"]


def test_panels_in_one_row_wrap_when_the_row_is_too_wide() -> None:
    import pandas as pd

    data = pd.DataFrame(
        {"k": list("abcdefgh") * 4, "w": 0.125, "panel": np.repeat(list("ABCD"), 8)}
    )
    chart = charts.bars(data, "k", "w", column="panel", width=400)
    spec = charts.fit(charts.to_spec(chart, False), charts.Room(charts.PAGE_WIDTH))
    assert spec["facet"]["field"] == "panel" and spec["columns"] < 4
    assert exports.chart_svg(spec).lstrip().startswith("<svg")


def _facet(panels: int, **kw: object) -> dict:
    m = np.eye(6)
    chart = charts.heatmap(
        {f"p{i}": m for i in range(panels)}, list("abcdef"), list("abcdef"), cell=30, **kw
    )
    return charts.to_spec(chart, presenter=True)


def test_facet_panels_share_one_y_axis_and_one_legend_in_the_size_estimate() -> None:
    one, four = _facet(1, y_title="query"), _facet(4, y_title="query", columns=4)
    w1 = charts._extent(one, one["datasets"])[0]
    w4 = charts._extent(four, four["datasets"])[0]
    assert w4 - w1 == pytest.approx(3 * (6 * 30 + 20), abs=1), "each panel adds a view and a gap"
    two_rows = _facet(4, columns=2)
    h1 = charts._extent(_facet(2, columns=2), two_rows["datasets"])[1]
    h2 = charts._extent(two_rows, two_rows["datasets"])[1]
    assert h2 - h1 < 6 * 30 + 20 + 30, "a second row adds its view, header and gap, no x axis"


def test_facet_y_title_stands_beside_the_axis_not_over_the_panel_headers() -> None:
    spec = charts.fit(_facet(3, y_title="提问的位置"), charts.Room(1600, 500, grow=True))
    axis = spec["spec"]["encoding"]["y"]["axis"]
    assert axis["titleAlign"] == "right" and axis["titleX"] < 0
    single = charts.fit(_facet(1, y_title="query"), charts.Room(1600, 500, grow=True))
    assert "titleAlign" not in single["encoding"]["y"]["axis"], "one view keeps the theme's"
    assert exports.chart_svg(spec).lstrip().startswith("<svg")


def test_a_title_wider_than_the_room_does_not_shrink_the_chart() -> None:
    title = "a title much longer than the small heatmap under it, " * 3
    chart = charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=30, title=title)
    spec = charts.to_spec(chart, presenter=True)
    fitted = charts.fit(spec, charts.Room(900, 500, grow=True))
    assert fitted["width"]["step"] > spec["width"]["step"], "the views grow; the title sticks out"


def test_a_title_wider_than_its_view_counts_in_the_width() -> None:
    title = "where the query looks in every layer, averaged over the heads"
    chart = charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=20, title=title)
    spec = charts.to_spec(chart, presenter=True)
    wide = charts._extent(spec, spec["datasets"])[0]
    assert wide > len(title) * 23 * 0.45 > 4 * spec["width"]["step"] + 100
    assert charts._extent(spec, spec["datasets"], titles=False)[0] < wide


def test_csv_export_drops_float_noise_and_keeps_significant_digits() -> None:
    import pandas as pd

    data = pd.DataFrame({"v": [-1.8369701987210297e-16, 0.1 + 0.2, 1.3e-10, 12345.678901]})
    lines = exports.csv_text(data).lstrip("\ufeff").split()
    assert lines == ["v", "0", "0.3", "1.3e-10", "12345.7"]


def test_png_and_svg_carry_the_views_settings_as_a_caption() -> None:
    heat = charts.to_spec(charts.heatmap({"w": np.eye(2)}, list("ab"), list("ab")), False)
    titled = exports.with_caption(heat, "T = 0.5, query = Russia")
    assert titled["title"]["text"] == heat["title"]["text"], "the title stays as it was"
    assert titled["title"]["subtitle"] == "T = 0.5, query = Russia"
    svg = exports.chart_svg(heat, caption="T = 0.5, query = Russia")
    assert "T = 0.5, query = Russia" in svg and "w (2 × 2)" in svg, "title, caption under it"
    untitled = exports.with_caption({"mark": "point"}, "n = 3")
    assert untitled["title"]["text"] == "n = 3"
    assert exports.with_caption(heat, None) is heat


def test_shrunk_cells_drop_numbers_that_would_overlap() -> None:
    spec = charts.to_spec(
        charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=24), False
    )
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text"]
    small = charts._scaled(spec, 0.6)
    assert [layer["mark"]["type"] for layer in small["layer"]] == ["rect"]
    assert [layer["mark"]["type"] for layer in charts._scaled(spec, 1.5)["layer"]] == [
        "rect",
        "text",
    ]


def test_stacked_charts_go_side_by_side_on_a_wide_low_projector() -> None:
    m = np.eye(6)
    rows = [charts.heatmap({"a": m, "b": m}, list("abcdef"), list("abcdef"), name=n) for n in "xy"]
    spec = charts.to_spec(charts.concat(rows, "vconcat"), presenter=True)
    laid = charts.fit(spec, charts.Room(1660, 520, grow=True))
    assert "hconcat" in laid and "vconcat" not in laid
    assert charts.fit(spec, charts.Room(880)).get("vconcat"), "a laptop page keeps the stack"


def test_live_domain_strip_keeps_its_spec_when_only_the_values_change() -> None:
    rows, cols = ["a", "b"], ["d0", "d1", "d2"]
    small, large = np.arange(6.0).reshape(2, 3), -40 * np.arange(6.0).reshape(2, 3)

    def strip(m: np.ndarray, live: bool) -> dict:
        items = [("X", m, rows, cols), ("A", np.full((2, 2), 0.5), rows, rows)]
        spec = _spec(charts.matrix_strip(items, kinds={"A": "weights"}, live_domain=live))
        return {k: v for k, v in spec.items() if k != "datasets"}

    assert strip(small, True) == strip(large, True)  # the browser only swaps the data
    assert strip(small, False) != strip(large, False)  # numeric domain and ink threshold
    x, a = strip(small, True)["hconcat"]
    assert "domain" not in x["layer"][0]["encoding"]["color"]["scale"]
    assert a["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1]  # weights: fixed
    limits = x["layer"][-1]  # invisible cells at ±max|value| span the symmetric domain
    assert limits["mark"]["opacity"] == 0 and limits["encoding"]["color"]["field"] == "_limit"
    assert {"calculate": "-datum._top", "as": "_low"} in limits["transform"]


def test_live_domain_panels_share_one_browser_domain_and_keep_their_spec() -> None:
    rows = ["a", "b"]

    def panels(m: np.ndarray) -> dict:
        return _spec(charts.heatmap({"A": m, "B": m / 2}, rows, rows, "scores", live_domain=True))

    small, large = panels(np.eye(2)), panels(np.array([[-30.0, 1.0], [2.0, 4.0]]))
    assert {k: v for k, v in small.items() if k != "datasets"} == {
        k: v for k, v in large.items() if k != "datasets"
    }  # the browser only swaps the data
    # max|value| is taken before faceting, so the ink threshold is the same in both panels
    top = {"joinaggregate": [{"op": "max", "field": "_abs", "as": "_top"}]}
    assert top in small["transform"]
    (text,) = [layer for layer in small["spec"]["layer"] if layer["mark"]["type"] == "text"]
    assert "transform" not in text and "datum._top" in json.dumps(text["encoding"]["color"])
    assert "domain" not in small["spec"]["layer"][0]["encoding"]["color"]["scale"]


def test_a_fixed_domain_in_the_data_draws_as_that_domain_and_keeps_the_spec() -> None:
    import vl_convert as vlc

    m = np.array([[0.5, -2.5, np.nan], [0.2, 0.1, 2.0]])  # −2.5 and 2.0: white ink at ±3

    def spec(domain: list[float], live: bool) -> dict:
        chart = charts.heatmap({"K": m}, ["a", "b"], ["d0", "d1", "d2"], "values",
                               domain=domain, live_domain=live)  # fmt: skip
        return charts.to_spec(chart, False)

    def fills(s: dict) -> list[str]:  # every cell's colour and ink, up to the legend's
        drawn = re.findall(r'fill="([^"]+)"', vlc.vegalite_to_svg(json.dumps(s)))
        return drawn[: next(k for k, f in enumerate(drawn) if f.startswith("url("))]

    fixed, live = fills(spec([-3.0, 3.0], False)), fills(spec([-3.0, 3.0], True))
    assert fixed.count("white") == 2  # the ink of −2.5 and 2.0
    assert live[: len(fixed)] == fixed and len(live) == len(fixed) + 2  # + 2 invisible limits
    assert live != fills(spec([-6.0, 6.0], True))  # the domain in the data is what is drawn
    bare = [{k: v for k, v in spec(d, True).items() if k != "datasets"} for d in ([-3, 3], [-6, 6])]
    assert bare[0] == bare[1]  # another domain: the browser only swaps the data


def test_heatmap_axes_follow_the_label_order_from_the_data_not_from_the_spec() -> None:
    import vl_convert as vlc

    def spec(rows: list[str], cols: list[str]) -> dict:
        m = np.arange(12.0).reshape(3, 4)
        return charts.to_spec(charts.heatmap({"W": m}, rows, cols, "values", annotate=False), False)

    drawn = spec(["zeta", "alpha", "mu"], ["yy", "bb", "kk", "cc"])
    labels = re.findall(r">(zeta|alpha|mu|yy|bb|kk|cc)<", vlc.vegalite_to_svg(json.dumps(drawn)))
    assert labels == ["yy", "bb", "kk", "cc", "zeta", "alpha", "mu"]  # as given, not sorted
    other = spec(["it · L14 H8", "b", "c"], ["w", "x", "y", "z"])
    assert {k: v for k, v in drawn.items() if k != "datasets"} == {
        k: v for k, v in other.items() if k != "datasets"
    }  # other labels: the browser only swaps the data


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


def test_fit_reads_the_labels_afresh_on_every_call() -> None:
    spec = charts.to_spec(charts.heatmap({"w": np.eye(3)}, list("abc"), list("abc")), False)
    narrow = charts._extent(charts.fit(spec, charts.Room(2000)), spec["datasets"])[0]
    for row in spec["datasets"]["cells"]:
        row["row"] *= 12  # the same list of rows, now with long labels
    wide = charts._extent(charts.fit(spec, charts.Room(2000)), spec["datasets"])[0]
    assert wide > narrow + 50


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


def test_cell_sizes_come_in_steps_so_a_little_more_width_keeps_the_cell() -> None:
    assert charts.fit_cell(4, width=420, hi=56) == 56, "fits at the largest size: that size"
    assert charts.LADDER == 2 ** (1 / 8)
    assert charts.fit_cell(32, width=790, hi=26) == 24, "24.7 px fit: 2^(37/8) = 24.7"
    cells = {charts.fit_cell(n, width=790, hi=26) for n in (33, 34)}
    assert cells == {22}, "23.9 and 23.2 px fit: the same step, 2^(36/8) = 22.6"
    assert charts.fit_cell(36, width=790, hi=26) == 20, "21.9 px fit: 2^(35/8) = 20.7"
    assert charts.fit_cell(400, width=790, lo=10) == 10


def test_a_chart_too_wide_shrinks_by_a_step_of_the_ladder() -> None:
    chart = charts.heatmap({"w": np.eye(40)}, charts.dim_labels(40), charts.dim_labels(40), cell=20)
    spec = charts.to_spec(chart, presenter=False)
    fitted = charts.fit(spec, charts.Room(700))
    f = fitted["width"]["step"] / spec["width"]["step"]
    assert f == pytest.approx(charts.LADDER ** round(math.log(f, charts.LADDER)), rel=0.01)
    assert charts._extent(fitted, spec["datasets"])[0] <= 701, "it fits"
    bigger = charts.fit(charts.to_spec(chart, False), charts.Room(int(700 * charts.LADDER)))
    assert bigger["width"]["step"] > fitted["width"]["step"], "a step more room: a step larger"


def test_a_strip_keeps_its_spec_when_d_model_grows_by_one() -> None:
    """The browser then swaps the new cells into the chart on screen (no rebuild)."""

    def strip(d_model: int) -> dict:
        rng = np.random.default_rng(d_model)
        x, w = rng.normal(size=(6, d_model)), rng.normal(size=(d_model, 4))
        tokens, dims, cols = list("abcdef"), charts.dim_labels(d_model), charts.dim_labels(4, "q")
        items = [("X", x, tokens, dims), ("W_Q", w, dims, cols), ("Q", x @ w, tokens, cols)]
        spec = charts.matrix_strip(items, live_domain=True)
        return charts.fit(charts.to_spec(spec, presenter=False), charts.Room(880))

    a, b = strip(8), strip(9)
    assert {**a, "datasets": None} == {**b, "datasets": None}, "only the data differs"
    assert {"X (6 × 8)", "W_Q (8 × 4)"} <= set(_drawn_text(a))
    assert {"X (6 × 9)", "W_Q (9 × 4)"} <= set(_drawn_text(b)), "titles from the new cells"
