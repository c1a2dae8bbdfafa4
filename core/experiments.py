"""Numerical experiments behind "why divide by √d_k" (numbers only; pages draw them)."""

from dataclasses import dataclass

import numpy as np

from core.attention import attention_scores
from core.projections import init_projections, xavier_std
from core.softmax import softmax


def dot_product_samples(d_k: int, n_samples: int, seed: int = 0) -> np.ndarray:
    """Dot products ``q·k`` of random vectors with i.i.d. N(0, 1) entries.

    Shapes: -> ``(n_samples,)``. Their variance is ``d_k`` in theory.
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return np.einsum("sd,sd->s", q, k)  # (n_samples,)


def dot_variance_curve(
    d_ks: np.ndarray | list[int], n_samples: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Measured variance of ``q·k`` for each ``d_k``, raw and after ÷√d_k.

    Shapes: ``d_ks`` ``(m,)`` -> ``(raw (m,), scaled (m,))``; theory: ``d_k`` and 1.
    """
    raw = np.array(
        [np.var(dot_product_samples(int(d), n_samples, seed + i)) for i, d in enumerate(d_ks)]
    )
    return raw, raw / np.asarray(d_ks, dtype=float)


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

    Shapes: ``(..., n)`` -> ``(...)``. It is 0 for a one-hot (saturated) ``p``.
    """
    return np.linalg.norm(softmax_jacobian(p), axis=(-2, -1))


@dataclass(frozen=True)
class SaturationCurve:
    """Mean statistics of one softmax row of random scores, per ``d_k``."""

    d_ks: np.ndarray  # (m,)
    max_weight: np.ndarray  # (m,)
    entropy: np.ndarray  # (m,)
    jacobian_norm: np.ndarray  # (m,)


def _random_rows(d_k: int, n_keys: int, n_trials: int, scale: bool, seed: int) -> np.ndarray:
    """Softmax rows of ``q·k`` scores for random N(0, 1) vectors.

    Shapes: -> ``(n_trials, n_keys)``.
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_trials, 1, d_k))
    k = rng.standard_normal((n_trials, n_keys, d_k))
    scores = np.sum(q * k, axis=-1)  # (n_trials, n_keys)
    return softmax(scores / np.sqrt(d_k) if scale else scores)


def saturation_curve(
    d_ks: np.ndarray | list[int],
    scale: bool,
    n_keys: int = 8,
    n_trials: int = 200,
    seed: int = 0,
) -> SaturationCurve:
    """How peaked a softmax row gets as ``d_k`` grows, with or without ÷√d_k.

    For each ``d_k``: the mean over ``n_trials`` rows of the max weight, the entropy and the
    softmax Jacobian norm (gradient size). Unscaled rows saturate (max → 1, entropy → 0,
    gradient → 0); scaled rows stay put.
    """
    rows = [_random_rows(int(d), n_keys, n_trials, scale, seed + i) for i, d in enumerate(d_ks)]
    return SaturationCurve(
        np.asarray(d_ks),
        np.array([r.max(axis=-1).mean() for r in rows]),
        np.array([entropy(r).mean() for r in rows]),
        np.array([softmax_jacobian_norm(r).mean() for r in rows]),
    )


def gradient_curve(
    d_ks: np.ndarray | list[int], n_keys: int = 8, n_trials: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Mean softmax Jacobian norm per ``d_k`` without and with scaling.

    Shapes: ``(m,)`` -> ``(unscaled (m,), scaled (m,))``.
    """
    raw = saturation_curve(d_ks, False, n_keys, n_trials, seed).jacobian_norm
    return raw, saturation_curve(d_ks, True, n_keys, n_trials, seed).jacobian_norm


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
    samples: np.ndarray  # (m, n_samples)  raw q·k, row i drawn with seed + i
    raw_var: np.ndarray  # (m,)
    scaled_var: np.ndarray  # (m,)  variance of q·k / √d_k
    theory_raw: np.ndarray  # (m,)  = d_k
    theory_scaled: np.ndarray  # (m,)  = 1


def variance_experiment(
    d_ks: np.ndarray | list[int], n_samples: int, seed: int = 0
) -> VarianceExperiment:
    """The samples behind :func:`dot_variance_curve` (same seeds, same numbers), kept.

    Shapes: ``d_ks`` ``(m,)`` -> samples ``(m, n_samples)``, every curve ``(m,)``.
    """
    samples = np.stack(
        [dot_product_samples(int(d), n_samples, seed + i) for i, d in enumerate(d_ks)]
    )  # (m, n_samples)
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


@dataclass(frozen=True)
class RowSummary:
    """How spread the scores are and how peaked their softmax rows are."""

    score_std: float  # standard deviation of all scores
    max_weight: float  # mean over rows of the largest weight
    entropy: float  # mean over rows of the entropy (nats)


def summarize_rows(scores: np.ndarray, weights: np.ndarray) -> RowSummary:
    """Shapes: ``scores``, ``weights`` ``(n_q, n_k)`` -> :class:`RowSummary` (three floats)."""
    return RowSummary(
        float(np.std(scores)),
        float(weights.max(axis=-1).mean()),
        float(entropy(weights).mean()),
    )


def entry_variance(m: np.ndarray) -> float:
    """Variance of all entries of ``m`` (e.g. of Q): ``(...)`` -> a float."""
    return float(np.var(m))
