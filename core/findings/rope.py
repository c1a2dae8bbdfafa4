"""What the RoPE page (/rope) points out, read off :mod:`core.rope`'s results.

How much the scores of one offset ``m − n`` differ across a score grid
(:func:`diagonal_spread`); one pair turning to three positions (:func:`pair_turn` ->
:class:`PairTurn`) and what the score depends on there (:func:`score_depends_on`); and a
real model's rotation of one head's queries checked against core's RoPE, with how far the
rotation moved each pair (:func:`pair_shift`, :func:`rotation` -> :class:`Rotation`).
"""

from dataclasses import dataclass

import numpy as np

from core.llama import apply_rope as llama_rope
from core.rope import (
    apply_rope,
    pair_angle,
    pair_scores,
    rope_frequencies,
    rope_relative_score,
    rope_score,
    rope_slow_pairs,
    rope_turns,
    rope_wavelengths,
    rotated_pair,
)


def diagonal_spread(scores: np.ndarray) -> float:
    """How far apart the scores of one offset ``m − j`` are, at most: the largest
    ``max − min`` along any diagonal of ``scores`` (0 if each diagonal is constant).

    Shapes: ``(n, n)`` -> scalar.
    """
    n = scores.shape[0]
    spans = [np.ptp(np.diagonal(scores, offset)) for offset in range(-(n - 1), n)]
    return float(max(spans))


def pair_shift(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """How far the rotation moved each pair: the length of ``after − before`` per pair
    (0 at position 0, never more than twice the pair's length).

    Shapes: ``(..., n, d_head)`` each -> ``(..., n, d_head/2)``.
    """
    diff = np.asarray(after, dtype=np.float64) - before  # (..., n, d_head)
    pairs = diff.reshape(*diff.shape[:-1], -1, 2)  # (..., n, d_head/2, 2)
    return np.sqrt(np.sum(pairs * pairs, axis=-1))  # (..., n, d_head/2)


@dataclass(frozen=True)
class PairTurn:
    """The scores at (m, n), (m + Δ, n + Δ) and (m, n + 1), and pair ``pair`` of q and k at
    position 0 and turned to each of those positions."""

    pair: int
    positions: tuple[tuple[int, int], ...]  # (m, n), (m + Δ, n + Δ), (m, n + 1)
    scores: tuple[float, ...]  # q_m · k_n at each
    relative: float  # the score from the offset alone, q · R((n − m)θ) k
    angles: tuple[float, ...]  # degrees from q to k in the pair, at each
    part: float  # the pair's part of the first score
    theta: float  # the pair's radians per token
    wave: float  # tokens per turn
    q0: np.ndarray  # (2,)
    k0: np.ndarray  # (2,)
    turned: tuple[tuple[np.ndarray, np.ndarray], ...]  # (q pair, k pair) at each

    @property
    def shift_gap(self) -> float:
        """``|score(m, n) − score(m + Δ, n + Δ)|``: rounding only (the offset is the same)."""
        return abs(self.scores[0] - self.scores[1])

    @property
    def step_change(self) -> float:
        """``|score(m, n + 1) − score(m, n)|``: one token further, another score."""
        return abs(self.scores[2] - self.scores[0])


def pair_turn(
    q: np.ndarray, k: np.ndarray, pair: int, m: int, n: int, shift: int, base: float
) -> PairTurn:
    """Score ``q`` at ``m`` with ``k`` at ``n``, both shifted by ``shift``, and ``k`` one
    token further; and pair ``pair`` of each turned to those positions.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> :class:`PairTurn`.
    """
    d = q.shape[-1]
    positions = ((m, n), (m + shift, n + shift), (m, n + 1))
    turned = tuple(
        (rotated_pair(q, pair, a, base), rotated_pair(k, pair, b, base)) for a, b in positions
    )
    return PairTurn(
        pair=pair,
        positions=positions,
        scores=tuple(rope_score(q, k, a, b, base) for a, b in positions),
        relative=rope_relative_score(q, k, m - n, base),
        angles=tuple(float(np.degrees(pair_angle(qp, kp))) for qp, kp in turned),
        part=float(pair_scores(q, k, m, n, base)[pair]),
        theta=float(rope_frequencies(d, base)[pair]),
        wave=float(rope_wavelengths(d, base)[pair]),
        q0=rotated_pair(q, pair, 0, base),
        k0=rotated_pair(k, pair, 0, base),
        turned=turned,
    )


ROUNDING = 1e-9  # scores this close (relative to the largest) differ by rounding only


def score_depends_on(turn: PairTurn, rounding: float = ROUNDING) -> str:
    """What the score of ``q`` at ``m`` and ``k`` at ``n`` depends on, read off a
    :class:`PairTurn`: ``"offset"`` when shifting both positions leaves it (rounding aside)
    and moving the key one token changes it, ``"absolute"`` when the shift changes it too,
    ``"neither"`` when neither does.

    Shapes: -> one of the three words.
    """
    tol = rounding * max(max(abs(s) for s in turn.scores), 1.0)
    if turn.shift_gap > tol:
        return "absolute"
    return "offset" if turn.step_change > tol else "neither"


@dataclass(frozen=True)
class Rotation:
    """A real model's rotation of one head's queries."""

    cos: np.ndarray  # (n, d_head/2) the model's cos table
    shift: np.ndarray  # (n, d_head/2) how far RoPE moved each pair of the head's queries
    diff: float  # apply_rope(before) vs the model's queries: max |difference|
    same: bool  # core.llama uses core's apply_rope
    turns: np.ndarray  # (d_head/2,) turns of each pair over the prompt
    slow: int  # pairs that turn less than once over the prompt


def rotation(
    before: np.ndarray, after: np.ndarray, cos: np.ndarray, sin: np.ndarray, base: float
) -> Rotation:
    """How the model turned one head's queries, and the check that core's RoPE turns them
    the same way.

    Shapes: ``before``, ``after`` ``(n, d_head)`` (queries before and after the model's
    RoPE), ``cos``, ``sin`` ``(n, d_head/2)`` -> :class:`Rotation`.
    """
    n, d = before.shape
    turned = apply_rope(before, cos, sin)  # (n, d_head)
    return Rotation(
        cos,
        pair_shift(before, after),
        float(np.max(np.abs(turned - after))),
        llama_rope is apply_rope,
        rope_turns(d, base, n),
        rope_slow_pairs(d, base, n),
    )
