"""Boolean masks (True = may attend) and the two fill policies."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import (
    LARGE_NEGATIVE,
    MASK_FILL,
    apply_mask,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)


def test_causal_mask_is_the_lower_triangle_with_diagonal():
    expected = np.array(
        [
            [True, False, False],
            [True, True, False],
            [True, True, True],
        ]
    )
    m = causal_mask(3)
    assert m.dtype == bool
    np.testing.assert_array_equal(m, expected)


def test_padding_mask_inserts_a_query_axis_that_broadcasts():
    valid = [[True, True, False], [True, False, False]]
    m = padding_mask(valid)
    assert m.shape == (2, 1, 3)
    assert m.dtype == bool
    scores = np.zeros((2, 4, 3))  # (batch, n_q, n_k)
    w = softmax(apply_mask(scores, m))
    assert w.shape == (2, 4, 3)
    np.testing.assert_allclose(w[0], np.tile([0.5, 0.5, 0.0], (4, 1)))
    np.testing.assert_allclose(w[1], np.tile([1.0, 0.0, 0.0], (4, 1)))


def test_apply_mask_with_none_returns_scores_unchanged():
    scores = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(apply_mask(scores, None), scores)


def test_apply_mask_fills_masked_positions_with_minus_infinity_by_default():
    assert -np.inf == MASK_FILL
    out = apply_mask(np.array([[1.0, 2.0]]), np.array([[True, False]]))
    np.testing.assert_array_equal(out, [[1.0, -np.inf]])


def test_fully_masked_row_is_uniform_with_large_negative_but_zero_with_mask_fill():
    scores = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, 0.7]])
    mask = np.array([[False, False, False], [True, True, True]])
    with_large_negative = softmax(apply_mask(scores, mask, fill=LARGE_NEGATIVE))
    with_mask_fill = softmax(apply_mask(scores, mask, fill=MASK_FILL))
    np.testing.assert_allclose(with_large_negative[0], [1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_array_equal(with_mask_fill[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(with_large_negative[1], with_mask_fill[1])


def test_large_negative_weight_underflows_to_zero_for_ordinary_scores():
    # -1e9 is "small enough" for ordinary scores: exp(-1e9 - max) underflows to 0.
    w = softmax(apply_mask(np.array([[1.0, 2.0]]), np.array([[True, False]]), LARGE_NEGATIVE))
    np.testing.assert_array_equal(w, [[1.0, 0.0]])


def test_attention_with_an_all_masked_query_gives_zero_output_and_no_nan():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2, 4))
    mask = np.array([[False, False], [True, False]])
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.isnan(out).any() and not np.isnan(w).any()
    np.testing.assert_array_equal(w[0], [0.0, 0.0])
    np.testing.assert_array_equal(out[0], np.zeros(4))
    np.testing.assert_allclose(out[1], v[0])


@st.composite
def masked_attention_inputs(draw):
    n_q = draw(st.integers(1, 6))
    n_k = draw(st.integers(1, 6))
    d = draw(st.integers(1, 5))
    vals = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
    q = draw(arrays(np.float64, (n_q, d), elements=vals))
    k = draw(arrays(np.float64, (n_k, d), elements=vals))
    v = draw(arrays(np.float64, (n_k, d), elements=vals))
    mask = draw(arrays(np.bool_, (n_q, n_k)))
    return q, k, v, mask


@settings(max_examples=80, deadline=None)
@given(masked_attention_inputs())
def test_masked_keys_get_exactly_zero_weight_and_allowed_rows_sum_to_one(inputs):
    q, k, v, mask = inputs
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.all(w[~mask] == 0.0)
    assert np.isfinite(w).all() and np.isfinite(out).all()
    has_key = mask.any(axis=-1)
    np.testing.assert_allclose(w[has_key].sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(w[~has_key], 0.0)
    np.testing.assert_array_equal(out[~has_key], 0.0)
