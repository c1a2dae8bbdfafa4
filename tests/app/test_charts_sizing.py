"""ui.charts.sizing: the room a chart gets and the chart fitted to it."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from tests.app.conftest import facet_spec
from ui import charts, exports
from ui.charts import estimate, sizing


def _three_panels(cell: int = 56) -> dict:
    m = np.linspace(-1, 1, 36).reshape(6, 6)
    return charts.concat(
        [
            charts.heatmap({f"p{i}": m}, list("abcdef"), list("abcdef"), "scores", cell=cell)
            for i in range(3)
        ]
    )


def test_a_chart_too_wide_for_a_laptop_wraps_or_shrinks_to_the_room() -> None:
    spec = charts.to_spec(_three_panels(), presenter=False)
    wide = estimate.extent(spec, spec["datasets"])[0]
    space = charts.Room(charts.PAGE_WIDTH)
    assert wide > space.width, "the test chart must start too wide"
    fitted = charts.fit(spec, space)
    assert estimate.extent(fitted, fitted["datasets"])[0] <= space.width
    parts = fitted.get("concat") or fitted.get("hconcat")
    assert len(parts) == 3, "no panel is dropped"
    assert fitted["datasets"] is spec["datasets"], "data is shared, not copied"
    assert exports.chart_png(fitted).startswith(b"\x89PNG"), "still a valid spec"


def test_presenter_room_grows_a_small_chart_cells_text_and_frame() -> None:
    m = np.eye(4)
    small = charts.framed(charts.heatmap({"w": m}, list("abcd"), list("abcd"), cell=30), 1)
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
        data = pd.DataFrame(
            {"k": ["a", "b"] * 2, "w": [0.1, 0.9, 0.5, 0.5], "panel": [first] * 2 + [second] * 2}
        )
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


def test_facet_y_title_stands_beside_the_axis_not_over_the_panel_headers() -> None:
    spec = charts.fit(facet_spec(3, y_title="提问的位置"), charts.Room(1600, 500, grow=True))
    axis = spec["spec"]["encoding"]["y"]["axis"]
    assert axis["titleAlign"] == "right" and axis["titleX"] < 0
    single = charts.fit(facet_spec(1, y_title="query"), charts.Room(1600, 500, grow=True))
    assert "titleAlign" not in single["encoding"]["y"]["axis"], "one view keeps the theme's"
    assert exports.chart_svg(spec).lstrip().startswith("<svg")


def test_a_title_wider_than_the_room_does_not_shrink_the_chart() -> None:
    title = "a title much longer than the small heatmap under it, " * 3
    chart = charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=30, title=title)
    spec = charts.to_spec(chart, presenter=True)
    fitted = charts.fit(spec, charts.Room(900, 500, grow=True))
    assert fitted["width"]["step"] > spec["width"]["step"], "the views grow; the title sticks out"


def test_shrunk_cells_drop_numbers_that_would_overlap() -> None:
    spec = charts.to_spec(
        charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=24), False
    )
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text"]
    small = sizing.scaled(spec, 0.6)
    assert [layer["mark"]["type"] for layer in small["layer"]] == ["rect"]
    assert [layer["mark"]["type"] for layer in sizing.scaled(spec, 1.5)["layer"]] == [
        "rect",
        "text",
    ]


def _fonts(node: object) -> list[float]:
    """Every mark font size in a spec."""
    if isinstance(node, list):
        return [f for x in node for f in _fonts(x)]
    if not isinstance(node, dict):
        return []
    mark = node.get("mark")
    own = [mark["fontSize"]] if isinstance(mark, dict) and "fontSize" in mark else []
    return own + [f for k, v in node.items() if k not in ("datasets", "config") for f in _fonts(v)]


def test_no_chart_text_below_11_px_fewer_numbers_instead() -> None:
    """A heatmap whose cells fit only 9-10 px numbers (16 tokens, /encoder's): fitted to a
    student's room that already holds it, it keeps its cells and loses the numbers; on a
    slide, grown, the numbers come back; a text mark set smaller is drawn at 11 px."""
    m = np.random.default_rng(0).random((16, 16))
    labels = [f"t{i}" for i in range(16)]
    chart = charts.heatmap({"w": m}, labels, labels, cell=20, annotate=True)
    spec = charts.to_spec(chart, False)
    assert min(_fonts(spec)) < sizing.MIN_CELL_FONT, "the test chart must start too small"
    fitted = charts.fit(spec, charts.Room(charts.PAGE_WIDTH, charts.PAGE_HEIGHT))
    assert [layer["mark"]["type"] for layer in fitted["layer"]] == ["rect"]
    slide = charts.fit(charts.to_spec(chart, True), charts.Room(1600, 900, grow=True))
    assert "text" in [layer["mark"]["type"] for layer in slide["layer"]]
    assert min(_fonts(slide)) >= sizing.MIN_CELL_FONT
    note = {**spec, "layer": [*spec["layer"][:1], {"mark": {"type": "text", "fontSize": 9}}]}
    assert _fonts(sizing.scaled(note, 1.0)) == [], "a lone small text layer is left out too"
    label = {"mark": {"type": "text", "fontSize": 9}, "data": {"values": [{}]}}
    assert _fonts(charts.fit(label, charts.Room(charts.PAGE_WIDTH))) == [11]
    assert sizing.MIN_CELL_FONT == 11


def test_stacked_charts_go_side_by_side_on_a_wide_low_projector() -> None:
    m = np.eye(6)
    rows = [charts.heatmap({"a": m, "b": m}, list("abcdef"), list("abcdef"), name=n) for n in "xy"]
    spec = charts.to_spec(charts.concat(rows, "vconcat"), presenter=True)
    laid = charts.fit(spec, charts.Room(1660, 520, grow=True))
    assert "hconcat" in laid and "vconcat" not in laid
    assert charts.fit(spec, charts.Room(880)).get("vconcat"), "a laptop page keeps the stack"


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
    assert estimate.extent(fitted, spec["datasets"])[0] <= 701, "it fits"
    bigger = charts.fit(charts.to_spec(chart, False), charts.Room(int(700 * charts.LADDER)))
    assert bigger["width"]["step"] > fitted["width"]["step"], "a step more room: a step larger"


def test_room_is_the_page_column_for_students_and_the_projector_in_presenter_mode() -> None:
    student, presenter = SimpleNamespace(presenter=False), SimpleNamespace(presenter=True)
    assert charts.room(student) == charts.Room(charts.PAGE_WIDTH, charts.PAGE_HEIGHT)
    half = charts.Room(charts.PAGE_WIDTH // 2, charts.PAGE_HEIGHT)
    assert charts.room(student, 0.5, height=900) == half, "never taller"
    assert charts.room(student, 1.0, height=300) == charts.Room(charts.PAGE_WIDTH, 300)
    assert charts.room(presenter) == charts.Room(1660, 520, grow=True)
    assert charts.room(presenter, 0.5, 300) == charts.Room(830, 300, grow=True)


def test_a_heatmap_shrunk_below_16_px_cells_skips_labels_that_would_touch() -> None:
    labels = [f"token{i}" for i in range(20)]
    spec = charts.heatmap({"w": np.eye(20)}, labels, labels, cell=30)  # slanted: no skipping
    assert "labelOverlap" not in spec["encoding"]["x"]["axis"]
    fitted = charts.fit(charts.to_spec(spec, False), charts.Room(400, 400))
    assert fitted["width"]["step"] < 16  # scaled down to fit the room
    for channel in ("x", "y"):
        assert fitted["encoding"][channel]["axis"]["labelOverlap"] == "greedy"
