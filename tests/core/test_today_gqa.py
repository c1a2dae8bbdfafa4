"""core/today_gqa.py: what /gqa shows — the toy heads pooled into groups, how alike the heads
of a group attend, and what the tiling bug does to each head."""

import numpy as np
import pytest

from core import causal_mask, grouped_query_attention, kv_head_of, kv_variants
from core.today_gqa import (
    cache_ratios,
    design,
    group_agreement,
    group_weight_gap,
    pool_heads,
    tiling,
    tiling_gaps,
    toy_heads,
)


def test_toy_heads_are_reproducible_from_the_seed():
    q, k, v = toy_heads(8, 6, 4, 1)
    assert q.shape == k.shape == v.shape == (8, 6, 4)
    np.testing.assert_array_equal(toy_heads(8, 6, 4, 1)[1], k)


def test_pool_heads_averages_neighbouring_heads_by_hand():
    x = np.arange(4.0).reshape(4, 1, 1)  # heads 0, 1, 2, 3
    np.testing.assert_array_equal(pool_heads(x, 2).ravel(), [0.5, 2.5])
    np.testing.assert_array_equal(pool_heads(x, 1).ravel(), [1.5])
    np.testing.assert_array_equal(pool_heads(x, 4), x)


def test_pool_heads_refuses_groups_that_do_not_divide_the_heads():
    with pytest.raises(ValueError):
        pool_heads(np.zeros((9, 2, 2)), 2)


def test_group_weight_gap_is_zero_for_one_head_a_group_and_positive_when_shared():
    q, k, v = toy_heads(8, 5, 4, 0)
    _, w_mha = grouped_query_attention(q, k, v)
    assert group_weight_gap(w_mha, 8) == 0.0
    _, w = grouped_query_attention(q, pool_heads(k, 2), pool_heads(v, 2))
    gap = group_weight_gap(w, 2)
    by_hand = max(
        np.abs(w[a] - w[b]).max() for g in (0, 4) for a in range(g, g + 4) for b in range(g, g + 4)
    )
    assert gap == pytest.approx(by_hand) and gap > 0


def test_group_agreement_by_hand():
    w = np.zeros((4, 1, 2))
    w[1] += 0.2  # heads 0 and 1: group 0; heads 2 and 3: group 1
    w[3] += 0.4
    same, other = group_agreement(w, 2)
    assert same == pytest.approx((0.2 + 0.4) / 2)
    assert other == pytest.approx((0.0 + 0.4 + 0.2 + 0.2) / 4)  # pairs 0-2, 0-3, 1-2, 1-3
    assert np.isnan(group_agreement(w, 4)[0]) and np.isnan(group_agreement(w, 1)[1])


def test_tiling_hurts_exactly_the_heads_it_gives_another_kv_head():
    q, k, v = toy_heads(9, 6, 4, 5)
    k, v = pool_heads(k, 3), pool_heads(v, 3)
    gaps = tiling_gaps(q, k, v, causal_mask(6))
    same = kv_head_of(9, 3) == kv_head_of(9, 3, tiled=True)
    np.testing.assert_array_equal(np.flatnonzero(same), [0, 4, 8])
    assert np.all(gaps[same] == 0) and np.all(gaps[~same] > 0)


@pytest.mark.parametrize("h_kv", [1, 8])
def test_tiling_is_harmless_with_one_or_all_kv_heads(h_kv):
    q, k, v = toy_heads(8, 4, 4, 2)
    np.testing.assert_array_equal(tiling_gaps(q, pool_heads(k, h_kv), pool_heads(v, h_kv)), 0)


@pytest.mark.parametrize(("h_kv", "name"), [(8, "mha"), (4, "gqa"), (2, "gqa"), (1, "mqa")])
def test_design_names_the_head_count(h_kv, name):
    assert design(8, h_kv) == name


def test_tiling_on_nine_heads_sharing_three_spares_heads_0_4_8():
    q, k, v = toy_heads(9, 5, 4, 1)
    k, v = pool_heads(k, 3), pool_heads(v, 3)
    tr = tiling(q, k, v)
    assert (tr.h, tr.h_kv) == (9, 3)
    assert tr.same == (0, 4, 8) and tr.bad == 6
    np.testing.assert_array_equal(tr.gaps, tiling_gaps(q, k, v, causal_mask(5)))
    assert tr.worst == tr.gaps.max() > 0 and np.all(tr.gaps[[0, 4, 8]] == 0)
    assert tr.loop < 1e-12  # core's GQA is its per-head loop


def test_tiling_changes_nothing_with_one_kv_head_per_query_head():
    q, k, v = toy_heads(4, 3, 2, 0)
    tr = tiling(q, k, v)
    assert tr.same == (0, 1, 2, 3) and tr.bad == 0 and tr.worst == 0.0


def test_cache_ratios_of_smollm2s_heads():
    assert cache_ratios(kv_variants(9, 3)) == (3.0, 3.0)
    assert cache_ratios(kv_variants(8, 2)) == (4.0, 2.0)
