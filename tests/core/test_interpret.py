"""core/interpret.py on the tiny random Llama in float64: the trace is the forward pass bit
for bit and adds up exactly, the logit lens ends at the model's logits, head ablation against
a loop written here, the packed ranking of every head against ablating each alone; attention
rollout and the uniform baseline by hand and on Hypothesis-drawn attention. SmolLM2 itself:
tests/models/test_smollm.py."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import core.llama as llama
from core import interpret
from core.kv_cache import grouped_query_attention
from core.masks import causal_mask
from core.multihead import merge_heads
from core.softmax_numerics import softmax
from tests.conftest import TINY_IDS as IDS
from tests.conftest import tiny_llama as tiny

CFG = tiny().config
# Ranking every head in one packed pass takes products of more rows than ablating one head
# alone, which BLAS may sum in another order: float64 rounding, measured at most 1.8e-15 on
# logits up to 2.8. An ablation slip moves them by more than 1e-3.
PACKED_TOL = 1e-12
# The loop written by hand runs the same products as core.interpret and agrees bit for bit
# today; a bound at rounding level keeps it independent of how core.llama orders its sums.
HAND_TOL = 1e-12


def last_logits(ids: list[int]) -> np.ndarray:
    """The tiny model's own last-token logits. Shapes: ``(n,)`` -> ``(vocab,)``."""
    return llama.forward(tiny(), ids, all_logits=False).logits[-1]


def test_trace_is_the_forward_pass_bit_for_bit():
    t, f = interpret.trace(tiny(), IDS), llama.forward(tiny(), IDS)
    assert t.resid.shape == (CFG.n_layers + 1, len(IDS), CFG.d_model)
    assert t.attn_out.shape == t.mlp_out.shape == (CFG.n_layers, len(IDS), CFG.d_model)
    np.testing.assert_array_equal(t.resid, f.hidden)
    np.testing.assert_array_equal(t.attention, f.attention)
    np.testing.assert_array_equal(t.logits, last_logits(IDS))


def test_each_block_adds_exactly_its_attention_and_its_swiglu():
    t = interpret.trace(tiny(), IDS)
    np.testing.assert_array_equal(t.resid[0], tiny().embed[IDS])
    np.testing.assert_array_equal(t.resid[1:], t.resid[:-1] + t.attn_out + t.mlp_out)
    assert (np.abs(t.attn_out) > 0).all() and (np.abs(t.mlp_out) > 0).all()


def test_norms_are_the_l2_norms_at_one_position():
    t = interpret.trace(tiny(), IDS)
    resid, attn, mlp = interpret.norms(t)
    assert resid.shape == (CFG.n_layers + 1,) and attn.shape == mlp.shape == (CFG.n_layers,)
    np.testing.assert_allclose(resid, np.sqrt((t.resid[:, -1] ** 2).sum(-1)), rtol=1e-14)
    resid, attn, mlp = interpret.norms(t, pos=2)
    np.testing.assert_allclose(attn, np.sqrt((t.attn_out[:, 2] ** 2).sum(-1)), rtol=1e-14)
    np.testing.assert_allclose(mlp, np.sqrt((t.mlp_out[:, 2] ** 2).sum(-1)), rtol=1e-14)


def test_the_logit_lens_ends_at_the_models_logits_and_starts_at_the_embedding():
    t = interpret.trace(tiny(), IDS)
    lens = interpret.logit_lens(tiny(), t.resid[:, -1])
    assert lens.shape == (CFG.n_layers + 1, CFG.vocab)
    np.testing.assert_array_equal(lens[-1], t.logits)  # the same one-row product
    # the first row: the last token's own embedding, normed, against every embedding
    emb = tiny().embed[IDS[-1]]
    by_hand = tiny().out_norm * emb / np.sqrt(np.mean(emb**2) + CFG.eps) @ tiny().embed.T
    np.testing.assert_allclose(lens[0], by_hand, rtol=0, atol=1e-12)
    # at an earlier position: that position's logits in the full forward (many-row product)
    at_3 = interpret.logit_lens(tiny(), t.resid[:, 3])
    np.testing.assert_allclose(at_3[-1], llama.forward(tiny(), IDS).logits[3], rtol=0, atol=1e-12)


def test_lens_top_lists_the_most_likely_first_and_ties_by_lower_id():
    logits = np.array([[0.0, 2.0, 2.0, 1.0, 2.0], [5.0, 0.0, 0.0, 0.0, 0.0]])
    ids, probs = interpret.lens_top(logits, 3)
    np.testing.assert_array_equal(ids, [[1, 2, 4], [0, 1, 2]])
    np.testing.assert_array_equal(probs, np.take_along_axis(softmax(logits), ids, axis=-1))
    lens = interpret.logit_lens(tiny(), interpret.trace(tiny(), IDS).resid[:, -1])
    ids, probs = interpret.lens_top(lens, 7)
    np.testing.assert_array_equal(ids, np.argsort(-softmax(lens), axis=-1, kind="stable")[:, :7])
    assert (np.diff(probs, axis=-1) <= 0).all()
    assert interpret.lens_top(lens, CFG.vocab)[0].shape == (CFG.n_layers + 1, CFG.vocab)


def ablated_by_hand(ids: list[int], heads: set[tuple[int, int]], mode: str) -> np.ndarray:
    """The decoder written out layer by layer, the listed heads' columns of the merged head
    outputs replaced by hand before W_O. Shapes: ``(n,)`` -> ``(vocab,)``."""
    w, n, d = tiny(), len(ids), CFG.d_head
    x = w.embed[ids]  # (n, d_model)
    for li, layer in enumerate(w.layers):
        q, k, v = llama.rotated_qkv(x, layer, CFG, np.arange(n))
        mixed, _ = grouped_query_attention(q, k, v, causal_mask(n))
        merged = merge_heads(mixed).copy()  # (n, h * d_head)
        for h in (h for at, h in heads if at == li):
            cols = merged[:, h * d : (h + 1) * d]  # (n, d_head)
            cols[:] = 0.0 if mode == "zero" else cols.mean(axis=0)
        x = x + merged @ layer.w_o
        x = x + llama.swiglu(llama.rms_norm(x, layer.ffn_norm, CFG.eps), layer)
    return llama.output_logits(x[-1:], w)[0]


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablating_nothing_is_the_forward_pass_bit_for_bit(mode):
    np.testing.assert_array_equal(interpret.ablated_logits(tiny(), IDS, [], mode), last_logits(IDS))


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("heads", [{(0, 0)}, {(1, 4)}, {(2, 5), (0, 3), (2, 1)}])
def test_ablation_equals_the_loop_written_by_hand(mode, heads):
    got = interpret.ablated_logits(tiny(), IDS, heads, mode)
    np.testing.assert_allclose(got, ablated_by_hand(IDS, heads, mode), rtol=0, atol=HAND_TOL)
    assert np.abs(got - last_logits(IDS)).max() > 1e-3  # it did change something


def test_zeroing_every_head_of_a_layer_removes_its_attention_exactly():
    """x + 0 @ W_O is x: the same as a model whose layer 1 has no attention at all."""
    w, n = tiny(), len(IDS)
    x = w.embed[IDS]
    for li, layer in enumerate(w.layers):
        if li == 1:
            x = x + llama.swiglu(llama.rms_norm(x, layer.ffn_norm, CFG.eps), layer)
        else:
            x, _, _ = llama.block(x, layer, CFG, causal_mask(n))
    every = {(1, h) for h in range(CFG.n_heads)}
    got = interpret.ablated_logits(w, IDS, every, "zero")
    np.testing.assert_array_equal(got, llama.output_logits(x[-1:], w)[0])


def test_mean_ablation_of_a_single_token_changes_nothing_and_zero_is_the_harsher():
    """One position: its mean is itself. Longer: zero moves the logits further than mean."""
    one = IDS[:1]
    np.testing.assert_array_equal(
        interpret.ablated_logits(tiny(), one, {(0, 2), (2, 0)}, "mean"), last_logits(one)
    )
    every = {(layer, h) for layer in range(CFG.n_layers) for h in range(CFG.n_heads)}
    zero, mean = (interpret.ablated_logits(tiny(), IDS, every, m) for m in ("zero", "mean"))
    base = last_logits(IDS)
    assert np.abs(zero - base).max() > np.abs(mean - base).max() > 1e-3


def test_ablation_refuses_unknown_heads_and_modes():
    with pytest.raises(ValueError, match="no head"):
        interpret.ablated_logits(tiny(), IDS, {(0, CFG.n_heads)}, "zero")
    with pytest.raises(ValueError, match="no head"):
        interpret.ablated_logits(tiny(), IDS, {(-1, 0)}, "zero")
    with pytest.raises(ValueError, match="mode"):
        interpret.ablated_logits(tiny(), IDS, {(0, 0)}, "random")
    with pytest.raises(ValueError, match="no head"):
        interpret.head_effects(tiny(), IDS, CFG.n_layers, 3, None, "zero")


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("layer", range(CFG.n_layers))
def test_head_effects_equal_ablating_each_head_alone(layer, mode):
    target, other = 7, 11
    effects = interpret.head_effects(tiny(), IDS, layer, target, other, mode)
    alone = np.stack(
        [interpret.ablated_logits(tiny(), IDS, {(layer, h)}, mode) for h in range(CFG.n_heads)]
    )  # (h, vocab)
    assert effects.prob.shape == effects.diff.shape == (CFG.n_heads,)
    np.testing.assert_allclose(effects.prob, softmax(alone)[:, target], rtol=0, atol=PACKED_TOL)
    np.testing.assert_allclose(
        effects.diff, alone[:, target] - alone[:, other], rtol=0, atol=PACKED_TOL
    )
    base = last_logits(IDS)
    assert effects.base_prob == softmax(base)[target]
    assert effects.base_diff == base[target] - base[other]
    just_target = interpret.head_effects(tiny(), IDS, layer, target, None, mode)
    np.testing.assert_allclose(just_target.diff, alone[:, target], rtol=0, atol=PACKED_TOL)
    assert just_target.base_diff == base[target]


def test_attention_paid_is_each_heads_weight_from_query_to_key():
    att = interpret.trace(tiny(), IDS).attention
    paid = interpret.attention_paid(att, 5, 2)
    assert paid.shape == (CFG.n_layers, CFG.n_heads)
    assert paid[1, 4] == att[1, 4, 5, 2]
    assert (interpret.attention_paid(att, 2, 5) == 0).all()  # causal: no looking ahead


def test_rollout_of_one_layer_is_the_formula():
    att = np.random.default_rng(3).random((1, 4, 5, 5))  # rows not normalised on purpose
    for r in (0.0, 0.3, 0.5, 1.0):
        a = (1 - r) * att[0].mean(axis=0) + r * np.eye(5)
        expected = a / a.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(interpret.rollout(att, r), expected[None], atol=1e-15)


def test_rollout_of_two_layers_by_hand():
    layer0 = [[[0.6, 0.4], [0.2, 0.8]], [[1.0, 0.0], [0.4, 0.6]]]  # head mean [.8 .2; .3 .7]
    layer1 = [[[0.2, 0.8], [0.6, 0.4]], [[0.2, 0.8], [0.6, 0.4]]]
    out = interpret.rollout(np.array([layer0, layer1]), residual=0.5)
    a0 = [[0.9, 0.1], [0.15, 0.85]]  # 0.5 · mean + 0.5 · I
    np.testing.assert_allclose(out[0], a0, atol=1e-15)
    # A1 = [.6 .4; .3 .7]; A1 @ A0, the later layer on the left (A0 @ A1 would be
    # [.57 .43; .345 .655])
    np.testing.assert_allclose(out[1], [[0.6, 0.4], [0.375, 0.625]], atol=1e-15)


def test_rollout_renormalises_a_row_the_mask_emptied():
    att = np.zeros((1, 2, 3, 3))
    att[:, :, :2] = [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]  # query 2 attends to nothing
    out = interpret.rollout(att, residual=0.5)
    np.testing.assert_allclose(out[0, 2], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(out[0, 0], [0.75, 0.25, 0.0])


@st.composite
def attention_maps(draw):
    """Attention of a few layers and heads (the softmax of drawn scores, some keys maybe
    masked, a row with no key all zero) and a residual share. Shapes: -> ``((L, h, n, n), r)``."""
    layers, heads, n = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    scores = draw(arrays(np.float64, (layers, heads, n, n), elements=st.floats(-6.0, 6.0)))
    mask = draw(st.none() | arrays(np.bool_, (n, n)))
    residual = draw(st.floats(0.0, 1.0))
    if mask is not None:
        assume(residual > 0 or mask.any(axis=-1).all())  # attention alone needs weight per row
        scores = np.where(mask, scores, -np.inf)
    return softmax(scores, axis=-1), residual


@settings(max_examples=150, deadline=None)
@given(attention_maps())
def test_every_rollout_row_sums_to_one(drawn):
    att, residual = drawn
    out = interpret.rollout(att, residual)
    assert out.shape == (att.shape[0], *att.shape[2:])
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert (out >= 0).all()


def test_uniform_baseline_spreads_each_row_over_the_keys_it_may_see():
    np.testing.assert_array_equal(interpret.uniform_baseline(4), np.full((4, 4), 0.25))
    causal = interpret.uniform_baseline(3, causal_mask(3))
    np.testing.assert_allclose(causal, [[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])
    mask = np.array([[True, False, True], [False, False, False], [False, True, False]])
    np.testing.assert_array_equal(
        interpret.uniform_baseline(3, mask), [[0.5, 0, 0.5], [0, 0, 0], [0, 1, 0]]
    )
