"""core/findings/lookup.py: a row's share of the soft weights, how close the soft lookup is
to the hard one, and the two ends of a temperature sweep."""

import numpy as np
import pytest

from core import hard_lookup, soft_lookup
from core.findings.lookup import row_share, soft_finding, sweep_ends
from core.lookup import CAPITALS, capital_table, polar_query, temperature_sweep, uniform_weight


def test_row_share_of_the_top_row_and_of_a_given_row():
    w = np.array([0.1, 0.6, 0.3])
    top = row_share(w)
    assert (top.index, top.weight, top.rest) == (1, 0.6, pytest.approx(0.4))
    given = row_share(w, 2)
    assert given.index == 2 and given.weight == 0.3 and given.rest == pytest.approx(0.7)
    assert not top.one_hot and not top.sharp
    assert row_share(np.array([0.5, 0.5])).index == 0  # ties: the first row, as hard_lookup


def test_a_row_is_one_hot_above_0_99_and_sharp_when_the_rest_is_below_0_01():
    assert row_share(np.array([0.995, 0.005])).one_hot
    assert row_share(np.array([0.995, 0.005])).sharp
    assert not row_share(np.array([0.98, 0.02])).one_hot
    assert not row_share(np.array([0.98, 0.02])).sharp


def test_soft_finding_is_the_hard_row_and_the_stretch_length_over_temperature():
    _, keys, values = capital_table()
    query = polar_query(30.0, 1.5)
    hard, _ = hard_lookup(query, keys, values)
    weights, _ = soft_lookup(query, keys, values, 0.5)
    found = soft_finding(weights, hard, 1.5, 0.5)
    assert found.hard == row_share(weights, hard) and found.stretch == pytest.approx(3.0)
    cold = soft_finding(soft_lookup(query, keys, values, 0.01)[0], hard, 1.5, 0.01)
    assert cold.hard.sharp


def test_sweep_ends_are_one_hot_when_cold_and_near_uniform_when_hot():
    _, keys, _ = capital_table()
    query = polar_query(CAPITALS[3][1], 1.5)  # straight at India's key
    _, weights = temperature_sweep(query, keys)
    ends = sweep_ends(weights)
    assert ends.cold.index == 3 and ends.cold.one_hot
    assert ends.uniform == pytest.approx(uniform_weight(len(CAPITALS))) == 1 / 8
    assert ends.hot.weight == pytest.approx(ends.uniform, abs=0.02)


def test_a_query_between_two_keys_ties_at_the_cold_end():
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    _, weights = temperature_sweep(polar_query(45.0, 1.0), keys)
    ends = sweep_ends(weights)
    assert not ends.cold.one_hot and ends.cold.weight == pytest.approx(0.5)
