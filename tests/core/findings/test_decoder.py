"""core/findings/decoder.py: what the /decoder page points out, on small hand-made arrays."""

import numpy as np
import pytest

import core.findings.decoder as found
from core.masks import causal_mask


def causal_weights(layers: int, heads: int, n: int, seed: int = 0) -> np.ndarray:
    """Random causal attention weights ``(L, h, n, n)``: rows sum to 1, zero after the query."""
    rng = np.random.default_rng(seed)
    w = rng.random((layers, heads, n, n)) * causal_mask(n)  # (L, h, n, n)
    return w / w.sum(axis=-1, keepdims=True)


def test_blank_after_hides_the_keys_after_each_rows_query():
    rows = np.ones((2, 4))
    out = found.blank_after(rows, [1, 3])
    assert np.isnan(out[0, 2:]).all() and (out[0, :2] == 1).all()
    assert (out[1] == 1).all()


@pytest.mark.parametrize(
    ("a", "b", "at"),
    [([1, 2, 3], [1, 5, 3], 1), ([1, 2], [1, 2, 3], 2), ([4, 5], [4, 5], 2), ([7], [8], 0)],
)
def test_first_difference(a, b, at):
    assert found.first_difference(a, b) == at


def test_head_row_picks_the_two_largest_keys_the_query_can_see():
    att = np.zeros((1, 1, 4, 4))
    att[0, 0, 2, :3] = [0.2, 0.5, 0.3]
    f = found.head_row(att, 0, 0, 2)
    assert f.top == (1, 2) and f.weights == (0.5, 0.3)
    assert not f.first_leads and f.later == 0.0


def test_head_row_notices_the_first_token_leading_and_weight_on_a_later_key():
    att = np.zeros((2, 1, 3, 3))
    att[0, 0, 1, :2] = [0.9, 0.1]
    att[1, 0, 0, 2] = 0.25  # not causal: a later key weighted
    f = found.head_row(att, 0, 0, 1)
    assert f.top == (0, 1) and f.first_leads and f.later == 0.25
    assert not found.head_row(att, 0, 0, 0).first_leads  # the first query has no choice


def test_head_row_on_causal_weights_has_nothing_later():
    att = causal_weights(2, 3, 5)
    f = found.head_row(att, 1, 2, 4)
    row = att[1, 2, 4]
    assert f.weights[0] == row.max() and f.top[0] == int(row.argmax()) and f.later == 0.0


def test_largest_change_is_over_every_layer_and_head_of_one_row():
    a, b = causal_weights(2, 2, 4, 0), causal_weights(2, 2, 4, 1)
    assert found.largest_change(a, b, 3) == np.abs(a - b)[:, :, 3].max()
    assert found.largest_change(a, a, 2) == 0.0


def test_sink_median_and_count_above_half():
    f = found.sink(np.array([[0.9, 0.6, 0.1], [0.5, 0.7, 0.2]]))
    assert f.median == pytest.approx(0.55) and f.count == 3 and f.total == 6 and f.held
    assert not found.sink(np.full((2, 3), 0.2)).held


def test_next_token_top_and_mass():
    f = found.next_token(np.array([0.5, 0.2, 0.1]))
    assert f.top == 0 and f.p == 0.5 and f.mass == pytest.approx(0.8)


def test_later_mean_skips_the_first_step_unless_it_is_alone():
    assert found.later_mean([100.0, 10.0, 20.0]) == 15.0
    assert found.later_mean([42.0]) == 42.0


def test_speed_compares_the_later_steps():
    s = found.speed([100.0, 10.0, 10.0], [100.0, 40.0, 60.0])
    assert (s.total_on, s.total_off, s.per_on, s.per_off, s.ratio) == (120, 200, 10, 50, 5)


def test_growth_expected_and_measured():
    g = found.growth(10, [100.0, 105.0, 120.0])
    assert (g.steps, g.first_len, g.last_len) == (3, 10, 12)
    assert g.expected == pytest.approx(1.2) and g.grew == pytest.approx(1.2) and g.seen
    assert not found.growth(10, [100.0, 105.0]).seen  # 1.05 < GREW
    assert found.growth(10, [100.0]) is None


def test_mean_row_averages_a_querys_row_over_every_layer_and_head():
    w = causal_weights(3, 2, 5)
    row = found.mean_row(w, 3)
    by_hand = sum(w[layer, head, 3] for layer in range(3) for head in range(2)) / 6
    np.testing.assert_allclose(row, by_hand, atol=1e-15)
    assert row.sum() == pytest.approx(1.0) and np.all(row[4:] == 0)  # causal: none after
    assert row.dtype == np.float64
    assert found.mean_row(w.astype(np.float32), 3).dtype == np.float64


def test_batched_costs_per_generation_and_the_throughput_against_one_at_a_time():
    f = found.batched([1, 4, 16], [40.0, 100.0, 160.0], weight_bytes=538_000_000)
    assert f.token_ms == (40.0, 25.0, 10.0)
    assert f.speedup == 16 * 40.0 / 160.0  # 16 tokens one step each, against one step
    assert f.weight_mb == 538.0 and f.shared_mb == 538.0 / 16
    assert f.cheaper
    assert not found.batched([1, 16], [40.0, 700.0], weight_bytes=1).cheaper  # a noisy run
