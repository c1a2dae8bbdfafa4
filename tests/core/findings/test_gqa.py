"""core/findings/gqa.py: how alike the heads of a group attend, the designs' names and
caches, and the tiling bug on one layer against the per-head loop."""

import numpy as np
import pytest

from core import grouped_query_attention
from core.findings.gqa import (
    cache_ratios,
    design,
    group_agreement,
    group_weight_gap,
    grouping_rank,
    tiling,
)
from core.kv_cache import kv_variants, pool_heads, tiling_gaps, toy_heads
from core.masks import causal_mask


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


def test_groups_made_of_copies_of_one_head_stand_out_among_random_groupings():
    rng = np.random.default_rng(1)
    heads = rng.dirichlet(np.ones(5), size=(3, 4))  # (3 patterns, n_q 4, n_k 5)
    w = np.repeat(heads, 3, axis=0)  # (9, 4, 5): each group three copies of one pattern
    # only a random grouping that happens to be the same partition (1 in 280) is as close
    assert grouping_rank(w, 3) < 0.02


def test_heads_alike_by_chance_only_rank_in_the_middle():
    """Nine independent random heads: the real grouping is one grouping among many, so the
    share of random groupings as close is large, never a "stands out"."""
    w = np.random.default_rng(2).dirichlet(np.ones(6), size=(9, 5))  # (9, 5, 6)
    assert 0.05 < grouping_rank(w, 3) <= 1


def test_grouping_rank_has_nothing_to_compare_with_one_group_or_one_head_a_group():
    w = np.random.default_rng(3).dirichlet(np.ones(4), size=(4, 2))
    assert np.isnan(grouping_rank(w, 1)) and np.isnan(grouping_rank(w, 4))


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
