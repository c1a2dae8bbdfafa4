"""What the masking page (/masking) points out, read off masked attention weights.

How many keys a query may see (:func:`visible_keys`); whether the masked cells got weight,
whether the rows still sum to 1 and which queries see nothing (:func:`mask_findings` ->
:class:`MaskFindings`); what a query of unmasked attention takes from the tokens after it
(:func:`lookahead`); and one query under several fill values
(−∞, −1e9, −1e4) in a dtype, with its mask and with every key masked
(:func:`compare_fills` -> :class:`FillComparison`).
"""

from dataclasses import dataclass

import numpy as np

from core.masks import (
    causal_mask,
    fill_comparison,
    fully_masked_rows,
    overflow_temperature,
    row_sums,
    stored_fill,
    undefined_rows,
)


def masked_weight_max(weights: np.ndarray, mask: np.ndarray) -> float:
    """The largest weight that landed on a masked position (0.0 when nothing is masked).

    Shapes: ``weights`` ``(..., n_q, n_k)``, ``mask`` bool broadcastable to it -> scalar.
    """
    hidden = ~np.broadcast_to(np.asarray(mask, dtype=bool), weights.shape)
    return float(np.max(weights[hidden])) if hidden.any() else 0.0


def visible_keys(mask: np.ndarray, query: int) -> int:
    """How many keys query ``query`` may attend to under ``mask`` (True = may attend).

    Shapes: ``mask`` ``(n_q, n_k)`` -> int.
    """
    return int(np.asarray(mask, dtype=bool)[query].sum())


def lookahead_weight(weights: np.ndarray) -> np.ndarray:
    """Weight each query puts on later tokens (keys ``j > i``), which a decoder cannot see.

    Shapes: ``(..., n, n)`` -> ``(..., n)``.
    """
    n = weights.shape[-1]
    return np.sum(np.where(causal_mask(n), 0.0, weights), axis=-1)


def vector_norms(x: np.ndarray) -> np.ndarray:
    """Euclidean length of each row (0 for the zero output of a fully masked query).

    Shapes: ``(..., d)`` -> ``(...)``.
    """
    return np.linalg.norm(x, axis=-1)


def max_row_spread(weights: np.ndarray) -> float:
    """Largest difference between two rows at the same key (0.0: all rows agree exactly).

    Shapes: ``(m, n_k)`` -> scalar.
    """
    return float(np.ptp(weights, axis=0).max()) if weights.size else 0.0


@dataclass(frozen=True)
class MaskFindings:
    """What one masked attention's weights show."""

    hidden: bool  # some cell is masked (False: no causal mask and no [PAD], or one token)
    leak: float  # the largest weight on a masked cell (0.0 when none is masked)
    row_sum_error: float | None  # largest |row sum − 1| of the queries that see a key
    # (None: no query sees one)
    unseen_keys_blind: bool  # every key no query may see (a [PAD]) is a query that sees
    # nothing too (True when there is no such key)
    blind: np.ndarray  # (n_q,) bool, queries with no visible key


def mask_findings(weights: np.ndarray, mask: np.ndarray) -> MaskFindings:
    """Whether the masked cells got weight, whether the rows still sum to 1, and which
    queries see nothing.

    Shapes: ``weights`` ``(n, n)``, ``mask`` bool ``(n, n)``, True = may attend.
    """
    blind = fully_masked_rows(mask)  # (n,)
    sums = row_sums(weights)[~blind]  # (queries that see a key,)
    unseen = ~np.asarray(mask, dtype=bool).any(axis=0)  # (n,) keys no query may see
    return MaskFindings(
        hidden=not mask.all(),
        leak=masked_weight_max(weights, mask),
        row_sum_error=float(np.abs(sums - 1.0).max()) if sums.size else None,
        unseen_keys_blind=bool(blind[unseen].all()),
        blind=blind,
    )


@dataclass(frozen=True)
class Lookahead:
    """What query ``i`` of unmasked attention takes from the future."""

    later: int  # tokens after it (0 for the last one)
    leak: float  # the weight it puts on them, which a decoder could not see


def lookahead(weights: np.ndarray, i: int) -> Lookahead:
    """How many tokens come after query ``i`` and how much weight it puts on them.

    Shapes: ``weights`` ``(n, n)`` without a causal mask.
    """
    return Lookahead(weights.shape[-1] - i - 1, float(lookahead_weight(weights)[i]))


FILLS_AGREE = 1e-12  # fills whose weights differ by less than this agree (rounding aside)


@dataclass(frozen=True)
class FillComparison:
    """One query under several fill values: with the page's mask and with every key masked.

    ``m`` fills, ``n_k`` keys.
    """

    row: int
    weights: np.ndarray  # (m, n_k) with the query's mask
    blank: np.ndarray  # (m, n_k) with every key masked
    blank_out: np.ndarray  # (m,) output norms with every key masked
    masked_max: list[float]  # per fill, largest weight on a masked key (query's mask)
    stored: list[float]  # per fill, the masked score as the softmax sees it
    undefined: np.ndarray  # (m,) bool, a textbook softmax would compute 0/0 (every key masked)
    spread: float  # largest difference between fills with the query's mask
    overflow: float  # temperature below which the mildest fill (closest to 0) overflows
    dtype_max: float  # the largest number the dtype holds

    @property
    def blank_weight(self) -> np.ndarray:
        """Per fill, each key's weight with every key masked: 1/n_k where the fill is still
        finite (a uniform row), 0 where it overflowed to −∞ (the guard's zero row). ``(m,)``"""
        return self.blank.max(axis=-1)

    @property
    def agree(self) -> bool:
        """Whether every fill gives the query the same weights (within :data:`FILLS_AGREE`)."""
        return self.spread < FILLS_AGREE

    def overflows(self, temperature: float) -> bool:
        """Whether the mildest fill no longer fits in the dtype at ``temperature``."""
        return temperature < self.overflow


def compare_fills(
    scores: np.ndarray,
    mask: np.ndarray,
    v: np.ndarray,
    row: int,
    fills: tuple[float, ...],
    dtype: str,
    temperature: float = 1.0,
) -> FillComparison:
    """Query ``row``'s weights under each fill value in ``dtype`` at ``temperature``: with
    its own mask, and with every key masked (where −∞ and −1e9 part ways).

    Shapes: ``scores`` ``(n_q, n_k)`` unmasked, ``mask`` bool ``(n_q, n_k)``, ``v``
    ``(n_k, d_v)``, ``m`` fills.
    """
    fills = list(fills)
    row_scores, mask_row = scores[row], mask[row]  # (n_k,), (n_k,)
    none = np.zeros_like(mask_row)  # (n_k,) every key masked
    w, _ = fill_comparison(row_scores, mask_row, v, fills, temperature, dtype)  # (m, n_k)
    blank, blank_out = fill_comparison(row_scores, none, v, fills, temperature, dtype)
    return FillComparison(
        row,
        w,
        blank,
        vector_norms(blank_out),
        [masked_weight_max(wi, mask_row) for wi in w],
        [stored_fill(f, dtype, temperature) for f in fills],
        np.array([undefined_rows(row_scores, none, f, temperature, dtype) for f in fills]),
        max_row_spread(w),
        overflow_temperature(max(fills), dtype),
        float(np.finfo(dtype).max),
    )
