"""Autoregressive decoding with a key/value cache.

At step ``t`` only the new token is projected; its query attends to the cached keys and
values of tokens ``0..t``. The result equals row ``t`` of full causal attention, but the
keys and values of earlier tokens are never recomputed.
"""

from dataclasses import dataclass

import numpy as np

from core.attention import scaled_dot_product_attention


@dataclass(frozen=True)
class KVCache:
    """Keys and values of the tokens decoded so far (immutable: ``append`` returns a new one)."""

    k: np.ndarray  # (t, d_k)
    v: np.ndarray  # (t, d_v)

    @classmethod
    def empty(cls, d_k: int, d_v: int) -> "KVCache":
        """A cache holding no tokens: ``k`` ``(0, d_k)``, ``v`` ``(0, d_v)``."""
        return cls(np.zeros((0, d_k)), np.zeros((0, d_v)))

    def append(self, k_t: np.ndarray, v_t: np.ndarray) -> "KVCache":
        """Add one token's key ``(d_k,)`` and value ``(d_v,)``: ``t`` -> ``t + 1`` rows."""
        return KVCache(np.vstack([self.k, k_t]), np.vstack([self.v, v_t]))

    def __len__(self) -> int:
        return self.k.shape[0]


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
    cache = cache.append(k_t, v_t)  # (t + 1, d_k), (t + 1, d_v)
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
