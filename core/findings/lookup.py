"""What the lookup page (/lookup) points out about a soft lookup's weights.

One row's share of the weights and whether it holds practically all of them
(:func:`row_share` -> :class:`RowShare`); how close the soft lookup is to the hard one for
one query and temperature (:func:`soft_finding` -> :class:`SoftFinding`); and the two ends
of a temperature sweep, one-hot when cold and uniform when hot (:func:`sweep_ends` ->
:class:`SweepEnds`). The lookups themselves are in :mod:`core.lookup`.
"""

from dataclasses import dataclass

import numpy as np

from core.lookup import uniform_weight

# A weight row counts as one-hot once its top row holds more than ONE_HOT of the weight, and
# the soft lookup as sharp once the other rows share less than SHARP: the blend then sits on
# the hard lookup's answer.
ONE_HOT = 0.99
SHARP = 0.01


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
