"""What the multi-head page (/multi_head) points out: where each head looks from the query
the heads dispute most, against their average (:func:`head_picks` -> :class:`HeadPicks`,
from :func:`head_focus` and :func:`most_disputed_query`), and from how many queries the
heads agree (:func:`head_agreement`). Multi-head attention itself is in
:mod:`core.multihead`.
"""

from dataclasses import dataclass

import numpy as np

from core.multihead import average_heads


def head_focus(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every head and query: the key it weights most, and that weight.

    Shapes: ``(..., h, n_q, n_k)`` -> ``(argmax (..., h, n_q), max (..., h, n_q))``.
    """
    return weights.argmax(axis=-1), weights.max(axis=-1)


def head_agreement(weights: np.ndarray) -> str:
    """Whether the heads pick the same favourite key (:func:`head_focus`): ``"all"`` when every
    head picks the same key from every query, ``"none"`` when they agree from no query, else
    ``"some"``.

    Shapes: ``weights`` ``(h, n_q, n_k)`` -> one of the three words.
    """
    top, _ = head_focus(weights)  # (h, n_q)
    same = np.all(top == top[:1], axis=0)  # (n_q,) every head picks head 0's key
    if same.all():
        return "all"
    return "some" if same.any() else "none"


def most_disputed_query(weights: np.ndarray) -> int:
    """The query whose heads disagree most about their top key (most distinct argmaxes;
    ties: the largest spread of weights between heads, then the first query).

    Shapes: ``(h, n_q, n_k)`` -> an index into ``n_q``.
    """
    top = weights.argmax(axis=-1)  # (h, n_q)
    distinct = np.array([len(set(col)) for col in top.T])  # (n_q,)
    spread = (weights.max(axis=0) - weights.min(axis=0)).sum(axis=-1)  # (n_q,)
    return int(np.lexsort((-spread, -distinct))[0])


@dataclass(frozen=True)
class HeadPicks:
    """Where each head looks from one query (the one they dispute most), against their average."""

    query: int  # the query (:func:`most_disputed_query`)
    keys: np.ndarray  # (h,) each head's favourite key from it
    weights: np.ndarray  # (h,) the weight each head puts there
    average_key: int  # the average's favourite key from it
    average_weight: float  # and its weight there
    flat: bool  # no head puts much more than an even share (1/n) on any key

    @property
    def best(self) -> float:
        """The largest weight any head puts on its favourite key."""
        return float(self.weights.max())

    @property
    def agree(self) -> bool:
        """Whether every head picks the same key."""
        return len(set(self.keys.tolist())) == 1


def head_picks(weights: np.ndarray, flat: float = 2.0) -> HeadPicks:
    """Each head's favourite key from the query the heads dispute most, and the average's.

    ``flat``: the heads are called nearly flat when even the sharpest puts less than
    ``flat`` × 1/n on its favourite (random heads do). Shapes: ``weights`` ``(h, n, n)``.
    """
    q = most_disputed_query(weights)
    top, top_w = head_focus(weights)  # (h, n), (h, n)
    avg_top, avg_w = head_focus(average_heads(weights))  # (n,), (n,)
    n = weights.shape[-1]
    best = float(top_w[:, q].max())
    return HeadPicks(
        q, top[:, q], top_w[:, q], int(avg_top[q]), float(avg_w[q]), best < flat * (1 / n)
    )
