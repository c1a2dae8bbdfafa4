"""Choosing the next token from a language model's scores, as generation libraries do.

The order is that of Hugging Face's ``generate``, vLLM and llama.cpp's default chain:

1. **Temperature** divides the scores (logits) before the softmax: below 1 the distribution
   sharpens, above 1 it flattens. Temperature 0 means greedy decoding: always the most
   likely token (vLLM and llama.cpp take 0 that way too).
2. **Top-k** keeps the ``k`` most likely tokens (0, or ``k`` at least the vocabulary, keeps
   them all).
3. **Top-p** (nucleus sampling) keeps the fewest most likely tokens whose probabilities
   add up to at least ``p`` (the token that crosses ``p`` is kept). ``p = 1`` keeps every
   token; at least one token is always kept, so ``p`` at or below 0 keeps the most likely
   one only (llama.cpp's ``min_keep``).

The kept tokens' probabilities are renormalised and one is drawn with the generation's own
random generator (a seed gives the same text every time, whatever else runs beside it).
Ties are broken by the token's id (a stable sort), so the kept set is always the same.
"""

from dataclasses import dataclass

import numpy as np

from core.softmax_numerics import softmax


@dataclass(frozen=True)
class Sampling:
    """How a generation picks its tokens. Out-of-range values are read by the rules of the
    module's docstring (never an error): a temperature below 0 is 0."""

    temperature: float = 0.0  # 0: greedy
    top_k: int = 0  # 0: no limit
    top_p: float = 1.0  # 1: no limit
    seed: int = 0

    @property
    def greedy(self) -> bool:
        """Whether this always takes the most likely token."""
        return not self.temperature > 0  # NaN too


def keep_mask(p: np.ndarray, top_k: int, top_p: float) -> np.ndarray:
    """Which tokens top-k and then top-p keep, from the probabilities ``p`` (after the
    temperature).

    Shapes: ``p`` ``(vocab,)`` -> bool ``(vocab,)`` with at least one True.
    """
    order = np.argsort(-p, kind="stable")  # (vocab,) most likely first, ties by id
    count = p.shape[0]
    if 0 < top_k < count:
        count = top_k
    if top_p < 1.0:  # the fewest tokens (of the top-k) whose probabilities reach top_p
        mass = np.cumsum(p[order[:count]]) / p[order[:count]].sum()  # renormalised after top-k
        count = min(count, int(np.searchsorted(mass, top_p, side="left")) + 1)
    keep = np.zeros(p.shape[0], dtype=bool)
    keep[order[: max(1, count)]] = True
    return keep


def distribution(logits: np.ndarray, s: Sampling) -> np.ndarray:
    """The probabilities the next token is drawn from: ``softmax(logits / temperature)``
    with the tokens top-k and top-p drop set to 0, renormalised. Greedy: 1 on the most
    likely token.

    Shapes: ``logits`` ``(vocab,)`` -> ``(vocab,)`` float64 summing to 1.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if s.greedy:
        p = np.zeros(logits.shape[0])
        p[int(np.argmax(logits))] = 1.0
        return p
    p = softmax(logits, temperature=s.temperature)  # (vocab,)
    kept = np.where(keep_mask(p, s.top_k, s.top_p), p, 0.0)
    return kept / kept.sum()


def pick(logits: np.ndarray, s: Sampling, rng: np.random.Generator) -> int:
    """The next token: the most likely one when greedy, else a draw from
    :func:`distribution` with ``rng`` (one uniform number per token drawn).

    Shapes: ``logits`` ``(vocab,)`` -> a token id.
    """
    if s.greedy:
        return int(np.argmax(logits))
    p = distribution(logits, s)
    return int(rng.choice(p.shape[0], p=p))


def generator(s: Sampling) -> np.random.Generator:
    """The random generator of one generation, from its seed alone."""
    return np.random.default_rng(s.seed)


GREEDY = Sampling()  # always the most likely token
