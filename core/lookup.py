"""The database-lookup analogy: a hard (exact) lookup is the cold limit of a soft one."""

import numpy as np

from core.softmax import softmax


def polar_query(angle_deg: float, length: float) -> np.ndarray:
    """A 2-D query vector from an angle (degrees) and a length. Shapes: -> ``(2,)``."""
    a = np.deg2rad(angle_deg)
    return length * np.array([np.cos(a), np.sin(a)])


def hard_lookup(query: np.ndarray, keys: np.ndarray, values: np.ndarray) -> tuple[int, np.ndarray]:
    """Return the single best-matching row: ``argmax_j q·k_j`` and its value.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)``, ``values`` ``(m, d_v)`` -> ``(index,
    value (d_v,))``. Ties go to the first row.
    """
    index = int(np.argmax(keys @ query))
    return index, values[index]


def soft_lookup(
    query: np.ndarray, keys: np.ndarray, values: np.ndarray, temperature: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Blend every value by ``softmax(q·k / temperature)``.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)``, ``values`` ``(m, d_v)`` -> ``(weights
    (m,), blended value (d_v,))``. As ``temperature → 0`` the weights become one-hot on the
    :func:`hard_lookup` row; as it grows they approach uniform.
    """
    weights = softmax(keys @ query, temperature=temperature)  # (m,)
    return weights, weights @ values
