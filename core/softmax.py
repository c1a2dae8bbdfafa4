"""Softmax: turn a row of scores into a probability distribution.

Fully masked rows: a row whose entries are all ``-inf`` has no finite score to normalise.
Policy: such a row becomes **all zeros** (not NaN). In attention this means the query
attends to nothing and its output is the zero vector. Every other row sums to 1.
"""

import numpy as np


def _as_float(x: np.ndarray | list) -> np.ndarray:
    """Return ``x`` as a floating array, keeping float32 if it already is."""
    arr = np.asarray(x)
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def softmax(x: np.ndarray | list, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax of ``x / temperature`` along ``axis``.

    Shapes: ``x`` any shape ``(..., n)`` -> same shape, each slice along ``axis`` sums to 1.

    Subtracting the row maximum before ``exp`` keeps every exponent <= 0, so logits like
    ``[1000, 1001]`` cannot overflow. Entries equal to ``-inf`` get weight exactly 0; a row
    that is entirely ``-inf`` gives all zeros (see the module docstring).
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    z = _as_float(x) / temperature
    row_max = np.max(z, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # all -inf row: shift by 0
    e = np.exp(z - row_max)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def softmax_naive(x: np.ndarray | list, axis: int = -1) -> np.ndarray:
    """Textbook ``exp(x) / sum(exp(x))`` without the max shift — for demonstration only.

    Shapes: ``(..., n)`` -> ``(..., n)``. Large logits overflow to ``inf`` and the result
    contains NaN; the app shows this next to :func:`softmax` to explain the shift.
    """
    z = _as_float(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(z)
        return e / np.sum(e, axis=axis, keepdims=True)
