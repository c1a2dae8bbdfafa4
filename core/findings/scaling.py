"""What the "why divide by √d_k" page points out, computed from its experiments.

The page (``ui/views/scaling.py``) turns each finding into a translated sentence; the
counts, the comparisons and the thresholds they use come from here, so they can be tested
without a browser. The experiments themselves are in :mod:`core.experiments`.
"""

from dataclasses import dataclass

import numpy as np

from core.experiments import (
    SaturationCurve,
    ScoreComparison,
    VarianceExperiment,
    entropy,
    even_row_norms,
)

PEAKED = 0.9  # a row that gives more than this to one key counts as "almost one-hot"
SURER = 0.1  # the unscaled rows are "far more sure" when their mean top weight is this much higher
CLOSE = 0.1  # a measured variance is "close to the theory" within this relative error
WEAK = 0.25  # the unscaled gradient is "barely learning" below this share of the scaled one


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


def saturation_trend(curve: SaturationCurve, margin: float = SURER) -> str:
    """Where a softmax row goes as d_k grows, read off a saturation curve: ``"peakier"``
    (closer to one-hot) when the mean top weight at the widest d_k is at least ``margin``
    above the one at the narrowest, ``"flatter"`` (closer to even) when it is that much
    below, else ``"same"``.

    Shapes: ``curve``'s statistics ``(m,)`` -> one of the three words.
    """
    change = float(curve.max_weight[-1] - curve.max_weight[0])
    if change >= margin:
        return "peakier"
    return "flatter" if change <= -margin else "same"


def entry_variance(m: np.ndarray) -> float:
    """Variance of all entries of ``m`` (e.g. of Q): ``(...)`` -> a float."""
    return float(np.var(m))


def peaked_rows(weights: np.ndarray, threshold: float = PEAKED) -> int:
    """How many rows give more than ``threshold`` of their weight to a single key.

    Shapes: ``weights`` ``(n_q, n_k)`` -> int.
    """
    return int((weights.max(axis=-1) > threshold).sum())


@dataclass(frozen=True)
class ScoreFinding:
    """One sentence's scores without and with ÷√d_k: how much surer the unscaled rows are."""

    surer: bool  # the unscaled mean top weight is at least SURER above the scaled one
    peaked_raw: int  # unscaled rows with more than PEAKED on one key
    peaked_scaled: int  # the same after scaling
    rows: int
    q_variance: float  # variance of the entries of Q (≈ 1 is what "Var(q·k) = d_k" assumes)


def score_finding(c: ScoreComparison, raw: RowSummary, scaled: RowSummary) -> ScoreFinding:
    """What the score step says about ``c`` and its row summaries (unscaled, scaled).

    Shapes: ``c``'s matrices ``(n, n)`` -> :class:`ScoreFinding`.
    """
    return ScoreFinding(
        raw.max_weight - scaled.max_weight >= SURER,
        peaked_rows(c.raw_weights),
        peaked_rows(c.scaled_weights),
        len(c.raw_weights),
        entry_variance(c.q),
    )


@dataclass(frozen=True)
class VarianceFinding:
    """The measured variance of q·k at one d_k against the theory (d_k, and 1 after ÷√d_k)."""

    raw: float  # Var(q·k) measured
    scaled: float  # Var(q·k / √d_k) measured
    close: bool  # raw within CLOSE of d_k (relative)
    close_scaled: bool  # scaled within CLOSE of 1
    widest: float  # Var(q·k) at the widest d_k of the experiment


def variance_finding(exp: VarianceExperiment, index: int) -> VarianceFinding:
    """The variance experiment's numbers at ``exp.d_ks[index]``, and whether each is as
    close to its theory as :data:`CLOSE` (a few thousand samples estimate it within a few %).

    Shapes: ``exp``'s curves ``(m,)`` -> :class:`VarianceFinding`.
    """
    var, var_s = exp.raw_var[index], exp.scaled_var[index]
    return VarianceFinding(
        float(var),
        float(var_s),
        bool(abs(var / exp.d_ks[index] - 1) <= CLOSE),
        bool(abs(var_s - 1) <= CLOSE),
        float(exp.raw_var[-1]),
    )


@dataclass(frozen=True)
class GradientFinding:
    """The softmax Jacobian norm (how much gradient reaches W_Q, W_K) at the ends of d_k."""

    raw: float  # unscaled, at the widest d_k
    scaled: float  # scaled, at the widest d_k
    first: float  # at the narrowest d_k (unscaled; at d_k = 1 both curves agree)
    weak: bool  # raw below WEAK × scaled: the unscaled model barely learns
    even: float  # the norm of an even row over the same keys
    above_even: bool  # scaled rows pass on more gradient than an even row


def gradient_finding(raw: SaturationCurve, scaled: SaturationCurve, n_keys: int) -> GradientFinding:
    """What the gradient step says about the two curves (rows of ``n_keys`` keys).

    Shapes: curves ``(m,)`` -> :class:`GradientFinding`.
    """
    g_raw, g_scaled = raw.jacobian_norm, scaled.jacobian_norm
    even, _ = even_row_norms(n_keys)
    return GradientFinding(
        float(g_raw[-1]),
        float(g_scaled[-1]),
        float(g_raw[0]),
        bool(g_raw[-1] < WEAK * g_scaled[-1]),
        even,
        bool(g_scaled[-1] > even),
    )
