"""What the FlashAttention page (/flash) shows, computed with :mod:`core.flash`.

A toy query, key and value matrix (:func:`toy_qkv`); the tiles of keys and where each key
of one query's row stands after some tiles (:func:`tile_of`, :func:`key_states`); how far the
tiled result is from ordinary attention for several tile sizes, with and without the causal
mask, in float64 and float32 (:func:`tiled_errors`); what happens when the logits grow, tiled
and with a softmax that skips the max subtraction (:func:`logit_growth`, :func:`first_nan`);
and the paper's memory and traffic model over a range of lengths (:func:`memory_curves`,
:func:`traffic_curves`). What the page points out: one query's row after some tiles, with
the online softmax's step in words (:func:`tile_row` -> :class:`TileRow`), and the errors at
one logit factor (:func:`agreement` -> :class:`Agreement`).
"""

from dataclasses import dataclass

import numpy as np

from core.attention import attention_scores, scaled_dot_product_attention
from core.flash import (
    FlashTrace,
    flash_attention,
    flash_attention_io,
    flash_block_sizes,
    scores_held,
    standard_attention_io,
)
from core.masks import apply_mask, causal_mask
from core.softmax_numerics import softmax_naive

DTYPES = ("float64", "float32")
# exp overflows float32 above this (≈ 88.72), and float32 rounds to this relative step
FLOAT32_EXP_LIMIT = float(np.log(np.finfo(np.float32).max))
FLOAT32_EPS = float(np.finfo(np.float32).eps)
# the key's state in one query's row after some tiles (key_states)
SEEN, CURRENT, AHEAD, HIDDEN = 0, 1, 2, 3


def toy_qkv(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries, keys and values of one toy head: standard normal numbers from ``seed``.

    Shapes: -> ``q``, ``k``, ``v`` ``(n, d)`` each, float64.
    """
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, n, d))  # (n, d) each
    return q, k, v


def tile_count(n_k: int, block: int) -> int:
    """How many tiles of ``block`` keys cover ``n_k`` keys (the last may be shorter).

    Shapes: scalars -> int.
    """
    return -(-n_k // block)


def tile_of(n_k: int, block: int) -> np.ndarray:
    """The tile (0-based) each key is read in.

    Shapes: -> ``(n_k,)`` int.
    """
    return np.arange(n_k) // block  # (n_k,)


def key_states(n_k: int, block: int, tiles_read: int, visible: np.ndarray) -> np.ndarray:
    """Where each key of one query's row stands after ``tiles_read`` tiles: :data:`SEEN` (in
    an earlier tile), :data:`CURRENT` (in the tile just read), :data:`AHEAD` (not read yet)
    or :data:`HIDDEN` (masked: it never counts).

    Shapes: ``visible`` bool ``(n_k,)`` -> ``(n_k,)`` int.
    """
    tile = tile_of(n_k, block)  # (n_k,)
    state = np.where(tile < tiles_read - 1, SEEN, np.where(tile == tiles_read - 1, CURRENT, AHEAD))
    return np.where(np.asarray(visible, dtype=bool), state, HIDDEN)


def tiled_errors(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, blocks: tuple[int, ...]
) -> np.ndarray:
    """Largest difference between the tiled result and ordinary attention, both computed in
    the same precision, for each mask (none, causal), precision (:data:`DTYPES`) and tile
    size.

    Shapes: ``q`` ``(n, d_k)``, ``k`` ``(n, d_k)``, ``v`` ``(n, d_v)``, ``b`` blocks ->
    ``(2, 2, b)``: mask × dtype × block.
    """
    n = q.shape[0]
    out = np.zeros((2, len(DTYPES), len(blocks)))
    for m, mask in enumerate((None, causal_mask(n))):
        for p, dtype in enumerate(DTYPES):
            qd, kd, vd = (x.astype(dtype) for x in (q, k, v))
            ref, _ = scaled_dot_product_attention(qd, kd, vd, mask)  # (n, d_v)
            for b, block in enumerate(blocks):
                tiled, _ = flash_attention(qd, kd, vd, block, mask)  # (n, d_v)
                out[m, p, b] = float(np.max(np.abs(tiled.astype(np.float64) - ref)))
    return out


def naive_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """Attention whose softmax skips the max subtraction (:func:`core.softmax_naive`),
    in the inputs' precision: NaN once ``exp`` of a score overflows.

    Shapes: ``q`` ``(n_q, d_k)``, ``k`` ``(n_k, d_k)``, ``v`` ``(n_k, d_v)`` -> ``(n_q, d_v)``.
    """
    weights = softmax_naive(apply_mask(attention_scores(q, k), mask))  # (n_q, n_k)
    with np.errstate(invalid="ignore"):
        return weights @ v  # (n_q, d_v)


@dataclass(frozen=True)
class LogitGrowth:
    """Errors of float32 attention against float64 ordinary attention as the logits grow."""

    factors: np.ndarray  # (s,) every score multiplied by this
    top_score: np.ndarray  # (s,) the largest scaled score
    tiled: np.ndarray  # (s,) max |tiled float32 − reference|
    naive: np.ndarray  # (s,) max |naive float32 − reference|, NaN where it broke


def logit_growth(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    block: int,
    factors: np.ndarray,
    mask: np.ndarray | None = None,
) -> LogitGrowth:
    """For each factor: the queries multiplied by it (so every score is), the tiled result
    and a softmax without the max subtraction, both in float32, against ordinary attention
    in float64 on the same float32 inputs.

    Shapes: ``q``, ``k`` ``(n, d_k)``, ``v`` ``(n, d_v)``, ``factors`` ``(s,)`` -> each
    field ``(s,)``.
    """
    factors = np.asarray(factors, dtype=np.float64)
    k32, v32 = k.astype(np.float32), v.astype(np.float32)
    top, tiled, naive = [], [], []
    for f in factors:
        q32 = (q * f).astype(np.float32)  # (n, d_k)
        ref, _ = scaled_dot_product_attention(
            q32.astype(np.float64), k32.astype(np.float64), v32.astype(np.float64), mask
        )  # (n, d_v)
        out, _ = flash_attention(q32, k32, v32, block, mask)
        plain = naive_attention(q32, k32, v32, mask)
        s = apply_mask(attention_scores(q32.astype(np.float64), k32.astype(np.float64)), mask)
        top.append(float(np.max(s)))
        tiled.append(float(np.max(np.abs(out - ref))))
        broke = not np.isfinite(plain).all()
        naive.append(np.nan if broke else float(np.max(np.abs(plain - ref))))
    return LogitGrowth(factors, np.array(top), np.array(tiled), np.array(naive))


def first_nan(growth: LogitGrowth) -> float | None:
    """The smallest factor at which the softmax without the max subtraction broke (None:
    it never did in the range).

    Shapes: -> scalar.
    """
    broke = np.isnan(growth.naive)
    return float(growth.factors[np.argmax(broke)]) if broke.any() else None


def memory_curves(lengths: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores held at once for ``T`` queries over ``T`` keys (:func:`core.flash.scores_held`):
    the whole matrix, and one tile of ``block`` keys per query.

    Shapes: ``lengths`` ``(t,)`` -> ``(ordinary (t,), tiled (t,))``.
    """
    held = [scores_held(int(n), int(n), block) for n in lengths]
    return np.array([h[0] for h in held]), np.array([h[1] for h in held])


@dataclass(frozen=True)
class Traffic:
    """Numbers moved between slow and on-chip memory in the paper's model, per length."""

    lengths: np.ndarray  # (t,) T
    standard: np.ndarray  # (t,)
    flash: np.ndarray  # (t,)
    ratio: np.ndarray  # (t,) standard / flash
    block: int  # B_c, keys per tile
    query_block: int  # B_r, queries per tile


def traffic_curves(lengths: np.ndarray, d: int, sram: int) -> Traffic:
    """:func:`core.flash.standard_attention_io` and :func:`core.flash.flash_attention_io`
    at each length, their ratio, and the paper's tile sizes for ``d`` and ``M = sram``.

    Shapes: ``lengths`` ``(t,)`` -> :class:`Traffic` with ``(t,)`` fields.
    """
    n = np.asarray(lengths, dtype=np.int64)
    standard = standard_attention_io(n, d).astype(np.float64)
    flash = flash_attention_io(n, d, sram).astype(np.float64)
    b_r, b_c = flash_block_sizes(d, sram)
    return Traffic(n, standard, flash, standard / flash, b_c, b_r)


def traffic_ratio_limit(d: int, sram: int) -> float:
    """What :func:`traffic_curves`' ratio tends to for long texts: ordinary attention moves
    about ``4T²`` numbers, the tiled form about ``(T / B_c)·(3d + 4)·T``, so the ratio
    approaches ``4·B_c / (3d + 4)`` (``≈ M / 3d²``).

    Shapes: scalars -> scalar.
    """
    _, b_c = flash_block_sizes(d, sram)
    return 4 * b_c / (3 * d + 4)


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
    states: np.ndarray  # (T,) key states (:func:`key_states`)
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
    errors: np.ndarray  # (2 masks, 2 dtypes, blocks) max |tiled − ordinary| (:func:`tiled_errors`)
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
