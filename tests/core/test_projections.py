"""Q/K/V projections: lesson inputs, Xavier init, fused == separate."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import init_projections, lesson_inputs, project_qkv
from core.projections import fuse_qkv, fused_project, xavier_std


def test_lesson_inputs_are_standard_normal_draws_from_the_seed():
    expected = np.random.default_rng(42).normal(0.0, 1.0, (6, 8))
    np.testing.assert_array_equal(lesson_inputs(6, 8, seed=42), expected)


def test_xavier_std_hand_value():
    assert xavier_std(8, 4) == np.sqrt(2.0 / 12.0)


def test_init_projections_shapes_and_reproducibility():
    w_q, w_k, w_v = init_projections(8, 4, 3, seed=7)
    assert (w_q.shape, w_k.shape, w_v.shape) == ((8, 4), (8, 4), (8, 3))
    np.testing.assert_array_equal(w_k, init_projections(8, 4, 3, seed=7)[1])
    assert not np.array_equal(w_q, w_k)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 8),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(0, 2**16),
    st.data(),
)
def test_fused_projection_equals_three_separate_projections(n, d_model, d_k, d_v, seed, data):
    x = data.draw(arrays(np.float64, (n, d_model), elements=st.floats(-5.0, 5.0)))
    w_q, w_k, w_v = init_projections(d_model, d_k, d_v, seed=seed)
    w_qkv = fuse_qkv(w_q, w_k, w_v)
    assert w_qkv.shape == (d_model, 2 * d_k + d_v)
    for fused, separate in zip(
        fused_project(x, w_qkv, d_k), project_qkv(x, w_q, w_k, w_v), strict=True
    ):
        assert fused.shape == separate.shape
        np.testing.assert_allclose(fused, separate, rtol=1e-12, atol=1e-12)
