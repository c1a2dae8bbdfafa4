"""Hard lookup is the cold limit of soft lookup."""

import numpy as np
import pytest

from core import hard_lookup, soft_lookup
from core.lookup import (
    CAPITALS,
    capital_table,
    lookup_scores,
    polar_query,
    temperature_sweep,
)

KEYS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
VALUES = np.array([[10.0], [20.0], [30.0], [40.0]])


def test_polar_query_by_hand():
    np.testing.assert_allclose(polar_query(90.0, 2.0), [0.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(polar_query(180.0, 1.0), [-1.0, 0.0], atol=1e-15)


@pytest.mark.parametrize(("angle", "index"), [(10.0, 0), (80.0, 1), (200.0, 2), (275.0, 3)])
def test_hard_lookup_picks_the_argmax_key(angle, index):
    i, value = hard_lookup(polar_query(angle, 1.0), KEYS, VALUES)
    assert i == index
    np.testing.assert_array_equal(value, VALUES[index])


def test_hard_lookup_breaks_ties_towards_the_first_row():
    assert hard_lookup(polar_query(45.0, 1.0), KEYS, VALUES)[0] == 0


@pytest.mark.parametrize("angle", [10.0, 80.0, 200.0, 275.0])
def test_cold_soft_lookup_equals_hard_lookup(angle):
    q = polar_query(angle, 1.0)
    index, value = hard_lookup(q, KEYS, VALUES)
    weights, blended = soft_lookup(q, KEYS, VALUES, temperature=1e-3)
    np.testing.assert_allclose(weights, np.eye(len(KEYS))[index], atol=1e-6)
    np.testing.assert_allclose(blended, value, atol=1e-4)


def test_hot_soft_lookup_is_nearly_uniform():
    weights, blended = soft_lookup(polar_query(30.0, 1.0), KEYS, VALUES, temperature=1e6)
    np.testing.assert_allclose(weights, 0.25, atol=1e-5)
    np.testing.assert_allclose(blended, VALUES.mean(axis=0), atol=1e-3)


def test_soft_lookup_at_temperature_one_by_hand():
    # q = [1, 0]: scores [1, 0, -1, 0] -> e / (e + 2 + 1/e) etc.
    weights, _ = soft_lookup(np.array([1.0, 0.0]), KEYS, VALUES)
    e = np.e
    np.testing.assert_allclose(weights, np.array([e, 1, 1 / e, 1]) / (e + 2 + 1 / e))


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
