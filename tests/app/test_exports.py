"""ui.exports: charts as PNG/SVG offline, arrays as .npz without pickle, tables as CSV."""

import io

import numpy as np

from ui import charts, exports


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
