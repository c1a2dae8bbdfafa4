"""Multi-head attention: batched == per-head loop, h = 1 == single head, head split/merge."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from core import (
    causal_mask,
    init_multihead,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)
from core.multihead import (
    average_heads,
    max_abs_difference,
    multi_head_trace,
    torch_layout,
)

vals = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)


@st.composite
def multihead_inputs(draw):
    h = draw(st.sampled_from([1, 2, 3, 4]))
    d_k = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 4))
    d_model = draw(st.integers(1, 10))
    d_out = draw(st.integers(1, 6))
    n = draw(st.integers(1, 6))
    batch = draw(st.sampled_from([(), (2,)]))
    x = draw(arrays(np.float64, (*batch, n, d_model), elements=vals))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    w_q, w_k = rng.normal(size=(2, d_model, h * d_k))
    w_v = rng.normal(size=(d_model, h * d_v))
    w_o = rng.normal(size=(h * d_v, d_out))
    mask = draw(st.sampled_from([None, causal_mask(n)]))
    return x, w_q, w_k, w_v, w_o, h, mask


@settings(max_examples=60, deadline=None)
@given(multihead_inputs())
def test_batched_multi_head_equals_per_head_loop(inputs):
    x, w_q, w_k, w_v, w_o, h, mask = inputs
    out, w = multi_head_attention(x, w_q, w_k, w_v, w_o, h, mask=mask)
    ref_out, ref_w = multi_head_attention_loop(x, w_q, w_k, w_v, w_o, h, mask=mask)
    n = x.shape[-2]
    assert w.shape == (*x.shape[:-2], h, n, n)
    assert out.shape == (*x.shape[:-1], w_o.shape[-1])
    np.testing.assert_allclose(w, ref_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 8), st.integers(1, 5), st.integers(0, 2**16))
def test_one_head_with_identity_output_equals_single_head_attention(n, d_model, d_k, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d_model))
    w_q, w_k, w_v = rng.normal(size=(3, d_model, d_k))
    out, w = multi_head_attention(x, w_q, w_k, w_v, np.eye(d_k), h=1)
    ref_out, ref_w = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    assert w.shape == (1, n, n)
    np.testing.assert_allclose(w[0], ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)


def test_heads_with_a_causal_mask_never_look_ahead():
    w_q, w_k, w_v, w_o = init_multihead(8, 2, seed=1)
    x = np.random.default_rng(1).normal(size=(5, 8))
    _, w = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, mask=causal_mask(5))
    assert np.all(w[:, ~causal_mask(5)] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.data())
def test_split_then_merge_heads_round_trips_exactly(h, d_head, data):
    lead = data.draw(array_shapes(min_dims=1, max_dims=3, max_side=4))
    x = data.draw(arrays(np.float64, (*lead, h * d_head), elements=vals))
    s = split_heads(x, h)
    assert s.shape == (*lead[:-1], h, lead[-1], d_head)
    np.testing.assert_array_equal(merge_heads(s), x)
    for i in range(h):  # head i is the i-th block of d_head columns
        np.testing.assert_array_equal(s[..., i, :, :], x[..., i * d_head : (i + 1) * d_head])


def test_split_heads_hand_example():
    x = np.arange(8.0).reshape(2, 4)  # 2 tokens, width 4
    np.testing.assert_array_equal(split_heads(x, 2), [[[0, 1], [4, 5]], [[2, 3], [6, 7]]])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12))
def test_split_heads_raises_for_non_divisors(d, h):
    x = np.zeros((3, d))
    if d % h:
        with pytest.raises(ValueError, match="divisor"):
            split_heads(x, h)
    else:
        assert split_heads(x, h).shape == (h, 3, d // h)


def test_split_heads_raises_for_zero_heads():
    with pytest.raises(ValueError):
        split_heads(np.zeros((2, 4)), 0)


def test_init_multihead_shapes_and_bad_head_count():
    ws = init_multihead(8, 4, seed=0)
    assert [w.shape for w in ws] == [(8, 8)] * 4
    np.testing.assert_array_equal(ws[0], init_multihead(8, 4, seed=0)[0])
    with pytest.raises(ValueError):
        init_multihead(8, 3)


def test_padding_mask_is_shared_by_every_head_in_batched_and_loop():
    # A padding mask (batch, 1, n_k) is written for one head's scores (batch, n, n); the
    # batched version adds the head axis itself, so both take the same mask. With batch == h
    # a missing head axis would silently pair batch item i with head i.
    w_q, w_k, w_v, w_o = init_multihead(8, 2, seed=0)
    x = np.random.default_rng(0).normal(size=(2, 3, 8))  # (batch, n, d_model)
    valid = padding_mask([[True, True, False], [True, False, False]])  # (2, 1, 3)
    out, w = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, mask=valid)
    ref_out, ref_w = multi_head_attention_loop(x, w_q, w_k, w_v, w_o, 2, mask=valid)
    assert np.all(w[0, :, :, 2] == 0.0)
    np.testing.assert_array_equal(w[1, :, :, 0], 1.0)  # only the first key is real
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


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
