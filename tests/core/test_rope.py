"""core/rope.py: rotary positions — the pairs' speeds, the rotation itself and the score that
depends only on the offset; the /rope page's toy vectors, turned pairs, pair scores and
score grids. The real model's numbers (SmolLM2's base and head width, read
from its file) are checked in tests/models/test_smollm.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.llama
import core.rope
from core import apply_rope, rope_angles, rope_frequencies, rope_rotate
from core.rope import (
    absolute_score_grid,
    pair_angle,
    pair_scores,
    rope_relative_score,
    rope_score,
    rope_score_grid,
    rope_slow_pairs,
    rope_turns,
    rope_wavelengths,
    rotate_pair,
    rotated_pair,
    toy_qk,
)
from core.tokens import sinusoidal_positions


def test_the_llama_forward_uses_the_one_rope_in_core():
    assert core.llama.apply_rope is core.rope.apply_rope is apply_rope
    assert core.llama.rope_angles is core.rope.rope_angles is rope_angles


def test_frequencies_by_hand_start_at_one_radian_per_token():
    # d = 4, base 100: θ = 100^(0/4), 100^(−2/4) = 1, 0.1
    np.testing.assert_allclose(rope_frequencies(4, 100.0), [1.0, 0.1], rtol=1e-15)
    np.testing.assert_allclose(rope_wavelengths(4, 100.0), [2 * np.pi, 20 * np.pi], rtol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 64), st.floats(2.0, 1e6))
def test_each_pair_is_slower_than_the_last_by_the_same_factor(half, base):
    theta = rope_frequencies(2 * half, base)
    assert theta.shape == (half,) and theta[0] == 1.0
    np.testing.assert_allclose(theta[1:] / theta[:-1], base ** (-1 / half), rtol=1e-12)


def test_slow_pairs_are_those_whose_wavelength_exceeds_the_context():
    # wavelengths 2π ≈ 6.28 and 20π ≈ 62.83
    assert rope_slow_pairs(4, 100.0, 6) == 2
    assert rope_slow_pairs(4, 100.0, 7) == 1
    assert rope_slow_pairs(4, 100.0, 62) == 1
    assert rope_slow_pairs(4, 100.0, 63) == 0


def test_angles_are_float32_by_default_as_the_model_computes_them():
    cos, sin = rope_angles(np.arange(3), 8, 1e4)
    assert cos.shape == sin.shape == (3, 4) and cos.dtype == np.float32
    cos64, _ = rope_angles(np.arange(3), 8, 1e4, np.float64)
    assert cos64.dtype == np.float64
    np.testing.assert_allclose(cos, cos64, atol=1e-6)


def test_rotate_pair_quarter_turn_by_hand():
    np.testing.assert_allclose(rotate_pair(np.array([1.0, 0.0]), np.pi / 2), [0.0, 1.0], atol=1e-16)
    np.testing.assert_allclose(rotate_pair(np.array([[3.0, 4.0]]), np.pi), [[-3.0, -4.0]])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(-50, 500), st.sampled_from([2, 4, 8, 16]))
def test_apply_rope_turns_pair_i_by_position_times_theta_i(seed, position, d):
    x = np.random.default_rng(seed).normal(size=(1, d))  # (n=1, d)
    out = rope_rotate(x, [position], 1e4)[0]  # (d,)
    theta = rope_frequencies(d, 1e4)
    for i in range(d // 2):
        pair = rotate_pair(x[0, 2 * i : 2 * i + 2], position * theta[i])
        np.testing.assert_allclose(out[2 * i : 2 * i + 2], pair, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out), np.linalg.norm(x), rtol=1e-12)


def test_rope_rotate_keeps_the_precision_and_position_zero_is_the_identity():
    x = np.random.default_rng(1).normal(size=(2, 3, 8))  # (h, n, d)
    out = rope_rotate(x, [0, 1, 2], 1e4)
    assert out.dtype == np.float64 and out.shape == x.shape
    np.testing.assert_array_equal(out[:, 0], x[:, 0])
    assert rope_rotate(x.astype(np.float32), [0, 1, 2], 1e4).dtype == np.float32
    cos, sin = rope_angles(np.arange(3), 8, 1e4, np.float64)
    np.testing.assert_array_equal(out, apply_rope(x, cos, sin))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 5000), st.integers(0, 9999))
def test_the_score_depends_only_on_the_offset(m, n, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=64), rng.normal(size=64)
    here = rope_score(q, k, m, n, 1e5)
    assert rope_score(q, k, m + shift, n + shift, 1e5) == pytest.approx(here, abs=1e-10)
    assert rope_relative_score(q, k, m - n, 1e5) == pytest.approx(here, abs=1e-10)


def test_a_different_offset_gives_a_different_score():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=64), rng.normal(size=64)
    same = abs(rope_score(q, k, 5, 2, 1e5) - rope_score(q, k, 105, 102, 1e5))
    other = abs(rope_score(q, k, 5, 2, 1e5) - rope_score(q, k, 5, 3, 1e5))
    assert same < 1e-13 and other > 1e-3


def test_offset_zero_gives_the_plain_dot_product():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=16), rng.normal(size=16)
    assert rope_relative_score(q, k, 0, 1e4) == pytest.approx(float(q @ k), rel=1e-14)
    assert rope_score(q, k, 7, 7, 1e4) == pytest.approx(float(q @ k), rel=1e-12)


# ---- the /rope page's experiments


def test_toy_vectors_are_reproducible_from_the_seed():
    q, k = toy_qk(8, 3)
    assert q.shape == k.shape == (8,)
    np.testing.assert_array_equal(toy_qk(8, 3)[0], q)
    assert not np.array_equal(toy_qk(8, 4)[0], q)


def test_rotated_pair_by_hand_pair_zero_turns_one_radian_a_token():
    x = np.array([1.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(rotated_pair(x, 0, 2, 100.0), [np.cos(2), np.sin(2)])
    # pair 1 of d = 4, base 100: θ = 0.1 rad per token; (0, 1) turned by 1 rad
    np.testing.assert_allclose(rotated_pair(x, 1, 10, 100.0), [-np.sin(1), np.cos(1)])


def test_rotated_pair_is_the_pair_of_the_whole_rotated_vector():
    q, _ = toy_qk(16, 0)
    whole = rope_rotate(q[None], [7], 1e4)[0]
    for i in range(8):
        np.testing.assert_array_equal(rotated_pair(q, i, 7, 1e4), whole[2 * i : 2 * i + 2])


def test_pair_angle_by_hand_counter_clockwise_is_positive():
    assert pair_angle(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == np.pi / 2
    assert pair_angle(np.array([1.0, 0.0]), np.array([0.0, -1.0])) == -np.pi / 2
    assert pair_angle(np.array([1.0, 1.0]), np.array([-1.0, -1.0])) == np.pi


def test_turning_both_pairs_by_the_same_offset_keeps_their_angle():
    q, k = toy_qk(8, 1)
    a = pair_angle(rotated_pair(q, 0, 5, 1e4), rotated_pair(k, 0, 2, 1e4))
    b = pair_angle(rotated_pair(q, 0, 105, 1e4), rotated_pair(k, 0, 102, 1e4))
    assert abs(a - b) < 1e-12


def test_pair_scores_add_up_to_the_rope_score():
    q, k = toy_qk(64, 42)
    parts = pair_scores(q, k, 5, 2, 1e5)
    assert parts.shape == (32,)
    assert abs(parts.sum() - rope_score(q, k, 5, 2, 1e5)) < 1e-12


def test_turns_by_hand_and_pairs_turning_less_than_once():
    # d = 4, base 100: θ = 1 and 0.1 rad per token; positions 0..10 span 10 tokens of turning
    np.testing.assert_allclose(rope_turns(4, 100.0, 11), [10 / (2 * np.pi), 1 / (2 * np.pi)])
    turns = rope_turns(64, 1e5, 8193)
    assert int(np.sum(turns < 1)) == rope_slow_pairs(64, 1e5, 8192)


def test_rope_grid_entries_are_rope_scores():
    q, k = toy_qk(16, 7)
    grid = rope_score_grid(q, k, 9, 1e4)
    assert grid.shape == (9, 9)
    for m, n in [(0, 0), (5, 2), (2, 8), (8, 8)]:
        assert abs(grid[m, n] - rope_score(q, k, m, n, 1e4)) < 1e-12


def test_absolute_grid_is_the_dot_product_of_vectors_with_positions_added():
    q, k = toy_qk(8, 2)
    grid = absolute_score_grid(q, k, 6)
    p = sinusoidal_positions(6, 8)
    assert abs(grid[4, 1] - (q + p[4]) @ (k + p[1])) < 1e-12


@pytest.mark.parametrize("d_head", [59, 1, 0])
def test_an_odd_head_width_is_refused_not_cut_to_its_pairs(d_head):
    """RoPE turns pairs of features: an odd width would silently lose its last feature."""
    with pytest.raises(ValueError, match="even"):
        rope_angles(np.arange(4), d_head, 10_000.0)
