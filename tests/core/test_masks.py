"""Boolean masks (True = may attend) and the two fill policies; the sliding window's cell
states and the layers information needs to cross it."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import (
    apply_mask,
    causal_mask,
    flash_attention,
    grouped_query_attention,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
)
from core.masks import (
    FUTURE,
    LARGE_NEGATIVE,
    MASK_FILL,
    SINK,
    SMALL_NEGATIVE,
    TOO_FAR,
    WINDOW,
    MaskTypeError,
    as_mask,
    combine_masks,
    fill_comparison,
    fully_masked_rows,
    future_blank,
    mask_states,
    masked_softmax,
    overflow_temperature,
    pad_rows,
    padded_valid,
    reach_depth,
    receptive_field,
    row_sums,
    stored_fill,
    undefined_rows,
    window_reach,
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


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("past", [0, 1, 4])
def test_causal_mask_after_cached_tokens_is_the_last_rows_of_the_whole_mask(n, past):
    m = causal_mask(n, past=past)
    assert m.shape == (n, past + n)
    np.testing.assert_array_equal(m, causal_mask(past + n)[past:])


def test_future_blank_hides_only_the_keys_after_each_query():
    w = np.full((2, 3, 3), 0.5)
    out = future_blank(w)
    assert np.isnan(out[:, 0, 1:]).all() and np.isnan(out[:, 1, 2]).all()
    assert (out[:, 2] == 0.5).all() and (out[:, 1, :2] == 0.5).all()


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


def test_padded_valid_marks_real_tokens_on_either_side():
    np.testing.assert_array_equal(padded_valid(3, 2), [True, True, True, False, False])
    np.testing.assert_array_equal(padded_valid(3, 2, "left"), [False, False, True, True, True])
    np.testing.assert_array_equal(padded_valid(2, 0), [True, True])
    with pytest.raises(ValueError):
        padded_valid(2, 1, "middle")


def test_pad_rows_adds_zero_embeddings_and_keeps_the_real_rows():
    x = np.arange(6.0).reshape(3, 2)
    right, left = pad_rows(x, 2), pad_rows(x, 2, "left")
    assert right.shape == left.shape == (5, 2)
    np.testing.assert_array_equal(right[:3], x)
    np.testing.assert_array_equal(right[3:], 0.0)
    np.testing.assert_array_equal(left[2:], x)
    np.testing.assert_array_equal(left[:2], 0.0)
    with pytest.raises(ValueError):
        pad_rows(x, 1, "top")


def test_combine_masks_by_hand():
    valid = [True, True, False]
    np.testing.assert_array_equal(combine_masks(3, False), np.ones((3, 3), dtype=bool))
    np.testing.assert_array_equal(combine_masks(3, True), causal_mask(3))
    np.testing.assert_array_equal(
        combine_masks(3, False, valid), [[True, True, False]] * 3
    )  # padding hides the column for every query
    np.testing.assert_array_equal(
        combine_masks(3, True, valid),
        [[True, False, False], [True, True, False], [True, True, False]],
    )


def test_left_padding_with_causal_mask_empties_the_padding_rows():
    mask = combine_masks(5, True, padded_valid(3, 2, "left"))
    np.testing.assert_array_equal(fully_masked_rows(mask), [True, True, False, False, False])


def test_stored_fill_shows_float16_overflow():
    assert stored_fill(LARGE_NEGATIVE, "float64") == -1e9
    assert stored_fill(LARGE_NEGATIVE, "float32") == -1e9
    assert stored_fill(LARGE_NEGATIVE, "float16") == -math.inf  # float16 stops at 65504
    assert stored_fill(SMALL_NEGATIVE, "float16") == -1e4
    assert stored_fill(SMALL_NEGATIVE, "float16", temperature=0.1) == -math.inf
    assert stored_fill(MASK_FILL, "float32") == -math.inf


def test_overflow_temperature_is_the_float16_threshold_for_minus_1e4():
    tau = overflow_temperature(SMALL_NEGATIVE, "float16")
    assert tau == pytest.approx(1e4 / 65504)
    assert stored_fill(SMALL_NEGATIVE, "float16", tau * 1.01) > -math.inf
    assert stored_fill(SMALL_NEGATIVE, "float16", tau * 0.99) == -math.inf
    assert overflow_temperature(LARGE_NEGATIVE, "float16") == math.inf
    assert overflow_temperature(MASK_FILL, "float64") == math.inf


def test_fully_masked_row_zero_with_minus_inf_uniform_with_large_negative():
    scores = np.array([0.4, -1.0, 2.5, 0.0])
    none = np.zeros(4, dtype=bool)
    np.testing.assert_array_equal(masked_softmax(scores, none, MASK_FILL), 0.0)
    np.testing.assert_allclose(masked_softmax(scores, none, LARGE_NEGATIVE), 0.25)
    np.testing.assert_allclose(masked_softmax(scores, none, SMALL_NEGATIVE, dtype="float32"), 0.25)
    # In float16 −1e9 is −∞ already: the guard gives zeros, a textbook softmax 0/0.
    np.testing.assert_array_equal(masked_softmax(scores, none, LARGE_NEGATIVE, dtype="float16"), 0)
    assert undefined_rows(scores, none, LARGE_NEGATIVE, dtype="float16")
    assert not undefined_rows(scores, none, LARGE_NEGATIVE, dtype="float32")
    assert undefined_rows(scores, none, MASK_FILL)


def test_masked_softmax_keeps_the_dtype_and_has_no_nan():
    scores = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    mask = np.array([[True, False, True], [False, False, False]])
    for dtype in ("float64", "float32", "float16"):
        for fill in (MASK_FILL, LARGE_NEGATIVE, SMALL_NEGATIVE):
            w = masked_softmax(scores, mask, fill, temperature=0.05, dtype=dtype)
            assert w.dtype == np.dtype(dtype)
            assert np.isfinite(w).all()
            assert w[0, 1] == 0.0


def test_fill_comparison_by_hand():
    scores = np.array([1.0, 0.0])
    v = np.array([[2.0, 0.0], [0.0, 4.0]])
    fills = [MASK_FILL, LARGE_NEGATIVE, SMALL_NEGATIVE]
    w, out = fill_comparison(scores, np.array([True, False]), v, fills)
    np.testing.assert_array_equal(w, [[1.0, 0.0]] * 3)
    np.testing.assert_array_equal(out, [[2.0, 0.0]] * 3)
    w, out = fill_comparison(scores, np.array([False, False]), v, fills)
    np.testing.assert_array_equal(w, [[0.0, 0.0], [0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_array_equal(out, [[0.0, 0.0], [1.0, 2.0], [1.0, 2.0]])


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (4, 4), elements=st.floats(-8, 8)),
    arrays(np.bool_, (4, 4)),
    st.sampled_from(["float64", "float32", "float16"]),
    st.floats(0.05, 4.0),
)
def test_rows_with_a_visible_key_agree_for_every_fill(scores, mask, dtype, temperature):
    ws = [masked_softmax(scores, mask, f, temperature, dtype) for f in (MASK_FILL, LARGE_NEGATIVE)]
    seen = mask.any(axis=-1)
    tol = {"float64": 1e-12, "float32": 1e-6, "float16": 2e-3}[dtype]
    np.testing.assert_allclose(ws[0][seen], ws[1][seen], atol=tol)
    np.testing.assert_allclose(row_sums(ws[0])[seen], 1.0, atol=tol * 10)
    assert np.all(ws[0][~mask] == 0.0)


# Sliding windows and attention sinks.


def test_sliding_window_mask_by_hand_with_one_sink():
    # window 2: itself and the token before; sink: token 0 stays visible to everyone
    expected = np.array(
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [1, 0, 1, 1, 0],
            [1, 0, 0, 1, 1],
        ],
        dtype=bool,
    )
    m = sliding_window_mask(5, 2, sinks=1)
    assert m.dtype == bool
    np.testing.assert_array_equal(m, expected)
    without_sink = np.eye(5, dtype=bool) | np.eye(5, k=-1, dtype=bool)  # the diagonal and below
    np.testing.assert_array_equal(sliding_window_mask(5, 2), without_sink)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 12), st.integers(1, 14), st.integers(0, 14))
def test_sliding_window_mask_equals_its_definition_entry_by_entry(n, window, sinks):
    m = sliding_window_mask(n, window, sinks)
    assert m.shape == (n, n)
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (j <= i and (i - window < j or j < sinks))
    assert not (m & ~causal_mask(n)).any()  # never a later token
    if n:
        assert m.diagonal().all()  # always itself


def test_a_window_as_long_as_the_text_is_the_causal_mask_and_window_one_is_itself():
    np.testing.assert_array_equal(sliding_window_mask(6, 6), causal_mask(6))
    np.testing.assert_array_equal(sliding_window_mask(6, 100, sinks=3), causal_mask(6))
    np.testing.assert_array_equal(sliding_window_mask(4, 1), np.eye(4, dtype=bool))


@pytest.mark.parametrize(("window", "sinks"), [(0, 0), (-3, 1), (2, -1)])
def test_sliding_window_mask_refuses_a_window_below_one_or_negative_sinks(window, sinks):
    with pytest.raises(ValueError, match=r"window|sinks"):
        sliding_window_mask(5, window, sinks)


def test_sliding_window_attention_puts_exactly_zero_weight_outside_the_window():
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 8, 4))
    mask = sliding_window_mask(8, 3, sinks=1)
    _, w = scaled_dot_product_attention(q, k, v, mask)
    assert np.all(w[~mask] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)


def test_receptive_field_of_one_layer_is_the_mask_and_of_none_is_the_token_itself():
    m = sliding_window_mask(7, 3)
    np.testing.assert_array_equal(receptive_field(m, 1), m)
    np.testing.assert_array_equal(receptive_field(m, 0), np.eye(7, dtype=bool))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 8), st.integers(0, 6))
def test_with_l_layers_a_token_reaches_back_exactly_l_times_window_minus_one(n, window, layers):
    reach = receptive_field(sliding_window_mask(n, window), layers)
    back = window_reach(window, layers)
    for i in range(n):
        np.testing.assert_array_equal(np.flatnonzero(reach[i]), np.arange(max(0, i - back), i + 1))


def test_window_reach_by_hand_and_its_errors():
    assert window_reach(4, 3) == 9  # a window of 4 adds 3 older tokens per layer
    assert window_reach(1, 10) == 0  # each token only ever sees itself
    with pytest.raises(ValueError):
        window_reach(0, 2)


def test_mask_states_by_hand():
    w, s, f, x = WINDOW, SINK, TOO_FAR, FUTURE
    assert mask_states(5, 2, 1).tolist() == [
        [w, x, x, x, x],
        [w, w, x, x, x],
        [s, w, w, x, x],
        [s, f, w, w, x],
        [s, f, f, w, w],
    ]


@given(st.integers(1, 20), st.integers(1, 25), st.integers(0, 5))
def test_visible_states_are_exactly_the_mask(n, window, sinks):
    states = mask_states(n, window, sinks)
    visible = (states == WINDOW) | (states == SINK)
    np.testing.assert_array_equal(visible, sliding_window_mask(n, window, sinks))


def test_reach_depth_is_the_first_layer_count_whose_receptive_field_holds_the_pair():
    mask = sliding_window_mask(12, 3, 1)
    depth = reach_depth(mask, 3)
    for layers in (1, 2, 3):
        np.testing.assert_array_equal(
            (depth > 0) & (depth <= layers), receptive_field(mask, layers)
        )
    assert depth[11, 1] == 0  # 10 back: beyond (3 − 1) · 3 = 6, and the sink does not relay


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_a_mask_that_is_not_boolean_is_refused_naming_the_convention(dtype):
    """PyTorch's additive float mask (0 keep, -inf hide) read as booleans would flip: 0 would
    hide and -inf show, a causal mask turned anti-causal. It is refused, never guessed."""
    if dtype is np.int64:  # a 0/1 mask
        mask = causal_mask(4).astype(dtype)
    else:
        mask = np.where(causal_mask(4), 0.0, -np.inf).astype(dtype)
    q = k = v = np.eye(4)
    with pytest.raises(MaskTypeError, match="additive == 0"):
        scaled_dot_product_attention(q, k, v, mask)
    with pytest.raises(MaskTypeError):
        apply_mask(np.zeros((4, 4)), mask)
    with pytest.raises(MaskTypeError):
        flash_attention(q, k, v, 2, mask)
    with pytest.raises(MaskTypeError):
        grouped_query_attention(q[None], k[None], v[None], mask)


def test_the_additive_mask_converted_as_the_message_says_is_the_causal_mask():
    additive = np.where(causal_mask(5), 0.0, -np.inf)
    assert np.array_equal(as_mask(additive == 0), causal_mask(5))


def test_causal_mask_with_fewer_queries_than_keys_is_aligned_bottom_right():
    """As FlashAttention and torch's causal_lower_right (torch's is_causal=True is top-left):
    the last query sees every key."""
    mask = causal_mask(2, past=3)
    assert mask[-1].all() and mask[0].tolist() == [True, True, True, True, False]
