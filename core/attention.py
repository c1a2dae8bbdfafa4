"""Scaled dot-product attention: softmax(Q Kᵀ / √d_k) V."""

import math
from dataclasses import dataclass

import numpy as np

from core.masks import apply_mask
from core.softmax_numerics import softmax


def attention_scores(q: np.ndarray, k: np.ndarray, scale: bool = True) -> np.ndarray:
    """Similarity of every query with every key.

    Shapes: ``q`` ``(..., n_q, d_k)``, ``k`` ``(..., n_k, d_k)`` -> ``(..., n_q, n_k)``.
    With ``scale=True`` the dot products are divided by √d_k.
    """
    scores = q @ np.swapaxes(k, -1, -2)  # (..., n_q, n_k)
    return scores / math.sqrt(q.shape[-1]) if scale else scores  # a Python float keeps float32


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention of queries over keys, mixing the values.

    Shapes: ``q`` ``(..., n_q, d_k)``, ``k`` ``(..., n_k, d_k)``, ``v`` ``(..., n_k, d_v)``,
    ``mask`` bool broadcastable to ``(..., n_q, n_k)`` (True = may attend)
    -> ``(output (..., n_q, d_v), weights (..., n_q, n_k))``.

    Masked weights are exactly 0; a query with every key masked gets a zero weight row and
    a zero output, and a NaN score gives a NaN row, never a zero one (see
    :mod:`core.softmax_numerics`). No keys at all (``n_k = 0``) is refused with a
    ``ValueError``: there is nothing to attend to, and an empty softmax has no answer.
    """
    if k.shape[-2] == 0:
        raise ValueError("attention needs at least one key (n_k = 0)")
    # 1) score and 2) scale
    scores = attention_scores(q, k, scale=scale)  # (..., n_q, n_k)
    # 3) mask
    scores = apply_mask(scores, mask)
    # 4) softmax over the keys
    weights = softmax(scores, axis=-1, temperature=temperature)  # (..., n_q, n_k)
    # 5) mix the values
    return weights @ v, weights  # (..., n_q, d_v), (..., n_q, n_k)


@dataclass(frozen=True)
class AttentionTrace:
    """Every intermediate of one self-attention pass, for pages that show the steps."""

    x: np.ndarray  # (n, d_model)
    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    v: np.ndarray  # (n, d_v)
    scores: np.ndarray  # (n, n)   Q Kᵀ, unscaled
    scaled: np.ndarray  # (n, n)   Q Kᵀ / √d_k (or unscaled if scale=False), mask applied
    weights: np.ndarray  # (n, n)
    output: np.ndarray  # (n, d_v)


def self_attention_trace(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionTrace:
    """Run self-attention on ``x`` and keep every step.

    Shapes: ``x`` ``(n, d_model)``, ``w_q``/``w_k`` ``(d_model, d_k)``, ``w_v``
    ``(d_model, d_v)``, ``mask`` bool broadcastable to ``(n, n)`` -> :class:`AttentionTrace`.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # 1) project: (n, d_k), (n, d_k), (n, d_v)
    output, weights = scaled_dot_product_attention(q, k, v, mask, scale, temperature)
    scores = attention_scores(q, k, scale=False)  # (n, n)
    scaled = apply_mask(attention_scores(q, k, scale=scale), mask)  # (n, n)
    return AttentionTrace(x, q, k, v, scores, scaled, weights, output)


@dataclass(frozen=True)
class RowMix:
    """One query's weighted sum taken apart: ``output_i = Σ_j α_ij v_j``."""

    weights: np.ndarray  # (n_k,)       the query's weight row α_i
    contributions: np.ndarray  # (n_k, d_v)   α_ij v_j, one row per key
    running: np.ndarray  # (n_k, d_v)   partial sums over keys 0..j; the last row is the output
    output: np.ndarray  # (d_v,)        α_i @ V
    weight_total: float  # Σ_j α_ij (1 for a softmax row, 0 for an all-masked row)
    sizes: np.ndarray  # (n_k,)       |α_ij v_j|: how big each key's piece of the output is


def mix_row(weights_row: np.ndarray, v: np.ndarray) -> RowMix:
    """Split one query's output into the scaled value vectors it is the sum of.

    Shapes: ``weights_row`` ``(n_k,)``, ``v`` ``(n_k, d_v)`` -> :class:`RowMix`.
    """
    contributions = weights_row[:, None] * v  # (n_k, d_v)
    running = np.cumsum(contributions, axis=0)  # (n_k, d_v)
    sizes = np.linalg.norm(contributions, axis=1)  # (n_k,)
    total = float(weights_row.sum())
    return RowMix(weights_row, contributions, running, weights_row @ v, total, sizes)
