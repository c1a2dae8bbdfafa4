"""core/findings/kv_cache.py: a cached step against the full causal row, one step's work."""

import numpy as np

from core import causal_mask, decode_trace, scaled_dot_product_attention
from core.findings.kv_cache import step_vs_full_diff, step_work
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
