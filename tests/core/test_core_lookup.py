"""Hard lookup is the cold limit of soft lookup."""

import numpy as np
import pytest

from core import hard_lookup, polar_query, soft_lookup

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
