"""What the homework page (/homework) reports about an upload besides the diagnosis: how
far it is from the right answer, cell by cell (:func:`compare` -> :class:`Comparison`: the
largest absolute and relative errors and where, the rows that disagree); whether a matrix of
the wrong shape is the right answer transposed (:func:`transposed_matches`); and the row sums
of uploaded weights (:func:`weight_sums`, :func:`sum_range`). The exercises, the mistakes and
the diagnosis are in :mod:`core.homework`.
"""

import math
from dataclasses import dataclass

import numpy as np

from core.homework import bad_cells, matches
from core.masks import row_sums

# A right value below this share of the answer's largest |value| counts as "near 0": there a
# relative error means nothing (0.1 against 0 is infinitely wrong), the absolute one says it.
NEAR_ZERO = 1e-3


@dataclass(frozen=True)
class Comparison:
    """An upload held against the right answer (equal shapes)."""

    equal: bool
    tol: float
    error: np.ndarray  # candidate − reference, NaN where either side is not finite
    bad: np.ndarray  # bool, the cells that disagree
    max_abs: float  # largest |error| over cells finite on both sides (0.0 if none)
    max_abs_at: tuple[int, ...]
    max_rel: float  # largest |error| / |reference| where the reference is not near 0
    max_rel_at: tuple[int, ...]  # (see NEAR_ZERO; 0.0 and () if no such cell errs)
    first_row: tuple[int, ...] | None  # index of the first row (all but the last axis) that
    # holds a disagreeing cell, or None

    @property
    def bad_count(self) -> int:
        """How many cells disagree."""
        return int(self.bad.sum())

    @property
    def bad_rows(self) -> list[tuple[int, ...]]:
        """The rows (index over every axis but the last) that hold a disagreeing cell, in
        order."""
        return sorted({tuple(int(i) for i in idx[:-1]) for idx in np.argwhere(self.bad)})


def compare(candidate: np.ndarray, reference: np.ndarray, tol: float) -> Comparison:
    """Cell-by-cell comparison of two arrays of the same shape. The relative error counts
    only cells whose reference is at least :data:`NEAR_ZERO` of the reference's largest
    ``|value|``, so it stays a meaningful number (never ``|error| / 0``).

    Shapes: ``candidate`` and ``reference`` ``(..., m)`` -> :class:`Comparison`.
    """
    c, r = np.asarray(candidate, dtype=float), np.asarray(reference, dtype=float)
    if c.shape != r.shape:
        raise ValueError(f"shapes differ: {c.shape} vs {r.shape}")
    both = np.isfinite(c) & np.isfinite(r)
    biggest = np.finfo(float).max
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.clip(c - r, -biggest, biggest)  # 1e308 − (−1e308) is no ∞ on screen
    error = np.where(both, gap, np.nan)  # NaN where either side is not finite
    abs_err = np.where(both, np.abs(error), -1.0)
    scale = float(np.abs(r[both]).max(initial=0.0))
    counted = both & (np.abs(r) >= NEAR_ZERO * scale) & (r != 0)
    rel_err = np.where(counted, abs_err / np.where(counted, np.abs(r), 1.0), -1.0)
    bad = bad_cells(c, r, tol)
    rows = bad.reshape(-1, c.shape[-1]).any(axis=-1) if c.size else np.zeros(0, bool)  # (r,)

    def top(values: np.ndarray) -> tuple[float, tuple[int, ...]]:
        if not values.size or values.max() <= 0:  # no finite cell, or no error at all
            return max(float(values.max(initial=0.0)), 0.0), ()
        at = np.unravel_index(int(np.argmax(values)), values.shape)
        return float(values[at]), tuple(int(i) for i in at)

    max_abs, abs_at = top(abs_err)
    max_rel, rel_at = top(rel_err)
    first = None
    if rows.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(rows)), c.shape[:-1]))
    return Comparison(not bad.any(), tol, error, bad, max_abs, abs_at, max_rel, rel_at, first)


def transposed_matches(candidate: np.ndarray, reference: np.ndarray, tol: float) -> bool:
    """Whether a matrix of the wrong shape is the right answer transposed (``out.T`` where
    ``out`` was meant).

    Shapes: ``candidate`` ``(m, n)``, ``reference`` ``(n, m)`` -> bool.
    """
    c = np.asarray(candidate)
    return c.ndim == 2 and matches(c.T, reference, tol)


def weight_sums(weights: np.ndarray) -> np.ndarray:
    """Each row's total of uploaded weights or probabilities (NaN where ∞ − ∞ meet): every
    row of a softmax sums to 1.

    Shapes: ``(..., n_k)`` -> ``(...)`` float.
    """
    with np.errstate(invalid="ignore"):
        return row_sums(np.asarray(weights).astype(float))


@dataclass(frozen=True)
class SumRange:
    """The smallest and largest row sum, or how many are NaN/±∞."""

    lo: float  # NaN when some sum is not finite
    hi: float
    nonfinite: int  # sums that are NaN or ±∞


def sum_range(sums: np.ndarray) -> SumRange:
    """Summarise row sums (:func:`weight_sums`).

    Shapes: ``(...)`` non-empty -> :class:`SumRange`.
    """
    bad = ~np.isfinite(sums)
    if bad.any():
        return SumRange(math.nan, math.nan, int(bad.sum()))
    return SumRange(float(sums.min()), float(sums.max()), 0)
