"""scale_sweep, first_nonfinite_row, mask_last, exp_terms and largest_exp_argument."""

import numpy as np
import pytest

from core.softmax import (
    EXP_OVERFLOW,
    EXP_UNDERFLOW,
    exp_terms,
    first_nonfinite_row,
    largest_exp_argument,
    mask_last,
    scale_sweep,
    softmax,
)


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
    assert first_nonfinite_row(naive) == 354  # row 354 is scale 355
    assert first_nonfinite_row(stable) == -1
    np.testing.assert_allclose(stable.sum(axis=1), 1.0)
    np.testing.assert_allclose(naive[:354], stable[:354], atol=1e-12)


def test_naive_softmax_also_breaks_when_every_exp_underflows():
    naive, stable = scale_sweep([-2.0, -3.0], [100.0, 400.0])
    assert np.all(np.isfinite(naive[0]))
    assert np.isnan(naive[1]).all()  # 0 / 0
    np.testing.assert_allclose(stable[1], softmax([-800.0, -1200.0]))


def test_first_nonfinite_row_by_hand():
    assert first_nonfinite_row(np.array([[0.5, 0.5], [np.inf, 0.0], [np.nan, 1.0]])) == 1
    assert first_nonfinite_row(np.ones((3, 2))) == -1


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
