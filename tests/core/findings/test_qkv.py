"""core/findings/qkv.py: the fused projection against the three separate ones."""

from hypothesis import given, settings
from hypothesis import strategies as st

from core import init_projections, lesson_inputs
from core.findings.qkv import FusedCheck, fused_check, fused_differences


def test_fused_differences_are_zero_for_the_lesson_example():
    x = lesson_inputs(6, 8, seed=42)
    diffs = fused_differences(x, *init_projections(8, 4, 4, seed=42))
    assert len(diffs) == 3
    assert all(isinstance(d, float) and 0.0 <= d < 1e-12 for d in diffs)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 8), st.integers(1, 12), st.integers(1, 6), st.integers(1, 6), st.integers(0, 999)
)
def test_fused_differences_stay_at_rounding_level_for_any_sizes(n, d_model, d_k, d_v, seed):
    x = lesson_inputs(n, d_model, seed=seed)
    assert max(fused_differences(x, *init_projections(d_model, d_k, d_v, seed=seed))) < 1e-12


def test_fused_check_holds_the_three_differences_and_their_largest():
    x = lesson_inputs(5, 6, seed=3)
    weights = init_projections(6, 3, 2, seed=3)
    check = fused_check(x, *weights)
    assert (check.q, check.k, check.v) == fused_differences(x, *weights)
    assert check.largest == max(fused_differences(x, *weights))


def test_fused_check_is_exact_only_when_every_difference_is_zero():
    assert FusedCheck(0.0, 0.0, 0.0).exact
    check = FusedCheck(0.0, 2.2e-16, 1.1e-16)
    assert not check.exact and check.largest == 2.2e-16
