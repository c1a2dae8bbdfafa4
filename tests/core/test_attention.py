"""Scaled dot-product attention: lesson 002's worked example and its invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import (
    attention_scores,
    causal_mask,
    init_projections,
    lesson_inputs,
    scaled_dot_product_attention,
    self_attention_trace,
)
from core.attention import mix_row

# Lesson 002: 6 tokens, d_model = 8, d_k = d_v = 4, seed 42 (rounded to 3 decimals).
LESSON_FIRST_WEIGHT_ROW = [0.097, 0.122, 0.236, 0.445, 0.047, 0.052]
LESSON_FIRST_OUTPUT_ROW = [-0.233, 0.443, 1.035, 0.550]


@pytest.fixture
def lesson_002():
    x = lesson_inputs(6, 8, seed=42)
    w_q, w_k, w_v = init_projections(8, 4, 4, seed=42)
    return x, w_q, w_k, w_v


def test_lesson_002_example_reproduces_first_weight_and_output_rows(lesson_002):
    x, w_q, w_k, w_v = lesson_002
    out, w = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    assert out.shape == (6, 4) and w.shape == (6, 6)
    np.testing.assert_allclose(w[0], LESSON_FIRST_WEIGHT_ROW, atol=5e-4)
    np.testing.assert_allclose(out[0], LESSON_FIRST_OUTPUT_ROW, atol=5e-4)


def test_self_attention_trace_gives_the_lesson_numbers_and_consistent_steps(lesson_002):
    x, w_q, w_k, w_v = lesson_002
    tr = self_attention_trace(x, w_q, w_k, w_v)
    np.testing.assert_allclose(tr.weights[0], LESSON_FIRST_WEIGHT_ROW, atol=5e-4)
    np.testing.assert_allclose(tr.output[0], LESSON_FIRST_OUTPUT_ROW, atol=5e-4)
    np.testing.assert_array_equal(tr.q, x @ w_q)
    np.testing.assert_allclose(tr.scores, tr.q @ tr.k.T)
    np.testing.assert_allclose(tr.scaled, tr.scores / 2.0)  # √d_k = √4 = 2
    np.testing.assert_allclose(tr.output, tr.weights @ tr.v)


def test_trace_with_causal_mask_keeps_minus_inf_in_scaled_and_zeros_in_weights(lesson_002):
    x, w_q, w_k, w_v = lesson_002
    tr = self_attention_trace(x, w_q, w_k, w_v, mask=causal_mask(6))
    upper = ~causal_mask(6)
    assert np.all(tr.scaled[upper] == -np.inf)
    assert np.all(tr.weights[upper] == 0.0)
    assert tr.weights[0, 0] == 1.0  # the first token can only see itself


def test_attention_scores_hand_example_with_and_without_scaling():
    q = np.array([[1.0, 2.0, 0.0, 0.0]])
    k = np.array([[3.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    np.testing.assert_array_equal(attention_scores(q, k, scale=False), [[5.0, 0.0]])
    np.testing.assert_array_equal(attention_scores(q, k), [[2.5, 0.0]])  # ÷ √4


def test_equal_scores_average_the_values():
    q = np.zeros((1, 2))
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[2.0, 0.0], [0.0, 4.0]])
    out, w = scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(w, [[0.5, 0.5]])
    np.testing.assert_array_equal(out, [[1.0, 2.0]])


def test_float32_attention_stays_float32():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 5, 4)).astype(np.float32)
    assert attention_scores(q, k).dtype == np.float32
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    assert w.dtype == np.float32 and out.dtype == np.float32
    ref_out, ref_w = scaled_dot_product_attention(
        *(a.astype(np.float64) for a in (q, k, v)), mask=causal_mask(5)
    )
    np.testing.assert_allclose(w, ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-5)


@st.composite
def inputs_and_permutation(draw):
    n = draw(st.integers(1, 7))
    x = draw(arrays(np.float64, (n, 6), elements=st.floats(-3.0, 3.0, allow_nan=False)))
    perm = np.array(draw(st.permutations(range(n))), dtype=int)
    return x, perm


@settings(max_examples=60, deadline=None)
@given(inputs_and_permutation(), st.integers(0, 2**16))
def test_self_attention_without_positions_is_permutation_equivariant(data, seed):
    x, perm = data
    w_q, w_k, w_v = init_projections(6, 3, 2, seed=seed)
    out, w = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    xp = x[perm]
    out_p, w_p = scaled_dot_product_attention(xp @ w_q, xp @ w_k, xp @ w_v)
    np.testing.assert_allclose(out_p, out[perm], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(w_p, w[perm][:, perm], rtol=1e-9, atol=1e-12)


def test_mix_row_hand_example():
    w = np.array([0.25, 0.75])
    v = np.array([[4.0, 0.0], [0.0, 8.0]])
    mix = mix_row(w, v)
    np.testing.assert_array_equal(mix.contributions, [[1.0, 0.0], [0.0, 6.0]])
    np.testing.assert_array_equal(mix.running, [[1.0, 0.0], [1.0, 6.0]])
    np.testing.assert_array_equal(mix.output, [1.0, 6.0])
    assert mix.weight_total == 1.0
    np.testing.assert_array_equal(mix.sizes, [1.0, 6.0])


def test_the_largest_weight_need_not_give_the_biggest_piece():
    mix = mix_row(np.array([0.6, 0.4]), np.array([[1.0, 0.0], [0.0, 5.0]]))
    np.testing.assert_allclose(mix.sizes, [0.6, 2.0])
    assert np.argmax(mix.weights) == 0 and np.argmax(mix.sizes) == 1


def test_mix_row_reproduces_the_lesson_output_row():
    tr = self_attention_trace(lesson_inputs(6, 8), *init_projections(8, 4, 4))
    mix = mix_row(tr.weights[0], tr.v)
    np.testing.assert_allclose(mix.output, [-0.233, 0.443, 1.035, 0.550], atol=5e-4)
    np.testing.assert_allclose(mix.output, tr.output[0], rtol=0, atol=1e-12)
    assert mix.contributions.shape == mix.running.shape == (6, 4)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10), st.integers(1, 6), st.data())
def test_running_sum_ends_at_the_output_and_contributions_add_up(n, d_v, data):
    w = data.draw(arrays(np.float64, n, elements=st.floats(0.0, 1.0)))
    v = data.draw(arrays(np.float64, (n, d_v), elements=st.floats(-10.0, 10.0)))
    mix = mix_row(w, v)
    np.testing.assert_allclose(mix.running[-1], mix.output, atol=1e-9)
    np.testing.assert_allclose(mix.contributions.sum(axis=0), w @ v, atol=1e-9)
    assert np.isclose(mix.weight_total, w.sum())


def test_attention_over_no_keys_is_refused():
    with pytest.raises(ValueError, match="at least one key"):
        scaled_dot_product_attention(np.ones((2, 4)), np.zeros((0, 4)), np.zeros((0, 3)))
