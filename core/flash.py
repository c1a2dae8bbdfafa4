"""FlashAttention's online softmax: attention over tiles of keys, never holding all scores.

Ordinary attention stores the whole ``n_q × n_k`` score matrix before its softmax. The
tiled form reads the keys and values ``block`` at a time and keeps, per query, three
running quantities: the largest score so far ``m``, the sum ``ℓ = Σ exp(s − m)`` over the
keys seen, and the unnormalised output ``acc = Σ exp(s − m) v``. When a tile raises the
maximum from ``m`` to ``m'``, everything summed so far is multiplied by ``exp(m − m')``,
which is exactly what it would have been had ``m'`` been known from the start. After the
last tile ``acc / ℓ`` is the softmax-weighted sum of the values: ordinary attention, up to
rounding (Dao et al. 2022, "FlashAttention", Algorithm 1, one head, one block of queries).

Fully masked rows follow the policy of :mod:`core.softmax_numerics`: a query with no visible key
keeps ``m = −∞`` and ``ℓ = 0`` and gets the zero vector as output (no NaN), the same as
:func:`core.scaled_dot_product_attention` gives.

The traffic model (:func:`standard_attention_io`, :func:`flash_attention_io`) counts the
numbers moved between slow memory (GPU HBM) and a fast on-chip memory of ``M`` numbers.

The /flash page's experiments: a toy query, key and value matrix (:func:`toy_qkv`), its
tiles (:func:`tile_count`, :func:`tile_of`) and where each key of a query's row stands after
some tiles (:func:`key_states`); how far the tiled result is from ordinary attention for
several tile sizes, with and without the causal mask, in float64 and float32
(:func:`tiled_errors`); what happens when the logits grow, tiled and with a softmax that skips
the max subtraction (:func:`logit_growth`, :func:`naive_attention`); and the paper's memory
and traffic model over a range of lengths (:func:`memory_curves`, :func:`traffic_curves`).
What the page points out about them is in :mod:`core.findings.flash`.
"""

from dataclasses import dataclass

import numpy as np

from core.attention import attention_scores, scaled_dot_product_attention
from core.masks import apply_mask, as_mask, causal_mask
from core.softmax_numerics import softmax_naive


@dataclass(frozen=True)
class FlashTrace:
    """The running statistics after each tile of keys, for a page that steps through them."""

    ends: np.ndarray  # (t,)           keys seen after each tile: B, 2B, …, n_k
    running_max: np.ndarray  # (t, n_q)      m: largest visible scaled score so far (−∞: none yet)
    running_sum: np.ndarray  # (t, n_q)      ℓ: Σ exp(s − m) over the visible keys seen
    outputs: np.ndarray  # (t, n_q, d_v)  acc / ℓ: attention over the keys seen so far (0 if ℓ = 0)


def flash_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, block: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, FlashTrace]:
    """Scaled dot-product attention computed tile by tile with the online softmax.

    Shapes: ``q`` ``(n_q, d_k)``, ``k`` ``(n_k, d_k)`` with ``n_k >= 1``, ``v``
    ``(n_k, d_v)``, ``mask`` bool broadcastable to ``(n_q, n_k)`` (True = may attend)
    -> ``(output (n_q, d_v), trace)`` with ``t = ⌈n_k / block⌉`` tiles in the trace. The
    output equals :func:`core.scaled_dot_product_attention`'s up to rounding; a query with
    every key masked gets zeros. Computed in the inputs' precision (float32 stays float32).
    """
    if block < 1:
        raise ValueError(f"block must be at least 1 key, got {block}")
    n_q, n_k = q.shape[0], k.shape[0]
    visible = np.ones((n_q, n_k), bool) if mask is None else as_mask(mask)
    visible = np.broadcast_to(visible, (n_q, n_k))  # (n_q, n_k)
    dtype = np.result_type(q, k, v, np.float32)
    m = np.full(n_q, -np.inf, dtype)  # (n_q,) running maximum
    ell = np.zeros(n_q, dtype)  # (n_q,) running sum
    acc = np.zeros((n_q, v.shape[-1]), dtype)  # (n_q, d_v) unnormalised output
    ends, maxima, sums, outputs = [], [], [], []
    for start in range(0, n_k, block):
        tile = slice(start, min(start + block, n_k))
        # 1) score this tile's keys (scaled by √d_k) and 2) hide the masked ones
        s = apply_mask(attention_scores(q, k[tile]), visible[:, tile])  # (n_q, B)
        # 3) the new running maximum; a row with nothing visible yet shifts by 0
        m_new = np.maximum(m, s.max(axis=-1))  # (n_q,)
        shift = np.where(np.isfinite(m_new), m_new, 0.0)  # (n_q,)
        # 4) rescale the old sums to the new maximum (exp(−∞) = 0 for an empty past)
        alpha = np.exp(m - shift)  # (n_q,)
        p = np.exp(s - shift[:, None])  # (n_q, B), masked keys give exactly 0
        # 5) add this tile's weights and weighted values
        ell = alpha * ell + p.sum(axis=-1)  # (n_q,)
        acc = alpha[:, None] * acc + p @ v[tile]  # (n_q, d_v)
        m = m_new
        # 6) record the state after this tile (acc / ℓ only for the trace: the algorithm
        #    itself divides once, at the end)
        ends.append(tile.stop)
        maxima.append(m)
        sums.append(ell)
        outputs.append(_normalised(acc, ell))
    # 7) divide by the sum once, at the end
    trace = FlashTrace(np.array(ends), np.stack(maxima), np.stack(sums), np.stack(outputs))
    return _normalised(acc, ell), trace


def _normalised(acc: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """``acc / ℓ`` per query, zero where ``ℓ = 0`` (no visible key).

    Shapes: ``acc`` ``(n_q, d_v)``, ``ell`` ``(n_q,)`` -> ``(n_q, d_v)``.
    """
    return np.divide(acc, ell[:, None], out=np.zeros_like(acc), where=ell[:, None] > 0)


def scores_held(n_q: int, n_k: int, block: int) -> tuple[int, int]:
    """Scores kept in memory at once: the whole matrix for ordinary attention, one tile of
    keys for the tiled form (which also keeps ``m``, ``ℓ`` and ``acc`` per query).

    Shapes: scalars -> ``(n_q · n_k, n_q · min(block, n_k))``.
    """
    return n_q * n_k, n_q * min(block, n_k)


def flash_block_sizes(d: int, sram: int) -> tuple[int, int]:
    """The paper's tile sizes for head width ``d`` and an on-chip memory of ``sram`` numbers:
    keys ``B_c = ⌈M / 4d⌉`` at a time, queries ``B_r = min(⌈M / 4d⌉, d)`` at a time.

    Shapes: scalars -> ``(B_r, B_c)``.
    """
    b_c = -(-sram // (4 * d))
    return min(b_c, d), b_c


def standard_attention_io(n: int | np.ndarray, d: int) -> int | np.ndarray:
    """Numbers read from and written to slow memory by ordinary attention (the paper's
    Algorithm 0): read Q, K (``2nd``), write S (``n²``), read S and write P (``2n²``),
    read P and V (``n² + nd``), write O (``nd``): ``4nd + 4n²``, i.e. ``Θ(nd + n²)``.

    Shapes: ``n`` scalar or ``(t,)`` -> same.
    """
    return 4 * n * d + 4 * n * n


def flash_attention_io(n: int | np.ndarray, d: int, sram: int) -> int | np.ndarray:
    """Numbers read from and written to slow memory by FlashAttention (the paper's
    Algorithm 1) with an on-chip memory of ``sram`` (``M``) numbers.

    The count: write the initial O, ℓ, m (``nd + 2n``); read each key and value block once
    (``2nd``); for each of the ``T_c = ⌈n / B_c⌉`` key blocks, read every query block's Q,
    O, ℓ, m and write its O, ℓ, m back (``3nd + 4n``). Total
    ``3nd + 2n + T_c·(3nd + 4n)``; with ``T_c ≈ 4nd / M`` that is about
    ``(12d² + 16d)·n² / M``, i.e. ``Θ(n²d² / M)``.

    Assumptions (those of the paper's analysis): one head, forward pass only, no dropout or
    mask; costs are numbers moved (not bytes, not time); the fast memory holds ``M``
    numbers and the tiles of :func:`flash_block_sizes`; compute is free.

    Shapes: ``n`` scalar or ``(t,)`` -> same. At ``d = 64``, ``M = 100 000``, ordinary
    attention moves 5.6×, 7.1× and 7.8× as much at ``n = 1024``, 4096 and 16384.
    """
    _, b_c = flash_block_sizes(d, sram)
    t_c = -(-n // b_c)  # ⌈n / B_c⌉ key blocks
    return 3 * n * d + 2 * n + t_c * (3 * n * d + 4 * n)


# ---- the /flash page's experiments ----------------------------------------------------

DTYPES = ("float64", "float32")


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


# the key's state in one query's row after some tiles (key_states)
SEEN, CURRENT, AHEAD, HIDDEN = 0, 1, 2, 3


def key_states(n_k: int, block: int, tiles_read: int, visible: np.ndarray) -> np.ndarray:
    """Where each key of one query's row stands after ``tiles_read`` tiles: :data:`SEEN` (in
    an earlier tile), :data:`CURRENT` (in the tile just read), :data:`AHEAD` (not read yet)
    or :data:`HIDDEN` (masked: it never counts).

    Shapes: ``visible`` bool ``(n_k,)`` -> ``(n_k,)`` int.
    """
    tile = tile_of(n_k, block)  # (n_k,)
    state = np.where(tile < tiles_read - 1, SEEN, np.where(tile == tiles_read - 1, CURRENT, AHEAD))
    return np.where(as_mask(visible), state, HIDDEN)


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
    """Attention whose softmax skips the max subtraction
    (:func:`core.softmax_numerics.softmax_naive`), in the inputs' precision: NaN once ``exp``
    of a score overflows.

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


def memory_curves(lengths: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores held at once for ``T`` queries over ``T`` keys (:func:`scores_held`): the whole
    matrix, and one tile of ``block`` keys per query.

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
    """:func:`standard_attention_io` and :func:`flash_attention_io` at each length, their
    ratio, and the paper's tile sizes for ``d`` and ``M = sram``.

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
