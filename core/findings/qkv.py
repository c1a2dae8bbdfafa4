"""What the Q/K/V page (/qkv) points out: how far the fused projection lands from the three
separate ones (:func:`fused_differences`, :func:`fused_check` -> :class:`FusedCheck`). The
projections themselves are in :mod:`core.projections`.
"""

from dataclasses import dataclass

import numpy as np

from core.projections import fuse_qkv, fused_project, project_qkv


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
