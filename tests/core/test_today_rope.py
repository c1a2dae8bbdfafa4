"""core/today_rope.py: what /rope shows — toy vectors, one pair turned, the score grid that
is constant along its diagonals with rotary positions and not with absolute ones."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core import rope_angles, rope_rotate, rope_score, rope_slow_pairs, sinusoidal_positions
from core.today_rope import (
    absolute_score_grid,
    diagonal_spread,
    pair_angle,
    pair_scores,
    pair_shift,
    pair_turn,
    rope_score_grid,
    rope_turns,
    rotated_pair,
    rotation,
    toy_qk,
)


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


def test_rope_grid_entries_are_rope_scores_and_constant_along_diagonals():
    q, k = toy_qk(16, 7)
    grid = rope_score_grid(q, k, 9, 1e4)
    assert grid.shape == (9, 9)
    for m, n in [(0, 0), (5, 2), (2, 8), (8, 8)]:
        assert abs(grid[m, n] - rope_score(q, k, m, n, 1e4)) < 1e-12
    assert diagonal_spread(grid) < 1e-12


def test_absolute_grid_is_the_dot_product_of_vectors_with_positions_added():
    q, k = toy_qk(8, 2)
    grid = absolute_score_grid(q, k, 6)
    p = sinusoidal_positions(6, 8)
    assert abs(grid[4, 1] - (q + p[4]) @ (k + p[1])) < 1e-12
    assert diagonal_spread(grid) > 0.1  # the score depends on where, not only how far apart


def test_diagonal_spread_by_hand():
    assert diagonal_spread(np.array([[1.0, 2.0], [3.0, 1.0]])) == 0.0
    assert diagonal_spread(np.array([[1.0, 2.0], [3.0, 1.5]])) == 0.5


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 24), st.sampled_from([100.0, 1e4, 1e5]))
def test_rope_scores_depend_only_on_the_offset(seed, n, base):
    q, k = toy_qk(16, seed)
    assert diagonal_spread(rope_score_grid(q, k, n, base)) < 1e-9 * (1 + np.abs(q).sum())


def test_turns_by_hand_and_pairs_turning_less_than_once():
    # d = 4, base 100: θ = 1 and 0.1 rad per token; positions 0..10 span 10 tokens of turning
    np.testing.assert_allclose(rope_turns(4, 100.0, 11), [10 / (2 * np.pi), 1 / (2 * np.pi)])
    turns = rope_turns(64, 1e5, 8193)
    assert int(np.sum(turns < 1)) == rope_slow_pairs(64, 1e5, 8192)


def test_pair_shift_is_zero_at_position_zero_and_at_most_twice_the_length():
    x = np.random.default_rng(0).standard_normal((3, 5, 8))
    turned = rope_rotate(x, np.arange(5), 1e4)
    shift = pair_shift(x, turned)
    assert shift.shape == (3, 5, 4)
    np.testing.assert_allclose(shift[:, 0], 0.0, atol=1e-15)
    lengths = np.linalg.norm(x.reshape(3, 5, 4, 2), axis=-1)
    assert np.all(shift <= 2 * lengths + 1e-12)
    # by hand: (1, 0) turned by 1 rad moves |(cos 1 − 1, sin 1)| = 2 sin(1/2)
    one = pair_shift(np.array([[1.0, 0.0]]), rope_rotate(np.array([[1.0, 0.0]]), [1], 1e4))
    np.testing.assert_allclose(one, [[2 * np.sin(0.5)]])


def test_pair_turn_keeps_the_score_under_a_shift_and_changes_it_a_token_further():
    q, k = toy_qk(64, 3)
    v = pair_turn(q, k, 2, 5, 1, 7, 10_000.0)
    assert v.positions == ((5, 1), (12, 8), (5, 2))
    assert v.scores[0] == rope_score(q, k, 5, 1, 10_000.0)
    assert v.shift_gap < 1e-9 and v.shift_gap == abs(v.scores[0] - v.scores[1])
    assert v.step_change == abs(v.scores[2] - v.scores[0]) > 1e-6
    assert np.isclose(v.relative, v.scores[0])
    assert v.part == pair_scores(q, k, 5, 1, 10_000.0)[2]
    assert np.isclose(v.angles[0], v.angles[1])  # the same offset, the same angle
    assert np.allclose(v.q0, q[4:6]) and np.allclose(v.turned[0][0], rotated_pair(q, 2, 5, 1e4))


def test_rotation_of_queries_turned_by_core_is_exact():
    rng = np.random.default_rng(0)
    before = rng.normal(size=(6, 8))  # (n, d_head)
    cos, sin = rope_angles(np.arange(6), 8, 100.0, np.float64)
    after = rope_rotate(before, np.arange(6), 100.0)
    r = rotation(before, after, cos, sin, 100.0)
    assert r.diff < 1e-12 and r.same
    assert np.allclose(r.shift, pair_shift(before, after)) and (r.shift[0] == 0).all()
    assert np.allclose(r.turns, rope_turns(8, 100.0, 6))
    assert r.slow == rope_slow_pairs(8, 100.0, 6)
