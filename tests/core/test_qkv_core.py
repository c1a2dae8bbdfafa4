"""Core additions for the Q/K/V page: the fused-vs-separate difference."""

from hypothesis import given, settings
from hypothesis import strategies as st

from core.projections import fused_differences, init_projections, lesson_inputs


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
