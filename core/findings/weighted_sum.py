"""What the weighted-sum page (/weighted_sum) points out about one query's output.

The key a query weights most and the key whose piece of its output is biggest
(:func:`row_leaders` -> :class:`RowLeaders`), and which terms of ``o_i = Σ_j α_ij v_j`` to
write out (:func:`sum_terms` -> :class:`SumTerms`, from :func:`top_terms` and
:func:`other_terms`). The weighted sum itself, taken apart, is
:func:`core.attention.mix_row`.
"""

from dataclasses import dataclass

import numpy as np

from core.attention import RowMix


def top_terms(weights_row: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest weights, largest first (ties: the earlier key first).

    Shapes: ``weights_row`` ``(n_k,)`` -> ``(min(k, n_k),)`` integer indices.
    """
    return np.argsort(-weights_row, kind="stable")[: max(k, 0)]


def other_terms(
    weights_row: np.ndarray, v: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, float]:
    """The summed contribution and the total weight of every key not in ``keep``.

    Shapes: ``weights_row`` ``(n_k,)``, ``v`` ``(n_k, d_v)``, ``keep`` integer indices
    -> ``(Σ_{j ∉ keep} α_ij v_j (d_v,), Σ_{j ∉ keep} α_ij)``.
    """
    rest = np.ones(weights_row.shape[0], dtype=bool)  # (n_k,)
    rest[keep] = False
    return weights_row[rest] @ v[rest], float(weights_row[rest].sum())


@dataclass(frozen=True)
class RowLeaders:
    """The key a query weights most and the key whose piece of its output is biggest: not
    always the same key, since a smaller weight on a longer value vector can give the
    bigger piece ``|α_ij v_j|``."""

    top: int  # the key with the largest weight α_ij (ties: the earlier key)
    big: int  # the key with the biggest piece |α_ij v_j| (ties: the earlier key)

    @property
    def same(self) -> bool:
        """Whether the largest weight also gives the biggest piece."""
        return self.top == self.big


def row_leaders(mix: RowMix) -> RowLeaders:
    """:class:`RowLeaders` of one query's weighted sum (:func:`mix_row`)."""
    return RowLeaders(int(top_terms(mix.weights, 1)[0]), int(top_terms(mix.sizes, 1)[0]))


@dataclass(frozen=True)
class SumTerms:
    """The terms of ``o_i = Σ_j α_ij v_j`` to write out one by one, and the rest summed."""

    shown: np.ndarray  # (k,) keys written out: all of them in order, or the largest first
    rest: np.ndarray  # (d_v,) Σ α_ij v_j over the other keys (zeros if none)
    rest_weight: float  # Σ α_ij over the other keys
    folded: int  # how many keys the rest sums (0: every term is written out)


def sum_terms(weights_row: np.ndarray, v: np.ndarray, all_up_to: int, top: int) -> SumTerms:
    """Every term in key order for rows of at most ``all_up_to`` keys; for longer rows the
    ``top`` largest (:func:`top_terms`) and the others folded into one (:func:`other_terms`).

    Shapes: ``weights_row`` ``(n_k,)``, ``v`` ``(n_k, d_v)`` -> :class:`SumTerms`.
    """
    n = weights_row.shape[0]
    shown = np.arange(n) if n <= all_up_to else top_terms(weights_row, top)  # (k,)
    rest, weight = other_terms(weights_row, v, shown)
    return SumTerms(shown, rest, weight, n - len(shown))
