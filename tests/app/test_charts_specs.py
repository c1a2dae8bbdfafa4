"""ui.charts.specs: the chart builders (heatmaps, strips, bars, lines, histograms, layers)."""

import html
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from ui import charts, exports
from ui.charts.specs import LINK_COLOR


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


def colour(view: dict) -> dict:
    """The colour encoding of a heatmap view's cells: the rect layer drawn from the values,
    found by what it draws, not by its place among the layers."""
    layers = view.get("layer") or view["spec"]["layer"]
    (cells,) = [
        layer
        for layer in layers
        if layer["mark"].get("type") == "rect"
        and layer["mark"].get("opacity") != 0
        and layer["encoding"].get("color", {}).get("field") == "value"
    ]
    return cells["encoding"]["color"]


def test_weight_heatmap_has_fixed_unit_scale_numbers_and_shape_title() -> None:
    w = np.full((6, 6), 1 / 6)
    spec = _spec(charts.heatmap({"weights": w}, list("abcdef"), list("abcdef")))
    assert "weights (6 × 6)" in _drawn_text(spec)
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert text["mark"]["type"] == "text"
    cells = spec["datasets"][spec["data"]["name"]]
    assert len(cells) == 36 and cells[1] == {
        "panel": "weights",
        "row": "a",
        "col": "b",
        "i": 0,
        "j": 1,
        "value": 1 / 6,
        "text": "0.17",
    }


def test_score_heatmap_is_diverging_and_symmetric() -> None:
    s = np.array([[1.0, -3.0], [0.5, 2.0]])
    spec = _spec(charts.heatmap({"scores": s}, ["a", "b"], ["a", "b"], kind="scores"))
    assert colour(spec)["scale"]["domain"] == [-3.0, 3.0]
    fixed = _spec(charts.heatmap({"s": s}, ["a", "b"], ["a", "b"], "scores", domain=[-5, 5]))
    assert colour(fixed)["scale"]["domain"] == [-5, 5]


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
    enc = charts.lines(data, "n", "y", "s", log_x=True)["encoding"]
    assert enc["x"]["axis"]["labelExpr"].endswith("? datum.label : ''")
    assert enc["x"]["axis"]["labelOverlap"] == "greedy"
    assert "labelExpr" not in enc["y"].get("axis", {}), "a linear axis keeps every label"


def test_a_framed_row_is_outlined_across_the_panel() -> None:
    spec = charts.framed(charts.heatmap({"w": np.eye(3)}, list("abc"), list("abc"), cell=30), 1)
    (frame,) = [layer for layer in spec["layer"] if layer["mark"].get("stroke") == charts.FRAME]
    assert frame["transform"] == [{"filter": "datum.i == 1"}]
    assert frame["encoding"]["x2"] == {"value": "width"}, "to the view's right edge"


def _heads(seed: int = 0, heads: int = 3) -> dict[str, np.ndarray]:
    """``heads`` panels of 4 × 4 attention weights (rows sum to 1)."""
    rng = np.random.default_rng(seed)
    return {f"head {h}": rng.dirichlet(np.ones(4), size=4) for h in range(heads)}


def _linked(panels: dict[str, np.ndarray], link: str | None, **kw: object) -> dict:
    """A heatmap of ``panels`` (4 × 4 each) with ``link=link`` (None: the option left out)."""
    option = {} if link is None else {"link": link}
    return _spec(charts.heatmap(panels, list("abcd"), list("abcd"), cell=30, **option, **kw))


# what each ``link`` selects and outlines: the index field, the label the outline's rects
# are grouped by, the axis its rect spans (value channels) and the band it sits in
LINKS = {
    "rows": ("i", "row", ("x", "x2", "width"), "height"),
    "cols": ("j", "col", ("y", "y2", "height"), "width"),
}


@pytest.mark.parametrize("link", ["rows", "cols"])
@pytest.mark.parametrize("heads", [1, 3], ids=["one panel", "facets"])
def test_linked_views_add_a_selection_on_the_index_and_an_outline_and_nothing_else(
    heads, link
) -> None:
    index, label, (across, across2, edge), band = LINKS[link]
    panels = _heads(heads=heads)
    plain = _linked(panels, None, name="weights")
    linked = _linked(panels, link, name="weights")
    view = linked["spec"] if heads > 1 else linked
    cells, *drawn, outline = view["layer"]
    point, pin = cells.pop("params")  # held by the cells' layer
    view["layer"] = [cells, *drawn]
    assert linked == plain, "the selections and the outline are all the option adds"

    for param in (point, pin):
        assert param["select"]["type"] == "point"
        assert param["select"]["fields"] == [index], "the same row or column in any panel"
        assert param["select"]["resolve"] == "global", "one index for every panel"
    assert (point["name"], pin["name"]) == ("weights_point", "weights_pin")
    assert (point["select"]["on"], point["select"]["clear"]) == ("pointerover", "pointerout")
    assert pin["select"]["on"] == "click" and "weights_pin_store" in pin["select"]["toggle"]
    assert f"isValid(event.item.datum.{index})" in pin["select"]["clear"], "beside: no cell"
    shown = outline["encoding"]["strokeOpacity"]
    assert shown["value"] == 0, "nobody points: nothing is drawn"
    assert shown["condition"]["test"] == {
        "or": [{"param": "weights_point", "empty": False}, {"param": "weights_pin", "empty": False}]
    }
    assert outline["mark"]["stroke"] == LINK_COLOR and outline["mark"]["fillOpacity"] == 0
    assert outline["encoding"][across] == {"value": 0}
    assert outline["encoding"][across2] == {"value": edge}, "across the panel"
    assert 0 < outline["mark"][band]["band"] < 1, "inside its row's or column's band"
    kept = {across, across2, "strokeOpacity", "tooltip"}
    assert set(outline["encoding"]) == kept, "the band's own axis comes from the view"
    assert outline["encoding"]["tooltip"] is None, "the pointer passes through to the cells"
    group = {"groupby": [label, index]}
    assert group.items() <= outline["transform"][0].items(), "a rect a row or column"


def test_the_link_is_off_unless_asked_for() -> None:
    panels = _heads()
    plain = _linked(panels, None)
    assert "params" not in json.dumps(plain)
    assert LINK_COLOR not in json.dumps(plain)


@pytest.mark.parametrize("link", ["rows", "cols"])
def test_linked_views_keep_the_spec_when_only_the_values_change(link) -> None:
    small, other = _linked(_heads(0), link), _linked(_heads(1), link)
    assert small["datasets"] != other["datasets"]
    assert {**small, "datasets": None} == {**other, "datasets": None}, "the browser swaps data"


def test_linked_heatmaps_side_by_side_keep_their_selections_apart() -> None:
    import vl_convert as vlc

    parts = [_linked(_heads(0), "rows", name="a"), _linked(_heads(1), "cols", name="b")]
    both = charts.concat(parts)
    names = [p["name"] for part in both["hconcat"] for p in part["spec"]["layer"][0]["params"]]
    assert names == ["a_point", "a_pin", "b_point", "b_pin"]
    vega = vlc.vegalite_to_vega(json.dumps(charts.to_spec(both, False)))
    stores = {d["name"] for d in vega["data"] if d["name"].endswith("_store")}
    assert stores == {f"{n}_store" for n in names}


@pytest.mark.parametrize("link", ["rows", "cols"])
def test_an_export_of_a_linked_heatmap_draws_no_outline(link) -> None:
    """An export has no pointer: the chart as drawn without the option, pixel for pixel."""
    panels = _heads()
    plain, linked = (charts.to_spec(_linked(panels, k), False) for k in (None, link))
    svg = exports.chart_svg(linked)
    outlines = re.findall(rf'<path[^>]*stroke="{LINK_COLOR}"[^>]*>', svg)
    assert len(outlines) == 3 * 4, "a rect for each row (or column) of each panel"
    assert all('stroke-opacity="0"' in path for path in outlines), "none of them seen"

    def pixels(spec: dict) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(exports.chart_png(spec))).convert("RGB"))

    assert np.array_equal(pixels(linked), pixels(plain))


@pytest.mark.parametrize("link", ["rows", "cols"])
def test_a_pinned_row_or_column_is_outlined_inside_its_band_across_the_panel(link) -> None:
    """Drawn with index 2 pinned (its selection stored, as after a click), a 4 × 4 heatmap of
    30 px cells outlines one rect: inside the third row's (column's) band, from one edge of
    the panel to the other."""
    import vl_convert as vlc

    index = LINKS[link][0]
    spec = charts.to_spec(_linked({"w": np.eye(4)}, link, name="w"), False)
    vega = vlc.vegalite_to_vega(json.dumps(spec))
    store = next(d for d in vega["data"] if d["name"] == "w_pin_store")
    field = {"field": index, "channel": None, "type": "E"}
    store["values"] = [{"unit": "layer_0", "fields": [field], "values": [2]}]
    svg = vlc.vega_to_svg(json.dumps(vega))
    rects = re.findall(rf'<path[^>]*stroke="{LINK_COLOR}"[^>]*>', svg)
    seen = [p for p in rects if 'stroke-opacity="1"' in p]
    assert len(rects) == 4 and len(seen) == 1, "the pinned one's rect only"
    rect = r'd="M([\d.]+),([\d.]+)h([\d.]+)v([\d.]+)'  # the rect's corner, width, height
    x, y, w, h = map(float, re.search(rect, seen[0]).groups())
    along, across = ((y, h), (x, w)) if link == "rows" else ((x, w), (y, h))
    assert along[0] >= 60 and along[0] + along[1] <= 90, "inside the band of index 2"
    assert along[1] >= 24, "about a cell wide"
    assert across[0] <= 2 and across[0] + across[1] >= 118, "across the panel"


def test_legend_can_be_hidden() -> None:
    spec = charts.heatmap({"w": np.eye(2)}, list("ab"), list("ab"), legend=False)
    assert colour(spec)["legend"] is None


def test_facets_wrap_after_the_given_number_of_panels() -> None:
    panels = {f"h{i}": np.eye(4) for i in range(6)}
    spec = charts.heatmap(panels, list("abcd"), list("abcd"), cell=30, columns=5)
    assert spec["columns"] == 5 and spec["facet"]["sort"] == list(panels)
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
    assert colour(x)["scale"]["domain"] == [-5.0, 5.0]
    assert colour(a)["scale"]["domain"] == [0, 1]
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
        charts.histogram(charts.histogram_rows(np.arange(3.0), {"a": np.ones(2)}), ["a"], "t", "x"),
    ):
        tips = _tooltips(_spec(chart))
        assert tips and all("title" in tip and tip["title"] != tip["field"] for tip in tips)


def test_histogram_overlays_series_from_zero_in_fixed_colours() -> None:
    edges = np.array([0.0, 1.0, 2.0])
    rows = charts.histogram_rows(edges, {"a": np.array([3, 1]), "b": np.array([1, 2])})
    spec = _spec(charts.histogram(rows, ["a", "b"], "scores", "score", "n"))
    assert spec["mark"] == {"type": "bar", "opacity": 0.6, "binSpacing": 0}
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["x2"], enc["y"]["field"]) == ("start", {"field": "end"}, "count")
    assert enc["y2"] == {"datum": 0}, "bars start at 0, one series over the other"
    assert enc["color"]["scale"]["domain"] == ["a", "b"]
    assert (spec["title"], enc["x"]["title"], enc["y"]["title"]) == ("scores", "score", "n")
    rows = spec["datasets"][spec["data"]["name"]]
    assert [(r["start"], r["end"], r["count"], r["series"]) for r in rows] == [
        (0.0, 1.0, 3, "a"),
        (1.0, 2.0, 1, "a"),
        (0.0, 1.0, 1, "b"),
        (1.0, 2.0, 2, "b"),
    ]
    assert {"score", "a", "b", "scores"} <= set(_drawn_text(spec))


def test_lines_draw_each_series_with_points_titles_and_dashed_theory() -> None:
    theory = [False, False, True, True]
    data = pd.DataFrame({"d_k": [1, 4, 1, 4], "v": [1.0, 4.0, 1.0, np.nan], "s": "raw"})
    looks = {"title": "variance", "x_title": "d_k", "y_title": "var", "width": 300, "height": 200}
    line = charts.lines(data.assign(theory=theory), "d_k", "v", "s", dashed="theory", **looks)
    spec = _spec(line)
    assert spec["mark"] == {"type": "line", "point": True}
    assert (spec["width"], spec["height"], spec["title"]) == (300, 200, "variance")
    enc = spec["encoding"]
    assert [(enc[c]["field"], enc[c]["title"]) for c in "xy"] == [("d_k", "d_k"), ("v", "var")]
    assert "scale" not in enc["x"], "linear: Vega-Lite's default"
    assert enc["strokeDash"] == {"field": "theory", "type": "nominal", "legend": None}
    assert enc["color"]["legend"] == {"orient": "bottom"}
    rows = spec["datasets"]["lines"]
    assert [r["v"] for r in rows] == [1.0, 4.0, 1.0, None], "a missing value is null, not NaN"
    assert {"variance", "d_k", "var", "raw"} <= set(_drawn_text(spec))


def test_a_layout_names_its_data_and_its_caller_adds_the_rows() -> None:
    spec = charts.lines("curves", "d_k", "v", "s", log_x=True, log_y=True, y_format="~s")
    assert spec["data"] == {"name": "curves"} and "datasets" not in spec
    assert spec["encoding"]["x"]["scale"] == {"type": "log"}
    assert spec["encoding"]["y"]["axis"]["format"] == "~s"
    hist = charts.histogram("hist", ["a"], "t", "x")
    assert hist["data"] == {"name": "hist"} and "datasets" not in hist
    rows = [{"d_k": 1, "v": 10.0, "s": "a"}, {"d_k": 100, "v": 2000.0, "s": "a"}]
    drawn = _drawn_text({**spec, "datasets": {"curves": rows}})
    assert {"1", "100", "10", "1k"} <= set(drawn), "log axes labelled at powers of ten, ~s"


def test_layers_share_one_view_each_from_its_own_data() -> None:
    data = pd.DataFrame({"x": [1, 2], "y": [1.0, 2.0], "s": ["a", "a"]})
    line = charts.lines(data, "x", "y", "s", width=300, height=200)
    rule = {
        "datasets": {"now": [{"x": 1.5}]},
        "data": {"name": "now"},
        "mark": {"type": "rule"},
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
    }
    spec = _spec(charts.layer([line, rule], title="both"))
    assert (spec["width"], spec["height"], spec["title"]) == (300, 200, "both")
    assert set(spec["datasets"]) == {"lines", "now"}
    assert [layer["data"] for layer in spec["layer"]] == [{"name": "lines"}, {"name": "now"}]
    assert all("width" not in layer and "datasets" not in layer for layer in spec["layer"])
    assert list(charts.table(spec).columns[:3]) == ["x", "y", "s"]
    other = charts.lines(data.assign(y=[3.0, 4.0]), "x", "y", "s")  # also dataset "lines"
    with pytest.raises(ValueError, match="lines"):
        charts.layer([line, other])


def test_panels_become_one_faceted_chart() -> None:
    spec = _spec(charts.heatmap({"h1": np.eye(3), "h2": np.eye(3)}, list("abc"), list("abc")))
    assert spec["facet"]["field"] == "panel"
    assert all("data" not in layer for layer in spec["spec"]["layer"]), "each panel its own cells"


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
    assert "domain" not in colour(x)["scale"]
    assert colour(a)["scale"]["domain"] == [0, 1]  # weights: fixed
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
    assert "domain" not in colour(small)["scale"]


def test_a_fixed_domain_in_the_data_draws_as_that_domain_and_keeps_the_spec() -> None:
    import vl_convert as vlc

    m = np.array([[0.5, -2.5, np.nan], [0.2, 0.1, 2.0]])  # −2.5 and 2.0: white ink at ±3

    def spec(domain: list[float], live: bool) -> dict:
        chart = charts.heatmap(
            {"K": m}, ["a", "b"], ["d0", "d1", "d2"], "values", domain=domain, live_domain=live
        )
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
