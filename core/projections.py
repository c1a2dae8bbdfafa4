"""Token inputs and the Q/K/V projections, reproducing lesson 002 exactly."""

from dataclasses import dataclass

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


def fused_differences(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray
) -> tuple[float, float, float]:
    """Largest absolute difference between the fused and the separate Q, K and V.

    Shapes: ``x`` ``(..., n, d_model)``, weights as in :func:`project_qkv` -> three floats
    (for Q, K, V); rounding aside they are 0.
    """
    separate = project_qkv(x, w_q, w_k, w_v)
    fused = fused_project(x, fuse_qkv(w_q, w_k, w_v), w_q.shape[-1])
    q, k, v = (
        float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(separate, fused, strict=True)
    )
    return q, k, v


@dataclass(frozen=True)
class FusedCheck:
    """How far the fused projection lands from the three separate ones (largest absolute
    differences): 0 when the two ways add the same products in the same order, else a few
    units in the last place."""

    q: float
    k: float
    v: float

    @property
    def largest(self) -> float:
        """The largest of the three differences."""
        return max(self.q, self.k, self.v)

    @property
    def exact(self) -> bool:
        """Whether the fused Q, K and V equal the separate ones to the last bit."""
        return self.largest == 0


def fused_check(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray) -> FusedCheck:
    """:func:`fused_differences` as a :class:`FusedCheck`.

    Shapes: ``x`` ``(..., n, d_model)``, weights as in :func:`project_qkv` -> :class:`FusedCheck`.
    """
    return FusedCheck(*fused_differences(x, w_q, w_k, w_v))
