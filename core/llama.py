"""A Llama-style decoder (SmolLM2) in pure NumPy, built on the concept pages' attention.

Each of the ``L`` blocks: 1) RMSNorm 2) project Q, K, V 3) rotate Q and K by position
(RoPE) 4) grouped-query causal attention (:func:`core.kv_cache.grouped_query_attention`,
i.e. :func:`core.scaled_dot_product_attention` with each key/value head shared by
``h / h_kv`` query heads) 5) output projection and residual 6) RMSNorm and a SwiGLU
feed-forward with residual. A final RMSNorm and the (tied) token embedding give the logits.

Weights use the row-vector convention of the rest of ``core``: ``x @ W`` with ``W`` of shape
``(d_in, d_out)``. The query/key columns are in GGUF order, where every head's features are
stored as interleaved pairs ``(2i, 2i+1)``: :func:`core.rope.apply_rope` (the one RoPE of
``core``) rotates those pairs (the same maths as Hugging Face's ``rotate_half`` on the
un-permuted weights; the attention weights are identical because queries and keys are
permuted alike).

Incremental decoding keeps one :class:`core.kv_cache.KVCache` per layer; prefilling the
prompt and then feeding one token at a time gives the same logits as the full forward.
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from core.kv_cache import KVCache, gqa_decode_step, grouped_query_attention
from core.masks import causal_mask
from core.multihead import merge_heads, split_heads
from core.rope import apply_rope, rope_angles
from core.sampling import GREEDY, Sampling, generator, pick
from core.softmax_numerics import log_softmax


@dataclass(frozen=True)
class LlamaConfig:
    """Sizes of a Llama-style decoder."""

    n_layers: int  # L
    d_model: int
    n_heads: int  # h query heads
    n_kv_heads: int  # h_kv key/value heads (h is a multiple of it)
    d_ff: int  # width of the SwiGLU hidden layer
    vocab: int
    eps: float = 1e-5  # RMSNorm epsilon
    rope_base: float = 10_000.0
    context: int | None = None  # the context length it was trained for (None: not given)

    @property
    def d_head(self) -> int:
        """Width of one head's query/key/value (``d_k = d_v``)."""
        return self.d_model // self.n_heads


@dataclass(frozen=True)
class LayerWeights:
    """One decoder block's parameters (row-vector convention: ``x @ W``).

    Q, K and V are one matrix side by side, and so are the gate and up matrices: decoding
    one token reads every weight once, and one wide product streams them faster than
    several narrow ones (:func:`blocks`; :meth:`of` builds them from separate matrices).
    """

    attn_norm: np.ndarray  # (d_model,)
    w_qkv: np.ndarray  # (d_model, (h + 2 h_kv) · d_head): W_Q | W_K | W_V
    w_o: np.ndarray  # (h · d_head, d_model)
    ffn_norm: np.ndarray  # (d_model,)
    w_gate_up: np.ndarray  # (d_model, 2 d_ff): W_gate | W_up
    w_down: np.ndarray  # (d_ff, d_model)

    @classmethod
    def of(
        cls,
        attn_norm: np.ndarray,
        qkv: tuple[np.ndarray, np.ndarray, np.ndarray],
        w_o: np.ndarray,
        ffn_norm: np.ndarray,
        gate_up: tuple[np.ndarray, np.ndarray],
        w_down: np.ndarray,
    ) -> "LayerWeights":
        """From separate ``(d_in, d_out)`` matrices (``qkv`` = W_Q, W_K, W_V; ``gate_up`` =
        W_gate, W_up)."""
        return cls(attn_norm, np.hstack(qkv), w_o, ffn_norm, np.hstack(gate_up), w_down)


@dataclass(frozen=True)
class LlamaWeights:
    """Every parameter of the model; the output layer is the embedding (tied weights)."""

    config: LlamaConfig
    embed: np.ndarray  # (vocab, d_model)
    layers: tuple[LayerWeights, ...]
    out_norm: np.ndarray  # (d_model,)


def parameter_count(weights: LlamaWeights) -> int:
    """How many numbers the model has: embedding, every block's matrices and norms, the
    final norm (the output layer is the embedding again, so it is not counted twice)."""
    count = weights.embed.size + weights.out_norm.size
    return count + sum(a.size for layer in weights.layers for a in vars(layer).values())


def weight_bytes(weights: LlamaWeights) -> int:
    """The memory of every weight as the model computes with it: what one decoding step
    reads, whether it decodes one generation or a batch (:mod:`core.batching`)."""
    arrays = [
        weights.embed,
        weights.out_norm,
        *(a for w in weights.layers for a in vars(w).values()),
    ]
    return sum(a.nbytes for a in arrays)


def mha_cache_bytes(cache_bytes: int, config: LlamaConfig) -> int:
    """The key/value cache's memory as it would be with one key/value head per query head
    (multi-head attention) instead of the model's ``h_kv`` shared ones: ``h / h_kv`` times
    as much."""
    return cache_bytes * (config.n_heads // config.n_kv_heads)


@dataclass(frozen=True)
class Forward:
    """Everything one full forward pass computed."""

    hidden: np.ndarray  # (L + 1, n, d_model) residual stream: embeddings, after each block
    attention: np.ndarray  # (L, h, n, n) causal attention weights
    logits: np.ndarray  # (n, vocab), or (1, vocab) for the last token only
    caches: tuple[KVCache, ...]  # every layer's rotated keys and values: a generation goes on


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """Divide by the root mean square of the features, then scale per feature.

    Shapes: ``x`` ``(..., d)``, ``weight`` ``(d,)`` -> ``(..., d)``.
    """
    ms = np.mean(np.square(x), axis=-1, keepdims=True)  # (..., 1)
    return weight * (x * (1.0 / np.sqrt(ms + eps)))  # the reference's order of rounding


def blocks(x: np.ndarray, w: np.ndarray, ends: list[int]) -> list[np.ndarray]:
    """``x @ w`` cut into column blocks at ``ends``. One token (decoding) takes one wide
    product: it reads each weight once, and streaming them is the cost there. Several
    tokens take the blocks one by one, so their rounding is that of separate matrices (the
    reference's; a wider product blocks its sums differently).

    Shapes: ``x`` ``(n, d_in)``, ``w`` ``(d_in, d_out)`` -> ``[(n, d_i)]``.
    """
    if x.shape[0] == 1:
        return np.split(x @ w, ends, axis=-1)
    return [x @ block for block in np.split(w, ends, axis=-1)]


def swiglu(x: np.ndarray, layer: LayerWeights) -> np.ndarray:
    """The feed-forward ``(silu(x W_gate) ⊙ x W_up) W_down``.

    Shapes: ``x`` ``(n, d_model)`` -> ``(n, d_model)``.
    """
    gate, up = blocks(x, layer.w_gate_up, [layer.w_gate_up.shape[1] // 2])  # (n, d_ff) each
    silu = gate / (1.0 + np.exp(-gate))
    return (silu * up) @ layer.w_down


def rotated_qkv(
    x: np.ndarray, layer: LayerWeights, config: LlamaConfig, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 1–3: normalise, project, cut into heads and rotate the queries and keys. The
    projection alone, on separate matrices, is :func:`core.projections.project_qkv`.

    Shapes: ``x`` ``(n, d_model)``, ``positions`` ``(n,)`` -> ``q`` ``(h, n, d_head)``,
    ``k`` ``(h_kv, n, d_head)``, ``v`` ``(h_kv, n, d_head)``.
    """
    xn = rms_norm(x, layer.attn_norm, config.eps)  # (n, d_model)
    cos, sin = rope_angles(positions, config.d_head, config.rope_base)
    q_end = config.n_heads * config.d_head
    q, k, v = blocks(xn, layer.w_qkv, [q_end, q_end + config.n_kv_heads * config.d_head])
    q = apply_rope(split_heads(q, config.n_heads), cos, sin)  # (h, n, d_head)
    k = apply_rope(split_heads(k, config.n_kv_heads), cos, sin)  # (h_kv, n, d_head)
    return q, k, split_heads(v, config.n_kv_heads)  # v: (h_kv, n, d_head)


def finish_block(
    x: np.ndarray, mixed: np.ndarray, layer: LayerWeights, config: LlamaConfig
) -> np.ndarray:
    """Steps 5–6: output projection, residual, normalised SwiGLU, residual.

    Shapes: ``x`` ``(n, d_model)``, ``mixed`` ``(h, n, d_head)`` -> ``(n, d_model)``.
    """
    x = x + merge_heads(mixed) @ layer.w_o  # (n, d_model)
    return x + swiglu(rms_norm(x, layer.ffn_norm, config.eps), layer)


def block(
    x: np.ndarray, layer: LayerWeights, config: LlamaConfig, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, KVCache]:
    """One decoder block over a whole sequence, with the causal mask unless ``mask`` is given.

    Shapes: ``x`` ``(n, d_model)``, ``mask`` bool ``(n, n)`` (True = may attend) ->
    ``(x (n, d_model), weights (h, n, n), the block's keys and values (h_kv, n, d_head))``.
    """
    n = x.shape[0]
    mask = causal_mask(n) if mask is None else mask
    q, k, v = rotated_qkv(x, layer, config, np.arange(n))
    mixed, weights = grouped_query_attention(q, k, v, mask)  # (h, n, d), (h, n, n)
    return finish_block(x, mixed, layer, config), weights, KVCache(k, v)


def output_logits(x: np.ndarray, weights: LlamaWeights) -> np.ndarray:
    """Final RMSNorm, then scores against every token embedding (tied output layer).

    Shapes: ``x`` ``(n, d_model)`` -> ``(n, vocab)``.
    """
    return rms_norm(x, weights.out_norm, weights.config.eps) @ weights.embed.T


def forward(
    weights: LlamaWeights,
    ids: np.ndarray | list[int],
    all_logits: bool = True,
    mask: np.ndarray | None = None,
) -> Forward:
    """The full forward pass, keeping every layer's attention, residual stream and keys and
    values (under the causal mask, a generation goes on from them: :func:`decode`).

    Shapes: ``ids`` ``(n,)`` integers, ``mask`` bool ``(n, n)`` (True = may attend; default
    the causal mask, e.g. :func:`core.masks.sliding_window_mask` instead) -> :class:`Forward`
    with ``hidden`` ``(L + 1, n, d_model)``, ``attention`` ``(L, h, n, n)`` and ``logits``
    ``(n, vocab)`` (``(1, vocab)``, the last token's, with ``all_logits=False``).
    """
    x = weights.embed[np.asarray(ids)]  # (n, d_model)
    hidden, attention, caches = [x], [], []
    for layer in weights.layers:
        x, w, cache = block(x, layer, weights.config, mask)
        hidden.append(x)
        attention.append(w)
        caches.append(cache)
    logits = output_logits(x if all_logits else x[-1:], weights)
    return Forward(np.stack(hidden), np.stack(attention), logits, tuple(caches))


def lean_forward(
    weights: LlamaWeights, ids: np.ndarray | list[int], rows: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The forward pass of :func:`forward`, keeping only the logits of the last ``rows``
    positions and each head's :func:`first_token_share` — not every attention weight
    (``(L, h, n, n)``: 300 MB for SmolLM2 at 500 tokens) nor every position's logits.

    Shapes: ``ids`` ``(n,)`` with ``n >= 2``, ``mask`` bool ``(n, n)`` (default causal) ->
    ``(logits (rows, vocab), first_share (L, h))``.
    """
    x = weights.embed[np.asarray(ids)]  # (n, d_model)
    shares = []
    for layer in weights.layers:
        x, w, _ = block(x, layer, weights.config, mask)  # (n, d_model), (h, n, n)
        shares.append(first_token_share(w[None])[0])  # (h,)
    return output_logits(x[-rows:], weights), np.stack(shares)  # (rows, vocab), (L, h)


def empty_caches(config: LlamaConfig) -> tuple[KVCache, ...]:
    """One empty key/value cache per layer, ``(h_kv, 0, d_head)`` float32 (the model's)."""
    d, h_kv = config.d_head, config.n_kv_heads
    return tuple(KVCache.empty(d, d, h_kv, np.float32) for _ in range(config.n_layers))


def decode(
    weights: LlamaWeights, ids: np.ndarray | list[int], caches: tuple[KVCache, ...]
) -> tuple[np.ndarray, np.ndarray, tuple[KVCache, ...]]:
    """Feed ``m`` new tokens through the model using (and extending) the layers' caches.

    Shapes: ``ids`` ``(m,)``, caches holding ``t`` tokens each -> ``(logits (m, vocab),
    attention (L, h, m, t + m), caches holding t + m tokens)``. Only the new tokens are
    projected; their queries attend to the cached keys and values.
    """
    t = len(caches[0])
    x = weights.embed[np.asarray(ids)]  # (m, d_model)
    positions = t + np.arange(x.shape[0])  # (m,)
    new_caches, attention = [], []
    for layer, cache in zip(weights.layers, caches, strict=True):
        q, k, v = rotated_qkv(x, layer, weights.config, positions)
        mixed, w, cache = gqa_decode_step(q, k, v, cache)  # (h, m, d), (h, m, t + m)
        x = finish_block(x, mixed, layer, weights.config)
        new_caches.append(cache)
        attention.append(w)
    return output_logits(x, weights), np.stack(attention), tuple(new_caches)


@dataclass(frozen=True)
class GenStep:
    """One generated token and the state after it."""

    token: int
    logits: np.ndarray  # (vocab,) the distribution it was picked from
    cache_len: int  # tokens held in each layer's cache after the step (0 without cache)
    cache_bytes: int  # memory of every layer's keys and values after the step


def generate_steps(
    weights: LlamaWeights,
    ids: list[int],
    n_tokens: int,
    *,
    use_cache: bool = True,
    sampling: Sampling = GREEDY,
    stop: int | None = None,
) -> Iterator[GenStep]:
    """Generate up to ``n_tokens`` tokens after the prompt ``ids``, one step at a time: one
    generation on its own, the reference :mod:`core.batching` must equal.

    With the cache: prefill the prompt once, then project only the newest token. Without:
    run the full forward on the whole sequence for every token. Both pick the same tokens
    (:func:`core.sampling.pick`: greedy, or drawn with the sampling's seed). Stops after
    emitting ``stop``.
    """
    rng = generator(sampling)
    seq = list(ids)
    caches, feed = empty_caches(weights.config), list(ids)
    for _ in range(n_tokens):
        if use_cache:
            logits, _, caches = decode(weights, feed, caches)
            last, cache_len = logits[-1], len(caches[0])
            held = sum(c.nbytes for c in caches)
        else:
            last, cache_len, held = forward(weights, seq, all_logits=False).logits[-1], 0, 0
        token = pick(last, sampling, rng)
        yield GenStep(token, last, cache_len, held)
        if token == stop:
            return
        seq.append(token)
        feed = [token]


def first_token_share(attention: np.ndarray) -> np.ndarray:
    """How much weight each head puts on the first token, averaged over the queries that
    have a choice (all but the first, which can only see itself).

    Shapes: ``attention`` ``(L, h, n, n)`` with ``n >= 2`` -> ``(L, h)``.
    """
    return attention[:, :, 1:, 0].mean(axis=-1)  # (L, h)


def token_nll(logits: np.ndarray, targets: np.ndarray | list[int]) -> np.ndarray:
    """Negative log-likelihood (nats) of each target under the softmax of its logits row;
    the exponential of their mean is the perplexity.

    Shapes: ``logits`` ``(m, vocab)``, ``targets`` ``(m,)`` integers -> ``(m,)`` float64.
    """
    logp = log_softmax(np.asarray(logits, dtype=np.float64))  # (m, vocab)
    return -logp[np.arange(logp.shape[0]), np.asarray(targets)]
