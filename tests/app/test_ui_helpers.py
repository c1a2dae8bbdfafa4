"""ui helpers without a running app: exports, params specs, safe text, page registry (the
charts package: tests/app/test_charts_<module>.py)."""

import io

import numpy as np
import pytest

from ui import charts, exports
from ui.pages import PAGES, page_info
from ui.params import Choice, Flag, Float, Int, Text, divisor_choice
from ui.safe import plain


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
