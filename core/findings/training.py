"""What the training page (/training) points out about a run and its unscaled twin.

The snapshot on screen (:func:`snapshot_at`, :func:`nearest_snapshot`) and how many of the
probe's rows it answers right (:func:`probe_correct`); how the attention sharpened from the
untrained model, against an even row (:func:`sharpening` -> :class:`Sharpening`,
:func:`uniform_entropy`); and what dividing by √d_k did to the gradient and the speed
(:func:`scaling_effect` -> :class:`ScalingEffect`, :func:`learns_slower`). Training itself is
in :mod:`core.training`.
"""

from dataclasses import dataclass

import numpy as np

from core.training import History, Snapshot, TrainConfig, steps_to


def snapshot_at(history: History, index: int) -> Snapshot:
    """Snapshot ``index``, or the last one when the run has fewer (it diverged, or is live)."""
    return history.snapshots[min(index, len(history.snapshots) - 1)]


def nearest_snapshot(history: History, step: int) -> int:
    """The index of the snapshot taken nearest to ``step`` (the first of two as near)."""
    taken = np.array([s.step for s in history.snapshots])  # (snapshots,)
    return int(np.argmin(np.abs(taken - step)))


def probe_correct(history: History, snapshot: Snapshot) -> int:
    """How many of the probe's target rows the model answers right at ``snapshot``."""
    return int((snapshot.probe_pred == history.probe.y[0]).sum())


def uniform_entropy(config: TrainConfig) -> float:
    """The entropy of an even attention row over the task's keys, in nats: ln(n_pairs) for
    recall (the query reads the pairs), ln(n) for max. A row that has learnt nothing yet is
    near it; a row that found its key is near 0."""
    return float(np.log(config.n_pairs if config.task == "recall" else config.n))


@dataclass(frozen=True)
class Sharpening:
    """How the attention sharpened from the untrained model to a snapshot."""

    first: Snapshot  # step 0
    now: Snapshot
    uniform: float  # the entropy of an even row (:func:`uniform_entropy`)


def sharpening(history: History, index: int) -> Sharpening:
    """The run's first snapshot and snapshot ``index`` (focus, entropy, score spread)."""
    return Sharpening(
        history.snapshots[0], snapshot_at(history, index), uniform_entropy(history.config)
    )


def learns_slower(unscaled: int | None, scaled: int | None) -> str:
    """How the unscaled run's steps to 95 % compare with the scaled one's: ``"slower"``,
    ``"not_slower"``, or ``"neither"`` (no run got there). Never reaching counts as slower."""
    if unscaled is None and scaled is None:
        return "neither"
    if unscaled is None or (scaled is not None and unscaled > scaled):
        return "slower"
    return "not_slower"


@dataclass(frozen=True)
class ScalingEffect:
    """What dividing by √d_k did, measured on a run and its unscaled twin."""

    grad_scaled: float  # median ‖∂loss/∂W_Q‖ at step 0, scaled
    grad_unscaled: float  # and unscaled
    grad_percent: float | None  # unscaled as a percentage of scaled (None: scaled is 0)
    steps_scaled: int | None  # steps to 95 % (:func:`steps_to`; None: never)
    steps_unscaled: int | None
    slower: str  # :func:`learns_slower`: "slower", "not_slower" or "neither"

    @property
    def less_gradient(self) -> bool:
        """Whether the unscaled twin starts with a smaller gradient (a saturated softmax)."""
        return self.grad_unscaled < self.grad_scaled


def scaling_effect(scaled: History, unscaled: History) -> ScalingEffect:
    """The gradient at step 0 and the steps to 95 % of a scaled run and its unscaled twin."""
    g_s, g_u = scaled.snapshots[0].grad_median, unscaled.snapshots[0].grad_median
    hit_s, hit_u = steps_to(scaled), steps_to(unscaled)
    return ScalingEffect(
        g_s, g_u, 100 * g_u / g_s if g_s > 0 else None, hit_s, hit_u, learns_slower(hit_u, hit_s)
    )
