"""softmax and softmax_naive: hand-checked values, stability, the all-masked policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from core import softmax, softmax_naive

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
