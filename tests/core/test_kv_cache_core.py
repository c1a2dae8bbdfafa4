"""Core helpers of the KV cache page: step check, cumulative costs, memory, sampling."""

import numpy as np

from core import causal_mask, decode_costs, decode_trace, scaled_dot_product_attention
from core.kv_cache import (
    cache_bytes,
    cost_ratio,
    cumulative_costs,
    sample_steps,
    step_vs_full_diff,
)


def test_step_vs_full_diff_is_tiny_for_the_real_trace_and_catches_a_wrong_row():
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(3, 6, 4))
    _, full = scaled_dot_product_attention(q, k, v, causal_mask(6))
    steps = decode_trace(q, k, v)
    assert max(step_vs_full_diff(s, full) for s in steps) < 1e-12
    wrong = full.copy()
    wrong[2, 4] = 0.25  # weight on a token the cache cannot hold
    assert step_vs_full_diff(steps[2], wrong) == 0.25


def test_cumulative_costs_and_ratio_by_hand():
    # decode_costs(3, 2, 1, 1): with 8, 10, 12; without 8, 18, 30 (see test_core_kv_cache).
    c = cumulative_costs(decode_costs(3, 2, 1, 1))
    np.testing.assert_array_equal(c.with_cache, [8, 18, 30])
    np.testing.assert_array_equal(c.without_cache, [8, 26, 56])
    np.testing.assert_array_equal(c.cache_floats, [2, 4, 6])
    np.testing.assert_allclose(cost_ratio(decode_costs(3, 2, 1, 1)), [1.0, 1.8, 2.5])


def test_cache_bytes_of_gpt2_small_at_1024_tokens():
    # 12 layers, d_model 768: K and V hold 2·1024·768 numbers per layer.
    floats = decode_costs(1024, 768, 768, 768).cache_floats
    b32 = cache_bytes(floats, 12, 4)
    assert b32[-1] == 2 * 1024 * 768 * 12 * 4 == 75_497_472  # 72 MiB
    assert cache_bytes(floats, 12, 2)[-1] * 2 == b32[-1]


def test_sample_steps_keeps_ends_sorted_unique():
    np.testing.assert_array_equal(sample_steps(5, 64), np.arange(5))
    s = sample_steps(2048, 80)
    assert s[0] == 0 and s[-1] == 2047
    assert np.all(np.diff(s) > 0)
    assert len(s) <= 81


def test_without_cache_grows_faster_than_with_cache():
    c = decode_costs(512, 64, 64, 64)
    ratio = cost_ratio(c)
    assert np.all(np.diff(ratio) > 0)
    assert ratio[-1] > 100
