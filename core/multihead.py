"""Multi-head attention: h attentions in parallel on slices of the projections."""

import numpy as np

from core.attention import scaled_dot_product_attention
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
    ``(..., h, n, n)`` -> ``(output (..., n, d_out), weights (..., h, n, n))``.
    """
    # 1) project and split into heads
    q = split_heads(x @ w_q, h)  # (..., h, n, d_k)
    k = split_heads(x @ w_k, h)  # (..., h, n, d_k)
    v = split_heads(x @ w_v, h)  # (..., h, n, d_v)
    # 2) score 3) softmax 4) mix — every head at once
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask)  # (..., h, n, d_v)
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
