"""What the grouped-query attention page (/gqa) points out, read off :mod:`core.kv_cache`.

How differently the query heads of one group attend (:func:`group_weight_gap`,
:func:`group_agreement`); how the cache of each design compares (:func:`cache_ratios`) and
which design a head count is (:func:`design`); and the tiling bug on one layer, checked
against the per-head loop (:func:`tiling` -> :class:`Tiling`).
"""

from dataclasses import dataclass

import numpy as np

from core.kv_cache import (
    grouped_query_attention,
    grouped_query_attention_loop,
    kv_head_of,
    tiling_gaps,
)
from core.masks import causal_mask


def group_weight_gap(weights: np.ndarray, h_kv: int) -> float:
    """The largest difference between the attention weights of two query heads that share a
    key/value head (0 when every group has one head: multi-head attention).

    Shapes: ``weights`` ``(h, n_q, n_k)`` -> scalar.
    """
    groups = weights.reshape(h_kv, -1, *weights.shape[1:])  # (h_kv, h/h_kv, n_q, n_k)
    return float(np.max(np.ptp(groups, axis=1)))


def group_agreement(weights: np.ndarray, h_kv: int) -> tuple[float, float]:
    """How differently two query heads attend, on average over pairs of heads: the mean
    absolute difference of their weights, for pairs in the same group and for pairs in
    different groups. NaN for "same group" when each group has one head, and for "different
    groups" when there is one group.

    Shapes: ``weights`` ``(h, n_q, n_k)`` -> ``(same, different)``.
    """
    h = weights.shape[0]
    group = kv_head_of(h, h_kv)  # (h,)
    gaps = np.abs(weights[:, None] - weights[None, :]).mean(axis=(-2, -1))  # (h, h)
    upper = np.triu(np.ones((h, h), dtype=bool), 1)  # each pair once
    same = upper & (group[:, None] == group[None, :])
    other = upper & (group[:, None] != group[None, :])
    mean = [float(gaps[sel].mean()) if sel.any() else float("nan") for sel in (same, other)]
    return mean[0], mean[1]


GROUPINGS = 999  # random groupings a layer's real grouping is ranked against


def grouping_rank(
    weights: np.ndarray, h_kv: int, groupings: int = GROUPINGS, seed: int = 0
) -> float:
    """Whether the heads that share keys really attend more alike, or only by chance: the
    share of groupings of the same heads into ``h_kv`` equal groups (the real one, and
    ``groupings`` drawn at random with ``seed``) whose heads are, on average, at least as
    alike within their groups as the real groups' (:func:`group_agreement`'s "same"). A
    small share (≤ 0.05) says the real groups stand out; around 0.5, any grouping would do.
    NaN when there is nothing to compare (one group, or one head per group).

    Shapes: ``weights`` ``(h, n_q, n_k)`` -> scalar in ``(0, 1]``.
    """
    h = weights.shape[0]
    if h_kv in (1, h):
        return float("nan")
    gaps = np.abs(weights[:, None] - weights[None, :]).mean(axis=(-2, -1))  # (h, h)
    upper = np.triu(np.ones((h, h), dtype=bool), 1)  # each pair once

    def within(group: np.ndarray) -> float:
        return float(gaps[upper & (group[:, None] == group[None, :])].mean())

    real = within(kv_head_of(h, h_kv))
    rng = np.random.default_rng(seed)
    drawn = [within(rng.permutation(kv_head_of(h, h_kv))) for _ in range(groupings)]
    return (1 + sum(d <= real for d in drawn)) / (1 + groupings)


def cache_ratios(variants: dict[str, int]) -> tuple[float, float]:
    """How many times grouped-query attention's cache multi-head attention's is, and
    multi-query attention's part of it, from each design's key/value head count
    (:func:`core.kv_cache.kv_variants`): the cache grows with ``h_kv``.

    Shapes: ``{"MHA": h, "GQA": h_kv, "MQA": 1}`` -> ``(h / h_kv, h_kv / 1)``.
    """
    return variants["MHA"] / variants["GQA"], variants["GQA"] / variants["MQA"]


def design(h: int, h_kv: int) -> str:
    """The name of the design with ``h_kv`` key/value heads for ``h`` query heads: ``"mha"``
    (one each), ``"mqa"`` (one for all) or ``"gqa"`` (groups in between)."""
    return "mha" if h_kv == h else "mqa" if h_kv == 1 else "gqa"


@dataclass(frozen=True)
class Tiling:
    """The tiling bug on one layer: what it does to each query head's output, and core's
    grouped-query attention against its per-head loop."""

    h: int
    h_kv: int
    gaps: np.ndarray  # (h,) per query head: max |right − tiled| of its output
    loop: float  # core's GQA against the per-head loop: max |difference|

    @property
    def same(self) -> tuple[int, ...]:
        """The query heads that tiling happens to give their own key/value head."""
        right, wrong = kv_head_of(self.h, self.h_kv), kv_head_of(self.h, self.h_kv, tiled=True)
        return tuple(int(i) for i in np.flatnonzero(right == wrong))

    @property
    def bad(self) -> int:
        """How many query heads read the wrong key/value head when tiled."""
        return self.h - len(self.same)

    @property
    def worst(self) -> float:
        """The largest change tiling makes to any query head's output."""
        return float(self.gaps.max())


def tiling(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Tiling:
    """The right and the tiled expansion of causal ``k``, ``v`` on ``q``, and core's
    grouped-query attention against the per-head loop.

    Shapes: ``q`` ``(h, n, d_k)``, ``k`` ``(h_kv, n, d_k)``, ``v`` ``(h_kv, n, d_v)`` ->
    :class:`Tiling`.
    """
    mask = causal_mask(q.shape[1])  # (n, n)
    ours, _ = grouped_query_attention(q, k, v, mask)  # (h, n, d_v)
    ref, _ = grouped_query_attention_loop(q, k, v, mask)  # (h, n, d_v)
    return Tiling(
        q.shape[0], k.shape[0], tiling_gaps(q, k, v, mask), float(np.max(np.abs(ours - ref)))
    )
