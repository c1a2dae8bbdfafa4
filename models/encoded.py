"""A sentence as an encoder reads it: what both encoders' ``encode`` return.

all-MiniLM-L6-v2 (:mod:`models.minilm`, WordPiece, ``[CLS] … [SEP]``) and
multilingual-e5-small (:mod:`models.multilingual_e5`, SentencePiece, ``<s> … </s>``) cut a
long text the same way (:func:`keep_closing`) and report it the same way (:class:`Encoded`).
"""

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True)
class Encoded:
    """A sentence as the model reads it."""

    tokens: list[str]  # as the tokenizer spells them: [CLS], the, …, [SEP] or <s>, ▁动物, …, </s>
    ids: np.ndarray  # (n,) token ids
    total: int  # tokens before the cap (== n unless the text was cut)
    unknown: int  # how many of the (kept) pieces are unknown ([UNK], <unk>)
    special: tuple[str, ...]  # the marks the tokenizer adds around the text: not pieces

    @property
    def cut(self) -> bool:
        """Whether the text was longer than the cap."""
        return self.total > len(self.tokens)

    @property
    def unknown_share(self) -> float:
        """Unknown pieces among the pieces (the special marks not counted); 0 without any."""
        words = len(self.tokens) - sum(tok in self.special for tok in self.tokens)
        return self.unknown / words if words else 0.0


def keep_closing(items: list[T], max_tokens: int) -> list[T]:
    """At most ``max_tokens`` of a sentence's tokens (or ids): beyond the cap the first
    ``max_tokens − 1`` and the closing special token; a sentence within the cap as it is."""
    if len(items) <= max_tokens:
        return items
    return [*items[: max_tokens - 1], items[-1]]
