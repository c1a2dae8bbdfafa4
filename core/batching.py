"""Continuous batching: many generations of one model decoded together, as serving engines
do it (vLLM's continuous batching, llama.cpp's parallel slots).

Decoding one token for one generation reads every weight of the model (135 M numbers for
SmolLM2) to do a few multiply-adds with each: the time goes into streaming the weights, not
into arithmetic. Stack the newest token of ``B`` generations into a ``(B, d_model)`` matrix
and every projection reads its weights once for all of them (:func:`decode_batch`).
Attention cannot be stacked that way: each generation attends over its own keys and
values, of its own length, so that part stays one generation at a time.

A :class:`Batcher` keeps the generations under way. A generation joins at the next step
after its prompt has been read (:meth:`Batcher.add`, then :meth:`Batcher.admit`), takes one
token per step with its own sampling and seed (:class:`Generation`), and leaves when it has
its tokens or writes its stop token. Prompts that arrive together are read in one pass
(:func:`read`), packed end to end with positions and the causal mask restarting for each.

The one-generation-at-a-time decoder (:func:`core.llama.generate_steps`) is the reference:
the same tokens, and logits equal up to float32 rounding (a product of ``B`` rows may sum
in another order than one of a single row).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.kv_cache import KVCache, gqa_decode_step, grouped_query_attention
from core.llama import LlamaWeights, finish_block, output_logits, rotated_qkv
from core.masks import causal_mask
from core.sampling import Sampling, generator, pick

MAX_BATCH = 32  # generations decoded in one step; more wait for a place


@dataclass(frozen=True)
class Read:
    """A prompt as the model has read it."""

    caches: tuple[KVCache, ...]  # every layer's keys and values (h_kv, n, d_head)
    logits: np.ndarray  # (vocab,) the scores for the token after the prompt
    attention: np.ndarray | None  # (L, h, n, n) when asked for (charts), else None


def read(
    weights: LlamaWeights, prompts: Sequence[Sequence[int]], attention: bool = False
) -> list[Read]:
    """Read several prompts in one pass: their tokens end to end, so every projection reads
    its weights once for all of them; each prompt's positions start at 0 and it attends
    only to itself, causally. Only each prompt's last position gets logits.

    Shapes: ``prompts`` of ``n_i >= 1`` ids -> one :class:`Read` per prompt, ``logits``
    ``(vocab,)`` and, with ``attention``, weights ``(L, h, n_i, n_i)``.
    """
    lengths = [len(p) for p in prompts]
    ends = np.cumsum(lengths)  # (P,)
    starts = ends - lengths
    x = weights.embed[np.concatenate([np.asarray(p, dtype=np.int64) for p in prompts])]
    positions = np.concatenate([np.arange(n) for n in lengths])  # (N,)
    caches: list[list[KVCache]] = [[] for _ in prompts]
    kept: list[list[np.ndarray]] = [[] for _ in prompts]
    for layer in weights.layers:
        q, k, v = rotated_qkv(x, layer, weights.config, positions)  # (h|h_kv, N, d_head)
        mixed = np.empty_like(q)
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            out, w = grouped_query_attention(q[:, s:e], k[:, s:e], v[:, s:e], causal_mask(e - s))
            mixed[:, s:e] = out  # (h, n_i, d_head)
            caches[i].append(KVCache(k[:, s:e].copy(), v[:, s:e].copy()))
            if attention:
                kept[i].append(w)  # (h, n_i, n_i)
        x = finish_block(x, mixed, layer, weights.config)  # (N, d_model)
    logits = output_logits(x[ends - 1], weights)  # (P, vocab)
    return [
        Read(tuple(c), row, np.stack(a) if attention else None)
        for c, row, a in zip(caches, logits, kept, strict=True)
    ]


def decode_batch(
    weights: LlamaWeights, tokens: Sequence[int], caches: Sequence[tuple[KVCache, ...]]
) -> tuple[np.ndarray, list[tuple[KVCache, ...]]]:
    """One decoding step for ``B`` generations: generation ``b`` feeds ``tokens[b]`` at the
    position after its cache. The projections and the output layer are one product over
    the ``B`` rows; attention is each generation's own query over its own cache.

    Shapes: ``tokens`` ``(B,)``, ``caches[b]`` one cache per layer holding ``t_b`` tokens
    -> ``(logits (B, vocab), caches holding t_b + 1 tokens)``.
    """
    x = weights.embed[np.asarray(tokens, dtype=np.int64)]  # (B, d_model)
    positions = np.array([len(c[0]) for c in caches])  # (B,) each one's own position
    grown: list[list[KVCache]] = [[] for _ in caches]
    for li, layer in enumerate(weights.layers):
        q, k, v = rotated_qkv(x, layer, weights.config, positions)  # (h|h_kv, B, d_head)
        mixed = np.empty_like(q)
        for b, layers in enumerate(caches):
            one = slice(b, b + 1)
            out, _, cache = gqa_decode_step(q[:, one], k[:, one], v[:, one], layers[li])
            mixed[:, one] = out  # (h, 1, d_head)
            grown[b].append(cache)
        x = finish_block(x, mixed, layer, weights.config)  # (B, d_model)
    return output_logits(x, weights), [tuple(g) for g in grown]


@dataclass(eq=False)
class Generation:
    """One generation under way: its caches, its own random generator, its tokens so far."""

    caches: tuple[KVCache, ...]
    n_tokens: int  # tokens it asked for
    sampling: Sampling
    stop: int | None = None
    tokens: list[int] = field(default_factory=list)
    logits: np.ndarray | None = None  # (vocab,) the scores its last token was picked from
    batch: list[int] = field(default_factory=list)  # how many were decoded with each token
    cancelled: bool = False
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = generator(self.sampling)

    @classmethod
    def start(
        cls, prompt: Read, n_tokens: int, sampling: Sampling, stop: int | None = None
    ) -> "Generation":
        """A generation after ``prompt``, its first token already picked from the prompt's
        scores (no pass of the model: the prompt has been read)."""
        g = cls(prompt.caches, max(1, n_tokens), sampling, stop)
        g.take(prompt.logits, 1)
        return g

    def take(self, logits: np.ndarray, batch: int) -> None:
        """Pick the next token from ``logits`` (``(vocab,)``), decoded in a step of ``batch``."""
        self.tokens.append(pick(logits, self.sampling, self.rng))
        self.logits = logits
        self.batch.append(batch)

    @property
    def done(self) -> bool:
        """Whether it has all its tokens, wrote its stop token or was cancelled."""
        wrote_stop = bool(self.tokens) and self.tokens[-1] == self.stop
        return self.cancelled or wrote_stop or len(self.tokens) >= self.n_tokens


class Batcher:
    """The generations of one model under way, decoded one step at a time together.

    Not thread-safe on its own: whoever drives it from several threads calls :meth:`add`
    and :meth:`admit` under one lock and lets one thread at a time run :meth:`step`
    (:mod:`ui.batching` does).
    """

    def __init__(self, weights: LlamaWeights, max_batch: int = MAX_BATCH) -> None:
        self.weights = weights
        self.max_batch = max_batch
        self.waiting: list[Generation] = []  # read, waiting for the next step
        self.running: list[Generation] = []

    def add(self, g: Generation) -> None:
        """Queue a started generation: it joins the batch at the next :meth:`admit`."""
        if not g.done:
            self.waiting.append(g)

    def admit(self) -> list[Generation]:
        """Drop the finished and cancelled, then let waiting generations join, first come
        first served, up to ``max_batch``; the batch the next :meth:`step` decodes."""
        self.running = [g for g in self.running if not g.done]
        self.waiting = [g for g in self.waiting if not g.done]
        room = max(0, self.max_batch - len(self.running))
        self.running += self.waiting[:room]
        self.waiting = self.waiting[room:]
        return list(self.running)

    def step(self, batch: list[Generation]) -> None:
        """One decoding step of ``batch`` (what :meth:`admit` returned): every generation in it
        feeds its last token and takes the next."""
        if not batch:
            return
        last = [g.tokens[-1] for g in batch]
        logits, caches = decode_batch(self.weights, last, [g.caches for g in batch])
        for g, row, c in zip(batch, logits, caches, strict=True):
            g.caches = c
            g.take(row, len(batch))

    def pending(self) -> int:
        """Generations waiting or running that are not done."""
        return sum(not g.done for g in self.waiting + self.running)
