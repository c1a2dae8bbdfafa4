"""A BERT encoder's forward pass (all-MiniLM-L6-v2 and its kin), built from core's attention.

Post-LayerNorm BERT: embeddings (word + position + token type, then LayerNorm), then per
layer ``x = LN(x + Attention(x))`` and ``x = LN(x + FFN(x))`` with an exact (erf) GELU.
The attention inside every layer is :func:`core.attention.scaled_dot_product_attention`
on heads cut by :func:`core.multihead.split_heads` — the functions the concept pages show.

Weights use the row-vector layout of the rest of ``core``: a projection is ``x @ W + b``
with ``W`` of shape ``(d_in, d_out)`` (PyTorch stores ``(d_out, d_in)``; the loader in
``models/`` transposes once). The word-embedding table only has to give the rows of an id
array (:class:`EmbeddingTable`): a plain array, or a quantised table that decodes just
those rows (multilingual-e5-small's 250,037 × 384 table stays 4-bit in memory).
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.attention import RowMix, attention_scores, mix_row, scaled_dot_product_attention
from core.masks import as_mask
from core.multihead import merge_heads, split_heads
from core.softmax_numerics import softmax

# Abramowitz & Stegun 7.1.26: erf(x) ≈ 1 − (a₁t + … + a₅t⁵)·e^(−x²), t = 1/(1 + p·x), x ≥ 0,
# |error| ≤ 1.5e-7: at the level of float32 rounding, so the forward pass stays in float32.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT encoder (defaults: all-MiniLM-L6-v2).

    One vocabulary for both model families (:class:`core.llama.LlamaConfig` too):
    ``n_layers``, ``n_heads`` as in Meta's Llama reference code (nanoGPT's ``n_layer``,
    ``n_head``, in the plural), ``d_model`` and ``d_ff`` as in "Attention Is All You Need".
    Hugging Face's ``num_hidden_layers``/``num_attention_heads`` are read into these names.
    """

    n_layers: int = 6  # L
    n_heads: int = 12  # h
    d_model: int = 384
    d_ff: int = 1536
    max_positions: int = 512
    eps: float = 1e-12  # LayerNorm epsilon


class EmbeddingTable(Protocol):
    """What :func:`embed` reads of a word-embedding table: the rows of an id array.

    Shapes: ``table[ids]`` with ``ids`` ``(n,)`` -> ``(n, d_model)``; ``shape`` is
    ``(vocab, d_model)``. A NumPy array is one.
    """

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getitem__(self, ids: np.ndarray, /) -> np.ndarray: ...


@dataclass(frozen=True)
class BertLayer:
    """One encoder layer's parameters, ``x @ W + b`` layout."""

    w_q: np.ndarray  # (d_model, d_model)
    b_q: np.ndarray  # (d_model,)
    w_k: np.ndarray  # (d_model, d_model)
    b_k: np.ndarray  # (d_model,)
    w_v: np.ndarray  # (d_model, d_model)
    b_v: np.ndarray  # (d_model,)
    w_o: np.ndarray  # (d_model, d_model)
    b_o: np.ndarray  # (d_model,)
    ln1_g: np.ndarray  # (d_model,)  LayerNorm after attention
    ln1_b: np.ndarray  # (d_model,)
    w_1: np.ndarray  # (d_model, d_ff)
    b_1: np.ndarray  # (d_ff,)
    w_2: np.ndarray  # (d_ff, d_model)
    b_2: np.ndarray  # (d_model,)
    ln2_g: np.ndarray  # (d_model,)  LayerNorm after the feed-forward block
    ln2_b: np.ndarray  # (d_model,)


@dataclass(frozen=True)
class BertWeights:
    """Every parameter of the encoder, read-only arrays."""

    config: BertConfig
    word: np.ndarray | EmbeddingTable  # (vocab, d_model), read by rows
    position: np.ndarray  # (max_positions, d_model)
    token_type: np.ndarray  # (types, d_model)
    ln_g: np.ndarray  # (d_model,)  embedding LayerNorm
    ln_b: np.ndarray  # (d_model,)
    layers: tuple[BertLayer, ...]


@dataclass(frozen=True)
class BertOutput:
    """What one forward pass gives back."""

    hidden: np.ndarray  # (L+1, n, d_model): embeddings, then the output of every layer
    attention: np.ndarray  # (L, h, n, n): every head's weights, rows sum to 1


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, Abramowitz–Stegun 7.1.26: |error| ≤ 1.5e-7 in float64, plus
    float32 rounding (≤ 5e-7) for float32 input.

    Shapes: any -> same shape, in ``x``'s floating dtype (float64 for other input). The
    polynomial is evaluated in place: ~0.13 ms for a (16, 1536) float32 block, not ~1 ms.
    """
    x = np.asarray(x)
    x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    c = x.dtype.type
    t = np.abs(x) * c(_ERF_P)
    t += 1
    np.reciprocal(t, out=t)  # t = 1 / (1 + p|x|)
    poly = t * c(_ERF_A[4])
    for a in _ERF_A[3::-1]:  # Horner: (((a₅t + a₄)t + a₃)t + a₂)t + a₁, times t
        poly += c(a)
        poly *= t
    e = np.square(x)
    np.negative(e, out=e)
    np.exp(e, out=e)
    poly *= e  # (a₁t + … + a₅t⁵)·e^(−x²)
    np.subtract(1, poly, out=poly)
    return np.copysign(poly, x, out=poly)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU ``x · Φ(x) = ½ x (1 + erf(x/√2))`` in ``x``'s floating dtype.

    Shapes: any -> same shape.
    """
    x = np.asarray(x)
    out = erf(x * x.dtype.type(1 / np.sqrt(2)) if x.dtype.kind == "f" else x / np.sqrt(2))
    out += 1
    out *= x
    out *= 0.5
    return out


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """Normalise each token's features to mean 0, variance 1, then scale and shift.

    Shapes: ``x`` ``(..., d)``, ``g``/``b`` ``(d,)`` -> ``(..., d)``.
    """
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def embed(weights: BertWeights, ids: np.ndarray) -> np.ndarray:
    """Word + position + token-type (all type 0) embeddings, then LayerNorm.

    Shapes: ``ids`` ``(n,)`` integers, ``n ≤ max_positions`` -> ``(n, d_model)``.
    """
    n = len(ids)
    x = weights.word[ids] + weights.position[:n] + weights.token_type[0]  # (n, d_model)
    return layer_norm(x, weights.ln_g, weights.ln_b, weights.config.eps)


def head_projections(
    x: np.ndarray, layer: BertLayer, h: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One layer's queries, keys and values, cut into heads.

    Shapes: ``x`` ``(n, d_model)`` -> ``(q, k, v)``, each ``(h, n, d_model/h)``.
    """
    q = split_heads(x @ layer.w_q + layer.b_q, h)  # (h, n, d_k)
    k = split_heads(x @ layer.w_k + layer.b_k, h)  # (h, n, d_k)
    v = split_heads(x @ layer.w_v + layer.b_v, h)  # (h, n, d_v)
    return q, k, v


def attention_block(
    x: np.ndarray, layer: BertLayer, h: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention with biases, before the residual.

    Shapes: ``x`` ``(n, d_model)``, ``mask`` bool broadcastable to ``(h, n, n)``
    -> ``(output (n, d_model), weights (h, n, n))``.
    """
    # 1) project and split into heads
    q, k, v = head_projections(x, layer, h)
    # 2) score 3) softmax 4) mix — the concept pages' attention, every head at once
    heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (h, n, d_v), (h, n, n)
    # 5) merge the heads and project
    return merge_heads(heads) @ layer.w_o + layer.b_o, weights  # (n, d_model), (h, n, n)


def encoder_layer(
    x: np.ndarray, layer: BertLayer, config: BertConfig, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One post-LN layer: ``x = LN(x + Attn(x))``, then ``x = LN(x + FFN(x))``.

    Shapes: ``x`` ``(n, d_model)`` -> ``(x (n, d_model), weights (h, n, n))``.
    """
    attn, weights = attention_block(x, layer, config.n_heads, mask)
    x = layer_norm(x + attn, layer.ln1_g, layer.ln1_b, config.eps)
    ff = gelu(x @ layer.w_1 + layer.b_1) @ layer.w_2 + layer.b_2  # (n, d_model)
    return layer_norm(x + ff, layer.ln2_g, layer.ln2_b, config.eps), weights


def bert_forward(
    weights: BertWeights, ids: np.ndarray, mask: np.ndarray | None = None
) -> BertOutput:
    """The whole encoder on one sequence of token ids.

    Shapes: ``ids`` ``(n,)``, ``mask`` bool ``(n,)`` of keys that may be attended (None: all)
    -> :class:`BertOutput` with ``hidden`` ``(L+1, n, d_model)`` and ``attention``
    ``(L, h, n, n)``.
    """
    ids = np.asarray(ids)
    if not 1 <= len(ids) <= weights.config.max_positions:
        raise ValueError(f"need 1..{weights.config.max_positions} tokens, got {len(ids)}")
    key_mask = None if mask is None else as_mask(mask)[None, None, :]  # (1, 1, n)
    x = embed(weights, ids)
    hidden, attention = [x], []
    for layer in weights.layers:
        x, w = encoder_layer(x, layer, weights.config, key_mask)
        hidden.append(x)
        attention.append(w)
    return BertOutput(np.stack(hidden), np.stack(attention))


@dataclass(frozen=True)
class WeightExplained:
    """One attention weight taken apart: query ``i`` looking at key ``j`` in one head."""

    q: np.ndarray  # (d_k,)  query vector of token i
    k: np.ndarray  # (d_k,)  key vector of token j
    dot: float  # q · k
    scale: float  # √d_k
    scores: np.ndarray  # (n,)  q_i · k_j' / √d_k for every key j'
    weights: np.ndarray  # (n,)  softmax of the scores: the row of the heatmap
    mix: RowMix  # the row's weighted sum of value vectors


def explain_weight(
    hidden: np.ndarray, layer: BertLayer, h: int, head: int, i: int, j: int
) -> WeightExplained:
    """Recompute the weight of query ``i`` on key ``j`` in ``head`` from the layer's input.

    Shapes: ``hidden`` ``(n, d_model)`` (the layer's input: ``BertOutput.hidden[l]``)
    -> :class:`WeightExplained`; its ``weights`` equal ``attention[l, head, i]``.
    """
    q, k, v = head_projections(hidden, layer, h)  # (h, n, d_k) each
    scores = attention_scores(q[head, i : i + 1], k[head])[0]  # (n,)
    weights = softmax(scores)  # (n,)
    q_i, k_j = q[head, i], k[head, j]
    dot, scale = float(q_i @ k_j), float(np.sqrt(q.shape[-1]))
    return WeightExplained(q_i, k_j, dot, scale, scores, weights, mix_row(weights, v[head]))


def head_ranking(
    attention: np.ndarray, queries: int | np.ndarray, j: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every head ranked by the weight the query (or the mean weight the queries) put on
    key ``j`` (head search).

    Shapes: ``attention`` ``(L, h, n, n)``, ``queries`` an index or indices ``(k,)``
    -> ``(order (L*h, 2) of (layer, head), largest weight first, ties in layer-head order;
    weights (L*h,) in that order)``.
    """
    w = attention[:, :, np.atleast_1d(queries), j].mean(axis=-1)  # (L, h)
    flat = np.argsort(-w.ravel(), kind="stable")  # (L*h,)
    order = np.stack(np.unravel_index(flat, w.shape), axis=-1)  # (L*h, 2)
    return order, w.ravel()[flat]


def without_keys(weights: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Weights with some tokens removed as queries and keys, rows renormalised to sum 1
    (e.g. [CLS] and [SEP] hidden). A row left with no weight stays all zero (no NaN).

    Shapes: ``weights`` ``(..., n, n)``, ``keep`` bool ``(n,)`` -> ``(..., m, m)``, m = keep.sum().
    """
    sub = weights[..., keep, :][..., keep]  # (..., m, m)
    total = sub.sum(axis=-1, keepdims=True)  # (..., m, 1)
    return np.divide(sub, total, out=np.zeros_like(sub), where=total > 0)


def key_share(weights: np.ndarray, j: int, queries: np.ndarray | None = None) -> np.ndarray:
    """The mean weight the queries put on key ``j`` (e.g. how much a head parks on [CLS]).

    Shapes: ``weights`` ``(..., n, n)``, ``queries`` bool ``(n,)`` or None (all) -> ``(...)``.
    """
    col = weights[..., :, j]  # (..., n)
    return col.mean(axis=-1) if queries is None else col[..., queries].mean(axis=-1)
