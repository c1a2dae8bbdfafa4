"""core/llama.py on a tiny random Llama: norms, RoPE (GGUF's interleaved pairs), causal
grouped-query attention, the cached decoder and generation. The real model is checked
against transformers in tests/models/test_smollm.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.llama as llama
from core.masks import causal_mask, sliding_window_mask
from core.multihead import split_heads
from core.sampling import Sampling
from tests.conftest import TINY_IDS as IDS
from tests.conftest import tiny_llama as tiny

CFG = tiny().config


def test_rms_norm_hand_case():
    x = np.array([[3.0, 4.0]])  # mean square 12.5
    out = llama.rms_norm(x, np.array([1.0, 2.0]), eps=0.0)
    np.testing.assert_allclose(out, [[3 / np.sqrt(12.5), 8 / np.sqrt(12.5)]])


def test_rope_at_position_zero_is_the_identity_and_keeps_norms():
    x = np.random.default_rng(1).normal(size=(2, 5, 8))  # (h, n, d)
    cos, sin = llama.rope_angles(np.arange(5), 8, 1e4)
    out = llama.apply_rope(x, cos, sin)
    np.testing.assert_allclose(out[:, 0], x[:, 0], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 30))
def test_rope_scores_depend_only_on_the_distance(p, q, shift):
    rng = np.random.default_rng(p * 100 + q)
    a, b = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))

    def score(i: int, j: int) -> float:
        ci, si = llama.rope_angles(np.array([i]), 8, 1e4)
        cj, sj = llama.rope_angles(np.array([j]), 8, 1e4)
        return float((llama.apply_rope(a, ci, si) @ llama.apply_rope(b, cj, sj).T)[0, 0])

    assert score(p, q) == pytest.approx(score(p + shift, q + shift), rel=1e-3, abs=1e-3)


def rotate_half_rope(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Hugging Face's form: pair feature i with i + d/2 (written here independently)."""
    d = x.shape[-1]
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    ang = positions[:, None] * inv  # (n, d/2)
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    half = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)
    return x * cos + half * sin


def test_interleaved_rope_on_gguf_rows_equals_rotate_half_on_original_rows():
    # GGUF (llama.cpp's converter) reorders each head's rows: new 2i <- old i, 2i+1 <- old i+d/2
    d, n = 8, 6
    x = np.random.default_rng(2).normal(size=(n, d))
    perm = np.stack([np.arange(d // 2), np.arange(d // 2) + d // 2], axis=1).ravel()  # (d,)
    cos, sin = llama.rope_angles(np.arange(n), d, 1e4)
    ours = llama.apply_rope(x[:, perm], cos, sin)
    theirs = rotate_half_rope(x, np.arange(n).astype(float), 1e4)
    np.testing.assert_allclose(ours, theirs[:, perm], rtol=1e-5, atol=1e-5)


def test_side_by_side_projections_equal_the_separate_ones():
    rng = np.random.default_rng(1)
    d, f, hd = CFG.d_model, CFG.d_ff, CFG.d_head
    w_q, w_k, w_v = (rng.normal(size=(d, m * hd)) for m in (6, 2, 2))
    w_gate, w_up, w_down = rng.normal(size=(d, f)), rng.normal(size=(d, f)), rng.normal(size=(f, d))
    layer = llama.LayerWeights.of(
        np.ones(d),
        (w_q, w_k, w_v),
        rng.normal(size=(6 * hd, d)),
        np.ones(d),
        (w_gate, w_up),
        w_down,
    )
    for n in (5, 1):  # several tokens (blocks one by one), one token (one wide product)
        x, pos = rng.normal(size=(n, d)), np.arange(n)
        q, k, v = llama.rotated_qkv(x, layer, CFG, pos)
        xn = llama.rms_norm(x, np.ones(d), CFG.eps)
        cos, sin = llama.rope_angles(pos, hd, CFG.rope_base)
        rope = llama.apply_rope
        np.testing.assert_allclose(q, rope(split_heads(xn @ w_q, 6), cos, sin), rtol=1e-12)
        np.testing.assert_allclose(k, rope(split_heads(xn @ w_k, 2), cos, sin), rtol=1e-12)
        np.testing.assert_allclose(v, split_heads(xn @ w_v, 2), rtol=1e-12)
        gate = x @ w_gate
        expected = (gate / (1 + np.exp(-gate)) * (x @ w_up)) @ w_down
        np.testing.assert_allclose(llama.swiglu(x, layer), expected, rtol=1e-12)


def test_forward_shapes_and_causal_rows():
    out = llama.forward(tiny(), IDS)
    n = len(IDS)
    assert out.hidden.shape == (CFG.n_layers + 1, n, CFG.d_model)
    assert out.attention.shape == (CFG.n_layers, CFG.n_heads, n, n)
    assert out.logits.shape == (n, CFG.vocab)
    assert np.triu(out.attention, 1).max() == 0.0  # no weight on any later token
    np.testing.assert_allclose(out.attention.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(out.hidden[0], tiny().embed[IDS])


def test_last_token_logits_match_the_full_logits():
    full = llama.forward(tiny(), IDS).logits
    last = llama.forward(tiny(), IDS, all_logits=False).logits
    np.testing.assert_allclose(last, full[-1:], rtol=1e-12)


def test_a_prefix_gives_the_same_rows_as_the_whole_sequence():
    whole = llama.forward(tiny(), IDS).attention
    prefix = llama.forward(tiny(), IDS[:5]).attention
    np.testing.assert_allclose(whole[:, :, :5, :5], prefix, atol=1e-12)


def test_prefill_then_one_token_at_a_time_equals_the_full_forward():
    full = llama.forward(tiny(), IDS)
    logits, att, caches = llama.decode(tiny(), IDS[:3], llama.empty_caches(CFG))
    np.testing.assert_allclose(logits, full.logits[:3], atol=1e-10)
    np.testing.assert_allclose(att, full.attention[:, :, :3, :3], atol=1e-12)
    for t in range(3, len(IDS)):
        logits, att, caches = llama.decode(tiny(), [IDS[t]], caches)
        assert len(caches[0]) == t + 1
        assert caches[0].k.shape == (CFG.n_kv_heads, t + 1, CFG.d_head)
        np.testing.assert_allclose(logits[0], full.logits[t], atol=1e-10)
        np.testing.assert_allclose(att[:, :, 0], full.attention[:, :, t, : t + 1], atol=1e-12)


def test_greedy_generation_is_the_same_with_and_without_the_cache():
    kw = {"n_tokens": 6}  # greedy: the default sampling
    on = list(llama.generate_steps(tiny(), IDS[:4], use_cache=True, **kw))
    off = list(llama.generate_steps(tiny(), IDS[:4], use_cache=False, **kw))
    assert [s.token for s in on] == [s.token for s in off]
    assert [s.cache_len for s in on] == list(range(4, 10))
    assert all(s.cache_len == 0 and s.cache_bytes == 0 for s in off)
    per_token = 2 * CFG.n_layers * CFG.n_kv_heads * CFG.d_head * 8  # K and V, float64
    assert [s.cache_bytes for s in on] == [n * per_token for n in range(4, 10)]
    for a, b in zip(on, off, strict=True):
        np.testing.assert_allclose(a.logits, b.logits, atol=1e-10)
        assert a.token == int(np.argmax(a.logits))


def test_sampling_is_reproducible_with_a_seed_and_stops_at_the_stop_token():
    def tokens(seed: int, stop: int | None = None) -> list[int]:
        hot = Sampling(2.0, seed=seed)
        steps = llama.generate_steps(tiny(), IDS[:4], 12, sampling=hot, stop=stop)
        return [s.token for s in steps]

    assert tokens(7) == tokens(7)
    assert len({tuple(tokens(s)) for s in range(5)}) > 1  # hot sampling varies with the seed
    first = tokens(7)
    stopped = tokens(7, stop=first[2])
    assert stopped == first[: first.index(first[2]) + 1]


def test_first_token_share_ignores_the_first_query():
    att = np.zeros((1, 1, 3, 3))
    att[0, 0] = [[1.0, 0, 0], [0.8, 0.2, 0], [0.4, 0.1, 0.5]]
    np.testing.assert_allclose(llama.first_token_share(att), [[0.6]])


def test_forward_with_the_causal_mask_given_is_the_default_forward_exactly():
    default = llama.forward(tiny(), IDS)
    given_mask = llama.forward(tiny(), IDS, mask=causal_mask(len(IDS)))
    np.testing.assert_array_equal(given_mask.logits, default.logits)
    np.testing.assert_array_equal(given_mask.attention, default.attention)


def test_a_sliding_window_changes_only_the_tokens_past_the_window():
    full = llama.forward(tiny(), IDS)
    windowed = llama.forward(tiny(), IDS, mask=sliding_window_mask(len(IDS), 3))
    # tokens 0..2 see all they ever could: every layer computes the same rows for them
    np.testing.assert_array_equal(windowed.logits[:3], full.logits[:3])
    assert np.abs(windowed.logits[3:] - full.logits[3:]).max(axis=-1).min() > 1e-6
    assert np.all(windowed.attention[:, :, 3:, 0] == 0.0)  # token 0 is out of their window
    with_sink = llama.forward(tiny(), IDS, mask=sliding_window_mask(len(IDS), 3, sinks=1))
    assert np.all(with_sink.attention[:, :, :, 0] > 0.0)


def test_lean_forward_keeps_the_last_logits_and_first_token_shares_of_the_full_forward():
    mask = sliding_window_mask(len(IDS), 4, sinks=1)
    full = llama.forward(tiny(), IDS, mask=mask)
    logits, share = llama.lean_forward(tiny(), IDS, 3, mask)
    np.testing.assert_allclose(logits, full.logits[-3:], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(share, llama.first_token_share(full.attention))


def test_token_nll_by_hand():
    # two equal logits: probability 1/2 each, −log(1/2) = ln 2; a likely token costs little
    nll = llama.token_nll(np.array([[0.0, 0.0], [0.0, 5.0]]), [1, 1])
    np.testing.assert_allclose(nll, [np.log(2.0), np.log1p(np.exp(-5.0))], rtol=1e-12)
    big = llama.token_nll(np.array([[1000.0, 999.0]], dtype=np.float32), [1])
    np.testing.assert_allclose(big, [np.log1p(np.exp(1.0))], rtol=1e-12)  # no overflow


def test_parameter_count_counts_every_array_once():
    w = tiny()
    d, f, v, hd = CFG.d_model, CFG.d_ff, CFG.vocab, CFG.d_head
    per_layer = d + d * (CFG.n_heads + 2 * CFG.n_kv_heads) * hd + CFG.n_heads * hd * d
    per_layer += d + d * 2 * f + f * d
    assert llama.parameter_count(w) == v * d + d + CFG.n_layers * per_layer


def test_mha_cache_bytes_is_h_over_h_kv_times_the_grouped_cache():
    assert llama.mha_cache_bytes(1024, CFG) == 1024 * 3  # 6 query heads share 2 kv heads


def test_the_forward_pass_keeps_the_keys_and_values_a_generation_goes_on_from():
    full = llama.forward(tiny(), IDS)
    _, _, decoded = llama.decode(tiny(), IDS[:-1], llama.empty_caches(CFG))
    for kept, made in zip(llama.forward(tiny(), IDS[:-1]).caches, decoded, strict=True):
        np.testing.assert_allclose(kept.k, made.k, atol=1e-12)
        np.testing.assert_allclose(kept.v, made.v, atol=1e-12)
    resumed = llama.forward(tiny(), IDS[:-1]).caches
    logits, _, _ = llama.decode(tiny(), IDS[-1:], resumed)
    np.testing.assert_allclose(logits[0], full.logits[-1], atol=1e-10)


def test_weight_bytes_count_every_parameter_once_at_its_width():
    assert llama.weight_bytes(tiny()) == llama.parameter_count(tiny()) * 8  # float64
