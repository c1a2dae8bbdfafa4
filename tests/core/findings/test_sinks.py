"""core/findings/sinks.py: how long the cache stays, how far information travels through
the layers, the facts about the toy mask, and the summary of the first token's share of
attention per layer."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.findings.sinks import (
    index_runs,
    keys_kept,
    mean_over,
    perplexity_times,
    reach_back,
    share_summary,
    window_facts,
)
from core.masks import mask_states, reach_depth, sliding_window_mask, window_reach


@pytest.mark.parametrize(("n", "window", "sinks", "kept"),
                         [(100, 8, 0, 8), (100, 8, 2, 10), (5, 8, 2, 5), (1, 1, 0, 1)])  # fmt: skip
def test_the_cache_holds_the_window_and_the_sinks_however_long_the_text(n, window, sinks, kept):
    assert keys_kept(sliding_window_mask(n, window, sinks)) == kept


@given(st.integers(2, 30), st.integers(1, 6), st.integers(0, 5))
def test_the_last_token_reaches_back_window_minus_one_per_layer(n, window, layers):
    depth = reach_depth(sliding_window_mask(n, window), layers)
    assert reach_back(depth, n - 1) == min(window_reach(window, layers), n - 1)


def test_sinks_are_not_counted_as_reach():
    depth = reach_depth(sliding_window_mask(20, 3, 2), 1)
    assert reach_back(depth, 19, sinks=2) == 2  # tokens 17 and 18; tokens 0, 1 are sinks
    assert reach_back(depth, 1, sinks=2) == 1  # a sink itself reaches the sink before it


def test_index_runs():
    assert index_runs([]) == []
    assert index_runs([3, 0, 1, 10, 11, 12]) == [(0, 1), (3, 3), (10, 12)]


def test_share_summary_finds_the_sink_layers_and_the_quiet_ones():
    share = np.array([0.004, 0.007, 0.05, 0.3, 0.01, 0.005, 0.4, 0.6, 0.25])
    s = share_summary(share, high=0.2, low=0.01)
    assert s.high == (6, 8) and s.high_range == (0.25, 0.6)
    assert s.low == [(0, 1), (5, 5)] and s.low_max == 0.007
    none = share_summary(np.array([0.1, 0.1]))
    assert none.high is None and none.low == [] and none.low_max == 0.0


def test_mean_over_a_run_of_layers_or_all():
    share = np.array([0.1, 0.2, 0.6, 0.4])
    assert mean_over(share, (2, 3)) == pytest.approx(0.5)
    assert mean_over(share, None) == pytest.approx(0.325)


def test_window_facts_of_a_long_text_reach_the_whole_window_times_the_layers():
    f = window_facts(40, 4, 1, 3)
    assert f.kept == 5 and f.reach == window_reach(4, 3) == 9
    assert f.back == 9 and f.first == 30 and f.full_reach
    mask = sliding_window_mask(40, 4, 1)
    np.testing.assert_array_equal(f.states, mask_states(40, 4, 1))
    np.testing.assert_array_equal(f.depth, reach_depth(mask, 3))


def test_window_facts_of_a_short_text_stop_at_its_start():
    f = window_facts(6, 4, 0, 3)  # the reach (9) is longer than the text
    assert f.back == 5 and f.first == 0 and not f.full_reach


def test_perplexity_times():
    assert perplexity_times(30.0, 12.0) == 2.5
