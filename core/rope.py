"""Rotary position embedding (RoPE): the one RoPE in ``core``, used by the Llama forward pass
(:mod:`core.llama`) and by the page that explains it.

A query or key of width ``d_head`` is cut into ``d_head / 2`` pairs of features. Pair ``i``
of the token at position ``p`` is turned by the angle ``p · θ_i`` with
``θ_i = base^(−2i / d_head)`` radians per token: pair 0 turns fastest (one radian a token),
the last pair slowest. Pairs are interleaved, ``(2i, 2i + 1)``, the order of GGUF files.

Because both vectors are turned, the score of a query at position ``m`` with a key at
position ``n`` is ``R(mθ) q · R(nθ) k = q · R((n − m)θ) k``: it depends on the offset
``m − n`` only (:func:`rope_score`, :func:`rope_relative_score`).

The /rope page's experiments: a toy query and key (:func:`toy_qk`); one feature pair of them
turned to a position (:func:`rotated_pair`) and the angle between two pairs
(:func:`pair_angle`); each pair's share of a score (:func:`pair_scores`); the score of a query
at every position with a key at every position, with rotary positions
(:func:`rope_score_grid`) or with the sinusoidal vectors of "Attention Is All You Need" added
instead (:func:`absolute_score_grid`); how far each pair turns over some tokens
(:func:`rope_turns`). What the page points out about them is in :mod:`core.findings.rope`.
"""

import numpy as np

from core.tokens import sinusoidal_positions


def rope_frequencies(d_head: int, base: float, dtype: type = np.float64) -> np.ndarray:
    """Angular speed of each feature pair, ``θ_i = base^(−2i / d_head)`` radians per token.

    Shapes: -> ``(d_head/2,)`` in ``dtype``; ``θ_0 = 1``, decreasing. RoPE turns pairs of
    features, so an odd ``d_head`` is refused (``ValueError``) rather than silently
    dropping the last feature.
    """
    if d_head <= 0 or d_head % 2:
        raise ValueError(f"RoPE rotates pairs of features: d_head must be even, got {d_head}")
    return 1.0 / base ** (np.arange(0, d_head, 2, dtype=dtype) / d_head)  # (d/2,)


def rope_wavelengths(d_head: int, base: float) -> np.ndarray:
    """Tokens it takes each pair to turn once around, ``2π / θ_i``.

    Shapes: -> ``(d_head/2,)`` float64, from ``2π`` (pair 0) up, increasing.
    """
    return 2 * np.pi / rope_frequencies(d_head, base)


def rope_slow_pairs(d_head: int, base: float, context: int) -> int:
    """How many pairs turn less than once over ``context`` tokens (wavelength > context).

    Shapes: scalars -> int. SmolLM2 (base 100000, d_head 64, context 8192): 12 of 32.
    """
    return int(np.sum(rope_wavelengths(d_head, base) > context))


def rope_angles(
    positions: np.ndarray, d_head: int, base: float, dtype: type = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Cosines and sines of the rotation angles ``p · base^(−2i/d_head)``.

    Shapes: ``positions`` ``(n,)`` -> ``(cos (n, d_head/2), sin (n, d_head/2))`` in
    ``dtype`` (float32 by default: the model computes its angles in float32).
    """
    inv_freq = rope_frequencies(d_head, base, dtype)  # (d/2,)
    angles = np.asarray(positions, dtype=dtype)[:, None] * inv_freq  # (n, d/2)
    return np.cos(angles), np.sin(angles)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate each interleaved feature pair ``(2i, 2i+1)`` by its angle.

    Shapes: ``x`` ``(..., n, d_head)``, ``cos``/``sin`` ``(n, d_head/2)`` -> ``(..., n, d_head)``.
    """
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rope_rotate(x: np.ndarray, positions: np.ndarray | list[int], base: float) -> np.ndarray:
    """Rotate ``x`` as if its rows stood at ``positions``, with angles in ``x``'s precision.

    Shapes: ``x`` ``(..., n, d_head)``, ``positions`` ``(n,)`` -> ``(..., n, d_head)``.
    """
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    cos, sin = rope_angles(np.asarray(positions), x.shape[-1], base, dtype)  # (n, d/2) each
    return apply_rope(np.asarray(x, dtype=dtype), cos, sin)


def rotate_pair(pair: np.ndarray, angle: float | np.ndarray) -> np.ndarray:
    """Turn 2-D vectors counter-clockwise by ``angle`` radians (one pair of RoPE features).

    Shapes: ``pair`` ``(..., 2)``, ``angle`` broadcastable to ``(...)`` -> ``(..., 2)``.
    """
    c, s = np.cos(angle), np.sin(angle)
    x, y = pair[..., 0], pair[..., 1]  # (...) each
    return np.stack([c * x - s * y, s * x + c * y], axis=-1)  # (..., 2)


def rope_score(q: np.ndarray, k: np.ndarray, m: int, n: int, base: float) -> float:
    """The dot product of query ``q`` rotated to position ``m`` with key ``k`` rotated to ``n``.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> scalar (unscaled: no ``/ √d_k``).
    """
    q_m = rope_rotate(q[None, :], [m], base)[0]  # (d_head,)
    k_n = rope_rotate(k[None, :], [n], base)[0]  # (d_head,)
    return float(q_m @ k_n)


def rope_relative_score(q: np.ndarray, k: np.ndarray, offset: int, base: float) -> float:
    """The same score written with the offset ``m − n`` alone: ``q · R(−offset · θ) k``.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> scalar. Equals :func:`rope_score` ``(q, k, m, n)``
    for every ``m``, ``n`` with ``m − n = offset``, up to rounding.
    """
    return float(q @ rope_rotate(k[None, :], [-offset], base)[0])


# ---- the /rope page's experiments -----------------------------------------------------


def toy_qk(d_head: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A query and a key of standard normal numbers from ``seed`` (content only: no position).

    Shapes: -> ``(q (d_head,), k (d_head,))`` float64.
    """
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, d_head))  # (d_head,) each
    return q, k


def rotated_pair(x: np.ndarray, pair: int, position: int, base: float) -> np.ndarray:
    """Pair ``pair`` (features ``2·pair``, ``2·pair + 1``) of ``x`` turned to ``position``:
    by the angle ``position · θ_pair``, as :func:`rope_rotate` turns the whole vector.

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
    product of the two turned pairs. They add up to :func:`rope_score`.

    Shapes: ``q``, ``k`` ``(d_head,)`` -> ``(d_head/2,)``.
    """
    q_m = rope_rotate(np.asarray(q, dtype=np.float64)[None, :], [m], base)[0]  # (d_head,)
    k_n = rope_rotate(np.asarray(k, dtype=np.float64)[None, :], [n], base)[0]  # (d_head,)
    return (q_m * k_n).reshape(-1, 2).sum(-1)  # (d_head/2,)


def rope_score_grid(q: np.ndarray, k: np.ndarray, n: int, base: float) -> np.ndarray:
    """The score of ``q`` at every position ``m`` with ``k`` at every position ``j``, both
    turned by RoPE (unscaled): entry ``[m, j]`` is :func:`rope_score` ``(q, k, m, j)``.

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


def rope_turns(d_head: int, base: float, tokens: int) -> np.ndarray:
    """How many full turns each pair makes from position 0 to position ``tokens − 1``.

    Shapes: -> ``(d_head/2,)``, pair 0 first (the fastest).
    """
    return (tokens - 1) * rope_frequencies(d_head, base) / (2 * np.pi)
