"""What the real-encoder page points out, computed from a sentence's tokens and weights.

The page (``ui/views/encoder.py``) turns each finding into a translated sentence; the
numbers and the choices of token come from here, so they can be tested without a browser.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

WORD_START = "▁"  # SentencePiece's mark for a piece that starts a word (a space before it)


def bare(piece: str) -> str:
    """A piece as a word: without SentencePiece's word-start mark (``▁它`` -> ``它``)."""
    return piece.removeprefix(WORD_START)


@dataclass(frozen=True)
class WordPlace:
    """Where a word sits among a sentence's pieces."""

    index: int | None  # the piece that is the word itself (word-start mark aside)
    inside: int | None  # else the first piece that holds the word with more around it

    @property
    def merged(self) -> bool:
        """Whether the word is only part of a larger piece (it cannot be picked alone)."""
        return self.index is None and self.inside is not None


def place_of(tokens: Sequence[str], word: str) -> WordPlace:
    """Find ``word`` among ``tokens``: as a piece of its own, else inside a larger one.

    ``"它"`` in ``[…, "因为它", "太", …]`` is inside piece 8: the model reads 因为它 as one
    token, so no row of the attention belongs to 它 alone.
    """
    pieces = [bare(tok) for tok in tokens]
    if word in pieces:
        return WordPlace(pieces.index(word), None)
    inside = next((i for i, p in enumerate(pieces) if word and word in p), None)
    return WordPlace(None, inside)


@dataclass(frozen=True)
class WeightShift:
    """How one query's weights moved between two sentences of equal length (B − A)."""

    target: float  # change on the target key
    special: float  # change on the special tokens together (<s>, </s> or [CLS], [SEP])
    others: float  # change on every other key
    top: int  # the key, neither target nor special, that gained most (-1 if none)
    top_gain: float  # its change


def weight_shift(
    row_a: np.ndarray, row_b: np.ndarray, target: int, special: Sequence[int]
) -> WeightShift:
    """Where the weight of a query went when one word of its sentence changed.

    ``row_a``, ``row_b`` ``(n,)``: the query's weights in sentence A and B (each sums to 1,
    so the three changes sum to 0). Answers "the weight 它 loses on 动物: does it go to
    马路, or is it parked on the special tokens?".
    """
    diff = np.asarray(row_b, dtype=np.float64) - np.asarray(row_a, dtype=np.float64)  # (n,)
    special_mask = np.zeros(diff.shape, dtype=bool)
    special_mask[list(special)] = True
    rest = ~special_mask
    rest[target] = False
    gains = np.where(rest, diff, -np.inf)
    top = int(gains.argmax()) if rest.any() else -1
    return WeightShift(
        target=float(diff[target]),
        special=float(diff[special_mask & (np.arange(diff.size) != target)].sum()),
        others=float(diff[rest].sum()),
        top=top,
        top_gain=float(diff[top]) if top >= 0 else 0.0,
    )
