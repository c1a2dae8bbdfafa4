"""The "why ÷√d_k" experiments: variance, saturation, entropy, gradient size."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import embed_tokens, init_projections, self_attention_trace, tokenize
from core.experiments import (
    compare_scaling,
    dot_product_samples,
    dot_variance_curve,
    entropy,
    even_row_norms,
    gradient_curve,
    prefix_scores,
    saturation_curve,
    saturation_curves,
    scaled_histograms,
    softmax_jacobian,
    softmax_jacobian_norm,
    unit_variance_projections,
    variance_experiment,
    xavier_std,
)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_dot_product_variance_is_d_k_and_one_after_scaling(seed):
    d_ks = [1, 8, 64]
    raw, scaled = dot_variance_curve(d_ks, 20_000, seed=seed)
    # relative std of the sample variance is √((2 + 6/d_k)/N) <= 2 % here; allow 10 %
    np.testing.assert_allclose(raw, d_ks, rtol=0.10)
    np.testing.assert_allclose(scaled, 1.0, rtol=0.10)


def test_dot_product_samples_shape_and_reproducibility():
    s = dot_product_samples(4, 100, seed=3)
    assert s.shape == (100,)
    np.testing.assert_array_equal(s, dot_product_samples(4, 100, seed=3))


def test_unscaled_rows_saturate_as_d_k_grows_and_scaled_rows_do_not():
    d_ks = [1, 16, 256, 1024]
    unscaled = saturation_curve(d_ks, scale=False)
    scaled = saturation_curve(d_ks, scale=True)
    assert np.all(np.diff(unscaled.max_weight) > 0)
    assert unscaled.max_weight[-1] > 0.9
    assert unscaled.max_weight[-1] > scaled.max_weight[-1] + 0.4
    assert np.ptp(scaled.max_weight) < 0.1  # scaled stays put
    assert unscaled.entropy[-1] < scaled.entropy[-1]


def test_jacobian_norm_of_a_one_hot_is_zero():
    assert softmax_jacobian_norm(np.array([0.0, 1.0, 0.0, 0.0])) == 0.0


def test_jacobian_of_two_way_uniform_by_hand():
    # diag(p) - p pᵀ with p = [½, ½] = [[¼, -¼], [-¼, ¼]]; Frobenius norm = √(4/16) = ½
    p = np.array([0.5, 0.5])
    np.testing.assert_array_equal(softmax_jacobian(p), [[0.25, -0.25], [-0.25, 0.25]])
    assert softmax_jacobian_norm(p) == pytest.approx(0.5)


@pytest.mark.parametrize("n", [1, 2, 5, 32])
def test_entropy_of_uniform_over_n_is_log_n(n):
    assert entropy(np.full(n, 1.0 / n)) == pytest.approx(np.log(n), abs=1e-12)


def test_entropy_of_one_hot_is_zero_without_nan():
    h = entropy(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(h, [0.0, 0.0])


def test_unscaled_gradient_falls_below_scaled_at_large_d_k():
    unscaled, scaled = gradient_curve([4, 512])
    assert unscaled[1] < scaled[1]
    assert unscaled[1] < unscaled[0]  # the gradient shrinks as scores grow


def test_jacobian_norm_of_a_uniform_row_is_root_n_minus_one_over_n():
    for n in (2, 8, 64):
        assert softmax_jacobian_norm(np.full(n, 1 / n)) == pytest.approx(np.sqrt(n - 1) / n)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12).filter(lambda v: sum(v) > 0))
def test_jacobian_norm_is_largest_for_an_even_split_over_two_keys(values):
    p = np.array(values) / sum(values)
    assert softmax_jacobian_norm(p) <= 0.5 + 1e-12  # 0.5 exactly at [0.5, 0.5, 0, ...]


def test_scaled_histograms_give_each_series_its_own_bins():
    raw = np.array([-4.0, -2.0, 0.0, 2.0, 4.0])
    raw_edges, raw_counts, scaled_edges, scaled_counts = scaled_histograms(raw, d_k=4, bins=4)
    np.testing.assert_allclose(raw_edges, [-4.0, -2.0, 0.0, 2.0, 4.0])
    np.testing.assert_allclose(scaled_edges, [-2.0, -1.0, 0.0, 1.0, 2.0])  # √4 = 2 narrower
    assert raw_counts.sum() == scaled_counts.sum() == 5
    np.testing.assert_array_equal(scaled_counts, raw_counts)  # same shape, own bins


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
    assert abs(np.var(x @ u_q) - 1.0) < 0.5  # one random W: loose but far from Xavier


def test_compare_scaling_reproduces_lesson_weights_and_the_factor_two():
    x = embed_tokens(tokenize("The cat sat on the mat"), 8, "lesson", 42, False)
    w_q, w_k, w_v = init_projections(8, 4, 4, 42)
    c = compare_scaling(x, w_q, w_k)
    trace = self_attention_trace(x, w_q, w_k, w_v)
    np.testing.assert_allclose(c.scaled_weights, trace.weights)
    np.testing.assert_allclose(c.raw, trace.scores)
    np.testing.assert_allclose(c.raw, 2.0 * c.scaled)  # √4 = 2
    np.testing.assert_allclose(c.raw_weights.sum(axis=-1), 1.0)


def test_prefix_scores_are_query_norms_times_normals_added_up_by_hand():
    # the same generator calls, by hand: per row and block of entries the query's norm
    # (χ² with the block's width), then one normal per block, row and key
    rng = np.random.default_rng(5)
    norms = np.sqrt(rng.chisquare([1, 2], size=(3, 2)))  # (rows, blocks)
    z = rng.standard_normal((2, 3, 2))  # (blocks, rows, keys)
    scores = prefix_scores([1, 3], 3, 2, seed=5)
    assert scores.shape == (2, 3, 2)
    np.testing.assert_allclose(scores[0], norms[:, :1] * z[0])
    np.testing.assert_allclose(scores[1], norms[:, :1] * z[0] + norms[:, 1:] * z[1])


def test_prefix_scores_are_distributed_as_literal_dot_products():
    # literal vectors: 2 keys per row share the query, d_k = 3 extends d_k = 1
    d_ks, rows = [1, 3, 16], 20_000
    rng = np.random.default_rng(11)
    q = rng.standard_normal((rows, 16))
    k = rng.standard_normal((rows, 2, 16))
    literal = np.stack([np.einsum("rd,rkd->rk", q[:, :d], k[..., :d]) for d in d_ks])
    fast = prefix_scores(d_ks, rows, 2, seed=12)
    levels = [0.1, 0.25, 0.5, 0.75, 0.9]
    for i, d in enumerate(d_ks):  # the same distribution: a product of normals at d_k = 1
        np.testing.assert_allclose(
            np.quantile(fast[i], levels), np.quantile(literal[i], levels), atol=0.05 * d**0.5
        )
    assert np.quantile(np.abs(fast[0]), 0.5) < 0.5  # a normal's median |z| would be 0.674

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])

    # a wider score extends the narrower one: corr = √(1/3) between d_k = 1 and 3
    for scores in (fast, literal):
        assert corr(scores[0], scores[1]) == pytest.approx(3**-0.5, abs=0.03)
    # two keys of one row share its query: their sizes go together (uncorrelated signs)
    for i in (0, 1):
        size = corr(np.abs(fast[i, :, 0]), np.abs(fast[i, :, 1]))
        assert size == pytest.approx(
            corr(np.abs(literal[i, :, 0]), np.abs(literal[i, :, 1])), abs=0.04
        )
        assert size > 0.1
    assert abs(corr(fast[0, :, 0], fast[0, :, 1])) < 0.03


@pytest.mark.parametrize("d_ks", [[4, 2], [0, 3], [2, 2], []])
def test_prefix_scores_reject_d_ks_that_are_not_increasing(d_ks):
    with pytest.raises(ValueError):
        prefix_scores(d_ks, 3)


def test_dot_product_samples_are_the_single_width_case():
    np.testing.assert_array_equal(
        dot_product_samples(8, 50, seed=2), variance_experiment([8], 50, seed=2).samples[0]
    )


def test_scaled_and_unscaled_curves_agree_at_d_k_one_and_match_one_curve_at_a_time():
    raw, scaled = saturation_curves([1, 64], n_keys=5, n_trials=50, seed=3)
    for field in ("max_weight", "entropy", "jacobian_norm"):
        assert getattr(raw, field)[0] == pytest.approx(getattr(scaled, field)[0])  # √1 = 1
    np.testing.assert_array_equal(
        saturation_curve([1, 64], True, 5, 50, 3).max_weight, scaled.max_weight
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12).filter(lambda v: sum(v) > 0))
def test_jacobian_norm_equals_the_norm_of_the_full_matrix(values):
    p = np.array(values) / sum(values)
    full = np.linalg.norm(softmax_jacobian(p))
    assert softmax_jacobian_norm(p) == pytest.approx(full, rel=1e-9, abs=1e-15)


def test_jacobian_norm_of_a_nearly_one_hot_row_keeps_its_tiny_size():
    eps = 1e-10  # p = (1 − ε, ε): ‖J‖ = 2 ε (1 − ε) exactly; no cancellation to ~1e-8
    assert softmax_jacobian_norm(np.array([1 - eps, eps])) == pytest.approx(2 * eps, rel=1e-6)


@pytest.mark.parametrize("n_keys", [2, 8, 64])
def test_even_row_norms_are_root_n_minus_one_over_n_and_one_half(n_keys):
    even, half = even_row_norms(n_keys)
    assert even == pytest.approx(np.sqrt(n_keys - 1) / n_keys) and half == pytest.approx(0.5)
    assert isinstance(even, float) and isinstance(half, float)
