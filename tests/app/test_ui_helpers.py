"""ui helpers without a running app: charts, exports, params specs, safe text, page registry."""

import io
import json

import numpy as np
import pytest

from ui import charts, exports
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
    return json.loads(chart.to_json())


def test_weight_heatmap_has_fixed_unit_scale_numbers_and_shape_title() -> None:
    w = np.full((6, 6), 1 / 6)
    spec = _spec(charts.heatmap({"weights": w}, list("abcdef"), list("abcdef")))
    assert spec["title"] == "weights (6 × 6)"
    under, rect, text = spec["layer"]
    assert under["mark"]["color"] == "#d9d9d9", "masked cells show grey"
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert text["mark"]["type"] == "text"


def test_score_heatmap_is_diverging_and_symmetric() -> None:
    s = np.array([[1.0, -3.0], [0.5, 2.0]])
    spec = _spec(charts.heatmap({"scores": s}, ["a", "b"], ["a", "b"], kind="scores"))
    assert spec["layer"][1]["encoding"]["color"]["scale"]["domain"] == [-3.0, 3.0]


def test_masked_scores_show_minus_infinity_not_nan() -> None:
    s = np.array([[1.0, -np.inf], [0.5, 2.0]])
    data = charts.matrix_frame(s, ["a", "b"], ["a", "b"])
    assert list(data["text"]) == ["1.00", "−∞", "0.50", "2.00"]
    assert data["value"].isna().sum() == 1


def test_large_heatmaps_drop_cell_numbers() -> None:
    n = charts.MAX_ANNOTATED + 1
    spec = _spec(
        charts.heatmap({"w": np.eye(n)}, [str(i) for i in range(n)], [str(i) for i in range(n)])
    )
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "rect"]


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
    chart = charts.heatmap({"weights": np.eye(3)}, list("abc"), list("abc"))
    for spec in (charts.to_spec(chart, False), charts.themed(chart, True)):
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
