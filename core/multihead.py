"""Multi-head attention: h attentions in parallel on slices of the projections."""

from dataclasses import dataclass

import numpy as np

from core.attention import scaled_dot_product_attention
from core.masks import as_mask
from core.projections import xavier_std


def split_heads(x: np.ndarray, h: int) -> np.ndarray:
    """Cut the last axis into ``h`` heads and move the head axis before the tokens.

    Shapes: ``(..., n, d)`` -> ``(..., h, n, d/h)``. Raises ``ValueError`` if ``h`` does not
    divide ``d``.
    """
    *lead, n, d = x.shape
    if h < 1 or d % h:
        raise ValueError(f"h={h} must be a positive divisor of the width {d}")
    x = x.reshape(*lead, n, h, d // h)  # (..., n, h, d/h)
    return np.swapaxes(x, -3, -2)  # (..., h, n, d/h)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_heads`: concatenate the heads along the feature axis.

    Shapes: ``(..., h, n, d_h)`` -> ``(..., n, h*d_h)``.
    """
    *lead, h, n, d_h = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., n, h, d_h)
    return x.reshape(*lead, n, h * d_h)  # (..., n, h*d_h)


def per_head(mask: np.ndarray | None) -> np.ndarray | None:
    """Give a mask for one head's scores a head axis, so every head uses it.

    Shapes: ``(..., n_q, n_k)`` -> ``(..., 1, n_q, n_k)``; None stays None.
    """
    return None if mask is None else np.expand_dims(as_mask(mask), -3)


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    h: int,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Batched multi-head self-attention (no Python loop over heads).

    Shapes: ``x`` ``(..., n, d_model)``, ``w_q``/``w_k`` ``(d_model, h*d_k)``, ``w_v``
    ``(d_model, h*d_v)``, ``w_o`` ``(h*d_v, d_out)``, ``mask`` bool broadcastable to
    ``(..., n, n)`` and shared by every head (as in the per-head loop)
    -> ``(output (..., n, d_out), weights (..., h, n, n))``.
    """
    # 1) project and split into heads
    q = split_heads(x @ w_q, h)  # (..., h, n, d_k)
    k = split_heads(x @ w_k, h)  # (..., h, n, d_k)
    v = split_heads(x @ w_v, h)  # (..., h, n, d_v)
    # 2) score 3) softmax 4) mix — every head at once
    heads, weights = scaled_dot_product_attention(q, k, v, mask=per_head(mask))  # (..., h, n, d_v)
    # 5) merge the heads and project
    return merge_heads(heads) @ w_o, weights  # (..., n, d_out), (..., h, n, n)


def multi_head_attention_loop(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    h: int,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference implementation: one plain attention per head, then concatenate.

    Same shapes and result as :func:`multi_head_attention`; kept simple on purpose so the
    batched version can be tested against it.
    """
    d_k, d_v = w_q.shape[-1] // h, w_v.shape[-1] // h
    outputs, weights = [], []
    for i in range(h):
        q = x @ w_q[:, i * d_k : (i + 1) * d_k]  # (..., n, d_k)
        k = x @ w_k[:, i * d_k : (i + 1) * d_k]  # (..., n, d_k)
        v = x @ w_v[:, i * d_v : (i + 1) * d_v]  # (..., n, d_v)
        out, w = scaled_dot_product_attention(q, k, v, mask=mask)
        outputs.append(out)
        weights.append(w)
    concat = np.concatenate(outputs, axis=-1)  # (..., n, h*d_v)
    return concat @ w_o, np.stack(weights, axis=-3)  # (..., n, d_out), (..., h, n, n)


def init_multihead(
    d_model: int, h: int, seed: int = 42
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V ``(d_model, d_model)`` and W_O ``(d_model, d_model)``, Xavier-normal.

    Each head gets ``d_k = d_v = d_model / h`` columns. Drawn in the order Q, K, V, O from
    one ``default_rng(seed)``.
    """
    if h < 1 or d_model % h:
        raise ValueError(f"h={h} must be a positive divisor of d_model={d_model}")
    rng = np.random.default_rng(seed)
    std = xavier_std(d_model, d_model)
    w_q, w_k, w_v, w_o = (rng.normal(0.0, std, (d_model, d_model)) for _ in range(4))
    return w_q, w_k, w_v, w_o


@dataclass(frozen=True)
class MultiHeadTrace:
    """Every intermediate of one batched multi-head pass, for pages that show the stages."""

    x: np.ndarray  # (n, d_model)
    q: np.ndarray  # (n, h*d_k)       x @ W_Q, before the split
    q_split: np.ndarray  # (n, h, d_k)  after the reshape
    q_heads: np.ndarray  # (h, n, d_k)  after the transpose
    k_heads: np.ndarray  # (h, n, d_k)
    v_heads: np.ndarray  # (h, n, d_v)
    weights: np.ndarray  # (h, n, n)
    heads: np.ndarray  # (h, n, d_v)    each head's output
    concat: np.ndarray  # (n, h*d_v)    heads side by side
    output: np.ndarray  # (n, d_out)    concat @ W_O


def multi_head_trace(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    h: int,
    mask: np.ndarray | None = None,
) -> MultiHeadTrace:
    """Run :func:`multi_head_attention` on ``x`` and keep every stage.

    Shapes as in :func:`multi_head_attention`; see :class:`MultiHeadTrace` for each field.
    ``q_split`` is the reshape half of :func:`split_heads`, before its transpose.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # 1) project: (..., n, h*d_k), (..., n, h*d_v)
    q_heads = split_heads(q, h)  # (..., h, n, d_k) — raises unless h divides the width
    q_split = q.reshape(*q.shape[:-1], h, q.shape[-1] // h)  # (..., n, h, d_k)
    k_heads, v_heads = split_heads(k, h), split_heads(v, h)  # (..., h, n, d_k), (..., h, n, d_v)
    # 2) score 3) softmax 4) mix — every head at once
    heads, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, per_head(mask))
    concat = merge_heads(heads)  # 5) merge: (..., n, h*d_v)
    return MultiHeadTrace(
        x, q, q_split, q_heads, k_heads, v_heads, weights, heads, concat, concat @ w_o
    )


def average_heads(weights: np.ndarray) -> np.ndarray:
    """The head-averaged attention weights (what ``torch.nn.MultiheadAttention`` returns by
    default, ``average_attn_weights=True``).

    Shapes: ``(..., h, n_q, n_k)`` -> ``(..., n_q, n_k)``; rows still sum to 1.
    """
    return weights.mean(axis=-3)


def max_abs_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Largest ``|a - b|`` over all entries (0.0 for empty arrays); shapes must broadcast."""
    diff = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    return float(diff.max()) if diff.size else 0.0


def torch_layout(
    w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Our ``x @ W`` weights in ``torch.nn.MultiheadAttention``'s ``x @ W.T`` layout.

    Shapes: ``w_q``/``w_k``/``w_v`` ``(d_model, d_model)``, ``w_o`` ``(d_model, d_model)``
    -> ``(in_proj_weight (3*d_model, d_model), out_proj.weight (d_model, d_model))``, i.e.
    ``in_proj_weight = [W_Q | W_K | W_V]ᵀ`` and ``out_proj.weight = W_Oᵀ``.
    """
    in_proj = np.concatenate([w_q, w_k, w_v], axis=1).T  # (3*d_model, d_model)
    return in_proj, w_o.T  # (3*d_model, d_model), (d_model, d_model)
