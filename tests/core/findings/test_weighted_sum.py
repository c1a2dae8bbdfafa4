"""core/findings/weighted_sum.py: the largest weight against the biggest piece, and the
terms of one query's weighted sum to write out."""

import numpy as np
import pytest

from core.attention import mix_row
from core.findings.weighted_sum import other_terms, row_leaders, sum_terms, top_terms


def test_top_terms_orders_by_weight_and_breaks_ties_by_position():
    w = np.array([0.1, 0.4, 0.1, 0.4])
    np.testing.assert_array_equal(top_terms(w, 3), [1, 3, 0])
    np.testing.assert_array_equal(top_terms(w, 10), [1, 3, 0, 2])
    assert top_terms(w, 0).shape == (0,)


def test_other_terms_complete_the_kept_terms():
    w = np.array([0.5, 0.2, 0.3])
    v = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    keep = top_terms(w, 1)
    rest, rest_weight = other_terms(w, v, keep)
    np.testing.assert_allclose(rest, [0.6, 0.8])
    assert np.isclose(rest_weight, 0.5)
    np.testing.assert_allclose(rest + w[keep] @ v[keep], w @ v)
    empty, zero = other_terms(w, v, top_terms(w, 3))
    np.testing.assert_array_equal(empty, [0.0, 0.0])
    assert zero == 0.0


def test_row_leaders_name_the_largest_weight_and_the_biggest_piece():
    mix = mix_row(np.array([0.6, 0.4]), np.array([[1.0, 0.0], [0.0, 5.0]]))
    lead = row_leaders(mix)
    assert (lead.top, lead.big) == (0, 1) and not lead.same
    even = row_leaders(mix_row(np.array([0.3, 0.7]), np.eye(2)))
    assert (even.top, even.big) == (1, 1) and even.same


def test_row_leaders_break_ties_towards_the_earlier_key():
    lead = row_leaders(mix_row(np.array([0.5, 0.5]), np.eye(2)))
    assert (lead.top, lead.big) == (0, 0)


def test_sum_terms_write_out_every_term_of_a_short_row():
    w = np.array([0.2, 0.5, 0.3])
    terms = sum_terms(w, np.eye(3), all_up_to=3, top=2)
    np.testing.assert_array_equal(terms.shown, [0, 1, 2])
    assert terms.folded == 0 and terms.rest_weight == 0.0
    np.testing.assert_array_equal(terms.rest, [0.0, 0.0, 0.0])


def test_sum_terms_of_a_long_row_keep_the_largest_and_fold_the_rest():
    w = np.array([0.05, 0.3, 0.1, 0.4, 0.15])
    v = np.arange(10.0).reshape(5, 2)
    terms = sum_terms(w, v, all_up_to=4, top=2)
    np.testing.assert_array_equal(terms.shown, [3, 1])
    assert terms.folded == 3 and terms.rest_weight == pytest.approx(0.3)
    np.testing.assert_allclose(terms.rest + w[terms.shown] @ v[terms.shown], w @ v)
