"""core/findings/homework.py: an upload compared with the right answer cell by cell, a
transposed answer, and the row sums of uploaded weights."""

import math

import numpy as np
import pytest

from core import homework as hw
from core.findings.homework import compare, sum_range, transposed_matches, weight_sums


def test_compare_reports_the_largest_errors_and_the_first_bad_row():
    ref = np.array([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]])
    cand = ref.copy()
    cand[1, 2] += 0.1
    cand[1, 0] += 0.05
    c = compare(cand, ref, 1e-6)
    assert not c.equal
    assert c.max_abs == pytest.approx(0.1) and c.max_abs_at == (1, 2)
    assert c.max_rel == pytest.approx(0.25) and c.max_rel_at == (1, 0)
    assert c.first_row == (1,)
    assert c.bad.sum() == 2
    np.testing.assert_allclose(c.error[1], [0.05, 0.0, 0.1])


def test_compare_within_tolerance_is_equal():
    ref = np.ones((2, 2))
    c = compare(ref + 5e-7, ref, 1e-6)
    assert c.equal and c.first_row is None
    assert not compare(ref + 5e-6, ref, 1e-6).equal


def test_compare_flags_nan_and_keeps_it_out_of_the_error_sizes():
    ref = np.array([[0.5, 0.5], [0.1, 0.9]])
    cand = ref.copy()
    cand[0, 1] = np.nan
    c = compare(cand, ref, 1e-6)
    assert not c.equal and c.first_row == (0,)
    assert np.isnan(c.error[0, 1]) and c.max_abs == 0.0
    assert hw.matches(np.array([[np.nan, 1.0]]), np.array([[np.nan, 1.0]]), 1e-6)
    assert not hw.matches(np.array([[np.inf, 1.0]]), np.array([[np.nan, 1.0]]), 1e-6)


def test_compare_of_head_weights_names_head_and_row():
    ref = np.zeros((2, 3, 3))
    cand = ref.copy()
    cand[1, 2, 0] = 1.0
    c = compare(cand, ref, 1e-6)
    assert c.first_row == (1, 2) and c.max_abs_at == (1, 2, 0)


def test_compare_needs_equal_shapes():
    with pytest.raises(ValueError):
        compare(np.zeros((2, 3)), np.zeros((3, 2)), 1e-6)


def test_relative_error_leaves_out_cells_whose_right_value_is_near_zero():
    """0.6 against 0 (or 0.1 against 1e-300) is no relative error worth a number: such cells
    count by their absolute error only."""
    ref = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 1e-300]])
    cand = np.array([[0.0, 0.4, 0.6], [0.5, 0.4, 0.1]])
    c = compare(cand, ref, 1e-6)
    assert c.max_abs == 1.0 and c.max_abs_at == (0, 0)
    assert c.max_rel == pytest.approx(1.0) and c.max_rel_at == (0, 0)


def test_wrong_weights_against_a_mask_give_a_readable_relative_error():
    cfg = hw.Homework(2)
    inputs = hw.homework_inputs(cfg)
    _, wrong = hw.mistake("attention", "mask_wrong_sign").make(*hw.exercise_args(cfg, inputs))
    c = compare(wrong, hw.homework_answer(cfg, inputs)["weights"], 1e-6)
    assert c.max_abs == pytest.approx(1.0) and c.max_abs_at == (0, 0)  # row 0 left token 0
    assert c.max_rel == pytest.approx(1.0), "not |error| / 0 ≈ 4.5e+307"


def test_numbers_too_far_apart_to_subtract_give_a_finite_error():
    c = compare(np.array([[1e308, 0.5]]), np.array([[-1e308, 0.5]]), 1e-6)
    assert not c.equal and c.bad[0, 0]
    assert np.isfinite([c.max_abs, c.max_rel]).all() and np.isfinite(c.error).all()


def test_compare_counts_the_bad_cells_and_lists_their_rows_in_order():
    ref = np.zeros((2, 3, 4))  # (h, n, n)
    up = ref.copy()
    up[1, 2, 0] = up[1, 2, 3] = up[0, 1, 1] = 0.5
    cmp = compare(up, ref, 1e-6)
    assert cmp.bad_count == 3 and cmp.bad_rows == [(0, 1), (1, 2)]
    assert compare(ref, ref, 1e-6).bad_rows == []


def test_a_transposed_right_answer_is_recognised():
    right = np.arange(6.0).reshape(2, 3)
    assert transposed_matches(right.T, right, 1e-6)
    assert not transposed_matches(right.T + 1, right, 1e-6)
    assert not transposed_matches(right[None], right, 1e-6)  # not a matrix


def test_weight_sums_and_their_range():
    w = np.array([[0.25, 0.75], [0.5, 0.4]], dtype=np.float32)
    sums = weight_sums(w)
    assert sums.dtype == np.float64 and np.allclose(sums, [1.0, 0.9])
    r = sum_range(sums)
    assert (r.lo, r.hi, r.nonfinite) == (float(sums.min()), float(sums.max()), 0)
    bad = sum_range(weight_sums(np.array([[np.inf, -np.inf], [np.nan, 1.0], [1, 0]])))
    assert bad.nonfinite == 2 and math.isnan(bad.lo)
