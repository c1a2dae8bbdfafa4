"""core/today_flash.py: the FlashAttention page's numbers — tiles and key states, the tiled
result against ordinary attention, large logits, and the paper's memory and traffic model."""

import numpy as np
import pytest

from core import attention_scores, causal_mask, flash_attention, scaled_dot_product_attention
from core.today_flash import (
    AHEAD,
    CURRENT,
    DTYPES,
    HIDDEN,
    SEEN,
    agreement,
    first_nan,
    key_states,
    logit_growth,
    memory_curves,
    naive_attention,
    tile_count,
    tile_of,
    tile_row,
    tiled_errors,
    toy_qkv,
    traffic_curves,
    traffic_ratio_limit,
)


def test_toy_inputs_are_reproducible_from_the_seed():
    a, b = toy_qkv(5, 3, 7), toy_qkv(5, 3, 7)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
        assert x.shape == (5, 3) and x.dtype == np.float64
    assert not np.array_equal(a[0], toy_qkv(5, 3, 8)[0])


def test_tiles_cover_every_key_with_a_shorter_last_tile():
    assert tile_count(10, 4) == 3 and tile_count(8, 4) == 2 and tile_count(3, 8) == 1
    np.testing.assert_array_equal(tile_of(10, 4), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2])


def test_key_states_after_two_tiles_of_three_keys():
    visible = np.array([True] * 7 + [False])  # the last key is masked
    states = key_states(8, 3, 2, visible)
    assert states.tolist() == [SEEN] * 3 + [CURRENT] * 3 + [AHEAD, HIDDEN]


def test_tiled_errors_are_rounding_in_each_precision_with_and_without_the_mask():
    q, k, v = toy_qkv(40, 8, 0)
    errors = tiled_errors(q, k, v, (4, 16, 64))
    assert errors.shape == (2, len(DTYPES), 3)
    assert errors[:, 0].max() <= 2e-15  # float64
    assert 0 < errors[:, 1].max() <= 1e-6  # float32: rounding, not zero
    # the causal, float32, block-16 entry is exactly the page's comparison
    q32, k32, v32 = (x.astype(np.float32) for x in (q, k, v))
    tiled, _ = flash_attention(q32, k32, v32, 16, causal_mask(40))
    ref, _ = scaled_dot_product_attention(q32, k32, v32, causal_mask(40))
    assert errors[1, 1, 1] == float(np.abs(tiled.astype(np.float64) - ref).max())


def test_naive_attention_matches_until_exp_overflows_then_gives_nan():
    q, k, v = toy_qkv(12, 4, 1)
    ref, _ = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(naive_attention(q, k, v), ref, atol=1e-12)
    big = naive_attention((q * 400).astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    assert np.isnan(big).any()


def test_growing_logits_break_the_naive_softmax_in_float32_but_not_the_tiled_one():
    q, k, v = toy_qkv(40, 8, 0)
    growth = logit_growth(q, k, v, 8, np.arange(1, 51), causal_mask(40))
    assert growth.tiled.shape == growth.naive.shape == (50,)
    assert np.isfinite(growth.tiled).all() and growth.tiled.max() <= 5e-5
    start = first_nan(growth)
    assert start is not None and 2 < start <= 50
    broke = growth.factors >= start
    assert np.isnan(growth.naive[broke]).all() and np.isfinite(growth.naive[~broke]).all()
    # it breaks once the largest score's exp passes float32's top, e^88.7
    assert growth.top_score[growth.factors == start][0] > np.log(np.finfo(np.float32).max)
    assert np.all(growth.top_score[~broke] <= np.log(np.finfo(np.float32).max) + 1)
    small = logit_growth(q, k, v, 8, np.array([1.0, 2.0]))
    assert first_nan(small) is None


def test_memory_is_the_whole_matrix_against_one_tile_per_query():
    ordinary, tiled = memory_curves(np.array([16, 1024]), 64)
    assert ordinary.tolist() == [256, 1024 * 1024] and tiled.tolist() == [256, 1024 * 64]


def test_traffic_ratios_at_d_64_and_100k_numbers_are_those_of_the_issue():
    tr = traffic_curves(np.array([1024, 4096, 16384]), 64, 100_000)
    np.testing.assert_allclose(tr.ratio, [5.6, 7.1, 7.8], atol=0.05)
    assert (tr.block, tr.query_block) == (391, 64)
    np.testing.assert_array_equal(tr.standard / tr.flash, tr.ratio)


@pytest.mark.parametrize(("d", "sram"), [(64, 100_000), (128, 50_000), (32, 400_000)])
def test_the_ratio_tends_to_its_limit_as_the_text_grows(d, sram):
    limit = traffic_ratio_limit(d, sram)
    far = traffic_curves(np.array([2**24]), d, sram).ratio[0]
    assert far == pytest.approx(limit, rel=1e-3)


def test_a_small_on_chip_memory_and_wide_heads_make_tiling_move_more():
    assert traffic_ratio_limit(256, 50_000) < 1
    assert traffic_curves(np.array([65536]), 256, 50_000).ratio[0] < 1


def toy_row(causal: bool, row: int, tile: int, block: int = 4):
    q, k, v = toy_qkv(12, 3, 5)
    mask = causal_mask(12) if causal else np.ones((12, 12), bool)
    out, trace = flash_attention(q, k, v, block, mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask)
    return tile_row(trace, out, ref, attention_scores(q, k), mask, block, row, tile), out, ref


def test_tile_row_reads_the_trace_and_measures_the_gaps():
    r, out, ref = toy_row(False, 5, 2)
    assert (r.count, r.first, r.last) == (3, 4, 7)
    assert r.m == r.maxima[1] and r.l == r.sums[1] and r.m_before == r.maxima[0]
    assert r.m >= r.m_before and np.isclose(r.alpha, np.exp(r.m_before - r.m))
    assert r.step == ("raised" if r.m > r.m_before else "kept")
    assert r.row_error == np.abs(out[5] - ref[5]).max() < 1e-12
    assert r.error == np.abs(out - ref).max() and r.partial_gap > 0
    assert list(r.states) == [SEEN] * 4 + [CURRENT] * 4 + [AHEAD] * 4


def test_tile_row_first_tile_and_a_masked_tile():
    first, _, _ = toy_row(False, 0, 1)
    assert first.step == "first" and first.m_before == -np.inf and first.alpha == 0.0
    masked, _, _ = toy_row(True, 2, 2)  # query 2 cannot see keys 4-7
    assert masked.step == "masked" and masked.partial_gap == 0.0
    done, _, _ = toy_row(True, 2, 3)
    assert done.partial_gap == 0.0 and (done.states[3:] == HIDDEN).all()


def test_agreement_picks_the_nearest_factor_and_summarises_the_errors():
    q, k, v = toy_qkv(16, 4, 0)
    factors = np.arange(1.0, 41.0)
    a = agreement(q, k, v, 4, None, 30.0, factors, (4, 8))
    assert a.at == 29 and a.factor == 30.0
    assert a.float64_error == a.errors[:, 0].max() < 1e-12
    assert a.float32_error == a.errors[:, 1].max() > a.float64_error
    assert np.isnan(a.naive) == np.isnan(a.growth.naive[29])
    assert a.first_nan == first_nan(a.growth)
