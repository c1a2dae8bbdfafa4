"""The block page: SmolLM2's block with its arrays' shapes, the residual stream, the logit
lens and head ablation beside attention, every number checked against core.interpret on the
real model, in both languages, for students and on slides."""

import numpy as np
import pandas as pd
import pytest

import core.interpret as interpret
import core.llama as llama
from core.softmax_numerics import softmax
from models import smollm
from tests.app.conftest import (
    assert_each_step_exports,
    assert_every_step_renders,
    assert_step_controls_placed,
    assert_waits_for_its_turn,
    bad_value,
    chart_tables,
    noticed,
    open_page,
    texts,
)
from tests.conftest import smollm2
from ui.i18n import Translator
from ui.views import block as bv

PAGE = "pages/11_block.py"
STEPS = ("1", "2", "3", "4")
EN, ZH = Translator("en"), Translator("zh")
OWN = {  # each step's own controls (students: the sidebar; a slide: the step)
    "2": {"_choice_pos"},
    "3": {"_choice_pos"},
    "4": {"layer", "_choice_mode", "_choice_rival", "_choice_key", "_choice_off"},
}


def example_ids() -> list[int]:
    return smollm.encode(smollm2(), bv.EXAMPLE)


def heads_frame(at) -> pd.DataFrame:
    """Step 4's two panels' rows (each panel draws its own)."""
    return pd.concat([f for f in chart_tables(at, 0) if "panel" in f], ignore_index=True)


def label(token: int) -> str:
    (text,) = smollm.token_labels(smollm2(), [token])
    return "␣" + text[1:] if text.startswith(" ") else text


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_every_step_renders_in_both_languages_and_modes(lang, present):
    assert_every_step_renders(PAGE, "block", STEPS, lang, present)


def test_the_picture_gives_every_arrays_shape_from_the_model_and_the_prompt():
    at = open_page(PAGE, lang="en", step="1", prompt="Hello there")
    assert not at.exception
    n, cfg = len(smollm.encode(smollm2(), "Hello there")), smollm2().config
    (boxes,) = [f for f in chart_tables(at, 0) if "shape" in f]
    shapes = dict(zip(boxes["id"], boxes["shape"], strict=True))
    assert shapes["embed"] == shapes["add2"] == f"({n}, {cfg.d_model})"
    assert shapes["qkv"] == (
        f"Q ({cfg.n_heads}, {n}, {cfg.d_head}) · K, V ({cfg.n_kv_heads}, {n}, {cfg.d_head})"
    )
    assert shapes["mlp"] == f"({n}, {cfg.d_ff}) → ({n}, {cfg.d_model})"
    assert shapes["logits"] == f"(1, {cfg.vocab})"
    parts, total = bv.parameters(smollm2().weights), llama.parameter_count(smollm2().weights)
    assert f"{100 * parts['mlp'] / total:.0f} % the MLPs" in texts(at)


def test_the_residual_stream_chart_and_notice_are_the_traces_norms():
    at = open_page(PAGE, lang="en", step="2", pos="3")
    assert not at.exception
    trace = interpret.trace(smollm2().weights, example_ids())
    resid, attn, mlp = interpret.norms(trace, 3)
    (frame,) = [f for f in chart_tables(at, 0) if "norm" in f]
    stream = frame[frame["what"] == EN("block.series_stream")]
    np.testing.assert_allclose(stream["norm"], resid, rtol=1e-6)
    assert stream["layer"].tolist() == list(range(-1, smollm2().config.n_layers))
    added = frame[frame["what"] == EN("block.series_attn")]["norm"]
    np.testing.assert_allclose(added, attn, rtol=1e-6)
    assert f"from size {resid[0]:.1f} after the embedding to {resid[-1]:.1f}" in texts(at)
    top = int(np.argmax(np.maximum(attn, mlp)))
    assert f"layer L{top} (size {max(attn[top], mlp[top]):.1f})" in texts(at)


def test_the_logit_lens_ends_on_the_models_own_prediction():
    at = open_page(PAGE, lang="zh", step="3")
    assert not at.exception
    logits = llama.forward(smollm2().weights, example_ids(), all_logits=False).logits[-1]
    p = softmax(logits.astype(np.float64))
    best = int(np.argmax(logits))
    (frame,) = [f for f in chart_tables(at, 0) if "token" in f]
    last = frame[(frame["i"] == frame["i"].max()) & (frame["rank"] == 1)]
    assert last["token"].tolist() == [label(best)] and abs(last["p"].iloc[0] - p[best]) < 1e-6
    assert len(frame) == (smollm2().config.n_layers + 1) * bv.LENS_K
    assert f"概率 {p[best]:.3f}" in texts(at)


def test_ablating_heads_shows_the_effect_of_each_and_of_the_chosen_set_together():
    at = open_page(PAGE, lang="en", step="4", layer="23", off="3.5", mode="mean")
    assert not at.exception and not at.warning
    ids, m = example_ids(), smollm2()
    mary, john = smollm.encode(m, " Mary")[0], smollm.encode(m, " John")[0]
    e = interpret.head_effects(m.weights, ids, 23, mary, john, "mean")
    frame = heads_frame(at)
    change = frame[frame["panel"] == EN("block.panel_effect")]["value"].to_numpy()
    np.testing.assert_allclose(change, e.diff - e.base_diff, rtol=1e-6, atol=1e-9)
    paid = frame[frame["panel"] == EN("block.panel_paid")]["value"].to_numpy()
    trace = interpret.trace(m.weights, ids)
    np.testing.assert_allclose(paid, trace.attention[23, :, -1, ids.index(mary)], rtol=1e-6)
    both = interpret.ablated_logits(m.weights, ids, [(23, 3), (23, 5)], "mean")
    p = softmax(both.astype(np.float64))
    body = " ".join(noticed(at))
    assert f"from {e.base_prob:.3f} to {p[mary]:.3f}" in body
    assert f"from {e.base_diff:.2f} to {both[mary] - both[john]:.2f}" in body
    picked = frame[frame["picked"] == EN("block.picked")]["head"]
    assert sorted(set(picked)) == ["H3", "H5"]


def test_the_head_that_looks_most_is_named_apart_from_the_head_that_matters_most():
    at = open_page(PAGE, lang="en", step="4", layer="23")
    frame = heads_frame(at)
    change = frame[frame["panel"] == EN("block.panel_effect")]["value"].to_numpy()
    paid = frame[frame["panel"] == EN("block.panel_paid")]["value"].to_numpy()
    matters, looks = int(np.argmax(np.abs(change))), int(np.argmax(paid))
    body = " ".join(noticed(at))
    if matters == looks:
        assert f"(head {looks}, weight" in body and "also the one that matters" in body
    else:
        assert f"is head {looks}" in body and f"matters most is head {matters}" in body
    for caveat in ("caveat_redundant", "caveat_hydra", "caveat_attention"):
        assert EN(f"block.{caveat}") in body


def test_the_rival_defaults_to_the_repeated_name_only_for_the_example():
    at = open_page(PAGE, lang="en", step="4")
    john = smollm.encode(smollm2(), " John")[0]
    assert at.selectbox(key="_choice_rival").value == str(john)
    other = open_page(PAGE, lang="en", step="4", prompt="The capital of France is")
    ids = smollm.encode(smollm2(), "The capital of France is")
    logits = llama.forward(smollm2().weights, ids, all_logits=False).logits[-1]
    second = int(np.argsort(-logits, kind="stable")[1])
    assert other.selectbox(key="_choice_rival").value == str(second)


@pytest.mark.parametrize(
    ("step", "key", "raw"),
    [
        ("2", "pos", "99"),
        ("4", "layer", "99"),
        ("4", "off", "2.x"),
        ("4", "rival", "-1"),
        ("4", "mode", "half"),
        ("4", "key", "abc"),
    ],
)
def test_bad_links_warn_and_fall_back(step, key, raw):
    bad_value(PAGE, step, key, raw)


def test_a_chinese_prompt_says_what_the_model_reads_and_an_empty_one_uses_the_example():
    at = open_page(PAGE, lang="zh", step="2", prompt="我喜欢猫。")
    assert not at.exception
    assert ZH("block.chinese") in [i.value for i in at.info]
    empty = open_page(PAGE, lang="en", step="1", prompt="   ")
    assert EN("block.empty") in [w.value for w in empty.warning]


def test_every_step_exports_its_chart_and_arrays():
    names = ("block_picture", "block_stream", "block_lens", "block_heads")
    assert_each_step_exports(PAGE, STEPS, names)


@pytest.mark.parametrize("step", ["2", "3", "4"])
def test_students_find_the_steps_controls_in_the_sidebar_a_lecturer_on_the_slide(step):
    assert_step_controls_placed(PAGE, step, OWN)


def test_the_pages_passes_wait_for_their_turn():
    ids = tuple(smollm.encode(smollm2(), "Turns are taken on the block page."))
    out = assert_waits_for_its_turn(lambda: bv.traced(ids), 300)
    assert out.resid.shape[1] == len(ids)
    heads = assert_waits_for_its_turn(lambda: bv.effects(ids, 5, 1, 2, "zero"), 300)
    assert heads.prob.shape == (smollm2().config.n_heads,)


def test_switching_heads_off_with_the_pills_writes_them_into_the_link():
    at = open_page(PAGE, lang="en", step="4")
    at = at.button_group(key="_choice_off").set_value(["5", "3"]).run()
    assert not at.exception
    assert at.query_params["off"] == "3.5"  # raw head numbers, in order, any language
    assert "With H3, H5 of layer 23 off together" in " ".join(noticed(at))
    cleared = at.button_group(key="_choice_off").set_value([]).run()
    assert "off" not in cleared.query_params


def test_the_class_question_is_answered_by_the_ablation_not_by_the_attention():
    ids, m = example_ids(), smollm2()
    mary, john = smollm.encode(m, " Mary")[0], smollm.encode(m, " John")[0]
    e = interpret.head_effects(m.weights, ids, bv.ASK_LAYER, mary, john, "zero")
    truth = bv.ASK_MATTERS.truth()
    assert truth.number == float(np.argmax(np.abs(e.diff - e.base_diff)))
    assert truth.tolerance == 0 and truth.is_right(str(int(truth.number)))
