"""Tokenisation and embeddings for the sentences users type.

English (and other space-separated scripts): words and single punctuation marks.
Chinese: one token per character. Mixed text works.
"""

import re
import zlib

import numpy as np

from core.projections import lesson_inputs

MAX_TOKENS = 32
EMBEDDING_MODES = ("lesson", "stable")

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_TOKEN = re.compile(
    rf"[{_CJK}]"  # one CJK character
    rf"|(?:(?![{_CJK}])\w)+(?:['’](?:(?![{_CJK}])\w)+)*"  # a word, with don't / didn’t
    r"|[^\w\s]"  # one punctuation mark
)


class TokenizeError(ValueError):
    """The text cannot be turned into tokens for the app."""


class EmptyTextError(TokenizeError):
    """The text holds no token."""


class TooManyTokensError(TokenizeError):
    """The text holds more than the allowed number of tokens."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"{count} tokens, at most {limit} allowed")
        self.count = count
        self.limit = limit


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split ``text`` into tokens.

    Shapes: a string -> a list of ``n`` token strings, 1 <= n <= ``max_tokens``.
    Raises :class:`EmptyTextError` for text without tokens and :class:`TooManyTokensError`
    when there are more than ``max_tokens``.
    """
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise EmptyTextError("no tokens in the text")
    if len(tokens) > max_tokens:
        raise TooManyTokensError(len(tokens), max_tokens)
    return tokens


def _token_seed(token: str, seed: int) -> list[int]:
    """A platform-independent seed for one token (case-folded, so 'The' == 'the')."""
    return [seed, zlib.crc32(token.casefold().encode("utf-8"))]


def stable_embeddings(tokens: list[str], d_model: int, seed: int = 0) -> np.ndarray:
    """One fixed random vector per distinct word, whatever sentence it appears in.

    Shapes: ``n`` tokens -> ``(n, d_model)``. Equal tokens (ignoring case) get equal rows.
    """
    rows = [np.random.default_rng(_token_seed(t, seed)).normal(0.0, 1.0, d_model) for t in tokens]
    return np.stack(rows) if rows else np.zeros((0, d_model))


def sinusoidal_positions(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encoding of "Attention Is All You Need".

    Shapes: -> ``(n, d_model)``; even columns ``sin(pos / 10000^(2i/d_model))``, odd
    columns the matching ``cos``.
    """
    pos = np.arange(n)[:, None]  # (n, 1)
    i = np.arange(d_model)[None, :]  # (1, d_model)
    angle = pos / np.power(10000.0, (i - i % 2) / d_model)  # (n, d_model)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


def embed_tokens(
    tokens: list[str], d_model: int, mode: str = "lesson", seed: int = 42, positions: bool = False
) -> np.ndarray:
    """Embed a token list.

    ``mode="lesson"``: random normal rows from ``seed``, exactly lesson 002's ``X`` (the
    vector depends on the position, not the word). ``mode="stable"``: the same word always
    gets the same vector (see :func:`stable_embeddings`). ``positions=True`` adds the
    sinusoidal positional encoding.

    Shapes: ``n`` tokens -> ``(n, d_model)``.
    """
    if mode == "lesson":
        x = lesson_inputs(len(tokens), d_model, seed)
    elif mode == "stable":
        x = stable_embeddings(tokens, d_model, seed)
    else:
        raise ValueError(f"mode must be one of {EMBEDDING_MODES}, got {mode!r}")
    return x + sinusoidal_positions(len(tokens), d_model) if positions else x
