"""Numerical experiments behind "why divide by √d_k" (numbers only; pages draw them)."""

from dataclasses import dataclass

import numpy as np

from core.attention import attention_scores
from core.projections import init_projections, xavier_std
from core.softmax_numerics import softmax


def prefix_scores(
    d_ks: np.ndarray | list[int], n_rows: int, n_keys: int = 1, seed: int = 0
) -> np.ndarray:
    """Scores ``q·k_j`` of random vectors with i.i.d. N(0, 1) entries, for every ``d_k``.

    Each row has one query and ``n_keys`` keys, all ``max(d_ks)`` wide; the score at ``d_k``
    adds up the products of their first ``d_k`` entries, so a wider vector extends a
    narrower one. Rows are independent; so are the keys of a row.

    The vectors themselves are never drawn, only what their dot products need: given the
    query's entries ``lo .. hi - 1`` (call them ``q_b``), each key's products over those
    entries add up to ``k_b·q_b ~ N(0, ‖q_b‖²)``, independently for every key and block,
    and ``‖q_b‖²`` has a χ² distribution with ``hi - lo`` degrees of freedom. So one χ² per
    row and block and one normal per key and block give the scores with exactly the
    distribution of the literal dot products, at ``m·(1 + n_keys)`` random numbers a row
    instead of ``max(d_ks)·(1 + n_keys)`` (a test compares them with literal ones).

    Shapes: ``d_ks`` ``(m,)`` strictly increasing -> ``(m, n_rows, n_keys)``.
    """
    d = np.asarray(d_ks, dtype=int)
    if d.size == 0 or d[0] < 1 or np.any(np.diff(d) <= 0):
        raise ValueError(f"d_ks must be positive and strictly increasing, got {d.tolist()}")
    rng = np.random.default_rng(seed)
    widths = np.diff(d, prepend=0)  # (m,) entries each d_k adds to the previous width
    norms = np.sqrt(rng.chisquare(widths, size=(n_rows, d.size)))  # (n_rows, m) ‖q_b‖
    z = rng.standard_normal((d.size, n_rows, n_keys))  # (m, n_rows, n_keys)
    return np.cumsum(norms.T[..., None] * z, axis=0)  # (m, n_rows, n_keys)


def dot_product_samples(d_k: int, n_samples: int, seed: int = 0) -> np.ndarray:
    """Dot products ``q·k`` of random vectors with i.i.d. N(0, 1) entries.

    Shapes: -> ``(n_samples,)``. Their variance is ``d_k`` in theory.
    """
    return prefix_scores([d_k], n_samples, 1, seed)[0, :, 0]  # (n_samples,)


def dot_variance_curve(
    d_ks: np.ndarray | list[int], n_samples: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Measured variance of ``q·k`` for each ``d_k``, raw and after ÷√d_k.

    Shapes: ``d_ks`` ``(m,)`` -> ``(raw (m,), scaled (m,))``; theory: ``d_k`` and 1.
    """
    exp = variance_experiment(d_ks, n_samples, seed)
    return exp.raw_var, exp.scaled_var


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy in nats; ``0·log 0`` counts as 0. Shapes: ``(..., n)`` -> ``(...)``."""
    logs = np.log(np.where(p > 0, p, 1.0))
    return -np.sum(p * logs, axis=axis)


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """Jacobian of softmax at output ``p``: ``diag(p) - p pᵀ``.

    Shapes: ``(..., n)`` -> ``(..., n, n)``.
    """
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def softmax_jacobian_norm(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian: how much gradient can flow back.

    Shapes: ``(..., n)`` -> ``(...)``. It is 0 for a one-hot (saturated) ``p``. Computed
    without building the ``n × n`` matrix: ``‖J‖² = Σ_i p_i²(1 − p_i)² + Σ_{i≠j} p_i² p_j²``,
    the second sum as ``2 Σ_i p_i² · (the smaller p_j² before it)`` over sorted squares, so
    no large terms cancel (a nearly one-hot row keeps its tiny norm).
    """
    sq = np.sort(p * p, axis=-1)  # (..., n) ascending
    before = np.cumsum(sq[..., :-1], axis=-1)  # (..., n - 1): sums of the smaller squares
    off = 2 * np.sum(sq[..., 1:] * before, axis=-1)  # (...)
    diag = np.sum((p * (1 - p)) ** 2, axis=-1)  # (...)
    return np.sqrt(diag + off)


def even_row_norms(n_keys: int) -> tuple[float, float]:
    """:func:`softmax_jacobian_norm` of an even row over ``n_keys`` keys, ``√(n−1)/n``, and
    of a 50/50 row over two keys, ``1/2``: what a row that favours no key passes back.

    Shapes: -> two floats.
    """
    even = softmax_jacobian_norm(np.full(n_keys, 1.0 / n_keys))
    half = softmax_jacobian_norm(np.array([0.5, 0.5]))
    return float(even), float(half)


@dataclass(frozen=True)
class SaturationCurve:
    """Mean statistics of one softmax row of random scores, per ``d_k``."""

    d_ks: np.ndarray  # (m,)
    max_weight: np.ndarray  # (m,)
    entropy: np.ndarray  # (m,)
    jacobian_norm: np.ndarray  # (m,)


def _row_statistics(d_ks: np.ndarray, rows: np.ndarray) -> SaturationCurve:
    """Means over the trials of softmax rows ``(m, n_trials, n_keys)``."""
    return SaturationCurve(
        d_ks,
        rows.max(axis=-1).mean(axis=-1),
        entropy(rows).mean(axis=-1),
        softmax_jacobian_norm(rows).mean(axis=-1),
    )


def saturation_curves(
    d_ks: np.ndarray | list[int], n_keys: int = 8, n_trials: int = 200, seed: int = 0
) -> tuple[SaturationCurve, SaturationCurve]:
    """How peaked a softmax row gets as ``d_k`` grows: without and with ÷√d_k.

    For each ``d_k``: the mean over ``n_trials`` rows of ``n_keys`` random scores
    (:func:`prefix_scores`; both curves score the same vectors) of the max weight, the
    entropy and the softmax Jacobian norm (gradient size). Unscaled rows saturate
    (max → 1, entropy → 0, gradient → 0); scaled rows stay put.
    Shapes: ``d_ks`` ``(m,)`` -> two curves of ``(m,)`` statistics.
    """
    d = np.asarray(d_ks)
    scores = prefix_scores(d, n_trials, n_keys, seed)  # (m, n_trials, n_keys)
    scaled = scores / np.sqrt(d)[:, None, None]  # (m, n_trials, n_keys)
    return _row_statistics(d, softmax(scores)), _row_statistics(d, softmax(scaled))


def saturation_curve(
    d_ks: np.ndarray | list[int],
    scale: bool,
    n_keys: int = 8,
    n_trials: int = 200,
    seed: int = 0,
) -> SaturationCurve:
    """One of :func:`saturation_curves`: with ÷√d_k if ``scale``, else without."""
    return saturation_curves(d_ks, n_keys, n_trials, seed)[int(scale)]


def gradient_curve(
    d_ks: np.ndarray | list[int], n_keys: int = 8, n_trials: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Mean softmax Jacobian norm per ``d_k`` without and with scaling.

    Shapes: ``(m,)`` -> ``(unscaled (m,), scaled (m,))``.
    """
    raw, scaled = saturation_curves(d_ks, n_keys, n_trials, seed)
    return raw.jacobian_norm, scaled.jacobian_norm


def path_lengths(max_distance: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sequential steps information needs to travel between two tokens ``d`` apart.

    An RNN passes it through every hidden state in between (``d`` steps); self-attention
    connects any two positions directly (1 step). Shapes: -> ``(distance, rnn, attention)``,
    each ``(max_distance,)``.
    """
    distance = np.arange(1, max_distance + 1)
    return distance, distance.copy(), np.ones_like(distance)


@dataclass(frozen=True)
class VarianceExperiment:
    """Samples of ``q·k`` for several ``d_k`` and their variance, measured and in theory."""

    d_ks: np.ndarray  # (m,)
    samples: np.ndarray  # (m, n_samples)  raw q·k (:func:`prefix_scores`, one key per row)
    raw_var: np.ndarray  # (m,)
    scaled_var: np.ndarray  # (m,)  variance of q·k / √d_k
    theory_raw: np.ndarray  # (m,)  = d_k
    theory_scaled: np.ndarray  # (m,)  = 1


def variance_experiment(
    d_ks: np.ndarray | list[int], n_samples: int, seed: int = 0
) -> VarianceExperiment:
    """``n_samples`` random pairs ``q·k`` per ``d_k`` (:func:`prefix_scores`), kept, and
    their variance without and with ÷√d_k.

    Shapes: ``d_ks`` ``(m,)`` -> samples ``(m, n_samples)``, every curve ``(m,)``.
    """
    samples = prefix_scores(d_ks, n_samples, 1, seed)[..., 0]  # (m, n_samples)
    d = np.asarray(d_ks, dtype=float)
    raw = samples.var(axis=-1)
    return VarianceExperiment(d, samples, raw, raw / d, d.copy(), np.ones_like(d))


def scaled_histograms(
    raw: np.ndarray, d_k: int, bins: int = 60
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Counts of ``raw`` and of ``raw / √d_k``, each on its own ``bins`` equal bins over its
    own range, so the narrower scaled series is drawn as finely as the raw one.

    Shapes: ``raw`` ``(s,)`` -> ``(raw_edges (bins + 1,), raw_counts (bins,),
    scaled_edges (bins + 1,), scaled_counts (bins,))``.
    """
    raw_counts, raw_edges = np.histogram(raw, bins=bins)
    scaled_counts, scaled_edges = np.histogram(raw / np.sqrt(d_k), bins=bins)
    return raw_edges, raw_counts, scaled_edges, scaled_counts


def unit_variance_projections(
    d_model: int, d_k: int, seed: int = 42
) -> tuple[np.ndarray, np.ndarray]:
    """Lesson 002's W_Q, W_K rescaled to std ``1/√d_model`` (same directions, other size).

    With unit-variance inputs every entry of ``q`` and ``k`` then has variance ≈ 1, the
    assumption behind "Var(q·k) = d_k". Shapes: -> ``(w_q (d_model, d_k), w_k (d_model, d_k))``.
    """
    w_q, w_k, _ = init_projections(d_model, d_k, 1, seed)
    ratio = (1.0 / np.sqrt(d_model)) / xavier_std(d_model, d_k)
    return w_q * ratio, w_k * ratio


@dataclass(frozen=True)
class ScoreComparison:
    """One sentence's scores and weights without and with ÷√d_k."""

    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    raw: np.ndarray  # (n, n)  Q Kᵀ
    scaled: np.ndarray  # (n, n)  Q Kᵀ / √d_k
    raw_weights: np.ndarray  # (n, n)  softmax(Q Kᵀ)
    scaled_weights: np.ndarray  # (n, n)  softmax(Q Kᵀ / √d_k)


def compare_scaling(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray) -> ScoreComparison:
    """Project ``x`` to queries and keys, then score and softmax with and without ÷√d_k.

    Shapes: ``x`` ``(n, d_model)``, ``w_q``/``w_k`` ``(d_model, d_k)`` -> :class:`ScoreComparison`.
    """
    q, k = x @ w_q, x @ w_k  # (n, d_k), (n, d_k)
    raw = attention_scores(q, k, scale=False)  # (n, n)
    scaled = attention_scores(q, k, scale=True)  # (n, n)
    return ScoreComparison(q, k, raw, scaled, softmax(raw), softmax(scaled))
