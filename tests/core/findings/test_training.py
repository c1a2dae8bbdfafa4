"""core/findings/training.py: the snapshot on screen, the probe's right answers, how the
attention sharpened, and what dividing by √d_k did to a run and its unscaled twin."""

from dataclasses import replace

import numpy as np
import pytest

import core
from core.findings.training import (
    learns_slower,
    nearest_snapshot,
    probe_correct,
    scaling_effect,
    sharpening,
    snapshot_at,
    uniform_entropy,
)
from core.training import History, TrainConfig


def test_snapshots_are_found_by_index_and_by_step():
    h = core.train_attention(steps=12, snapshots=4)  # snapshots at steps 0, 3, 6, 9, 12
    assert [s.step for s in h.snapshots] == [0, 3, 6, 9, 12]
    assert snapshot_at(h, 2).step == 6 and snapshot_at(h, 99).step == 12  # past the end: last
    assert nearest_snapshot(h, 7) == 2 and nearest_snapshot(h, 12) == 4
    assert nearest_snapshot(h, 0) == 0 and nearest_snapshot(h, 100) == 4


def test_probe_correct_counts_the_rows_answered_right():
    h = core.train_attention(task="max", steps=3, snapshots=1)
    snap = h.snapshots[-1]
    right = replace(snap, probe_pred=h.probe.y[0].copy())
    assert probe_correct(h, right) == h.config.n
    wrong = replace(snap, probe_pred=np.where(np.arange(h.config.n) < 3, -1, h.probe.y[0]))
    assert probe_correct(h, wrong) == h.config.n - 3


def test_uniform_entropy_is_the_log_of_the_keys_a_row_reads():
    assert uniform_entropy(TrainConfig()) == pytest.approx(np.log(8))  # recall: the 8 pairs
    assert uniform_entropy(TrainConfig(task="max", n_pairs=6)) == pytest.approx(np.log(6))


def test_sharpening_pairs_the_first_snapshot_with_the_one_on_screen():
    h = core.train_attention(steps=12, snapshots=4)
    found = sharpening(h, 99)
    assert found.first is h.snapshots[0] and found.now is h.snapshots[-1]
    assert found.uniform == uniform_entropy(h.config)


@pytest.mark.parametrize(
    ("unscaled", "scaled", "verdict"),
    [
        (None, 49, "slower"),
        (80, 49, "slower"),
        (40, 49, "not_slower"),
        (49, 49, "not_slower"),
        (49, None, "not_slower"),
        (None, None, "neither"),
    ],
)
def test_the_unscaled_run_is_slower_only_when_it_takes_more_steps_or_never_gets_there(
    unscaled, scaled, verdict
):
    assert learns_slower(unscaled, scaled) == verdict


def test_scaling_effect_compares_the_twins_gradient_and_speed():
    h = core.train_attention(steps=12, snapshots=2)
    first = h.snapshots[0]

    def measured(grad: float, accuracy: float) -> History:
        snaps = (replace(first, grad_median=grad), *h.snapshots[1:])
        return replace(h, snapshots=snaps, accuracy=np.full(12, accuracy))

    effect = scaling_effect(measured(2.0, 1.0), measured(0.5, 0.0))
    assert effect.grad_scaled == 2.0 and effect.grad_unscaled == 0.5
    assert effect.less_gradient and effect.grad_percent == 25.0
    assert (effect.steps_scaled, effect.steps_unscaled, effect.slower) == (0, None, "slower")
    flat = scaling_effect(measured(0.0, 0.0), measured(0.0, 0.0))
    assert flat.grad_percent is None and not flat.less_gradient and flat.slower == "neither"
