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
"""

from dataclasses import dataclass

import numpy as np

from core.attention import attention_scores
from core.masks import apply_mask


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
    visible = np.ones((n_q, n_k), bool) if mask is None else np.asarray(mask, dtype=bool)
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
