"""Core additions for the weighted-sum page: one query row's output taken apart."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.attention import mix_row, other_terms, self_attention_trace, top_terms
from core.projections import init_projections, lesson_inputs


def test_mix_row_hand_example():
    w = np.array([0.25, 0.75])
    v = np.array([[4.0, 0.0], [0.0, 8.0]])
    mix = mix_row(w, v)
    np.testing.assert_array_equal(mix.contributions, [[1.0, 0.0], [0.0, 6.0]])
    np.testing.assert_array_equal(mix.running, [[1.0, 0.0], [1.0, 6.0]])
    np.testing.assert_array_equal(mix.output, [1.0, 6.0])
    assert mix.weight_total == 1.0


def test_mix_row_reproduces_the_lesson_output_row():
    tr = self_attention_trace(lesson_inputs(6, 8), *init_projections(8, 4, 4))
    mix = mix_row(tr.weights[0], tr.v)
    np.testing.assert_allclose(mix.output, [-0.233, 0.443, 1.035, 0.550], atol=5e-4)
    np.testing.assert_allclose(mix.output, tr.output[0], rtol=0, atol=1e-12)
    assert mix.contributions.shape == mix.running.shape == (6, 4)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10), st.integers(1, 6), st.data())
def test_running_sum_ends_at_the_output_and_contributions_add_up(n, d_v, data):
    w = data.draw(arrays(np.float64, n, elements=st.floats(0.0, 1.0)))
    v = data.draw(arrays(np.float64, (n, d_v), elements=st.floats(-10.0, 10.0)))
    mix = mix_row(w, v)
    np.testing.assert_allclose(mix.running[-1], mix.output, atol=1e-9)
    np.testing.assert_allclose(mix.contributions.sum(axis=0), w @ v, atol=1e-9)
    assert np.isclose(mix.weight_total, w.sum())


def test_top_terms_orders_by_weight_and_breaks_ties_by_position():
    w = np.array([0.1, 0.4, 0.1, 0.4])
    np.testing.assert_array_equal(top_terms(w, 3), [1, 3, 0])
    np.testing.assert_array_equal(top_terms(w, 10), [1, 3, 0, 2])
    assert top_terms(w, 0).shape == (0,)


def test_other_terms_complete_the_kept_terms():
    w = np.array([0.5, 0.2, 0.3])
    v = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    keep = top_terms(w, 1)
    rest, rest_weight = other_terms(w, v, keep)
    np.testing.assert_allclose(rest, [0.6, 0.8])
    assert np.isclose(rest_weight, 0.5)
    np.testing.assert_allclose(rest + w[keep] @ v[keep], w @ v)
    empty, zero = other_terms(w, v, top_terms(w, 3))
    np.testing.assert_array_equal(empty, [0.0, 0.0])
    assert zero == 0.0
