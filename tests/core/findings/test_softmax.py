"""core.findings.softmax: what a temperature and a mask do to a softmax row, and where the
naive softmax first breaks."""

import numpy as np
import pytest

from core.findings.softmax import (
    first_nonfinite_row,
    mask_effect,
    naive_break,
    row_shape,
    temperature_effect,
)
from core.softmax_numerics import EXP_OVERFLOW, EXP_UNDERFLOW, mask_last, softmax


def test_temperature_effect_names_the_largest_probability_at_t_and_at_one():
    x = np.array([2.0, 1.0, 0.1])
    found = temperature_effect(softmax(x, temperature=0.5), softmax(x), 0.5)
    assert found.peak == pytest.approx(softmax(x / 0.5).max())
    assert found.peak_at_one == pytest.approx(0.659, abs=1e-3)
    assert found.peak > found.peak_at_one and not found.flat and not found.at_one


def test_temperature_effect_at_one_within_the_slider_tolerance():
    x = softmax(np.array([1.0, 0.0]))
    assert temperature_effect(x, x, 1.0).at_one
    assert temperature_effect(x, x, 1.0 + 1e-12).at_one
    assert not temperature_effect(x, x, 1.05).at_one


def test_equal_logits_are_flat_whatever_the_temperature():
    even = softmax(np.zeros(4))
    found = temperature_effect(softmax(np.zeros(4), temperature=3.0), even, 3.0)
    assert found.flat and found.peak == found.peak_at_one == 0.25


def test_temperature_effect_over_a_matrix_takes_the_peak_of_all_rows():
    scores = np.array([[1.0, 0.0], [5.0, 0.0]])
    found = temperature_effect(softmax(scores, temperature=2.0), softmax(scores), 2.0)
    assert found.peak_at_one == pytest.approx(softmax(scores)[1, 0])
    assert found.peak == pytest.approx(softmax(scores / 2.0)[1, 0])


def test_mask_effect_counts_the_masked_entries_and_their_exact_zeros():
    masked = mask_last([2.1, 0.3, 0.1, 0.8, 0.2], 2)
    found = mask_effect(masked, softmax(masked))
    assert (found.count, found.n) == (2, 5) and not found.none and not found.all
    assert found.exact_zero and found.largest_masked == 0.0
    assert found.total == pytest.approx(1.0)


def test_mask_effect_of_no_mask_and_of_a_fully_masked_row():
    logits = np.array([1.0, 2.0])
    none = mask_effect(logits, softmax(logits))
    assert none.none and none.count == 0 and none.largest_masked == 0.0 and none.exact_zero
    masked = mask_last(logits, 2)
    every = mask_effect(masked, softmax(masked))
    assert every.all and every.total == 0.0  # the all-masked policy: a row of zeros


def test_mask_effect_reports_a_masked_entry_that_is_not_exactly_zero():
    masked = np.array([0.0, -np.inf])
    found = mask_effect(masked, np.array([0.9, 0.1]))  # not what softmax gives: a wrong answer
    assert not found.exact_zero and found.largest_masked == 0.1


def test_first_nonfinite_row_by_hand():
    assert first_nonfinite_row(np.array([[0.5, 0.5], [np.inf, 0.0], [np.nan, 1.0]])) == 1
    assert first_nonfinite_row(np.ones((3, 2))) == -1


def test_naive_break_of_2_1_point1_is_an_overflow_at_scale_355():
    found = naive_break([2.0, 1.0, 0.1], np.arange(1, 1001))
    assert (found.index, found.scale) == (354, 355.0)
    assert found.overflow and found.top == pytest.approx(710.0) and found.top > EXP_OVERFLOW


def test_naive_break_of_very_negative_logits_is_an_underflow():
    found = naive_break([-2.0, -3.0], [100.0, 400.0])  # at 400 every exp(-800..) is 0: 0/0
    assert (found.index, found.scale) == (1, 400.0)
    assert not found.overflow and found.top == pytest.approx(-800.0) and found.top < EXP_UNDERFLOW


def test_naive_break_of_small_logits_never_happens():
    found = naive_break([0.5, 0.1], np.arange(1, 11))
    assert found == found.__class__(-1, 0.0, 0.0, False)


def test_row_shape_names_what_a_temperature_left_of_a_row():
    x = np.array([2.0, 1.0, 0.1])
    at_one = softmax(x)
    assert row_shape(softmax(x, temperature=0.05), at_one) == "one_hot"
    assert row_shape(softmax(x, temperature=1e4), at_one) == "uniform"
    assert row_shape(softmax(x, temperature=1.0), at_one) == "unchanged"
    assert row_shape(softmax(x, temperature=2.0), at_one) == "other"
    masked = np.full(3, -np.inf)
    assert row_shape(softmax(masked), softmax(masked)) == "zero"  # a fully masked row


def test_row_shape_needs_a_row_within_the_gap():
    at_one = np.array([0.5, 0.3, 0.2])
    assert row_shape(np.array([0.9995, 0.0005, 0.0]), at_one) == "one_hot"
    assert row_shape(np.array([0.99, 0.01, 0.0]), at_one) == "other"
    assert row_shape(np.array([0.99, 0.01, 0.0]), at_one, gap=0.02) == "one_hot"
