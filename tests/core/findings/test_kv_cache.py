"""core/findings/kv_cache.py: a cached step against the full causal row, one step's work."""

import numpy as np

from core import causal_mask, decode_trace, scaled_dot_product_attention
from core.findings.kv_cache import projections, step_vs_full_diff, step_work
from core.kv_cache import decode_costs


def test_step_vs_full_diff_is_tiny_for_the_real_trace_and_catches_a_wrong_row():
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(3, 6, 4))
    _, full = scaled_dot_product_attention(q, k, v, causal_mask(6))
    steps = decode_trace(q, k, v)
    assert max(step_vs_full_diff(s, full) for s in steps) < 1e-12
    wrong = full.copy()
    wrong[2, 4] = 0.25  # weight on a token the cache cannot hold
    assert step_vs_full_diff(steps[2], wrong) == 0.25


def test_step_work_by_hand_saves_nothing_on_the_first_step():
    # decode_costs(3, 2, 1, 1): with 8, 10, 12; without 8, 18, 30; cache 2, 4, 6 numbers.
    c = decode_costs(3, 2, 1, 1)
    first, last = step_work(c, 0), step_work(c, 2)
    assert (first.with_cache, first.without_cache, first.cache_floats) == (8, 8, 2)
    assert not first.saves and first.ratio == 1.0
    assert (last.with_cache, last.without_cache, last.cache_floats) == (12, 30, 6)
    assert last.saves and last.ratio == 2.5


def test_projections_once_per_token_with_the_cache_the_whole_prefix_without():
    p = projections(9)
    assert (p.with_cache, p.without_cache) == (9, 45)
    assert p.ratio == 5.0
    assert projections(1).ratio == 1.0  # one token: nothing to reuse


def test_projections_are_the_projection_work_decode_costs_counts():
    n, d_model, d_k, d_v = 12, 16, 4, 3
    costs, p = decode_costs(n, d_model, d_k, d_v), projections(n)
    prefix = np.arange(1, n + 1)
    per_token = d_model * (2 * d_k + d_v)
    with_ = costs.with_cache - prefix * (d_k + d_v)  # minus scoring and mixing
    without = costs.without_cache - prefix * (prefix + 1) // 2 * (d_k + d_v)
    assert with_.sum() == p.with_cache * per_token
    assert without.sum() == p.without_cache * per_token
