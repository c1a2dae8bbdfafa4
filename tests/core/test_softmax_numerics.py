"""softmax, log_softmax and softmax_naive: hand-checked values, stability, the all-masked policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from core import scaled_dot_product_attention, softmax
from core.softmax_numerics import (
    EXP_OVERFLOW,
    EXP_UNDERFLOW,
    exp_terms,
    largest_exp_argument,
    log_softmax,
    mask_last,
    scale_sweep,
    softmax_naive,
)

finite = st.floats(-100.0, 100.0, allow_nan=False, allow_infinity=False)
score_matrices = arrays(
    np.float64, array_shapes(min_dims=2, max_dims=2, max_side=8), elements=finite
)


def test_softmax_of_three_logits_matches_hand_values():
    # e^2 = 7.389, e^1 = 2.718, e^0.1 = 1.105; sum 11.212 -> 0.659, 0.242, 0.099
    np.testing.assert_allclose(softmax([2.0, 1.0, 0.1]), [0.659, 0.242, 0.099], atol=5e-4)


def test_softmax_of_lesson_002_logits_gives_true_values_not_the_lessons():
    # The lesson prints weights that sum to 0.90; these are the real ones (they sum to 1).
    p = softmax([2.1, 0.3, 0.1, 0.8, 0.2])
    np.testing.assert_allclose(p, [0.580, 0.096, 0.079, 0.158, 0.087], atol=5e-4)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


@given(score_matrices)
def test_log_softmax_is_the_log_of_softmax(x):
    np.testing.assert_allclose(np.exp(log_softmax(x)), softmax(x), rtol=1e-12, atol=1e-300)


def test_log_softmax_stays_finite_where_softmax_rounds_to_zero():
    # exp(−1000) underflows to 0, so log(softmax) would be −inf; the log is −1000 exactly
    logp = log_softmax(np.array([[0.0, -1000.0], [1000.0, 1000.0]]))
    np.testing.assert_array_equal(logp[0], [0.0, -1000.0])
    np.testing.assert_allclose(logp[1], [-np.log(2.0)] * 2, rtol=1e-15)
    assert softmax([0.0, -1000.0])[1] == 0.0


def test_large_logits_do_not_overflow_and_equal_shifted_logits():
    p = softmax([1000.0, 1001.0])
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, softmax([0.0, 1.0]), rtol=0, atol=1e-15)
    # hand value: 1 / (1 + e) = 0.26894
    np.testing.assert_allclose(p, [0.26894, 0.73106], atol=1e-5)


def test_naive_softmax_overflows_to_nan_on_large_logits():
    assert np.isnan(softmax_naive([1000.0, 1001.0])).any()


def test_naive_softmax_agrees_with_stable_one_on_small_logits():
    x = [2.0, 1.0, 0.1]
    np.testing.assert_allclose(softmax_naive(x), softmax(x), atol=1e-12)


def test_all_masked_row_has_no_nan_and_is_zero():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    p = softmax(x)
    assert not np.isnan(p).any()
    np.testing.assert_array_equal(p[0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(p[1], [0.5, 0.0, 0.5])


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan")])
def test_non_positive_temperature_raises_value_error(temperature):
    with pytest.raises(ValueError, match="temperature"):
        softmax([1.0, 2.0], temperature=temperature)


def test_temperature_divides_the_logits():
    np.testing.assert_allclose(
        softmax([2.0, 4.0], temperature=2.0), softmax([1.0, 2.0]), atol=1e-15
    )


def test_float32_input_stays_float32():
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    assert softmax(x).dtype == np.float32
    assert softmax(x, temperature=0.5).dtype == np.float32


def test_integer_input_is_promoted_to_float():
    p = softmax(np.array([0, 1]))
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, softmax([0.0, 1.0]))


def test_softmax_along_axis_zero_normalises_columns():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), np.ones(3), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(score_matrices)
def test_rows_sum_to_one_and_are_non_negative(x):
    p = softmax(x)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(score_matrices, st.data())
def test_adding_a_constant_per_row_does_not_change_softmax(x, data):
    shift = data.draw(arrays(np.float64, (x.shape[0], 1), elements=st.floats(-50.0, 50.0)))
    np.testing.assert_allclose(softmax(x + shift), softmax(x), rtol=1e-9, atol=1e-12)


def test_exp_limits_are_where_float64_exp_overflows_and_underflows():
    with np.errstate(over="ignore"):
        assert np.isfinite(np.exp(EXP_OVERFLOW))
        assert np.isinf(np.exp(np.nextafter(EXP_OVERFLOW, np.inf)))
    assert np.exp(np.nextafter(EXP_UNDERFLOW, 0.0)) > 0.0
    assert np.exp(np.nextafter(EXP_UNDERFLOW, -np.inf)) == 0.0
    assert abs(EXP_OVERFLOW - 709.78) < 0.01
    assert abs(EXP_UNDERFLOW + 745.13) < 0.01


def test_naive_softmax_of_2_1_point1_first_breaks_at_scale_355():
    # 2 * s > 709.78  <=>  s >= 355
    naive, stable = scale_sweep([2.0, 1.0, 0.1], np.arange(1, 1001))
    assert naive.shape == stable.shape == (1000, 3)
    assert np.flatnonzero(~np.isfinite(naive).all(axis=1))[0] == 354  # row 354 is scale 355
    assert np.isfinite(stable).all()
    np.testing.assert_allclose(stable.sum(axis=1), 1.0)
    np.testing.assert_allclose(naive[:354], stable[:354], atol=1e-12)


def test_naive_softmax_also_breaks_when_every_exp_underflows():
    naive, stable = scale_sweep([-2.0, -3.0], [100.0, 400.0])
    assert np.all(np.isfinite(naive[0]))
    assert np.isnan(naive[1]).all()  # 0 / 0
    np.testing.assert_allclose(stable[1], softmax([-800.0, -1200.0]))


@pytest.mark.parametrize(
    ("count", "expected"), [(0, [1.0, 2.0, 3.0]), (2, [1.0, -np.inf, -np.inf])]
)
def test_mask_last_sets_trailing_entries_to_minus_inf(count, expected):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(mask_last(x, count), expected)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])  # input untouched


def test_mask_last_clips_the_count_and_masked_weights_are_exactly_zero():
    assert np.isneginf(mask_last([1.0, 2.0], 5)).all()
    assert np.array_equal(mask_last([1.0, 2.0], -1), [1.0, 2.0])
    p = softmax(mask_last([2.1, 0.3, 0.1, 0.8, 0.2], 2))
    assert p[3] == 0.0 and p[4] == 0.0
    assert p[:3].sum() == pytest.approx(1.0)


def test_exp_terms_naive_and_stable_by_hand():
    args, e, total = exp_terms([2.0, 1.0], scale=1.0, stable=False)
    np.testing.assert_allclose(args, [2.0, 1.0])
    np.testing.assert_allclose(e, [np.e**2, np.e])
    assert total == pytest.approx(np.e**2 + np.e)
    args, e, total = exp_terms([2.0, 1.0], scale=1.0, stable=True)
    np.testing.assert_allclose(args, [0.0, -1.0])
    np.testing.assert_allclose(e, [1.0, 1 / np.e])
    assert total == pytest.approx(1 + 1 / np.e)


def test_exp_terms_overflow_only_in_the_naive_version():
    _, e, total = exp_terms([2.0, 1.0, 0.1], scale=400.0, stable=False)
    assert np.isinf(e[0]) and np.isinf(total)
    args, e, total = exp_terms([2.0, 1.0, 0.1], scale=400.0, stable=True)
    assert args.max() == 0.0 and e[0] == 1.0 and np.isfinite(total)


def test_exp_terms_of_an_all_masked_row_are_zero_not_nan():
    args, e, total = exp_terms([-np.inf, -np.inf], stable=True)
    assert np.isneginf(args).all() and not np.isnan(e).any() and total == 0.0


def test_largest_exp_argument_grows_naively_and_stays_zero_when_stable():
    naive, stable = largest_exp_argument([2.0, 1.0, 0.1], [1.0, 10.0, 400.0])
    np.testing.assert_allclose(naive, [2.0, 20.0, 800.0])
    np.testing.assert_array_equal(stable, [0.0, 0.0, 0.0])
    naive, stable = largest_exp_argument([-np.inf, 1.0], [3.0])
    np.testing.assert_allclose(naive, [3.0])
    np.testing.assert_array_equal(stable, [0.0])


def test_a_nan_score_gives_a_nan_row_not_a_zero_row():
    """A NaN in the scores is a bug upstream: its row stays NaN (as in torch and JAX) instead
    of looking exactly like a fully masked query; the other rows are untouched."""
    p = softmax(np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]]))
    assert np.isnan(p[0]).all()
    assert np.isclose(p[1].sum(), 1.0) and p[2].tolist() == [0.0, 0.0, 0.0]


def test_a_plus_infinite_score_gives_a_nan_row():
    assert np.isnan(softmax(np.array([np.inf, 1.0]))).all()


def test_attention_over_a_nan_score_gives_a_nan_output_row():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[np.nan, 0.0], [0.0, 1.0]])
    out, w = scaled_dot_product_attention(q, k, np.eye(2))
    assert np.isnan(w[0]).all() and np.isnan(out[0]).all()
