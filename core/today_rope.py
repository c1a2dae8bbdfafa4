"""What the RoPE page (/rope) shows, computed with the one RoPE of :mod:`core.rope`.

A toy query and key (:func:`toy_qk`); one feature pair of them turned to a position
(:func:`rotated_pair`) and the angle between two pairs (:func:`pair_angle`); each pair's
share of a score (:func:`pair_scores`); the score of a query at every position with a key at
every position, with rotary positions (:func:`rope_score_grid`) or with the sinusoidal
vectors of "Attention Is All You Need" added instead (:func:`absolute_score_grid`), and how
much the scores of one offset ``m − n`` differ (:func:`diagonal_spread`); how far each pair
turns over some tokens (:func:`rope_turns`) and how far the rotation moved each pair of a
real query (:func:`pair_shift`).
"""

import numpy as np

from core.rope import rope_frequencies, rope_rotate
from core.tokens import sinusoidal_positions


def toy_qk(d_head: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A query and a key of standard normal numbers from ``seed`` (content only: no position).

    Shapes: -> ``(q (d_head,), k (d_head,))`` float64.
    """
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, d_head))  # (d_head,) each
    return q, k


def rotated_pair(x: np.ndarray, pair: int, position: int, base: float) -> np.ndarray:
    """Pair ``pair`` (features ``2·pair``, ``2·pair + 1``) of ``x`` turned to ``position``:
    by the angle ``position · θ_pair``, as :func:`core.rope.rope_rotate` turns the whole vector.

    Shapes: ``x`` ``(d_head,)`` -> ``(2,)``.
    """
    turned = rope_rotate(np.asarray(x, dtype=np.float64)[None, :], [position], base)[0]
    return turned[2 * pair : 2 * pair + 2]  # (2,)


def pair_angle(a: np.ndarray, b: np.ndarray) -> float:
    """The angle from 2-D vector ``a`` to ``b``, counter-clockwise, in radians in ``(−π, π]``.

    Shapes: ``a``, ``b`` ``(2,)`` -> scalar.
    """
    cross = a[0] * b[1] - a[1] * b[0]
    return float(np.arctan2(cross, a @ b))


def pair_scores(q: np.ndarray, k: np.ndarray, m: int, n: int, base: float) -> np.ndarray:
    """Each pair's part of the score of ``q`` at position ``m`` with ``k`` at ``n``: the dot
    product of the two turned pairs. They add up to :func:`core.rope.rope_score`.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> ``(d_head/2,)``.
    """
    q_m = rope_rotate(np.asarray(q, dtype=np.float64)[None, :], [m], base)[0]  # (d_head,)
    k_n = rope_rotate(np.asarray(k, dtype=np.float64)[None, :], [n], base)[0]  # (d_head,)
    return (q_m * k_n).reshape(-1, 2).sum(-1)  # (d_head/2,)


def rope_score_grid(q: np.ndarray, k: np.ndarray, n: int, base: float) -> np.ndarray:
    """The score of ``q`` at every position ``m`` with ``k`` at every position ``j``, both
    turned by RoPE (unscaled): entry ``[m, j]`` is :func:`core.rope.rope_score` ``(q, k, m, j)``.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> ``(n, n)``; constant along each diagonal.
    """
    positions = np.arange(n)
    q_all = rope_rotate(np.tile(np.asarray(q, dtype=np.float64), (n, 1)), positions, base)
    k_all = rope_rotate(np.tile(np.asarray(k, dtype=np.float64), (n, 1)), positions, base)
    return q_all @ k_all.T  # (n, n)


def absolute_score_grid(q: np.ndarray, k: np.ndarray, n: int) -> np.ndarray:
    """The same scores with absolute positions instead: the sinusoidal vector of position
    ``m`` added to ``q`` and that of ``j`` to ``k`` (:func:`core.tokens.sinusoidal_positions`,
    the encoding of the /qkv page), then the dot product.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> ``(n, n)``.
    """
    p = sinusoidal_positions(n, len(q))  # (n, d_head)
    return (np.asarray(q) + p) @ (np.asarray(k) + p).T  # (n, n)


def diagonal_spread(scores: np.ndarray) -> float:
    """How far apart the scores of one offset ``m − j`` are, at most: the largest
    ``max − min`` along any diagonal of ``scores`` (0 if each diagonal is constant).

    Shapes: ``(n, n)`` -> scalar.
    """
    n = scores.shape[0]
    spans = [np.ptp(np.diagonal(scores, offset)) for offset in range(-(n - 1), n)]
    return float(max(spans))


def rope_turns(d_head: int, base: float, tokens: int) -> np.ndarray:
    """How many full turns each pair makes from position 0 to position ``tokens − 1``.

    Shapes: -> ``(d_head/2,)``, pair 0 first (the fastest).
    """
    return (tokens - 1) * rope_frequencies(d_head, base) / (2 * np.pi)


def pair_shift(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """How far the rotation moved each pair: the length of ``after − before`` per pair
    (0 at position 0, never more than twice the pair's length).

    Shapes: ``(..., n, d_head)`` each -> ``(..., n, d_head/2)``.
    """
    diff = np.asarray(after, dtype=np.float64) - before  # (..., n, d_head)
    pairs = diff.reshape(*diff.shape[:-1], -1, 2)  # (..., n, d_head/2, 2)
    return np.sqrt(np.sum(pairs * pairs, axis=-1))  # (..., n, d_head/2)
