"""Token inputs and the Q/K/V projections, reproducing lesson 002 exactly."""

import numpy as np


def lesson_inputs(n: int, d_model: int, seed: int = 42) -> np.ndarray:
    """Random token embeddings as in lesson 002: ``default_rng(seed).normal(0, 1, (n, d_model))``.

    Shapes: -> ``(n, d_model)``.
    """
    return np.random.default_rng(seed).normal(0.0, 1.0, (n, d_model))


def xavier_std(d_in: int, d_out: int) -> float:
    """Standard deviation of the Xavier/Glorot normal initialisation: √(2 / (d_in + d_out))."""
    return float(np.sqrt(2.0 / (d_in + d_out)))


def init_projections(
    d_model: int, d_k: int, d_v: int, seed: int = 42
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V drawn in that order from one ``default_rng(seed)`` (lesson 002).

    Shapes: -> ``(w_q (d_model, d_k), w_k (d_model, d_k), w_v (d_model, d_v))``.
    """
    rng = np.random.default_rng(seed)
    w_q = rng.normal(0.0, xavier_std(d_model, d_k), (d_model, d_k))
    w_k = rng.normal(0.0, xavier_std(d_model, d_k), (d_model, d_k))
    w_v = rng.normal(0.0, xavier_std(d_model, d_v), (d_model, d_v))
    return w_q, w_k, w_v


def project_qkv(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three separate projections.

    Shapes: ``x`` ``(..., n, d_model)`` -> ``(q (..., n, d_k), k (..., n, d_k), v (..., n, d_v))``.
    """
    return x @ w_q, x @ w_k, x @ w_v


def fuse_qkv(w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray) -> np.ndarray:
    """Stack the three weight matrices side by side into one.

    Shapes: ``(d_model, d_k)`` ×2 and ``(d_model, d_v)`` -> ``(d_model, 2*d_k + d_v)``.
    """
    return np.concatenate([w_q, w_k, w_v], axis=-1)


def fused_project(
    x: np.ndarray, w_qkv: np.ndarray, d_k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One matrix multiply, then split into Q, K, V (lesson 000's tip).

    Shapes: ``x`` ``(..., n, d_model)``, ``w_qkv`` ``(d_model, 2*d_k + d_v)``
    -> ``(q (..., n, d_k), k (..., n, d_k), v (..., n, d_v))``.
    """
    qkv = x @ w_qkv  # (..., n, 2*d_k + d_v)
    q, k, v = np.split(qkv, [d_k, 2 * d_k], axis=-1)
    return q, k, v
