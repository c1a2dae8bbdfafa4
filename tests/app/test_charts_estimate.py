"""ui.charts.estimate: a chart's size in px, estimated from its spec."""

import numpy as np
import pytest

from tests.app.conftest import facet_spec
from ui import charts
from ui.charts import estimate


def test_facet_panels_share_one_y_axis_and_one_legend_in_the_size_estimate() -> None:
    one, four = facet_spec(1, y_title="query"), facet_spec(4, y_title="query", columns=4)
    w1 = estimate.extent(one, one["datasets"])[0]
    w4 = estimate.extent(four, four["datasets"])[0]
    assert w4 - w1 == pytest.approx(3 * (6 * 30 + 20), abs=1), "each panel adds a view and a gap"
    two_rows = facet_spec(4, columns=2)
    h1 = estimate.extent(facet_spec(2, columns=2), two_rows["datasets"])[1]
    h2 = estimate.extent(two_rows, two_rows["datasets"])[1]
    assert h2 - h1 < 6 * 30 + 20 + 30, "a second row adds its view, header and gap, no x axis"


def test_a_title_wider_than_its_view_counts_in_the_width() -> None:
    title = "where the query looks in every layer, averaged over the heads"
    chart = charts.heatmap({"w": np.eye(4)}, list("abcd"), list("abcd"), cell=20, title=title)
    spec = charts.to_spec(chart, presenter=True)
    wide = estimate.extent(spec, spec["datasets"])[0]
    assert wide > len(title) * 23 * 0.45 > 4 * spec["width"]["step"] + 100
    assert estimate.extent(spec, spec["datasets"], titles=False)[0] < wide


def test_fit_reads_the_labels_afresh_on_every_call() -> None:
    spec = charts.to_spec(charts.heatmap({"w": np.eye(3)}, list("abc"), list("abc")), False)
    narrow = estimate.extent(charts.fit(spec, charts.Room(2000)), spec["datasets"])[0]
    for row in spec["datasets"]["cells"]:
        row["row"] *= 12  # the same list of rows, now with long labels
    wide = estimate.extent(charts.fit(spec, charts.Room(2000)), spec["datasets"])[0]
    assert wide > narrow + 50
