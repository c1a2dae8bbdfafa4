"""core/kv_cache.py: KV-cached decoding equals full causal attention (also grouped-query);
the cost model and the page's helpers (cumulative costs, memory, sampling); grouped-query
attention against torch, the K/V tiling bug and the cache's memory; the /gqa page's toy
heads pooled into groups and what the tiling bug does to each head."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import (
    KVCache,
    cached_causal_attention,
    causal_mask,
    decode_step,
    decode_trace,
    gqa_decode_step,
    grouped_query_attention,
    grouped_query_attention_loop,
    kv_cache_bytes,
    kv_head_of,
    repeat_kv,
    scaled_dot_product_attention,
)
from core.kv_cache import (
    cache_bytes,
    cost_ratio,
    cost_summary,
    cumulative_costs,
    decode_costs,
    kv_numbers_per_token,
    kv_variants,
    pool_heads,
    sample_steps,
    tile_kv,
    tiling_gaps,
    toy_heads,
)
from tests.conftest import optional_module

vals = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)


@st.composite
def qkv(draw):
    n = draw(st.integers(1, 8))
    d_k = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 5))
    q = draw(arrays(np.float64, (n, d_k), elements=vals))
    k = draw(arrays(np.float64, (n, d_k), elements=vals))
    v = draw(arrays(np.float64, (n, d_v), elements=vals))
    return q, k, v


@settings(max_examples=60, deadline=None)
@given(qkv())
def test_cached_decoding_equals_full_causal_attention(inputs):
    q, k, v = inputs
    out, w = cached_causal_attention(q, k, v)
    ref_out, ref_w = scaled_dot_product_attention(q, k, v, mask=causal_mask(q.shape[0]))
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(qkv())
def test_decode_step_t_is_row_t_of_causal_attention_with_t_plus_one_cached_rows(inputs):
    q, k, v = inputs
    _, full_w = scaled_dot_product_attention(q, k, v, mask=causal_mask(q.shape[0]))
    steps = decode_trace(q, k, v)
    assert len(steps) == q.shape[0]
    for t, step in enumerate(steps):
        assert step.t == t
        assert len(step.cache) == t + 1
        assert step.weights.shape == (t + 1,)
        np.testing.assert_array_equal(step.cache.k, k[: t + 1])
        np.testing.assert_array_equal(step.cache.v, v[: t + 1])
        np.testing.assert_allclose(step.weights, full_w[t, : t + 1], rtol=1e-12, atol=1e-14)


def test_cache_append_returns_a_new_cache_and_leaves_the_old_one():
    empty = KVCache.empty(2, 3)
    assert len(empty) == 0 and empty.k.shape == (0, 2) and empty.v.shape == (0, 3)
    one = empty.append(np.ones((1, 2)), np.ones((1, 3)))
    assert len(one) == 1 and len(empty) == 0 and one.k.shape == (1, 2)


def test_first_decode_step_attends_only_to_itself():
    step = decode_step(
        np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([5.0]), KVCache.empty(2, 1)
    )
    np.testing.assert_array_equal(step.weights, [1.0])
    np.testing.assert_array_equal(step.output, [5.0])


def test_decode_costs_tiny_case_by_hand():
    # n=3, d_model=2, d_k=d_v=1. Projecting one token: 2·(2·1 + 1) = 6 multiply-adds.
    # With cache at prefix length L:  6 + L·(1 + 1)           -> L=1,2,3: 8, 10, 12
    # Without cache:  L·6 + L(L+1)/2·(1 + 1)                  -> 6+2=8, 12+6=18, 18+12=30
    # Cache size after the step:  L·(1 + 1)                  -> 2, 4, 6
    c = decode_costs(3, 2, 1, 1)
    np.testing.assert_array_equal(c.with_cache, [8, 10, 12])
    np.testing.assert_array_equal(c.without_cache, [8, 18, 30])
    np.testing.assert_array_equal(c.cache_floats, [2, 4, 6])


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 200), st.integers(1, 64), st.integers(1, 16), st.integers(1, 16))
def test_cache_is_cheaper_after_the_first_token_and_grows_linearly(n, d_model, d_k, d_v):
    c = decode_costs(n, d_model, d_k, d_v)
    assert c.with_cache.shape == c.without_cache.shape == c.cache_floats.shape == (n,)
    assert c.with_cache[0] == c.without_cache[0]  # one token: nothing to reuse yet
    assert np.all(c.with_cache[1:] < c.without_cache[1:])
    np.testing.assert_array_equal(np.diff(c.cache_floats), np.full(n - 1, d_k + d_v))
    assert c.cache_floats[0] == d_k + d_v


# Grouped-query attention: fewer key/value heads than query heads, and its cache.


def test_repeat_kv_gives_query_head_i_the_key_head_i_over_rep():
    k = np.arange(3)[:, None, None] * np.ones((3, 2, 4))  # head j filled with j
    rep = repeat_kv(k, 3)  # (9, 2, 4)
    assert rep.shape == (9, 2, 4)
    assert rep[:, 0, 0].tolist() == [i // 3 for i in range(9)]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 6), st.booleans(), st.integers(0, 10_000)
)
def test_grouped_query_attention_equals_its_per_head_loop(h_kv, rep, n, causal, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(h_kv * rep, n, 4))
    k, v = rng.normal(size=(h_kv, n, 4)), rng.normal(size=(h_kv, n, 3))
    mask = causal_mask(n) if causal else None
    out, w = grouped_query_attention(q, k, v, mask)
    ref_out, ref_w = grouped_query_attention_loop(q, k, v, mask)
    np.testing.assert_allclose(out, ref_out, atol=1e-14)
    np.testing.assert_allclose(w, ref_w, atol=1e-14)


def test_the_per_head_loop_gives_query_head_i_the_key_value_head_i_over_rep():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(6, 4, 3)), rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 2))
    out, w = grouped_query_attention_loop(q, k, v, causal_mask(4))
    for i in range(6):
        o_i, w_i = scaled_dot_product_attention(q[i], k[i // 3], v[i // 3], causal_mask(4))
        np.testing.assert_array_equal(out[i], o_i)
        np.testing.assert_array_equal(w[i], w_i)


def test_a_layers_cache_has_a_row_block_per_kv_head_and_counts_tokens_and_bytes():
    empty = KVCache.empty(4, 4, h_kv=3, dtype=np.float32)
    assert len(empty) == 0 and empty.nbytes == 0 and empty.k.shape == (3, 0, 4)
    grown = empty.append(np.ones((3, 2, 4), np.float32), np.ones((3, 2, 4), np.float32))
    assert len(empty) == 0 and len(grown) == 2
    assert grown.k.shape == (3, 2, 4) and grown.nbytes == 2 * 3 * 2 * 4 * 4


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.integers(0, 6), st.integers(0, 10_000))
def test_gqa_prefill_then_steps_equals_full_causal_attention(n, split, seed):
    split = min(split, n - 1)
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(4, n, 5)), rng.normal(size=(2, n, 5)), rng.normal(size=(2, n, 5))
    full_out, full_w = grouped_query_attention(q, k, v, causal_mask(n))
    cache = KVCache.empty(5, 5, h_kv=2)
    outs = []
    for lo, hi in [(0, split + 1), *((t, t + 1) for t in range(split + 1, n))]:
        out, w, cache = gqa_decode_step(q[:, lo:hi], k[:, lo:hi], v[:, lo:hi], cache)
        assert w.shape == (4, hi - lo, hi)
        np.testing.assert_allclose(w, full_w[:, lo:hi, :hi], atol=1e-12)
        outs.append(out)
    assert len(cache) == n
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full_out, atol=1e-12)


def test_cumulative_costs_and_ratio_by_hand():
    # decode_costs(3, 2, 1, 1): with 8, 10, 12; without 8, 18, 30 (see test_kv_cache).
    c = cumulative_costs(decode_costs(3, 2, 1, 1))
    np.testing.assert_array_equal(c.with_cache, [8, 18, 30])
    np.testing.assert_array_equal(c.without_cache, [8, 26, 56])
    np.testing.assert_array_equal(c.cache_floats, [2, 4, 6])
    np.testing.assert_allclose(cost_ratio(decode_costs(3, 2, 1, 1)), [1.0, 1.8, 2.5])


def test_cost_summary_of_gpt2_small_at_1024_tokens():
    cv = cost_summary(1024, 768, 12)  # d_k = d_v = d_model for all the heads together
    per = decode_costs(1024, 768, 768, 768)
    np.testing.assert_array_equal(cv.per_step.with_cache, per.with_cache)
    np.testing.assert_array_equal(cv.total.without_cache, np.cumsum(per.without_cache))
    assert cv.bytes32[-1] == 75_497_472 == 2 * cv.bytes16[-1]  # 72 MiB in float32
    assert cv.step_ratio == per.without_cache[-1] / per.with_cache[-1]
    assert cv.total_ratio == per.without_cache.sum() / per.with_cache.sum()
    assert cv.total_ratio < cv.step_ratio  # the early steps save less


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


# Grouped-query attention: the right and the wrong way to share K/V heads, torch, memory.


def test_tile_kv_repeats_the_whole_stack_the_classic_bug():
    k = np.arange(3)[:, None, None] * np.ones((3, 2, 4))  # head j filled with j
    tiled = tile_kv(k, 3)  # (9, 2, 4)
    assert tiled.shape == repeat_kv(k, 3).shape == (9, 2, 4)
    assert tiled[:, 0, 0].tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2]
    assert repeat_kv(k, 3)[:, 0, 0].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_kv_head_of_each_query_head_right_and_tiled():
    assert kv_head_of(9, 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert kv_head_of(9, 3, tiled=True).tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2]
    assert kv_head_of(4, 4).tolist() == kv_head_of(4, 4, tiled=True).tolist() == [0, 1, 2, 3]
    assert kv_head_of(4, 1).tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="split evenly"):
        kv_head_of(9, 2)


def test_repeat_kv_and_tile_kv_give_the_heads_kv_head_of_names():
    k = np.random.default_rng(0).normal(size=(3, 4, 2))
    np.testing.assert_array_equal(repeat_kv(k, 3), k[kv_head_of(9, 3)])
    np.testing.assert_array_equal(tile_kv(k, 3), k[kv_head_of(9, 3, tiled=True)])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 6), st.integers(0, 10_000))
def test_tiling_gives_the_same_attention_only_when_nothing_is_shared_or_all_is(h_kv, rep, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(h_kv * rep, n, 4))
    k, v = rng.normal(size=(h_kv, n, 4)), rng.normal(size=(h_kv, n, 3))
    right, _ = grouped_query_attention(q, k, v, causal_mask(n))
    wrong, _ = scaled_dot_product_attention(q, tile_kv(k, rep), tile_kv(v, rep), causal_mask(n))
    if h_kv == 1 or rep == 1:
        np.testing.assert_array_equal(wrong, right)
    else:
        assert np.abs(wrong - right).max() > 1e-6


def test_mha_and_mqa_are_the_two_ends_of_grouped_query_attention():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(4, 5, 3)), rng.normal(size=(4, 5, 3)), rng.normal(size=(4, 5, 2))
    mha, w_mha = grouped_query_attention(q, k, v)
    ref, w_ref = scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(mha, ref)
    np.testing.assert_array_equal(w_mha, w_ref)
    mqa, _ = grouped_query_attention(q, k[:1], v[:1])
    ref1, _ = scaled_dot_product_attention(q, k[0], v[0])  # one K/V for all heads broadcasts
    np.testing.assert_allclose(mqa, ref1, atol=1e-15)


def test_grouped_query_attention_refuses_heads_that_do_not_split_and_zeroes_blind_rows():
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match="split"):
        grouped_query_attention(rng.normal(size=(4, 2, 3)), *rng.normal(size=(2, 3, 2, 3)))
    q, k, v = rng.normal(size=(4, 3, 2)), rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2))
    mask = causal_mask(3)
    mask[1] = False
    out, w = grouped_query_attention(q, k, v, mask)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(w[:, 1], 0.0)
    np.testing.assert_array_equal(out[:, 1], 0.0)


@pytest.mark.parametrize(("h", "h_kv"), [(9, 3), (8, 2), (6, 6), (4, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_attention_equals_torch_with_enable_gqa(h, h_kv, causal):
    torch = optional_module("torch")
    rng = np.random.default_rng(h * 10 + h_kv)
    q, k, v = (
        rng.normal(size=(h, 7, 8)),
        rng.normal(size=(h_kv, 7, 8)),
        rng.normal(size=(h_kv, 7, 5)),
    )
    out, _ = grouped_query_attention(q, k, v, causal_mask(7) if causal else None)
    t = [torch.from_numpy(x) for x in (q, k, v)]
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ref = sdpa(*t, is_causal=causal, enable_gqa=True).numpy()
    np.testing.assert_allclose(out, ref, atol=1e-12)


def test_kv_numbers_per_token_by_hand_and_for_the_three_designs():
    assert kv_numbers_per_token(layers=2, h_kv=3, d_head=4) == 2 * 2 * 3 * 4
    heads = kv_variants(h=12, h_kv=4)
    assert heads == {"MHA": 12, "GQA": 4, "MQA": 1}
    per = {name: kv_numbers_per_token(2, n, 4) for name, n in heads.items()}
    assert per["MHA"] == 3 * per["GQA"] == 12 * per["MQA"]


def test_kv_cache_bytes_for_one_token_and_along_a_context():
    assert kv_cache_bytes(1, 2, 3, 4, 4) == 48 * 4
    assert isinstance(kv_cache_bytes(10, 2, 3, 4, 2), int)
    np.testing.assert_array_equal(kv_cache_bytes(np.array([0, 1, 5]), 2, 3, 4, 2), [0, 96, 480])


# ---- the /gqa page's experiments


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
