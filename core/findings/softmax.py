"""What the softmax page points out, computed from its logits and probabilities.

The page (``ui/views/softmax.py``) turns each finding into a translated sentence; which
probability is largest, whether the temperature changes anything and what a mask leaves
come from here, so they can be tested without a browser. Where the naive softmax breaks is
numerics: :func:`core.softmax_numerics.naive_break`.
"""

from dataclasses import dataclass

import numpy as np

T_ONE = 1e-9  # a temperature this close to 1 counts as 1 (the slider steps in 0.05)


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
