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
