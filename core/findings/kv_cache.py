"""What the KV-cache page (/kv_cache) points out, read off :mod:`core.kv_cache`.

That a cached decoding step gives the same weights as the full causal attention's row
(:func:`step_vs_full_diff`), one step's work with and without the cache
(:func:`step_work` -> :class:`StepWork`), and how many tokens' keys and values a whole
decoding projects with and without it (:func:`projections` -> :class:`Projections`).
"""

from dataclasses import dataclass

import numpy as np

from core.kv_cache import CostCurve, DecodeStep, cost_ratio


def step_vs_full_diff(step: DecodeStep, full_weights: np.ndarray) -> float:
    """Largest gap between a cached step's weights and row ``t`` of full causal attention.

    Shapes: ``step.weights`` ``(t + 1,)``, ``full_weights`` ``(n, n)`` -> scalar. Keys after
    ``t`` count too: the full causal row must be exactly 0 there.
    """
    row = full_weights[step.t]  # (n,)
    seen = np.abs(step.weights - row[: step.t + 1])  # (t + 1,)
    return float(max(seen.max(), np.abs(row[step.t + 1 :]).max(initial=0.0)))


@dataclass(frozen=True)
class StepWork:
    """One decoding step's work, with and without the cache, and the cache's size after it."""

    with_cache: int  # multiply-adds
    without_cache: int  # multiply-adds
    ratio: float  # without / with (1.0 on the first step: nothing is cached yet)
    cache_floats: int  # numbers the cache holds after the step

    @property
    def saves(self) -> bool:
        """Whether the cache saves work on this step (not on the first: nothing to reuse)."""
        return self.with_cache != self.without_cache


def step_work(curve: CostCurve, t: int) -> StepWork:
    """Step ``t``'s entries of a :class:`CostCurve` (from :func:`decode_costs`)."""
    return StepWork(
        int(curve.with_cache[t]),
        int(curve.without_cache[t]),
        float(cost_ratio(curve)[t]),
        int(curve.cache_floats[t]),
    )


@dataclass(frozen=True)
class Projections:
    """How many times a token's key and value are projected while decoding a sequence."""

    with_cache: int  # each token once, when it is new
    without_cache: int  # every token of the prefix again at every step

    @property
    def ratio(self) -> float:
        """How many times more projections decoding takes without the cache."""
        return self.without_cache / self.with_cache


def projections(n: int) -> Projections:
    """The key/value projections of decoding ``n`` tokens one at a time, as
    :func:`core.kv_cache.decode_costs` counts the work: step ``t`` reads the prefix of
    ``t + 1`` tokens; with the cache it projects the new token only, without it the whole
    prefix (1 + 2 + … + n in all).

    Shapes: -> :class:`Projections`.
    """
    prefix = np.arange(1, n + 1)  # (n,) tokens each step reads
    return Projections(len(prefix), int(prefix.sum()))  # one a step, or the whole prefix
