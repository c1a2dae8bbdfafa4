"""core/findings/masking.py: weight on masked cells, row sums, blind queries, what a query
takes from later tokens, and one query under several fill values."""

import math

import numpy as np

from core import causal_mask, scaled_dot_product_attention
from core.findings.masking import (
    compare_fills,
    lookahead,
    lookahead_weight,
    mask_findings,
    masked_weight_max,
    max_row_spread,
    vector_norms,
    visible_keys,
)
from core.masks import (
    LARGE_NEGATIVE,
    MASK_FILL,
    SMALL_NEGATIVE,
    combine_masks,
    padded_valid,
    row_sums,
)


def test_max_row_spread_and_vector_norms_by_hand():
    assert max_row_spread(np.array([[1.0, 0.0]] * 3)) == 0.0
    assert max_row_spread(np.array([[0.0, 0.0], [0.5, 0.5], [0.5, 0.5]])) == 0.5
    assert max_row_spread(np.zeros((0, 2))) == 0.0
    out = np.array([[0.0, 0.0], [1.0, 2.0], [1.0, 2.0]])
    np.testing.assert_allclose(vector_norms(out), [0.0, math.sqrt(5.0), math.sqrt(5.0)])


def test_masked_weight_max_row_sums_and_lookahead_by_hand():
    w = np.array([[0.7, 0.3], [0.25, 0.75]])
    assert masked_weight_max(w, causal_mask(2)) == 0.3
    assert masked_weight_max(w, np.ones((2, 2), dtype=bool)) == 0.0
    np.testing.assert_allclose(row_sums(w), [1.0, 1.0])
    np.testing.assert_allclose(lookahead_weight(w), [0.3, 0.0])


def test_causal_attention_puts_exactly_zero_weight_ahead():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 5, 4))
    _, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
    np.testing.assert_array_equal(lookahead_weight(w), 0.0)
    assert masked_weight_max(w, causal_mask(5)) == 0.0


def test_mask_findings_of_causal_attention_with_right_padding():
    mask = combine_masks(4, True, padded_valid(3, 1))  # 3 tokens, one [PAD] on the right
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 4, 2))
    _, w = scaled_dot_product_attention(q, k, v, mask)
    found = mask_findings(w, mask)
    assert found.hidden and found.leak == 0.0  # −∞: exactly no weight on a masked cell
    np.testing.assert_array_equal(found.blind, [False, False, False, False])
    assert found.row_sum_error is not None and found.row_sum_error < 1e-15
    assert found.unseen_keys_blind is False  # the [PAD] query still sees the real tokens


def test_mask_findings_with_left_padding_and_nothing_masked():
    mask = combine_masks(3, True, padded_valid(2, 1, "left"))  # [PAD] first: it sees nothing
    w = np.where(mask, 0.5, 0.0)  # (3, 3) any weights: row 0 empty, rows 1, 2 sum to 0.5, 1
    found = mask_findings(w, mask)
    np.testing.assert_array_equal(found.blind, [True, False, False])
    assert found.row_sum_error == 0.5 and found.unseen_keys_blind
    free = mask_findings(np.full((2, 2), 0.5), np.ones((2, 2), dtype=bool))
    assert not free.hidden and free.leak == 0.0 and free.row_sum_error == 0.0
    assert free.unseen_keys_blind  # no key is unseen: nothing to contradict
    none = mask_findings(np.zeros((2, 2)), np.zeros((2, 2), dtype=bool))
    assert none.row_sum_error is None  # no query sees a key: no row sum to check


def test_lookahead_counts_the_later_tokens_and_their_weight():
    w = np.array([[0.5, 0.25, 0.25], [0.2, 0.2, 0.6], [0.1, 0.1, 0.8]])
    assert lookahead(w, 0).later == 2 and lookahead(w, 0).leak == 0.5
    assert lookahead(w, 1).later == 1 and math.isclose(lookahead(w, 1).leak, 0.6)
    assert lookahead(w, 2).later == 0 and lookahead(w, 2).leak == 0.0


def test_compare_fills_for_a_fully_masked_query_in_float16():
    fills = (MASK_FILL, LARGE_NEGATIVE, SMALL_NEGATIVE)
    scores = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -0.5]])  # (2, 3)
    mask = np.array([[True, False, False], [True, True, False]])
    v = np.eye(3)
    fv = compare_fills(scores, mask, v, 0, fills, "float16")
    assert fv.row == 0 and fv.weights.shape == fv.blank.shape == (3, 3)
    np.testing.assert_array_equal(fv.weights[:, 0], [1.0, 1.0, 1.0])  # one visible key
    # every key masked: −∞ and −1e9 (−∞ in float16) give the guard's zero row, −1e4 a uniform one
    np.testing.assert_allclose(fv.blank_weight, [0.0, 0.0, 1 / 3], rtol=1e-3)
    np.testing.assert_array_equal(fv.undefined, [True, True, False])
    assert fv.stored[1] == -math.inf and fv.dtype_max == 65504.0
    assert fv.agree and fv.spread == 0.0
    assert math.isclose(fv.overflow, 1e4 / 65504)  # the mildest fill, −1e4
    assert fv.overflows(0.1) and not fv.overflows(0.2)


def test_compare_fills_in_float64_parts_the_uniform_row_from_the_zero_row():
    fills = (MASK_FILL, LARGE_NEGATIVE)
    unmasked = np.ones((1, 4), dtype=bool)
    fv = compare_fills(np.zeros((1, 4)), unmasked, np.ones((4, 2)), 0, fills, "float64")
    np.testing.assert_array_equal(fv.blank_weight, [0.0, 0.25])
    np.testing.assert_allclose(fv.blank_out, [0.0, math.sqrt(2)])
    assert fv.agree  # nothing masked: both fills give the same weights


def test_visible_keys_counts_what_a_query_may_attend_to():
    causal = causal_mask(6)
    assert [visible_keys(causal, i) for i in range(6)] == [1, 2, 3, 4, 5, 6]
    padded = combine_masks(6, True, padded_valid(4, 2, "right"))
    assert [visible_keys(padded, i) for i in range(6)] == [1, 2, 3, 4, 4, 4]
    assert visible_keys(np.ones((3, 3), dtype=bool), 0) == 3
