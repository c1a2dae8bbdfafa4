"""The database-lookup analogy: a hard (exact) lookup is the cold limit of a soft one."""

import numpy as np

from core.softmax_numerics import softmax


def polar_query(angle_deg: float, length: float) -> np.ndarray:
    """A 2-D query vector from an angle (degrees) and a length. Shapes: -> ``(2,)``."""
    a = np.deg2rad(angle_deg)
    return length * np.array([np.cos(a), np.sin(a)])


def lookup_scores(query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """How well each key matches the query: the dot products ``k_j · q``.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)`` -> ``(m,)``.
    """
    return keys @ query


def hard_lookup(query: np.ndarray, keys: np.ndarray, values: np.ndarray) -> tuple[int, np.ndarray]:
    """Return the single best-matching row: ``argmax_j q·k_j`` and its value.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)``, ``values`` ``(m, d_v)`` -> ``(index,
    value (d_v,))``. Ties go to the first row.
    """
    index = int(np.argmax(lookup_scores(query, keys)))
    return index, values[index]


def soft_lookup(
    query: np.ndarray, keys: np.ndarray, values: np.ndarray, temperature: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Blend every value by ``softmax(q·k / temperature)``.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)``, ``values`` ``(m, d_v)`` -> ``(weights
    (m,), blended value (d_v,))``. As ``temperature → 0`` the weights become one-hot on the
    :func:`hard_lookup` row; as it grows they approach uniform.
    """
    weights = softmax(lookup_scores(query, keys), temperature=temperature)  # (m,)
    return weights, weights @ values


# The lookup table of the analogy: a country's key is a made-up 2-D direction (countries that
# are neighbours on the map got neighbouring directions); its value is its capital's
# (latitude, longitude) in degrees, so a blended value is a real point on the map. Names live
# in the UI catalogs. Columns: id, key angle (degrees), latitude, longitude.
CAPITALS: tuple[tuple[str, float, float, float], ...] = (
    ("france", 0.0, 48.86, 2.35),
    ("russia", 35.0, 55.76, 37.62),
    ("egypt", 80.0, 30.04, 31.24),
    ("india", 130.0, 28.61, 77.21),
    ("china", 170.0, 39.90, 116.40),
    ("australia", 215.0, -35.28, 149.13),
    ("brazil", 270.0, -15.79, -47.88),
    ("usa", 320.0, 38.91, -77.04),
)


def capital_table() -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The :data:`CAPITALS` table as arrays.

    Shapes: -> ``(ids (m,), keys (m, 2) unit vectors, values (m, 2) latitude/longitude)``.
    """
    ids = tuple(row[0] for row in CAPITALS)
    keys = np.stack([polar_query(row[1], 1.0) for row in CAPITALS])  # (m, 2)
    values = np.array([row[2:] for row in CAPITALS], dtype=float)  # (m, 2)
    return ids, keys, values


def temperature_sweep(
    query: np.ndarray, keys: np.ndarray, lo_exp: float = -2.0, hi_exp: float = 2.0, count: int = 81
) -> tuple[np.ndarray, np.ndarray]:
    """Soft-lookup weights for ``count`` temperatures from ``10**lo_exp`` to ``10**hi_exp``.

    Shapes: ``query`` ``(d,)``, ``keys`` ``(m, d)`` -> ``(temperatures (t,), weights (t, m))``
    with ``t = count``, temperatures evenly spaced on a log scale.
    """
    temperatures = np.logspace(lo_exp, hi_exp, count)  # (t,)
    scores = lookup_scores(query, keys)  # (m,)
    weights = softmax(scores[None, :] / temperatures[:, None])  # (t, m)
    return temperatures, weights


def uniform_weight(m: int) -> float:
    """The weight each of ``m`` rows gets when the blend is uniform (the hot limit): ``1/m``."""
    return 1.0 / m
