"""core/bert.py: the BERT forward pass on small random weights (the real model is checked
against the reference framework in tests/models/test_minilm.py)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import multi_head_attention_loop
from core.bert import (
    BertConfig,
    BertLayer,
    BertWeights,
    attention_block,
    bert_forward,
    embed,
    erf,
    explain_weight,
    gelu,
    head_projections,
    head_ranking,
    key_share,
    layer_norm,
    without_keys,
)

TINY = BertConfig(n_layers=2, n_heads=2, d_model=8, d_ff=16, max_positions=10, eps=1e-12)


def tiny_weights(seed: int = 0, config: BertConfig = TINY) -> BertWeights:
    rng = np.random.default_rng(seed)
    d, f = config.d_model, config.d_ff

    def m(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, shape)

    shapes = [(d, d), (d,)] * 4 + [(d,), (d,), (d, f), (f,), (f, d), (d,), (d,), (d,)]
    gains = {8, 14}  # the two LayerNorm gains: around 1
    layers = tuple(
        BertLayer(*(m(*s) + (k in gains) for k, s in enumerate(shapes)))
        for _ in range(config.n_layers)
    )
    embeddings = m(20, d), m(config.max_positions, d), m(2, d), 1 + m(d), m(d)
    return BertWeights(config, *embeddings, layers)


def test_erf_is_within_the_abramowitz_stegun_bound_of_math_erf():
    x = np.linspace(-6, 6, 24001)
    exact = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - exact).max() <= 1.5e-7
    assert erf(np.array([0.0]))[0] == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(erf(-x), -erf(x), atol=0)  # odd function
    x32 = x.astype(np.float32)
    assert erf(x32).dtype == np.float32
    assert np.abs(erf(x32) - np.array([math.erf(v) for v in x32.astype(float)])).max() <= 5e-7
    assert erf(np.array([1, 2])).dtype == np.float64  # integers: computed in float64


def test_gelu_matches_the_exact_formula_and_keeps_float32():
    x = np.linspace(-8, 8, 1601).astype(np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)])
    out = gelu(x)
    assert out.dtype == np.float32
    assert np.abs(out - exact).max() < 2e-6  # float32: |x| up to 8 times its rounding
    assert gelu(np.array([-10.0]))[0] == pytest.approx(0.0, abs=1e-12)  # far left: 0
    assert gelu(np.array([10.0]))[0] == pytest.approx(10.0)  # far right: identity


def test_layer_norm_gives_zero_mean_unit_variance_before_scale_and_shift():
    x = np.random.default_rng(1).normal(3, 5, (4, 8))
    y = layer_norm(x, np.ones(8), np.zeros(8), 1e-12)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1, atol=1e-9)
    z = layer_norm(x, np.full(8, 2.0), np.full(8, 0.5), 1e-12)
    np.testing.assert_allclose(z, 2 * y + 0.5, atol=1e-12)


def test_embeddings_add_word_position_and_type_before_the_norm():
    w = tiny_weights()
    ids = np.array([3, 1, 3])
    raw = w.word[ids] + w.position[:3] + w.token_type[0]
    np.testing.assert_allclose(embed(w, ids), layer_norm(raw, w.ln_g, w.ln_b, TINY.eps))
    assert not np.allclose(embed(w, ids)[0], embed(w, ids)[2])  # same word, other position


def test_attention_block_equals_the_per_head_loop_with_biases_folded_in():
    """Appending a constant 1 to x and the bias as a last row of W turns x @ W + b into the
    bias-free projections of core's multi-head functions."""
    w, x = tiny_weights(), np.random.default_rng(2).normal(size=(5, 8))
    layer = w.layers[0]
    out, weights = attention_block(x, layer, TINY.n_heads)
    ones = np.hstack([x, np.ones((5, 1))])  # (n, d_model + 1)

    def fold(m: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.vstack([m, b])  # (d_model + 1, d_model)

    qkv = (fold(layer.w_q, layer.b_q), fold(layer.w_k, layer.b_k), fold(layer.w_v, layer.b_v))
    ref_out, ref_w = multi_head_attention_loop(ones, *qkv, layer.w_o, TINY.n_heads)
    np.testing.assert_allclose(weights, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out + layer.b_o, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 10), st.integers(0, 2**16))
def test_forward_shapes_and_rows_that_sum_to_one(n, seed):
    w = tiny_weights(seed)
    ids = np.random.default_rng(seed).integers(0, 20, n)
    out = bert_forward(w, ids)
    assert out.hidden.shape == (TINY.n_layers + 1, n, TINY.d_model)
    assert out.attention.shape == (TINY.n_layers, TINY.n_heads, n, n)
    np.testing.assert_allclose(out.attention.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out.hidden[0], embed(w, ids))
    assert np.isfinite(out.hidden).all()


def test_forward_rejects_empty_and_too_long_inputs():
    w = tiny_weights()
    with pytest.raises(ValueError, match=r"1\.\.10 tokens"):
        bert_forward(w, np.arange(11) % 20)
    with pytest.raises(ValueError):
        bert_forward(w, np.array([], dtype=int))


def test_masked_keys_get_zero_weight():
    w = tiny_weights()
    keep = np.array([True, True, False, True])
    out = bert_forward(w, np.array([1, 2, 3, 4]), mask=keep)
    np.testing.assert_array_equal(out.attention[..., 2], 0.0)
    np.testing.assert_allclose(out.attention.sum(axis=-1), 1.0, atol=1e-12)


def test_explain_weight_rebuilds_the_row_from_q_dot_k():
    w = tiny_weights(3)
    out = bert_forward(w, np.array([5, 6, 7, 8, 9]))
    ex = explain_weight(out.hidden[1], w.layers[1], TINY.n_heads, head=1, i=3, j=0)
    np.testing.assert_allclose(ex.weights, out.attention[1, 1, 3], atol=1e-12)
    assert ex.scale == pytest.approx(2.0)  # d_k = 8 / 2 heads = 4
    assert ex.scores[0] == pytest.approx(ex.dot / 2.0)
    e = np.exp(ex.scores - ex.scores.max())
    np.testing.assert_allclose(ex.weights, e / e.sum())
    assert ex.mix.weight_total == pytest.approx(1.0)
    _, _, v = head_projections(out.hidden[1], w.layers[1], TINY.n_heads)
    np.testing.assert_allclose(ex.mix.output, out.attention[1, 1, 3] @ v[1], atol=1e-12)


def test_head_ranking_puts_the_strongest_head_first():
    a = np.full((2, 3, 4, 4), 0.25)
    a[1, 2, 3, 0], a[0, 1, 3, 0] = 0.9, 0.6
    order, weights = head_ranking(a, 3, j=0)
    assert order.shape == (6, 2)
    assert order[:2].tolist() == [[1, 2], [0, 1]]
    assert weights[:2].tolist() == [0.9, 0.6]
    assert order[2:].tolist() == [[0, 0], [0, 2], [1, 0], [1, 1]]  # ties: layer-head order
    assert (np.diff(weights) <= 0).all()
    a[0, 0, 1, 0] = 1.0  # query 1 alone prefers L0H0; with query 3 the mean decides
    order, weights = head_ranking(a, np.array([1, 3]), j=0)
    assert order[0].tolist() == [0, 0] and weights[0] == pytest.approx(0.625)


def test_without_keys_drops_tokens_and_renormalises_rows():
    w = np.array([[0.5, 0.25, 0.25], [0.8, 0.1, 0.1], [1.0, 0.0, 0.0]])
    out = without_keys(w, np.array([False, True, True]))
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 0.0]])  # last row had all on [CLS]
    assert not np.isnan(out).any()


def test_key_share_is_the_mean_weight_on_one_key():
    a = np.zeros((2, 3, 3))
    a[0, :, 0] = [0.9, 0.6, 0.3]
    a[1, :, 1] = 1.0
    np.testing.assert_allclose(key_share(a, 0), [0.6, 0.0])
    np.testing.assert_allclose(key_share(a, 0, np.array([True, False, True])), [0.6, 0.0])
