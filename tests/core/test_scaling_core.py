"""Core helpers added for the scaling page: kept samples, shared histogram, score comparison."""

import numpy as np

from core import embed_tokens, init_projections, self_attention_trace, tokenize
from core.experiments import (
    compare_scaling,
    dot_variance_curve,
    entry_variance,
    summarize_rows,
    unit_variance_projections,
    variance_experiment,
    xavier_std,
)


def test_variance_experiment_matches_dot_variance_curve_exactly():
    d_ks = [1, 4, 32]
    exp = variance_experiment(d_ks, 500, seed=7)
    raw, scaled = dot_variance_curve(d_ks, 500, seed=7)
    assert exp.samples.shape == (3, 500)
    np.testing.assert_allclose(exp.raw_var, raw)
    np.testing.assert_allclose(exp.scaled_var, scaled)
    np.testing.assert_array_equal(exp.theory_raw, [1.0, 4.0, 32.0])
    np.testing.assert_array_equal(exp.theory_scaled, [1.0, 1.0, 1.0])


def test_variance_experiment_is_reproducible_and_seed_dependent():
    a = variance_experiment([8], 200, seed=1)
    np.testing.assert_array_equal(a.samples, variance_experiment([8], 200, seed=1).samples)
    assert not np.array_equal(a.samples, variance_experiment([8], 200, seed=2).samples)


def test_unit_variance_projections_rescale_the_lesson_weights():
    w_q, w_k, _ = init_projections(8, 4, 1, seed=42)
    u_q, u_k = unit_variance_projections(8, 4, seed=42)
    ratio = (1 / np.sqrt(8)) / xavier_std(8, 4)
    np.testing.assert_allclose(u_q, w_q * ratio)
    np.testing.assert_allclose(u_k, w_k * ratio)


def test_unit_variance_projections_give_q_entries_of_variance_near_one():
    x = np.random.default_rng(0).standard_normal((4000, 16))
    u_q, _ = unit_variance_projections(16, 32, seed=3)
    assert abs(entry_variance(x @ u_q) - 1.0) < 0.5  # one random W: loose but far from Xavier


def test_compare_scaling_reproduces_lesson_weights_and_the_factor_two():
    x = embed_tokens(tokenize("The cat sat on the mat"), 8, "lesson", 42, False)
    w_q, w_k, w_v = init_projections(8, 4, 4, 42)
    c = compare_scaling(x, w_q, w_k)
    trace = self_attention_trace(x, w_q, w_k, w_v)
    np.testing.assert_allclose(c.scaled_weights, trace.weights)
    np.testing.assert_allclose(c.raw, trace.scores)
    np.testing.assert_allclose(c.raw, 2.0 * c.scaled)  # √4 = 2
    np.testing.assert_allclose(c.raw_weights.sum(axis=-1), 1.0)


def test_summarize_rows_by_hand():
    scores = np.array([[0.0, 2.0], [2.0, 0.0]])
    weights = np.array([[0.5, 0.5], [1.0, 0.0]])
    s = summarize_rows(scores, weights)
    assert s.score_std == 1.0
    assert s.max_weight == 0.75
    np.testing.assert_allclose(s.entropy, np.log(2) / 2)
