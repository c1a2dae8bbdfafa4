"""Autoregressive decoding with a key/value cache.

At step ``t`` only the new token is projected; its query attends to the cached keys and
values of tokens ``0..t``. The result equals row ``t`` of full causal attention, but the
keys and values of earlier tokens are never recomputed. One :class:`KVCache` serves a single
head (:func:`decode_step`, the lesson's one token at a time) and a layer of grouped-query
heads (:func:`gqa_decode_step`, the Llama decoder's).

Grouped-query attention (:func:`grouped_query_attention`, each key/value head shared by a
group of query heads, :func:`repeat_kv`) lives here with the cache it shrinks, beside its
per-head loop and the classic tiling bug (:func:`tile_kv`). The /gqa page's experiments: a
toy multi-head layer (:func:`toy_heads`) turned into fewer key/value heads the way the GQA
paper (Ainslie et al. 2023) converts a trained model (:func:`pool_heads`), and what the
tiling bug does to each query head's output (:func:`tiling_gaps`). What the page points out
about them is in :mod:`core.findings.gqa`.
"""

from dataclasses import dataclass

import numpy as np

from core.attention import scaled_dot_product_attention
from core.masks import causal_mask


@dataclass(frozen=True)
class KVCache:
    """Keys and values of the tokens decoded so far (immutable: ``append`` returns a new one).

    Tokens run along the second-to-last axis. One head's cache holds ``k`` ``(t, d_k)``; a
    layer's holds a row block per key/value head, ``(h_kv, t, d_k)``: grouped-query
    attention's cache, multi-head attention's when ``h_kv = h``.
    """

    k: np.ndarray  # (..., t, d_k): (t, d_k) for one head, (h_kv, t, d_k) for a layer
    v: np.ndarray  # (..., t, d_v)

    @classmethod
    def empty(
        cls, d_k: int, d_v: int, h_kv: int | None = None, dtype: type = np.float64
    ) -> "KVCache":
        """A cache holding no tokens: ``k`` ``(0, d_k)``, ``v`` ``(0, d_v)``; with ``h_kv``
        key/value heads ``(h_kv, 0, d_k)`` and ``(h_kv, 0, d_v)``."""
        heads = () if h_kv is None else (h_kv,)
        return cls(np.zeros((*heads, 0, d_k), dtype), np.zeros((*heads, 0, d_v), dtype))

    def append(self, k_new: np.ndarray, v_new: np.ndarray) -> "KVCache":
        """Add ``m`` tokens' keys ``(..., m, d_k)`` and values ``(..., m, d_v)``."""
        return KVCache(
            np.concatenate([self.k, k_new], axis=-2),  # (..., t + m, d_k)
            np.concatenate([self.v, v_new], axis=-2),  # (..., t + m, d_v)
        )

    def __len__(self) -> int:
        return self.k.shape[-2]

    @property
    def nbytes(self) -> int:
        """Memory held by the keys and values."""
        return self.k.nbytes + self.v.nbytes


@dataclass(frozen=True)
class DecodeStep:
    """What one decoding step computed."""

    t: int  # index of the new token
    q: np.ndarray  # (d_k,)  the new token's query
    weights: np.ndarray  # (t + 1,)  attention over tokens 0..t
    output: np.ndarray  # (d_v,)
    cache: KVCache  # the cache after this step, t + 1 rows


def decode_step(q_t: np.ndarray, k_t: np.ndarray, v_t: np.ndarray, cache: KVCache) -> DecodeStep:
    """Append the new token's key/value to the cache, then attend with its query.

    Shapes: ``q_t``/``k_t`` ``(d_k,)``, ``v_t`` ``(d_v,)``, cache with ``t`` rows
    -> :class:`DecodeStep` with weights ``(t + 1,)`` and output ``(d_v,)``.
    """
    cache = cache.append(k_t[None], v_t[None])  # (t + 1, d_k), (t + 1, d_v)
    out, w = scaled_dot_product_attention(q_t[None, :], cache.k, cache.v)  # (1, d_v), (1, t+1)
    return DecodeStep(len(cache) - 1, q_t, w[0], out[0], cache)


def decode_trace(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> list[DecodeStep]:
    """Decode a whole sequence one token at a time with a cache.

    Shapes: ``q``/``k`` ``(n, d_k)``, ``v`` ``(n, d_v)`` -> ``n`` steps; step ``t`` holds
    weights ``(t + 1,)``.
    """
    cache = KVCache.empty(k.shape[-1], v.shape[-1])
    steps = []
    for t in range(q.shape[0]):
        step = decode_step(q[t], k[t], v[t], cache)
        steps.append(step)
        cache = step.cache
    return steps


def cached_causal_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Causal attention computed step by step with the cache.

    Shapes: ``q``/``k`` ``(n, d_k)``, ``v`` ``(n, d_v)`` -> ``(output (n, d_v), weights
    (n, n))``, the weights zero above the diagonal — equal to full causal attention.
    """
    n = q.shape[0]
    steps = decode_trace(q, k, v)
    weights = np.zeros((n, n))
    for s in steps:
        weights[s.t, : s.t + 1] = s.weights
    return np.stack([s.output for s in steps]), weights


@dataclass(frozen=True)
class CostCurve:
    """Multiply-adds per decoding step (index ``t`` = step producing token ``t + 1``)."""

    with_cache: np.ndarray  # (n,)
    without_cache: np.ndarray  # (n,)
    cache_floats: np.ndarray  # (n,) numbers held in the cache after each step


def decode_costs(n: int, d_model: int, d_k: int, d_v: int) -> CostCurve:
    """Count multiply-adds of one attention layer while decoding ``n`` tokens.

    At step ``t`` the prefix holds ``L = t + 1`` tokens.

    * With the cache: project the new token only (``d_model·(2·d_k + d_v)``), score it
      against ``L`` keys (``L·d_k``) and mix ``L`` values (``L·d_v``).
    * Without the cache (re-running causal attention on the whole prefix, as a model with
      caching disabled does): project all ``L`` tokens (``L·d_model·(2·d_k + d_v)``), the
      causal scores and mix (``L(L+1)/2·(d_k + d_v)``).

    The cache holds ``L·(d_k + d_v)`` numbers after the step.
    """
    lengths = np.arange(1, n + 1)  # (n,)
    proj = d_model * (2 * d_k + d_v)
    with_cache = proj + lengths * (d_k + d_v)
    without_cache = lengths * proj + lengths * (lengths + 1) // 2 * (d_k + d_v)
    return CostCurve(with_cache, without_cache, lengths * (d_k + d_v))


def cumulative_costs(curve: CostCurve) -> CostCurve:
    """Running totals of the multiply-adds: entry ``t`` = all work up to and including step ``t``.

    Shapes: each field ``(n,)`` -> ``(n,)``; ``cache_floats`` is kept as is (already a size).
    """
    return CostCurve(
        np.cumsum(curve.with_cache), np.cumsum(curve.without_cache), curve.cache_floats
    )


def cost_ratio(curve: CostCurve) -> np.ndarray:
    """How many times more work decoding takes without the cache, per entry.

    Shapes: ``(n,)`` -> ``(n,)`` floats.
    """
    return curve.without_cache / curve.with_cache


def cache_bytes(cache_floats: np.ndarray, layers: int, bytes_per_float: int) -> np.ndarray:
    """Memory the cache holds across ``layers`` layers at ``bytes_per_float`` (4 = float32).

    Shapes: ``(n,)`` -> ``(n,)`` integers.
    """
    return np.asarray(cache_floats, dtype=np.int64) * layers * bytes_per_float


@dataclass(frozen=True)
class CostSummary:
    """Decoding ``n`` tokens at one model size: work per step and in total, cache memory."""

    per_step: CostCurve  # (n,) each
    total: CostCurve  # (n,) running totals
    bytes32: np.ndarray  # (n,) cache memory of every layer in float32
    bytes16: np.ndarray  # (n,) and in float16
    step_ratio: float  # the last step: without / with
    total_ratio: float  # all steps: without / with


def cost_summary(n: int, d_model: int, layers: int) -> CostSummary:
    """The work of one attention layer with all its heads (``d_k = d_v = d_model``) over
    ``n`` decoding steps, and the memory of the cache of ``layers`` layers."""
    per = decode_costs(n, d_model, d_model, d_model)
    total = cumulative_costs(per)
    return CostSummary(
        per,
        total,
        cache_bytes(per.cache_floats, layers, 4),
        cache_bytes(per.cache_floats, layers, 2),
        float(cost_ratio(per)[-1]),
        float(cost_ratio(total)[-1]),
    )


def sample_steps(n: int, count: int = 64) -> np.ndarray:
    """About ``count`` step indices spread evenly on a log scale, always with 0 and ``n - 1``.

    Shapes: -> int ``(k,)`` sorted and unique, ``k <= min(n, count + 1)``.
    """
    if n <= count:
        return np.arange(n)
    picks = np.geomspace(1, n, count).round().astype(np.int64) - 1  # (count,)
    return np.unique(np.concatenate([[0], picks, [n - 1]]))


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """Share each key/value head with ``n_rep`` query heads (grouped-query attention).

    Shapes: ``(h_kv, n, d)`` -> ``(h_kv · n_rep, n, d)``; query head ``i`` reads key/value
    head ``i // n_rep``.
    """
    return np.repeat(x, n_rep, axis=0)  # (h, n, d)


def tile_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """The classic bug: copy the whole stack of key/value heads ``n_rep`` times (``np.tile``,
    or torch's ``k.repeat(n_rep, 1, 1)``) instead of repeating each head in place.

    Shapes: ``(h_kv, n, d)`` -> ``(h_kv · n_rep, n, d)``; query head ``i`` then reads head
    ``i % h_kv``, not ``i // n_rep``: the right shape, the wrong heads (the same only when
    ``h_kv`` or ``n_rep`` is 1).
    """
    return np.tile(x, (n_rep, 1, 1))  # (h, n, d)


def kv_head_of(h: int, h_kv: int, tiled: bool = False) -> np.ndarray:
    """Which key/value head each query head reads: ``i // (h / h_kv)`` (:func:`repeat_kv`),
    or ``i % h_kv`` with the tiling bug (:func:`tile_kv`).

    Shapes: -> int ``(h,)``. Raises ``ValueError`` unless ``h_kv`` divides ``h``.
    """
    if h_kv < 1 or h % h_kv:
        raise ValueError(f"the {h} query heads must split evenly over {h_kv} key/value heads")
    heads = np.arange(h)  # (h,)
    return heads % h_kv if tiled else heads // (h // h_kv)


def kv_numbers_per_token(layers: int, h_kv: int, d_head: int) -> int:
    """Numbers a key/value cache holds per token: a key and a value of ``d_head`` for each
    of the ``h_kv`` key/value heads of every layer, ``2 · layers · h_kv · d_head``.

    Shapes: scalars -> int. SmolLM2 (30 layers, 3 K/V heads of 64): 11,520.
    """
    return 2 * layers * h_kv * d_head


def kv_variants(h: int, h_kv: int) -> dict[str, int]:
    """Key/value heads of the three designs for a model with ``h`` query heads: multi-head
    (one per query head), grouped-query (``h_kv``), multi-query (one for all).

    Shapes: scalars -> ``{"MHA": h, "GQA": h_kv, "MQA": 1}``.
    """
    return {"MHA": h, "GQA": h_kv, "MQA": 1}


def kv_cache_bytes(
    tokens: int | np.ndarray, layers: int, h_kv: int, d_head: int, bytes_per_number: int
) -> int | np.ndarray:
    """Memory of the key/value cache at ``tokens`` tokens (4 bytes a number in float32,
    2 in float16). SmolLM2 at 8192 tokens in float16: 188,743,680 bytes = 180 MiB.

    Shapes: ``tokens`` scalar or ``(t,)`` -> same, integers.
    """
    per_token = kv_numbers_per_token(layers, h_kv, d_head) * bytes_per_number
    if np.ndim(tokens):
        return np.asarray(tokens, dtype=np.int64) * per_token  # (t,)
    return int(tokens) * per_token


def grouped_query_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention with fewer key/value heads than query heads: query head
    ``i`` uses key/value head ``i // (h / h_kv)`` (:func:`repeat_kv`). ``h_kv = h`` is
    ordinary multi-head attention, ``h_kv = 1`` multi-query attention.

    Shapes: ``q`` ``(h, n_q, d_k)``, ``k`` ``(h_kv, n_k, d_k)``, ``v`` ``(h_kv, n_k, d_v)``
    with ``h`` a multiple of ``h_kv``, ``mask`` bool broadcastable to ``(h, n_q, n_k)``
    (True = may attend) -> ``(output (h, n_q, d_v), weights (h, n_q, n_k))``. A query with
    every key masked gets zero weights and a zero output, as in
    :func:`core.scaled_dot_product_attention`.
    """
    if k.shape[0] < 1 or q.shape[0] % k.shape[0]:
        raise ValueError(f"{q.shape[0]} query heads do not split over {k.shape[0]} K/V heads")
    n_rep = q.shape[0] // k.shape[0]
    return scaled_dot_product_attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), mask)


def grouped_query_attention_loop(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Reference implementation: one query head at a time, each reading its own key/value
    head ``i // (h / h_kv)`` (:func:`kv_head_of`), no copies of K and V.

    Same shapes and result as :func:`grouped_query_attention`; kept simple on purpose so the
    batched version can be tested against it.
    """
    heads = [
        scaled_dot_product_attention(q[i], k[g], v[g], mask)  # (n_q, d_v), (n_q, n_k)
        for i, g in enumerate(kv_head_of(q.shape[0], k.shape[0]))
    ]
    return np.stack([o for o, _ in heads]), np.stack([w for _, w in heads])  # (h, n_q, ·)


def gqa_decode_step(
    q_new: np.ndarray, k_new: np.ndarray, v_new: np.ndarray, cache: KVCache
) -> tuple[np.ndarray, np.ndarray, KVCache]:
    """Append ``m`` new tokens to the cache, then attend with their queries, causally.

    Shapes: ``q_new`` ``(h, m, d_k)``, ``k_new`` ``(h_kv, m, d_k)``, ``v_new``
    ``(h_kv, m, d_v)``, a cache with ``h_kv`` heads holding ``t`` tokens -> ``(output
    (h, m, d_v), weights (h, m, t + m), cache with t + m tokens)``. New token ``i`` (position
    ``t + i``) sees keys ``0..t + i``; with ``m = 1`` that is every cached key (one decoding
    step), with ``t = 0`` it is the full causal mask (the prompt's prefill).
    """
    t, m = len(cache), q_new.shape[1]
    cache = cache.append(k_new, v_new)
    mask = causal_mask(m, past=t)  # (m, t + m)
    out, w = grouped_query_attention(q_new, cache.k, cache.v, mask)
    return out, w, cache


# ---- the /gqa page's experiments ------------------------------------------------------


def toy_heads(h: int, n: int, d_head: int, seed: int) -> tuple[np.ndarray, ...]:
    """Queries, keys and values of a toy multi-head layer: standard normal from ``seed``.

    Shapes: -> ``q``, ``k``, ``v`` ``(h, n, d_head)`` each, float64.
    """
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, h, n, d_head))  # (h, n, d_head) each
    return q, k, v


def pool_heads(x: np.ndarray, h_kv: int) -> np.ndarray:
    """``h`` key (or value) heads made into ``h_kv``: each group of ``h / h_kv`` neighbouring
    heads averaged into one (the GQA paper's "mean pooling"). ``h_kv = h`` changes nothing.

    Shapes: ``(h, n, d)`` -> ``(h_kv, n, d)``. Raises ``ValueError`` unless ``h_kv`` divides ``h``.
    """
    h = x.shape[0]
    if h_kv < 1 or h % h_kv:
        raise ValueError(f"{h} heads do not split into {h_kv} groups")
    return x.reshape(h_kv, h // h_kv, *x.shape[1:]).mean(axis=1)  # (h_kv, n, d)


def tiling_gaps(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """Per query head, the largest difference between its output with the key/value heads
    shared the right way (:func:`grouped_query_attention`) and with them tiled
    (:func:`tile_kv`, the classic bug). 0 for the heads the two ways happen to
    give the same key/value head.

    Shapes: ``q`` ``(h, n_q, d_k)``, ``k`` ``(h_kv, n_k, d_k)``, ``v`` ``(h_kv, n_k, d_v)``
    -> ``(h,)``.
    """
    n_rep = q.shape[0] // k.shape[0]
    right, _ = grouped_query_attention(q, k, v, mask)  # (h, n_q, d_v)
    wrong, _ = scaled_dot_product_attention(q, tile_kv(k, n_rep), tile_kv(v, n_rep), mask)
    return np.abs(right - wrong).max(axis=(-2, -1))  # (h,)
