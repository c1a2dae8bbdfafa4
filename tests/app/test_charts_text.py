"""ui.charts.text: numbers, labels and titles as the charts and the pages print them."""

import numpy as np

from ui import charts


def test_repeated_tokens_get_unique_axis_labels() -> None:
    assert charts.unique_labels(["the", "cat", "the"]) == ["the₀", "cat", "the₂"]
    assert charts.unique_labels(["我", "爱", "我"]) == ["我₀", "爱", "我₂"]


def test_fmt_spells_out_infinities_and_uses_a_real_minus() -> None:
    assert charts.fmt(-np.inf) == "−∞"
    assert charts.fmt(np.inf) == "+∞"
    assert charts.fmt(-0.5) == "−0.50"


def test_vectorised_cell_text_matches_fmt() -> None:
    values = np.array([[-0.004, 1.005, -np.inf], [np.inf, np.nan, -12.5]])
    assert charts.fmt_cells(values) == [charts.fmt(v) for v in values.ravel()]
    assert charts.fmt_cells(values, 3)[0] == "−0.004"


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


def test_thousands_groups_digits_by_spaces():
    assert [charts.thousands(n) for n in (7, 1536, 49152, 134515008)] == [
        "7",
        "1 536",
        "49 152",
        "134 515 008",
    ]
