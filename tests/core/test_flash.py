"""core/flash.py: the tiled online softmax equals ordinary attention (float64, float32, any
tile size, masks, fully masked rows, large logits), its trace, and the paper's traffic model;
the /flash page's experiments (tiles, errors per tile size and precision, growing logits,
memory and traffic curves)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import (
    FlashTrace,
    attention_scores,
    causal_mask,
    flash_attention,
    scaled_dot_product_attention,
)
from core.flash import (
    AHEAD,
    CURRENT,
    DTYPES,
    HIDDEN,
    SEEN,
    flash_attention_io,
    flash_block_sizes,
    key_states,
    logit_growth,
    memory_curves,
    naive_attention,
    scores_held,
    standard_attention_io,
    tile_count,
    tile_of,
    tiled_errors,
    toy_qkv,
    traffic_curves,
    traffic_ratio_limit,
)
from core.softmax_numerics import softmax_naive
from tests.conftest import optional_module

vals = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)


@st.composite
def tiled_inputs(draw):
    n_q, n_k = draw(st.integers(1, 9)), draw(st.integers(1, 23))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    q = draw(arrays(np.float64, (n_q, d_k), elements=vals))
    k = draw(arrays(np.float64, (n_k, d_k), elements=vals))
    v = draw(arrays(np.float64, (n_k, d_v), elements=vals))
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_k)))
    return q, k, v, mask, draw(st.integers(1, 30))


@settings(max_examples=120, deadline=None)
@given(tiled_inputs())
def test_tiled_attention_equals_ordinary_attention_in_float64(inputs):
    q, k, v, mask, block = inputs
    out, trace = flash_attention(q, k, v, block, mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask)
    assert out.shape == ref.shape and out.dtype == np.float64
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12)
    assert np.isfinite(out).all() and not np.isnan(trace.running_sum).any()


def random_qkv(n: int, d: int, dtype: type, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)).astype(dtype) for _ in range(3)]


@pytest.mark.parametrize("block", [16, 32, 64])
@pytest.mark.parametrize("causal", [False, True])
def test_float64_and_float32_match_at_the_usual_tile_sizes_with_a_ragged_last_tile(block, causal):
    n = 200  # not a multiple of 16, 32 or 64
    mask = causal_mask(n) if causal else None
    q, k, v = random_qkv(n, 64, np.float64)
    out, _ = flash_attention(q, k, v, block, mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask)
    assert np.abs(out - ref).max() <= 1e-12
    q32, k32, v32 = (x.astype(np.float32) for x in (q, k, v))
    out32, trace = flash_attention(q32, k32, v32, block, mask)
    assert out32.dtype == trace.running_sum.dtype == np.float32
    assert np.abs(out32 - ref).max() <= 2e-6


def test_a_single_key_gives_its_value_to_every_query():
    q, k, v = np.ones((3, 2)), np.array([[0.5, -1.0]]), np.array([[7.0, 8.0, 9.0]])
    out, trace = flash_attention(q, k, v, block=4)
    np.testing.assert_array_equal(out, np.tile(v, (3, 1)))
    np.testing.assert_array_equal(trace.ends, [1])
    np.testing.assert_array_equal(trace.running_sum, [[1.0, 1.0, 1.0]])  # exp(s − m) = 1


def test_fully_masked_rows_give_zeros_like_ordinary_attention_and_no_nan():
    q, k, v = random_qkv(5, 4, np.float64, seed=3)
    mask = causal_mask(5)
    mask[2] = False  # query 2 sees nothing
    out, trace = flash_attention(q, k, v, 2, mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_array_equal(out[2], np.zeros(4))
    np.testing.assert_allclose(out, ref, atol=1e-12)
    assert np.all(np.isneginf(trace.running_max[:, 2]))  # m stays −∞: no visible key
    np.testing.assert_array_equal(trace.running_sum[:, 2], 0.0)
    assert not np.isnan(trace.outputs).any()
    out_all, _ = flash_attention(q, k, v, 3, np.zeros((5, 5), bool))
    np.testing.assert_array_equal(out_all, np.zeros((5, 4)))


def test_large_logits_stay_finite_tiled_while_a_softmax_without_the_max_overflows():
    q, k, v = random_qkv(200, 64, np.float32, seed=1)
    q = q * np.float32(30)  # scores up to ~130: exp overflows float32 above ~88.7
    mask = causal_mask(200)
    ref64, _ = scaled_dot_product_attention(*(x.astype(np.float64) for x in (q, k, v)), mask)
    for block in (16, 32, 64):
        out, _ = flash_attention(q, k, v, block, mask)
        assert out.dtype == np.float32 and np.isfinite(out).all()
        assert np.abs(out - ref64).max() <= 5e-5  # the scores' own float32 rounding
    naive = softmax_naive(attention_scores(q, k))
    assert np.isnan(naive).any()


def test_the_trace_is_the_running_max_and_sum_and_attention_over_the_keys_so_far():
    q, k, v = random_qkv(7, 3, np.float64, seed=5)
    mask = causal_mask(7)
    out, trace = flash_attention(q, k, v, 3, mask)
    assert isinstance(trace, FlashTrace)
    np.testing.assert_array_equal(trace.ends, [3, 6, 7])
    assert trace.running_max.shape == trace.running_sum.shape == (3, 7)
    assert trace.outputs.shape == (3, 7, 3)
    np.testing.assert_array_equal(trace.outputs[-1], out)
    s = np.where(mask, attention_scores(q, k), -np.inf)  # (7, 7)
    for t, end in enumerate(trace.ends):
        m = s[:, :end].max(axis=-1)  # (7,)
        np.testing.assert_allclose(trace.running_max[t], m, rtol=1e-15)
        np.testing.assert_allclose(trace.running_sum[t], np.exp(s[:, :end] - m[:, None]).sum(-1))
        partial, _ = scaled_dot_product_attention(q, k[:end], v[:end], mask[:, :end])
        np.testing.assert_allclose(trace.outputs[t], partial, atol=1e-12)
    assert np.all(np.diff(trace.running_max, axis=0) >= 0)  # the maximum never falls


def test_a_block_smaller_than_one_key_is_refused():
    q, k, v = random_qkv(2, 2, np.float64)
    with pytest.raises(ValueError, match="block"):
        flash_attention(q, k, v, 0)


@pytest.mark.parametrize("causal", [False, True])
def test_tiled_attention_equals_torch_scaled_dot_product_attention(causal):
    torch = optional_module("torch")
    q, k, v = random_qkv(37, 16, np.float64, seed=2)
    mask = causal_mask(37) if causal else None
    out, _ = flash_attention(q, k, v, 8, mask)
    t = [torch.from_numpy(x) for x in (q, k, v)]
    ref = torch.nn.functional.scaled_dot_product_attention(*t, is_causal=causal).numpy()
    np.testing.assert_allclose(out, ref, atol=1e-12)


def test_scores_held_whole_matrix_versus_one_tile():
    assert scores_held(1024, 1024, 64) == (1024 * 1024, 1024 * 64)
    assert scores_held(3, 5, 64) == (15, 15)


def test_paper_tile_sizes_for_d_64_and_100k_numbers_on_chip():
    assert flash_block_sizes(64, 100_000) == (64, 391)  # B_r = min(⌈M/4d⌉, d), B_c = ⌈M/4d⌉


def test_traffic_counts_by_hand():
    # Standard: 4nd + 4n² = 4·1024·64 + 4·1024²
    assert standard_attention_io(1024, 64) == 262_144 + 4_194_304
    # Flash: 3nd + 2n + ⌈1024/391⌉·(3nd + 4n) = 196 608 + 2048 + 3·(196 608 + 4096)
    assert flash_attention_io(1024, 64, 100_000) == 198_656 + 3 * 200_704


def test_standard_attention_moves_5_6_7_1_and_7_8_times_as_much_at_1k_4k_16k():
    n = np.array([1024, 4096, 16384])
    ratio = standard_attention_io(n, 64) / flash_attention_io(n, 64, 100_000)
    np.testing.assert_array_equal(np.round(ratio, 1), [5.6, 7.1, 7.8])


def test_flash_traffic_grows_as_n_squared_d_squared_over_m():
    n, d, m = 2**20, 64, 100_000
    # T_c·(3nd + 4n) with T_c ≈ 4nd/M: (12d² + 16d)·n²/M, i.e. 12.25·n²d²/M at d = 64
    assert flash_attention_io(n, d, m) / (n * n * d * d / m) == pytest.approx(12.25, rel=0.01)
    # more on-chip memory, fewer passes over the queries
    assert flash_attention_io(n, d, 4 * m) < flash_attention_io(n, d, m) / 3


# ---- the /flash page's experiments


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
    broke = np.isnan(growth.naive)
    start = growth.factors[np.argmax(broke)]
    assert broke.any() and 2 < start <= 50
    np.testing.assert_array_equal(broke, growth.factors >= start)  # broken from there on
    # it breaks once the largest score's exp passes float32's top, e^88.7
    assert growth.top_score[growth.factors == start][0] > np.log(np.finfo(np.float32).max)
    assert np.all(growth.top_score[~broke] <= np.log(np.finfo(np.float32).max) + 1)
    small = logit_growth(q, k, v, 8, np.array([1.0, 2.0]))
    assert np.isfinite(small.naive).all()


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
