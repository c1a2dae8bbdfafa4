"""What /block's notes point out: the residual stream's growth, where the logit lens settles
on the model's prediction, and whether the heads that matter are the heads that look."""

from dataclasses import dataclass

import numpy as np

from core.softmax_numerics import softmax


@dataclass(frozen=True)
class Stream:
    """The residual stream at one position, layer by layer."""

    start: float  # |x| after the embedding
    end: float  # |x| after the last layer
    top_layer: int  # the layer whose attention or MLP adds the largest vector
    top_kind: str  # "attn" or "mlp": which of the two that is
    top_norm: float
    attn_share: float  # attention's share of everything the layers add (sum of norms)


def stream(resid_norm: np.ndarray, attn_norm: np.ndarray, mlp_norm: np.ndarray) -> Stream:
    """The stream's first and last size and the largest addition.

    Shapes: ``resid_norm`` ``(L + 1,)``, ``attn_norm`` and ``mlp_norm`` ``(L,)``.
    """
    both = np.stack([attn_norm, mlp_norm])  # (2, L)
    kind, layer = np.unravel_index(int(np.argmax(both)), both.shape)
    total = float(both.sum())
    return Stream(
        float(resid_norm[0]),
        float(resid_norm[-1]),
        int(layer),
        ("attn", "mlp")[int(kind)],
        float(both[kind, layer]),
        float(attn_norm.sum()) / total if total > 0 else 0.0,
    )


@dataclass(frozen=True)
class Lens:
    """Where the logit lens's top token becomes the model's own prediction."""

    final: int  # the model's most likely next token (the last layer's top)
    p_final: float  # its probability at the last layer
    first: int  # the first layer whose top token is the final one (0 = the embedding)
    settled: int  # the layer from which the top token stays the final one to the end


def lens(top_ids: np.ndarray, top_probs: np.ndarray) -> Lens:
    """Read the lens's top token at each layer.

    Shapes: ``top_ids``, ``top_probs`` ``(L + 1, k)``, most likely first per row.
    """
    top = top_ids[:, 0]  # (L + 1,)
    final = int(top[-1])
    hits = top == final
    settled = len(top) - int(np.argmin(hits[::-1])) if not hits.all() else 0
    return Lens(final, float(top_probs[-1, 0]), int(np.argmax(hits)), settled)


@dataclass(frozen=True)
class Heads:
    """The heads of one layer: what switching each off does against where each looks."""

    matters: int  # the head whose ablation moves the logit difference the most
    looks: int  # the head that puts the most weight on the chosen token
    agree: bool  # the same head
    rank_corr: float  # Spearman's rank correlation of |effect| and attention paid (nan: constant)
    effect: float  # the largest |change| of the logit difference
    paid: float  # the largest weight on the chosen token


def heads(effect: np.ndarray, paid: np.ndarray) -> Heads:
    """Compare each head's ablation effect (the change of the logit difference, any sign)
    with the attention it pays to the chosen token.

    Shapes: ``effect``, ``paid`` ``(h,)``.
    """
    size = np.abs(effect)
    matters, looks = int(np.argmax(size)), int(np.argmax(paid))
    return Heads(
        matters,
        looks,
        matters == looks,
        _spearman(size, paid),
        float(size[matters]),
        float(paid[looks]),
    )


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation (ties get their mean rank); NaN when either does not vary."""
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for value in np.unique(x):  # ties: their mean rank
        same = x == value
        ranks[same] = ranks[same].mean()
    return ranks


@dataclass(frozen=True)
class Scored:
    """One token's probability and its logit's lead over another token."""

    prob: float
    diff: float


def scored(logits: np.ndarray, target: int, other: int) -> Scored:
    """``target``'s probability under the softmax and ``logits[target] - logits[other]``.

    Shapes: ``logits`` ``(vocab,)``.
    """
    p = softmax(np.asarray(logits, dtype=np.float64))  # (vocab,)
    return Scored(float(p[target]), float(logits[target] - logits[other]))


def ranked(logits: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` most likely next tokens, most likely first (ties: the lower id).

    Shapes: ``logits`` ``(vocab,)`` -> ``(k,)`` ids.
    """
    return np.argsort(-np.asarray(logits), kind="stable")[:k]
