"""The multi-head page's core helpers: the stage trace, head averaging, the torch mapping."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.multihead import (
    average_heads,
    head_focus,
    init_multihead,
    max_abs_difference,
    merge_heads,
    most_disputed_query,
    multi_head_attention,
    multi_head_trace,
    torch_layout,
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(8, 1), (8, 2), (8, 4), (8, 8), (12, 3), (6, 6)]), st.integers(1, 7))
def test_trace_matches_the_batched_function_and_keeps_every_shape(dims, n):
    d_model, h = dims
    d_k = d_model // h
    x = np.random.default_rng(n).normal(size=(n, d_model))
    w = init_multihead(d_model, h, seed=3)
    tr = multi_head_trace(x, *w, h)
    out, weights = multi_head_attention(x, *w, h)
    np.testing.assert_array_equal(tr.output, out)
    np.testing.assert_array_equal(tr.weights, weights)
    assert tr.q.shape == (n, d_model)
    assert tr.q_split.shape == (n, h, d_k)
    assert tr.q_heads.shape == tr.k_heads.shape == tr.v_heads.shape == (h, n, d_k)
    assert tr.weights.shape == (h, n, n)
    assert tr.heads.shape == (h, n, d_k)
    assert tr.concat.shape == (n, d_model)
    # the transpose is the only difference between the reshape and the split
    np.testing.assert_array_equal(tr.q_split.transpose(1, 0, 2), tr.q_heads)
    np.testing.assert_array_equal(merge_heads(tr.heads), tr.concat)


def test_head_i_sees_columns_i_times_d_k_onwards():
    x = np.arange(12.0).reshape(2, 6)
    w_q = np.eye(6)
    tr = multi_head_trace(x, w_q, w_q, w_q, w_q, h=3)
    np.testing.assert_array_equal(tr.q_heads[1], x[:, 2:4])  # head 2 = columns 2..3


def test_trace_rejects_a_head_count_that_does_not_divide_the_width():
    x = np.ones((3, 8))
    with pytest.raises(ValueError, match="divisor"):
        multi_head_trace(x, *init_multihead(8, 2), h=3)


def test_average_of_heads_is_the_mean_and_rows_still_sum_to_one():
    rng = np.random.default_rng(0)
    w = rng.random((2, 4, 5, 5))  # (batch, h, n, n)
    w /= w.sum(axis=-1, keepdims=True)
    avg = average_heads(w)
    assert avg.shape == (2, 5, 5)
    np.testing.assert_allclose(avg[1], (w[1, 0] + w[1, 1] + w[1, 2] + w[1, 3]) / 4)
    np.testing.assert_allclose(avg.sum(axis=-1), 1.0)


def test_max_abs_difference_is_the_largest_gap_and_zero_for_empty():
    assert max_abs_difference(np.array([1.0, -2.0]), np.array([1.5, 1.0])) == 3.0
    assert max_abs_difference(np.zeros((0, 3)), np.zeros((0, 3))) == 0.0


def test_head_focus_reports_each_heads_top_key_and_weight():
    w = np.array([[[0.7, 0.3], [0.4, 0.6]], [[0.1, 0.9], [0.8, 0.2]]])  # (h=2, n=2, n=2)
    top, best = head_focus(w)
    np.testing.assert_array_equal(top, [[0, 1], [1, 0]])
    np.testing.assert_allclose(best, [[0.7, 0.6], [0.9, 0.8]])


def test_most_disputed_query_prefers_disagreement_then_spread_then_first():
    agree = [[0.6, 0.4], [0.6, 0.4]]
    w = np.array(
        [
            [agree[0], [0.9, 0.1], [0.55, 0.45]],  # head 1
            [agree[1], [0.2, 0.8], [0.45, 0.55]],  # head 2: disagrees on queries 1 and 2
        ]
    )
    assert most_disputed_query(w) == 1  # both disagree; query 1 has the larger spread
    same = np.full((3, 4, 4), 0.25)
    assert most_disputed_query(same) == 0


def test_torch_layout_turns_x_at_w_into_x_at_w_transposed():
    d_model = 6
    w_q, w_k, w_v, w_o = init_multihead(d_model, 3, seed=1)
    in_proj, out_proj = torch_layout(w_q, w_k, w_v, w_o)
    assert in_proj.shape == (3 * d_model, d_model)
    assert out_proj.shape == (d_model, d_model)
    x = np.random.default_rng(2).normal(size=(4, d_model))
    q, k, v = np.split(x @ in_proj.T, 3, axis=-1)  # what torch computes: x @ W.T
    np.testing.assert_allclose(q, x @ w_q)
    np.testing.assert_allclose(k, x @ w_k)
    np.testing.assert_allclose(v, x @ w_v)
    np.testing.assert_allclose(x @ out_proj.T, x @ w_o)
