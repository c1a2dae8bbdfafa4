"""core.findings.scaling: what the √d_k page points out about its experiments."""

import numpy as np
import pytest

from core.experiments import (
    SaturationCurve,
    ScoreComparison,
    compare_scaling,
    even_row_norms,
    saturation_curves,
    variance_experiment,
)
from core.findings.scaling import (
    RowSummary,
    gradient_finding,
    peaked_rows,
    saturation_trend,
    score_finding,
    summarize_rows,
    variance_finding,
)


def test_summarize_rows_by_hand():
    scores = np.array([[0.0, 2.0], [2.0, 0.0]])
    weights = np.array([[0.5, 0.5], [1.0, 0.0]])
    s = summarize_rows(scores, weights)
    assert s.score_std == 1.0
    assert s.max_weight == 0.75
    np.testing.assert_allclose(s.entropy, np.log(2) / 2)


def test_peaked_rows_count_rows_above_the_threshold_only():
    weights = np.array([[0.95, 0.05], [0.9, 0.1], [0.5, 0.5], [0.02, 0.98]])
    assert peaked_rows(weights) == 2  # 0.9 itself is not "more than 90 %"
    assert peaked_rows(weights, 0.4) == 4


def _comparison(raw_weights: np.ndarray, scaled_weights: np.ndarray) -> ScoreComparison:
    n = len(raw_weights)
    q = np.array([[1.0, -1.0]] * n)
    zeros = np.zeros((n, n))
    return ScoreComparison(q, q, zeros, zeros, raw_weights, scaled_weights)


def test_score_finding_counts_peaked_rows_and_compares_the_mean_top_weights():
    raw_w = np.array([[0.97, 0.03], [0.6, 0.4]])
    scaled_w = np.array([[0.7, 0.3], [0.55, 0.45]])
    c = _comparison(raw_w, scaled_w)
    found = score_finding(c, RowSummary(2.0, 0.785, 0.3), RowSummary(1.0, 0.625, 0.6))
    assert (found.peaked_raw, found.peaked_scaled, found.rows) == (1, 0, 2)
    assert found.surer and found.q_variance == pytest.approx(1.0)
    mild = score_finding(c, RowSummary(2.0, 0.70, 0.3), RowSummary(1.0, 0.625, 0.6))
    assert not mild.surer


def test_score_finding_of_a_real_sentence_agrees_with_its_summaries():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 16))
    w_q, w_k = rng.normal(size=(16, 64)), rng.normal(size=(16, 64))
    c = compare_scaling(x, w_q, w_k)
    raw, scaled = summarize_rows(c.raw, c.raw_weights), summarize_rows(c.scaled, c.scaled_weights)
    found = score_finding(c, raw, scaled)
    assert found.peaked_raw >= found.peaked_scaled  # scaling never makes rows sharper
    assert found.surer == (raw.max_weight - scaled.max_weight >= 0.1)
    assert found.q_variance == pytest.approx(np.var(c.q))


def test_variance_finding_is_close_with_many_samples_and_names_the_widest_d_k():
    exp = variance_experiment([1, 4, 64], 20_000, seed=0)
    found = variance_finding(exp, 1)
    assert found.raw == exp.raw_var[1] and found.scaled == exp.scaled_var[1]
    assert found.close and found.close_scaled
    assert found.widest == exp.raw_var[-1] == pytest.approx(64, rel=0.1)


def test_variance_finding_is_rough_when_the_estimate_is_off_by_more_than_ten_percent():
    few = variance_experiment([64], 5, seed=3)
    found = variance_finding(few, 0)
    assert found.close == (abs(found.raw / 64 - 1) <= 0.1)
    assert found.close_scaled == (abs(found.scaled - 1) <= 0.1)
    assert not (found.close and found.close_scaled)  # five samples: not within 10 %


def _curve(jacobian_norm: list[float]) -> SaturationCurve:
    d = np.array([1.0, 64.0])
    return SaturationCurve(d, np.zeros(2), np.zeros(2), np.array(jacobian_norm))


def test_gradient_finding_is_weak_below_a_quarter_and_compares_with_an_even_row():
    even, _ = even_row_norms(8)  # √7 / 8 ≈ 0.331
    found = gradient_finding(_curve([0.3, 0.05]), _curve([0.3, 0.4]), 8)
    assert (found.raw, found.scaled, found.first) == (0.05, 0.4, 0.3)
    assert found.weak and found.even == even and found.above_even
    mild = gradient_finding(_curve([0.3, 0.2]), _curve([0.3, 0.3]), 8)
    assert not mild.weak and not mild.above_even


def curve_of(top: list[float]) -> SaturationCurve:
    """A saturation curve whose mean top weight is ``top`` (the rest does not matter here)."""
    d = np.arange(1, len(top) + 1)
    zeros = np.zeros(len(top))
    return SaturationCurve(d, np.array(top), zeros, zeros)


def test_saturation_trend_names_where_the_top_weight_goes_by_the_margin():
    assert saturation_trend(curve_of([0.3, 0.6, 0.95])) == "peakier"
    assert saturation_trend(curve_of([0.9, 0.5, 0.4])) == "flatter"
    assert saturation_trend(curve_of([0.30, 0.9, 0.35])) == "same"  # the ends decide
    assert saturation_trend(curve_of([0.30, 0.40]), margin=0.1) == "peakier"
    assert saturation_trend(curve_of([0.30, 0.39]), margin=0.1) == "same"


def test_saturation_trend_of_the_real_curves_unscaled_peaks_scaled_stays():
    raw, scaled = saturation_curves([1, 8, 64, 512], n_keys=8, n_trials=200, seed=0)
    assert saturation_trend(raw) == "peakier"
    assert saturation_trend(scaled) == "same"
