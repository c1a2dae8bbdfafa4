"""models/smollm_probe.py: a prompt as SmolLM2 reads it, and each layer's queries before and
after the model's own RoPE rotation."""

import numpy as np

import core
import core.llama as llama
from models import smollm
from models.smollm_probe import layer_queries, prompt_tokens
from tests.conftest import smollm2

LESSON = "The animal didn't cross the street because it was too tired."


def model() -> smollm.SmolLM:
    return smollm2()  # one per test process (tests/conftest.py)


def test_prompt_tokens_are_the_models_capped_with_the_total():
    p = prompt_tokens(model(), LESSON)
    assert p.ids == tuple(smollm.encode(model(), LESSON)) and p.total == len(p.ids) == 13
    assert p.labels[:2] == ("The", " animal")
    short = prompt_tokens(model(), LESSON, cap=4)
    assert short.ids == p.ids[:4] and len(short.labels) == 4 and short.total == 13
    assert prompt_tokens(model(), "").ids == ()


def test_queries_after_rope_are_those_attention_uses():
    ids = smollm.encode(model(), LESSON)
    queries = layer_queries(model(), ids)
    qkv = smollm.layer_qkv(model(), ids)
    cfg = model().config
    assert len(queries) == cfg.n_layers
    for lq, (q, _, _) in zip(queries, qkv, strict=True):
        assert lq.after.shape == lq.before.shape == (cfg.n_heads, len(ids), cfg.d_head)
        np.testing.assert_array_equal(lq.after, q)


def test_before_is_not_turned_and_apply_rope_turns_it_into_after():
    ids = smollm.encode(model(), LESSON)
    cfg = model().config
    lq = layer_queries(model(), ids)[5]
    np.testing.assert_array_equal(lq.before[:, 0], lq.after[:, 0])  # position 0: no turn
    cos, sin = core.rope_angles(np.arange(len(ids)), cfg.d_head, cfg.rope_base)
    np.testing.assert_array_equal(lq.cos, cos)
    np.testing.assert_array_equal(core.apply_rope(lq.before, cos, sin), lq.after)
    assert llama.apply_rope is core.apply_rope
    assert not np.allclose(lq.before[:, 1:], lq.after[:, 1:])
