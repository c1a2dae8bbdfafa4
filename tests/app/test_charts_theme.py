"""ui.charts.theme: the house look of every chart."""

from ui import charts


def test_presenter_theme_makes_axis_labels_at_least_16px() -> None:
    chart = charts.lines(
        __import__("pandas").DataFrame({"x": [1, 2], "y": [1, 2], "s": ["a", "a"]}), "x", "y", "s"
    )
    assert charts.to_spec(chart, presenter=True)["config"]["axis"]["labelFontSize"] >= 16
    assert charts.to_spec(chart, presenter=False)["config"]["axis"]["labelFontSize"] < 16
