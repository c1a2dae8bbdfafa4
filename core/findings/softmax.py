"""What the softmax page points out, computed from its logits and probabilities.

The page (``ui/views/softmax.py``) turns each finding into a translated sentence; which
probability is largest, whether the temperature changes anything, what a mask leaves and
where the naive softmax breaks (and why: overflow or underflow) come from here, so they can
be tested without a browser. The numerics themselves are in :mod:`core.softmax_numerics`.
"""

from dataclasses import dataclass

import numpy as np

from core.softmax_numerics import EXP_OVERFLOW, largest_exp_argument, scale_sweep

T_ONE = 1e-9  # a temperature this close to 1 counts as 1 (the slider steps in 0.05)
# a row this close to a shape has it as the page prints it (three decimals: 1.000, 0.333)
SHAPE_GAP = 1e-3


@dataclass(frozen=True)
class TemperatureEffect:
    """What a temperature does to softmax: the largest probability at T and at T = 1."""

    peak: float  # the largest probability at the temperature
    peak_at_one: float  # the largest probability at T = 1
    flat: bool  # every probability at T = 1 is equal (equal logits): no T changes anything
    at_one: bool  # the temperature is 1: nothing changed


def temperature_effect(
    at_t: np.ndarray, at_one: np.ndarray, temperature: float
) -> TemperatureEffect:
    """The largest probability of ``softmax(x / T)`` and of ``softmax(x)``.

    Shapes: ``at_t``, ``at_one`` ``(..., n)`` (a row, or a matrix of rows: the peak is over
    all of it) -> :class:`TemperatureEffect`.
    """
    return TemperatureEffect(
        float(np.max(at_t)),
        float(np.max(at_one)),
        bool(np.ptp(at_one) == 0),
        abs(temperature - 1.0) < T_ONE,
    )


def row_shape(at_t: np.ndarray, at_one: np.ndarray, gap: float = SHAPE_GAP) -> str:
    """What a temperature made of a softmax row, within ``gap``: ``"zero"`` (every weight 0:
    a fully masked row), ``"one_hot"`` (one weight 1, the rest 0), ``"uniform"`` (every
    weight 1/n), ``"unchanged"`` (the row at T = 1, ``at_one``), else ``"other"``; the first
    that fits, in that order.

    Shapes: ``at_t``, ``at_one`` ``(n,)`` -> one of the five words.
    """
    p = np.asarray(at_t, dtype=float)
    if np.all(np.abs(p) <= gap):
        return "zero"
    if np.max(p) >= 1 - gap and np.sum(p) - np.max(p) <= gap:
        return "one_hot"
    if np.all(np.abs(p - 1 / p.size) <= gap):
        return "uniform"
    if np.all(np.abs(p - at_one) <= gap):
        return "unchanged"
    return "other"


@dataclass(frozen=True)
class MaskEffect:
    """What masking entries of a row (setting their logits to −∞) does to its softmax."""

    count: int  # masked entries
    n: int  # entries
    exact_zero: bool  # every masked entry got a probability of exactly 0
    largest_masked: float  # the largest probability of a masked entry (0.0 if none masked)
    total: float  # the sum of the probabilities: 1, or 0 for an all-masked row

    @property
    def none(self) -> bool:
        """Whether nothing is masked."""
        return self.count == 0

    @property
    def all(self) -> bool:
        """Whether every entry is masked (the row attends to nothing)."""
        return self.count == self.n


def mask_effect(masked: np.ndarray, after: np.ndarray) -> MaskEffect:
    """How many entries of ``masked`` are −∞ and what probability ``after`` gives them.

    Shapes: ``masked`` ``(n,)`` logits, ``after`` ``(n,)`` their softmax -> :class:`MaskEffect`.
    """
    hidden = np.isneginf(masked)  # (n,)
    return MaskEffect(
        int(np.sum(hidden)),
        len(masked),
        bool(np.all(after[hidden] == 0.0)),
        float(np.max(after[hidden])) if hidden.any() else 0.0,
        float(np.sum(after)),
    )


def first_nonfinite_row(p: np.ndarray) -> int:
    """Index of the first row of ``p`` holding NaN or ±inf, or ``-1`` if every row is finite.

    Shapes: ``p`` ``(s, n)`` -> int.
    """
    bad = ~np.all(np.isfinite(p), axis=-1)  # (s,)
    return int(np.argmax(bad)) if bad.any() else -1


@dataclass(frozen=True)
class NaiveBreak:
    """Where the naive softmax of ``x * s`` first stops being a distribution, and why."""

    index: int  # the first scale's index in the sweep, -1 if it never breaks
    scale: float  # that scale (0.0 if it never breaks)
    top: float  # the largest exp argument there (0.0 if it never breaks)
    overflow: bool  # exp gave +inf (inf/inf = NaN); else every term underflowed to 0 (0/0)


def naive_break(x: np.ndarray | list, scales: np.ndarray | list) -> NaiveBreak:
    """The first scale of ``scales`` at which :func:`softmax_naive` of ``x * s`` holds NaN
    or ±inf, and whether ``exp`` overflowed there (an argument above :data:`EXP_OVERFLOW`)
    or every term underflowed (large logits break by overflow, very negative ones by
    underflow).

    Shapes: ``x`` ``(n,)``, ``scales`` ``(s,)`` -> :class:`NaiveBreak`.
    """
    scales = np.asarray(scales)
    naive, _ = scale_sweep(x, scales)  # (s, n)
    index = first_nonfinite_row(naive)
    if index < 0:
        return NaiveBreak(-1, 0.0, 0.0, False)
    top = float(largest_exp_argument(x, scales[[index]])[0][0])
    return NaiveBreak(index, float(scales[index]), top, top > EXP_OVERFLOW)
