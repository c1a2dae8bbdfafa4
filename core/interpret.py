"""Looking inside a trained model: one token's journey through the decoder, whether a head
matters, and where an encoder's attention flows.

* :func:`trace` runs :func:`core.llama.forward` (causal, the same building blocks in the same
  order) and keeps what each block adds to the residual stream: its attention's output after
  W_O and its SwiGLU's output. :func:`norms` gives their sizes at one position.
* :func:`logit_lens` reads the residual stream after every layer as if it were the last: the
  final RMSNorm and the tied unembedding applied early ("the logit lens", nostalgebraist
  2020). :func:`lens_top` lists each layer's most likely next tokens.
* Ablation: :func:`ablated_logits` replaces some heads' outputs before W_O — by zero, or by
  their mean over this prompt's positions — and runs the rest of the model on;
  :func:`head_effects` does it for every head of one layer at once and reports what happens
  to one token's probability and logit. Attention weights alone do not say whether a head
  matters: :func:`attention_paid` is the weight, shown beside the effect.
* Attention rollout (Abnar & Zuidema 2020) for encoders: :func:`rollout` multiplies the
  head-averaged attention, with the residual connection as an identity, through the layers;
  :func:`uniform_baseline` is the uniform attention that explanations are compared with
  (the "attention is (not) explanation" debate: Jain & Wallace 2019, Wiegreffe & Pinter 2019).
"""

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.kv_cache import grouped_query_attention
from core.llama import (
    LlamaWeights,
    finish_block,
    output_logits,
    rms_norm,
    rotated_qkv,
    swiglu,
)
from core.masks import causal_mask
from core.multihead import merge_heads
from core.softmax_numerics import softmax

Mode = Literal["zero", "mean"]
MODES = ("zero", "mean")


@dataclass(frozen=True)
class Trace:
    """One causal forward pass of the decoder, with what every block adds."""

    resid: np.ndarray  # (L + 1, n, d_model) residual stream: embeddings, after each block
    attn_out: np.ndarray  # (L, n, d_model) each layer's attention after W_O
    mlp_out: np.ndarray  # (L, n, d_model) each layer's SwiGLU
    attention: np.ndarray  # (L, h, n, n) causal attention weights
    logits: np.ndarray  # (vocab,) the last position's scores for the next token


def trace(weights: LlamaWeights, ids: np.ndarray | list[int]) -> Trace:
    """The forward pass of :func:`core.llama.forward` under the causal mask, keeping each
    block's two additions apart: ``resid[l + 1] = resid[l] + attn_out[l] + mlp_out[l]``,
    with exactly the operations (and so the rounding) of :func:`core.llama.finish_block`.

    Shapes: ``ids`` ``(n,)`` integers -> :class:`Trace` with ``resid`` ``(L + 1, n,
    d_model)``, ``attn_out`` and ``mlp_out`` ``(L, n, d_model)``, ``attention``
    ``(L, h, n, n)``, ``logits`` ``(vocab,)``.
    """
    config = weights.config
    x = weights.embed[np.asarray(ids)]  # (n, d_model)
    n = x.shape[0]
    positions, mask = np.arange(n), causal_mask(n)
    resid, attn_out, mlp_out, attention = [x], [], [], []
    for layer in weights.layers:
        q, k, v = rotated_qkv(x, layer, config, positions)  # (h|h_kv, n, d_head)
        mixed, w = grouped_query_attention(q, k, v, mask)  # (h, n, d_head), (h, n, n)
        attn = merge_heads(mixed) @ layer.w_o  # (n, d_model)
        x = x + attn
        mlp = swiglu(rms_norm(x, layer.ffn_norm, config.eps), layer)  # (n, d_model)
        x = x + mlp
        resid.append(x)
        attn_out.append(attn)
        mlp_out.append(mlp)
        attention.append(w)
    logits = output_logits(x[-1:], weights)[0]  # (vocab,)
    return Trace(
        np.stack(resid), np.stack(attn_out), np.stack(mlp_out), np.stack(attention), logits
    )


def norms(t: Trace, pos: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The L2 norm, at position ``pos`` (default the last), of the residual stream after each
    layer and of what each layer's attention and SwiGLU add to it.

    Shapes: a :class:`Trace` of ``L`` layers -> ``(resid_norm (L + 1,), attn_norm (L,),
    mlp_norm (L,))``.
    """
    return (
        np.linalg.norm(t.resid[:, pos], axis=-1),
        np.linalg.norm(t.attn_out[:, pos], axis=-1),
        np.linalg.norm(t.mlp_out[:, pos], axis=-1),
    )


def logit_lens(weights: LlamaWeights, resid_at_pos: np.ndarray) -> np.ndarray:
    """The logit lens: the final RMSNorm and the tied unembedding
    (:func:`core.llama.output_logits`) applied to the residual stream after every layer, as
    if the model stopped there; the last row is the model's own prediction.

    The last row is a one-row product of its own, as :func:`core.llama.forward` computes the
    last token's logits (``all_logits=False``): at the last position it equals them (and
    :class:`Trace`'s) bit for bit. BLAS sums a one-row product in another order than a
    many-row one (on SmolLM2 the two differ by up to 1.8e-5 on logits up to 16).

    Shapes: ``resid_at_pos`` ``(L + 1, d_model)`` (a :class:`Trace`'s ``resid[:, pos]``)
    -> ``(L + 1, vocab)``.
    """
    early = output_logits(resid_at_pos[:-1], weights)  # (L, vocab)
    return np.concatenate([early, output_logits(resid_at_pos[-1:], weights)])


def lens_top(lens_logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` most likely tokens under its softmax, most likely first; equal
    probabilities keep the lower token id first. Only the tokens at or above each row's
    ``k``-th largest probability are sorted (SmolLM2's 31 rows: 10 ms, not 130 ms for
    sorting every row whole).

    Shapes: ``lens_logits`` ``(L + 1, vocab)``, ``1 <= k <= vocab`` -> ``(ids (L + 1, k),
    probs (L + 1, k))``.
    """
    probs = softmax(lens_logits, axis=-1)  # (L + 1, vocab)
    kth = -np.partition(-probs, k - 1, axis=-1)[:, k - 1]  # (L + 1,) each row's k-th largest
    rows = []
    for row, least in zip(probs, kth, strict=True):
        top = np.flatnonzero(row >= least)  # ascending ids, with every tie of the k-th
        rows.append(top[np.argsort(-row[top], kind="stable")[:k]])  # (k,)
    ids = np.stack(rows)  # (L + 1, k)
    return ids, np.take_along_axis(probs, ids, axis=-1)


def _replace(out: np.ndarray, mode: Mode) -> None:
    """Ablate one head's output in place: set it to zero, or to its mean over the positions.

    Shapes: ``out`` ``(n, d_head)`` (a view into the layer's head outputs) -> None.
    """
    out[...] = 0.0 if mode == "zero" else out.mean(axis=0)


def _run_layers(
    weights: LlamaWeights,
    x: np.ndarray,
    n: int,
    layers: range,
    ablate: Collection[tuple[int, int, int]],
    mode: Mode,
) -> np.ndarray:
    """Run ``layers`` on ``c`` copies of an ``n``-token prompt packed end to end, as
    :func:`core.batching.read` packs prompts: each copy's positions start at 0 and it
    attends only to itself, causally, while every projection reads its weights once for all
    copies. For each ``(layer, copy, head)`` in ``ablate``, that head's output in that copy
    is replaced before W_O (:func:`_replace`). One copy and nothing to ablate: the very
    operations of :func:`core.llama.forward`, in the same order.

    Shapes: ``x`` ``(c · n, d_model)`` -> ``(c · n, d_model)``.
    """
    config = weights.config
    copies = x.shape[0] // n
    positions = np.tile(np.arange(n), copies)  # (c · n,)
    mask = causal_mask(n)
    for li in layers:
        layer = weights.layers[li]
        q, k, v = rotated_qkv(x, layer, config, positions)  # (h|h_kv, c · n, d_head)
        mixed = np.empty_like(q)  # (h, c · n, d_head)
        for s in range(0, copies * n, n):
            part = slice(s, s + n)
            mixed[:, part], _ = grouped_query_attention(q[:, part], k[:, part], v[:, part], mask)
        for at, copy, head in ablate:
            if at == li:
                _replace(mixed[head, copy * n : (copy + 1) * n], mode)
        x = finish_block(x, mixed, layer, config)  # (c · n, d_model)
    return x


def _check(weights: LlamaWeights, heads: Collection[tuple[int, int]], mode: str) -> None:
    """Refuse an unknown mode or a ``(layer, head)`` the model does not have.

    Shapes: ``heads`` pairs of ints -> None, or ``ValueError``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    config = weights.config
    for layer, head in heads:
        if not (0 <= layer < config.n_layers and 0 <= head < config.n_heads):
            raise ValueError(
                f"no head ({layer}, {head}): layers 0..{config.n_layers - 1}, "
                f"heads 0..{config.n_heads - 1}"
            )


def ablated_logits(
    weights: LlamaWeights,
    ids: np.ndarray | list[int],
    heads: Collection[tuple[int, int]],
    mode: Mode,
) -> np.ndarray:
    """The last position's logits with the output of every listed ``(layer, head)`` replaced
    before W_O, at every position: ``"zero"`` sets that head's slice of the merged heads
    (``merge_heads(mixed)``) to 0; ``"mean"`` sets it to its mean over *this prompt's*
    positions — not over a dataset, the standard cheap variant. The choice matters: zero
    moves the residual stream to where the model never was, the harsher of the two.
    Ablating nothing gives :func:`core.llama.forward`'s logits bit for bit.

    Shapes: ``ids`` ``(n,)`` integers -> ``(vocab,)``. Raises ``ValueError`` for an unknown
    mode or head.
    """
    _check(weights, heads, mode)
    x = weights.embed[np.asarray(ids)]  # (n, d_model)
    ablate = [(layer, 0, head) for layer, head in heads]
    x = _run_layers(weights, x, x.shape[0], range(weights.config.n_layers), ablate, mode)
    return output_logits(x[-1:], weights)[0]  # (vocab,)


@dataclass(frozen=True)
class HeadEffects:
    """What ablating each head of one layer, one at a time, does to one token."""

    prob: np.ndarray  # (h,) the target's probability with head i ablated
    diff: np.ndarray  # (h,) logit[target] - logit[other] (or logit[target]), head i ablated
    base_prob: float  # the same without ablation
    base_diff: float


def _score(logits: np.ndarray, target: int, other: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The target's probability and its logit minus the other token's (no other: its logit).

    Shapes: ``logits`` ``(..., vocab)`` -> ``(prob (...), diff (...))``.
    """
    prob = softmax(logits, axis=-1)[..., target]
    diff = logits[..., target] if other is None else logits[..., target] - logits[..., other]
    return prob, diff


def head_effects(
    weights: LlamaWeights,
    ids: np.ndarray | list[int],
    layer: int,
    target: int,
    other: int | None,
    mode: Mode,
) -> HeadEffects:
    """For every head of ``layer``, ablated alone (as in :func:`ablated_logits`): the
    ``target`` token's probability at the last position and its logit difference to
    ``other``, beside the unablated baseline.

    The layers before ``layer`` run once. From ``layer`` on, the ``h`` variants (variant
    ``i`` ablates head ``i``) run together, packed end to end, so each layer's weights are
    read once for all of them; only their last positions get logits. The baseline continues
    the single unablated copy, so it is :func:`core.llama.forward`'s bit for bit.

    Shapes: ``ids`` ``(n,)`` integers -> :class:`HeadEffects` with ``prob`` and ``diff``
    ``(h,)``. Raises ``ValueError`` for an unknown mode or layer.
    """
    config = weights.config
    _check(weights, [(layer, 0)], mode)
    x = weights.embed[np.asarray(ids)]  # (n, d_model)
    n, h = x.shape[0], config.n_heads
    x = _run_layers(weights, x, n, range(layer), (), mode)  # (n, d_model) into `layer`
    rest = range(layer, config.n_layers)
    base = _run_layers(weights, x, n, rest, (), mode)  # (n, d_model)
    packed = np.tile(x, (h, 1))  # (h · n, d_model): variant i is rows i·n .. (i+1)·n - 1
    packed = _run_layers(weights, packed, n, rest, [(layer, i, i) for i in range(h)], mode)
    prob, diff = _score(output_logits(packed[n - 1 :: n], weights), target, other)  # (h,)
    base_prob, base_diff = _score(output_logits(base[-1:], weights)[0], target, other)
    return HeadEffects(prob, diff, float(base_prob), float(base_diff))


def attention_paid(attention: np.ndarray, query: int, key: int) -> np.ndarray:
    """The weight every head puts from position ``query`` on position ``key``.

    Shapes: ``attention`` ``(L, h, n, n)`` -> ``(L, h)``.
    """
    return attention[:, :, query, key]


def rollout(attention: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): how much of each position's representation
    after each layer traces back to each input token, through attention and the residual
    connection.

    Per layer ``A_l = (1 - residual) · mean over heads + residual · I``, rows renormalised to
    sum to 1 (a row the mask emptied keeps only its identity part). The rollout after layer
    ``l`` is ``A_l @ A_(l-1) @ … @ A_0``: row ``i`` is the query position after layer ``l``,
    column ``j`` the input token. Every row sums to 1.

    Shapes: ``attention`` ``(L, h, n, n)`` (query rows, key columns), ``residual`` in
    ``[0, 1]`` (0: attention alone, which needs every row to have some weight) ->
    ``(L, n, n)``.
    """
    n = attention.shape[-1]
    a = (1.0 - residual) * attention.mean(axis=1) + residual * np.eye(n)  # (L, n, n)
    a = a / a.sum(axis=-1, keepdims=True)
    out = [a[0]]
    for layer in a[1:]:
        out.append(layer @ out[-1])  # (n, n)
    return np.stack(out)


def uniform_baseline(n: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Uniform attention: each query's weight spread evenly over the keys it may see (all
    ``n`` without a mask); a query that may see none gets zeros, as a fully masked row of
    :func:`core.softmax` does.

    Shapes: ``mask`` bool ``(n, n)`` (True = may attend) or None -> ``(n, n)``, rows summing
    to 1 (0 where the mask hides every key).
    """
    seen = np.ones((n, n)) if mask is None else np.asarray(mask, dtype=float)  # (n, n)
    counts = seen.sum(axis=-1, keepdims=True)  # (n, 1)
    return np.divide(seen, counts, out=np.zeros_like(seen), where=counts > 0)
