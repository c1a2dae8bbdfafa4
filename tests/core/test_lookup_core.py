"""The capitals table, lookup scores and the temperature sweep of core.lookup."""

import numpy as np
import pytest

from core.lookup import (
    CAPITALS,
    capital_table,
    hard_lookup,
    lookup_scores,
    polar_query,
    soft_lookup,
    temperature_sweep,
)


def test_capital_table_has_unit_keys_and_latitude_longitude_values():
    ids, keys, values = capital_table()
    assert ids == tuple(row[0] for row in CAPITALS)
    assert keys.shape == (len(ids), 2) and values.shape == (len(ids), 2)
    np.testing.assert_allclose(np.linalg.norm(keys, axis=1), 1.0)
    assert np.all(np.abs(values[:, 0]) <= 90) and np.all(np.abs(values[:, 1]) <= 180)
    np.testing.assert_allclose(values[ids.index("france")], [48.86, 2.35])


def test_capital_keys_point_in_distinct_directions():
    _, keys, _ = capital_table()
    cosines = keys @ keys.T
    np.testing.assert_allclose(np.diag(cosines), 1.0)
    assert np.max(cosines - np.eye(len(keys))) < 0.9  # no two keys closer than ~26°


@pytest.mark.parametrize("index", range(len(CAPITALS)))
def test_pointing_the_query_at_a_key_makes_the_hard_lookup_return_that_row(index):
    ids, keys, values = capital_table()
    i, value = hard_lookup(polar_query(CAPITALS[index][1], 1.0), keys, values)
    assert ids[i] == CAPITALS[index][0]
    np.testing.assert_array_equal(value, values[index])


def test_lookup_scores_are_dot_products_by_hand():
    keys = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]])
    np.testing.assert_allclose(lookup_scores(np.array([3.0, 1.0]), keys), [3.0, 2.0, -2.0])


def test_temperature_sweep_spans_the_log_range_and_rows_are_distributions():
    _, keys, _ = capital_table()
    temps, weights = temperature_sweep(polar_query(30.0, 1.5), keys, -2.0, 2.0, 81)
    assert temps.shape == (81,) and weights.shape == (81, len(keys))
    assert temps[0] == pytest.approx(0.01) and temps[-1] == pytest.approx(100.0)
    assert np.all(np.diff(np.log10(temps)) == pytest.approx(0.05))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)


def test_temperature_sweep_rows_equal_soft_lookup_at_each_temperature():
    _, keys, values = capital_table()
    q = polar_query(100.0, 1.2)
    temps, weights = temperature_sweep(q, keys, -1.0, 1.0, 5)
    for temperature, row in zip(temps, weights, strict=True):
        np.testing.assert_allclose(row, soft_lookup(q, keys, values, temperature)[0])


def test_top_weight_falls_as_temperature_rises_from_one_hot_to_uniform():
    _, keys, values = capital_table()
    q = polar_query(30.0, 1.5)
    _, weights = temperature_sweep(q, keys)
    top = weights.max(axis=1)
    assert np.all(np.diff(top) <= 1e-12)
    index, _ = hard_lookup(q, keys, values)
    assert weights[0, index] > 0.999999
    np.testing.assert_allclose(weights[-1], 1 / len(keys), atol=0.01)
