"""core/findings/flash.py: one query's row after some tiles (its keys, the online
softmax's step), the first factor that breaks the naive softmax, the error summary."""

import numpy as np

from core import attention_scores, causal_mask, flash_attention, scaled_dot_product_attention
from core.findings.flash import agreement, first_nan, tile_row
from core.flash import AHEAD, CURRENT, HIDDEN, SEEN, LogitGrowth, toy_qkv


def test_first_nan_is_the_first_factor_whose_naive_softmax_broke():
    factors, zeros = np.array([1.0, 2.0, 3.0, 4.0]), np.zeros(4)
    broke = LogitGrowth(factors, zeros, zeros, np.array([1e-7, 2e-7, np.nan, np.nan]))
    assert first_nan(broke) == 3.0
    assert first_nan(LogitGrowth(factors, zeros, zeros, zeros)) is None


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
