"""core/findings/rope.py: the spread of a score grid's diagonals (none with rotary
positions, some with absolute ones), one pair turning, and a model's rotation checked."""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core import rope_angles, rope_rotate
from core.findings.rope import (
    diagonal_spread,
    pair_shift,
    pair_turn,
    rotation,
    score_depends_on,
)
from core.rope import (
    absolute_score_grid,
    pair_scores,
    rope_score,
    rope_score_grid,
    rope_slow_pairs,
    rope_turns,
    rotated_pair,
    toy_qk,
)


def test_rope_grids_are_constant_along_their_diagonals_absolute_ones_are_not():
    q, k = toy_qk(8, 2)
    assert diagonal_spread(rope_score_grid(q, k, 9, 1e4)) < 1e-12
    assert diagonal_spread(absolute_score_grid(q, k, 6)) > 0.1  # where, not only how far apart


def test_diagonal_spread_by_hand():
    assert diagonal_spread(np.array([[1.0, 2.0], [3.0, 1.0]])) == 0.0
    assert diagonal_spread(np.array([[1.0, 2.0], [3.0, 1.5]])) == 0.5


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 24), st.sampled_from([100.0, 1e4, 1e5]))
def test_rope_scores_depend_only_on_the_offset(seed, n, base):
    q, k = toy_qk(16, seed)
    assert diagonal_spread(rope_score_grid(q, k, n, base)) < 1e-9 * (1 + np.abs(q).sum())


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


def test_score_depends_on_the_offset_under_rope():
    q, k = toy_qk(64, 42)
    assert score_depends_on(pair_turn(q, k, 0, 5, 2, 100, 1e4)) == "offset"
    assert score_depends_on(pair_turn(q, k, 3, 40, 7, 333, 100.0)) == "offset"


def test_score_depends_on_reads_the_shift_and_the_step():
    turn = pair_turn(*toy_qk(8, 1), 0, 5, 2, 100, 1e4)
    assert score_depends_on(replace(turn, scores=(1.0, 1.5, 2.0))) == "absolute"
    assert score_depends_on(replace(turn, scores=(1.0, 1.0, 1.0))) == "neither"
    assert score_depends_on(replace(turn, scores=(1.0, 1.0 + 1e-12, 2.0))) == "offset"
