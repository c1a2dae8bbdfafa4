"""What the FlashAttention page (/flash) points out, read off :mod:`core.flash`'s results.

One query's row after some tiles, with the online softmax's step in words (:func:`tile_row`
-> :class:`TileRow`); the tiled result's errors at one logit factor and where a softmax
without the max subtraction first gives NaN (:func:`agreement` -> :class:`Agreement`,
:func:`first_nan`).
"""

from dataclasses import dataclass

import numpy as np

from core.flash import CURRENT, FlashTrace, LogitGrowth, key_states, logit_growth, tiled_errors

# exp overflows float32 above this (≈ 88.72), and float32 rounds to this relative step
FLOAT32_EXP_LIMIT = float(np.log(np.finfo(np.float32).max))
FLOAT32_EPS = float(np.finfo(np.float32).eps)


def first_nan(growth: LogitGrowth) -> float | None:
    """The smallest factor at which the softmax without the max subtraction broke (None:
    it never did in the range).

    Shapes: -> scalar.
    """
    broke = np.isnan(growth.naive)
    return float(growth.factors[np.argmax(broke)]) if broke.any() else None


@dataclass(frozen=True)
class TileRow:
    """One query's row of the tiled result after some tiles, and how far it is from the end
    and from ordinary attention."""

    row: int
    tile: int  # tiles read (1-based)
    count: int  # tiles in all
    first: int  # first key of the tile just read
    last: int  # last key of it
    ends: np.ndarray  # (tiles,) keys read after each tile
    scores: np.ndarray  # (T,) the row's scaled scores
    states: np.ndarray  # (T,) key states (:func:`core.flash.key_states`)
    maxima: np.ndarray  # (tiles,) m after each tile
    sums: np.ndarray  # (tiles,) ℓ after each tile
    partial: np.ndarray  # (D,) attention over the keys read so far
    final: np.ndarray  # (D,) the tiled result
    reference: np.ndarray  # (D,) ordinary attention
    row_error: float  # max |tiled − ordinary| over this row
    error: float  # over every row
    partial_gap: float  # max |partial − final|

    @property
    def m(self) -> float:
        """The running max after the tile just read."""
        return float(self.maxima[self.tile - 1])

    @property
    def l(self) -> float:  # noqa: E743 — the paper's ℓ
        """The running sum after the tile just read."""
        return float(self.sums[self.tile - 1])

    @property
    def m_before(self) -> float:
        """The running max before this tile (−∞ before the first, or while all was masked)."""
        return float(self.maxima[self.tile - 2]) if self.tile > 1 else -np.inf

    @property
    def alpha(self) -> float:
        """``exp(m_before − m)``: what the sums and outputs so far were multiplied by (0 when
        there was nothing before)."""
        return float(np.exp(self.m_before - self.m)) if np.isfinite(self.m_before) else 0.0

    @property
    def step(self) -> str:
        """What this tile did: ``"masked"`` (every key of it is hidden from this query),
        ``"first"`` (the first visible keys), ``"raised"`` (a larger score: m grew) or
        ``"kept"`` (m stayed)."""
        if not (self.states == CURRENT).any():
            return "masked"
        if not np.isfinite(self.m_before):
            return "first"
        return "raised" if self.m > self.m_before else "kept"


def tile_row(
    trace: FlashTrace,
    output: np.ndarray,
    reference: np.ndarray,
    scores: np.ndarray,
    mask: np.ndarray,
    block: int,
    row: int,
    tile: int,
) -> TileRow:
    """Query ``row`` after ``tile`` tiles of :func:`core.flash.flash_attention`.

    Shapes: ``trace`` of ``(T, D)`` inputs, ``output``, ``reference`` ``(T, D)``, ``scores``
    ``(T, T)`` scaled, ``mask`` ``(T, T)`` True = may attend -> :class:`TileRow`.
    """
    ends = trace.ends  # (tiles,)
    return TileRow(
        row=row,
        tile=tile,
        count=len(ends),
        first=int(ends[tile - 2]) if tile > 1 else 0,
        last=int(ends[tile - 1]) - 1,
        ends=ends,
        scores=scores[row],
        states=key_states(scores.shape[-1], block, tile, mask[row]),
        maxima=trace.running_max[:, row],
        sums=trace.running_sum[:, row],
        partial=trace.outputs[tile - 1, row],
        final=output[row],
        reference=reference[row],
        row_error=float(np.max(np.abs(output[row] - reference[row]))),
        error=float(np.max(np.abs(output - reference))),
        partial_gap=float(np.max(np.abs(trace.outputs[tile - 1, row] - output[row]))),
    )


@dataclass(frozen=True)
class Agreement:
    """The tiled result against ordinary attention at one logit factor."""

    factor: float
    errors: np.ndarray  # (2 masks, 2 dtypes, blocks): core.flash.tiled_errors
    growth: LogitGrowth  # float32 errors against float64 over every factor
    at: int  # index of the factor nearest ``factor`` in growth.factors
    first_nan: float | None  # the first factor where the naive softmax gives NaN
    overflow: float  # ln of float32's largest number: exp overflows above it

    @property
    def float64_error(self) -> float:
        """The largest error in float64, over both masks and every tile size."""
        return float(self.errors[:, 0].max())

    @property
    def float32_error(self) -> float:
        """The same in float32."""
        return float(self.errors[:, 1].max())

    @property
    def naive(self) -> float:
        """The naive softmax's float32 error at this factor (NaN: it broke)."""
        return float(self.growth.naive[self.at])


def agreement(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    block: int,
    mask: np.ndarray | None,
    factor: float,
    factors: np.ndarray,
    blocks: tuple[int, ...],
) -> Agreement:
    """The error table with every score multiplied by ``factor``, and the growth curve over
    ``factors`` with tiles of ``block`` keys.

    Shapes: ``q``, ``k`` ``(n, d_k)``, ``v`` ``(n, d_v)``, ``factors`` ``(s,)`` ->
    :class:`Agreement`.
    """
    growth = logit_growth(q, k, v, block, factors, mask)
    at = int(np.argmin(np.abs(growth.factors - factor)))
    errors = tiled_errors(q * factor, k, v, blocks)
    return Agreement(factor, errors, growth, at, first_nan(growth), FLOAT32_EXP_LIMIT)
