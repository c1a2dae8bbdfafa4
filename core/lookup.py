"""The database-lookup analogy: a hard (exact) lookup is the cold limit of a soft one."""

from dataclasses import dataclass

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


# What the page's notes point out. A weight row counts as one-hot once its top row holds more
# than ONE_HOT of the weight, and the soft lookup as sharp once the other rows share less
# than SHARP: the blend then sits on the hard lookup's answer.
ONE_HOT = 0.99
SHARP = 0.01


def uniform_weight(m: int) -> float:
    """The weight each of ``m`` rows gets when the blend is uniform (the hot limit): ``1/m``."""
    return 1.0 / m


@dataclass(frozen=True)
class RowShare:
    """One row's share of a soft lookup's weights, and what all the other rows share."""

    index: int  # the row
    weight: float  # its weight
    rest: float  # the total weight of every other row (1 - weight, rounding aside)

    @property
    def one_hot(self) -> bool:
        """Whether the row holds practically all the weight (more than :data:`ONE_HOT`)."""
        return self.weight > ONE_HOT

    @property
    def sharp(self) -> bool:
        """Whether the other rows share less than :data:`SHARP`: the blend is this row."""
        return self.rest < SHARP


def row_share(weights: np.ndarray, index: int | None = None) -> RowShare:
    """Row ``index``'s weight and the rest; without ``index``, the row with the largest
    weight (ties: the first, as :func:`hard_lookup`).

    Shapes: ``weights`` ``(m,)`` -> :class:`RowShare`.
    """
    index = int(np.argmax(weights)) if index is None else int(index)
    return RowShare(index, float(weights[index]), float(np.sum(np.delete(weights, index))))


@dataclass(frozen=True)
class SoftFinding:
    """How close the soft lookup is to the hard one, for one query and temperature."""

    hard: RowShare  # the hard lookup's row in the soft weights
    stretch: float  # |q| / T: the factor every score is multiplied by before the softmax


def soft_finding(
    weights: np.ndarray, hard_index: int, length: float, temperature: float
) -> SoftFinding:
    """The hard lookup's row among the soft ``weights``, and how much a query of this
    ``length`` at this ``temperature`` sharpens them: a longer query acts like a colder
    temperature, since ``softmax((L·u)·k / T)`` depends only on ``L / T``.

    Shapes: ``weights`` ``(m,)`` -> :class:`SoftFinding`.
    """
    return SoftFinding(row_share(weights, hard_index), length / temperature)


@dataclass(frozen=True)
class SweepEnds:
    """The two ends of a :func:`temperature_sweep`: one-hot when cold, uniform when hot."""

    cold: RowShare  # the top row at the coldest temperature
    hot: RowShare  # the top row at the hottest temperature
    uniform: float  # 1/m, where the hot end tends to


def sweep_ends(weights: np.ndarray) -> SweepEnds:
    """The top rows of the coldest and the hottest weights of a sweep (the cold one is not
    :attr:`RowShare.one_hot` when the query is as near two keys: they tie).

    Shapes: ``weights`` ``(t, m)``, coldest first (:func:`temperature_sweep`) -> :class:`SweepEnds`.
    """
    return SweepEnds(
        row_share(weights[0]), row_share(weights[-1]), uniform_weight(weights.shape[-1])
    )
