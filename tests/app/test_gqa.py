"""The grouped-query attention page: who shares which K/V head on a toy model, the KV cache of
SmolLM2's shape with MHA/GQA/MQA, the repeat-versus-tile bug on the real model's q, k, v
(and PyTorch's enable_gqa where installed), and SmolLM2's 9 query heads in their groups."""

import threading

import numpy as np
import pytest

import core
from core.findings.gqa import group_agreement, group_weight_gap, grouping_rank
from core.kv_cache import kv_numbers_per_token, pool_heads, tiling_gaps, toy_heads
from models import smollm
from tests.app.conftest import (
    assert_each_step_exports,
    assert_every_step_renders,
    assert_step_controls_placed,
    assert_waits_for_its_turn,
    bad_value,
    chart_tables,
    texts,
    visible_of,
)
from tests.conftest import optional_module, wait_until
from ui import loaded
from ui.i18n import Translator
from ui.turns import turns
from ui.views import gqa as gv

PAGE = "pages/13_gqa.py"
EN, ZH = Translator("en"), Translator("zh")
STEPS = ("1", "2", "3", "4")
LESSON = "The animal didn't cross the street because it was too tired."
OWN = {  # each step's controls on screen (students: the sidebar; a slide: the step)
    "1": {"_choice_kv", "seed"},
    "2": {"_choice_dtype", "tokens"},
    "3": {"prompt", "layer"},
    "4": {"prompt", "layer"},
}


def real_qkv(text: str = LESSON) -> list:
    return smollm.layer_qkv(loaded.smollm2(), smollm.encode(loaded.smollm2(), text))


def toy(h_kv: int, seed: int = 42) -> tuple:
    q, k, v = toy_heads(gv.TOY_H, gv.TOY_N, gv.TOY_D, seed)
    return q, pool_heads(k, h_kv), pool_heads(v, h_kv)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_every_step_renders_in_both_languages_and_modes(lang, present):
    assert_every_step_renders(PAGE, "gqa", STEPS, lang, present)


@pytest.mark.parametrize(("kv", "kind"), [("8", "mha"), ("4", "gqa"), ("2", "gqa"), ("1", "mqa")])
def test_step_1_maps_each_query_head_to_its_kv_head_and_states_the_group_gap(page, kv, kind):
    at = page(PAGE, lang="en", step="1", kv=kv)
    assert not at.exception and not at.warning
    h_kv = int(kv)
    shown = texts(at)
    assert EN(f"gqa.notice_{kind}", h=8, h_kv=h_kv, rep=8 // h_kv) in shown
    q, k, v = toy(h_kv)
    _, w = core.grouped_query_attention(q, k, v, core.causal_mask(gv.TOY_N))
    if h_kv < 8:
        assert f"(by up to {gv.num(group_weight_gap(w, h_kv))})" in shown
    else:
        assert "by up to" not in shown
    links = next(tb for tb in chart_tables(at, 0) if "kind" in tb.columns)
    reads = links[links.kind == "link"].sort_values("x").g.to_numpy()
    np.testing.assert_array_equal(reads, core.kv_head_of(8, h_kv))
    cells = next(tb for tb in chart_tables(at, 0) if "value" in tb.columns)
    head3 = cells[cells.panel == f"Q3 · KV{core.kv_head_of(8, h_kv)[3]}"].sort_values(["i", "j"])
    np.testing.assert_allclose(head3.value.fillna(0), w[3].ravel(), atol=1e-12)


def test_step_2_states_the_issue_s_cache_sizes_computed_from_the_model_file(page):
    c = smollm.load_config()
    at = page(PAGE, lang="en", step="2")  # float16, 8 192 tokens
    shown = texts(at)
    per_token = kv_numbers_per_token(c.n_layers, c.n_kv_heads, c.d_head)
    assert per_token == 11_520
    assert "2 × 30 × 3 × 64 = **11\u00a0520** numbers" in shown
    assert "46\u00a0080 bytes (46.1 kB) in float32, 23\u00a0040 bytes (23.0 kB) in float16" in shown
    at_8192 = core.kv_cache_bytes(8192, c.n_layers, c.n_kv_heads, c.d_head, 2)
    assert at_8192 == 180 * 2**20
    assert f"At 8\u00a0192 tokens in float16: **180.0 MiB** ({gv.grouped(at_8192)} bytes)" in shown
    assert "it would be 540.0 MiB, 3× as much" in shown and "60.0 MiB, 1/3 of it" in shown


def test_step_2_follows_the_number_type_and_the_length(page):
    at = page(PAGE, lang="zh", step="2", dtype="float32", tokens="1000")
    assert not at.exception and not at.warning
    c = smollm.load_config()
    size = core.kv_cache_bytes(1000, c.n_layers, c.n_kv_heads, c.d_head, 4)
    assert f"**{gv.size(size)}**（{gv.grouped(size)} 字节）" in texts(at)
    marks = next(tb for tb in chart_tables(at, 0) if "text" in tb.columns)
    assert sorted(marks.tokens) == [1000] * 3
    mha = core.kv_cache_bytes(1000, c.n_layers, c.n_heads, c.d_head, 4)
    assert max(marks.mib) == pytest.approx(mha / 2**20)


def test_step_3_the_tiling_bug_on_the_real_model_and_on_the_toy(page):
    at = page(PAGE, lang="en", step="3", layer="24")
    assert not at.exception and not at.warning
    q, k, v = real_qkv()[24]
    mask = core.causal_mask(q.shape[1])
    gaps = tiling_gaps(q, k, v, mask)
    shown = texts(at)
    assert (
        f"the outputs of 6 of the 9 query heads change, by up to {gv.num(gaps.max(), 2)}" in shown
    )
    assert gaps.max() > 1 and np.all(gaps[[0, 4, 8]] == 0)
    assert "Query heads 0, 4, 8 get their own K/V head either way" in shown
    assert "largest difference 0." in shown  # core's GQA against the per-head loop
    bars = next(tb for tb in chart_tables(at, 0) if "gap" in tb.columns)
    np.testing.assert_allclose(bars.sort_values("head").gap, gaps, rtol=1e-6)
    tq, tk, tv = toy(2)
    toy_gap = tiling_gaps(tq, tk, tv, core.causal_mask(gv.TOY_N)).max()
    assert f"tiling changes the outputs by up to {gv.num(toy_gap, 2)}" in shown
    assert "k_wrong = np.tile(k, (3, 1, 1))" in at.code[0].value


@pytest.mark.parametrize("kv", ["1", "8"])
def test_step_3_says_the_bug_hides_on_a_toy_with_one_or_all_kv_heads(page, kv):
    at = page(PAGE, lang="en", step="3", kv=kv)
    assert EN("gqa.notice_toy_none", h=8, h_kv=int(kv)) in texts(at)


def test_step_3_pytorch_check_opens_on_demand_and_agrees_with_core(page):
    torch = optional_module("torch")
    at = page(PAGE, lang="en", step="3")
    assert "scaled_dot_product_attention(q, k, v" not in texts(at)  # not run until opened
    at.session_state["fold_gqa_torch"] = True
    at.run()
    assert not at.exception
    worst = 0.0
    for q, k, v in real_qkv():
        ours, _ = core.grouped_query_attention(q, k, v, core.causal_mask(q.shape[1]))
        ref = torch.nn.functional.scaled_dot_product_attention(
            *(torch.from_numpy(x) for x in (q, k, v)), is_causal=True, enable_gqa=True
        )
        worst = max(worst, float(np.abs(ref.numpy() - ours).max()))
    assert worst < 1e-5  # the issue: <= 4.8e-6 over all 30 layers
    assert "on all 30 layers for this prompt: largest difference from" in texts(at)
    assert f"`core.grouped_query_attention` {gv.sci(worst)}" in texts(at)


def test_step_4_draws_the_nine_heads_in_their_three_groups(page):
    c = smollm.load_config()
    at = page(PAGE, lang="en", step="4", layer="5")
    assert not at.exception and not at.warning
    q, k, v = real_qkv()[5]
    _, w = core.grouped_query_attention(q, k, v, core.causal_mask(q.shape[1]))
    same, other = group_agreement(w, c.n_kv_heads)
    share = grouping_rank(w, c.n_kv_heads)
    shown = texts(at)
    assert f"{gv.num(same)} within a group" in shown and f"{gv.num(other)} across groups" in shown
    assert f"{100 * share:.0f} % of 999 random groupings" in shown
    assert "only 3 key heads and 3 value heads; the 9 query heads" in shown
    cells = next(tb for tb in chart_tables(at, 0) if "value" in tb.columns)
    assert list(dict.fromkeys(cells.panel)) == [f"Q{i} · KV{i // 3}" for i in range(9)]
    head7 = cells[cells.panel == "Q7 · KV2"].sort_values(["i", "j"]).value.fillna(0)
    np.testing.assert_allclose(head7, w[7].ravel(), atol=1e-7)


def test_step_4_a_chinese_prompt_gets_the_note_and_an_empty_one_the_example(page):
    at = page(PAGE, lang="zh", step="4", prompt="我喜欢猫")
    assert not at.exception
    assert ZH("gqa.chinese") in [e.value for e in at.info]
    empty = page(PAGE, lang="en", step="4", prompt="")
    assert EN("gqa.empty") in [w.value for w in empty.warning]
    assert "on your prompt (13 tokens)" in texts(empty)


def test_a_long_prompt_is_capped_with_a_warning(page):
    at = page(PAGE, lang="en", step="4", prompt=" ".join(["word"] * 90))
    assert any("only the first 64 are used" in w.value for w in at.warning)
    assert "on your prompt (64 tokens)" in texts(at)


def test_url_state_restores_every_control_and_survives_a_step_change(page):
    params = {
        "kv": "4",
        "seed": "5",
        "dtype": "float32",
        "tokens": "2048",
        "layer": "9",
        "prompt": "Hello there",
    }
    at = page(PAGE, lang="en", step="2", **params)
    assert not at.exception and not at.warning
    assert at.button_group(key="_choice_dtype").value == "float32"
    assert at.slider(key="tokens").value == 2048
    at.button(key="step_next").click().run()
    assert at.query_params["step"] == "3"
    assert at.slider(key="layer").value == 9 and at.text_input(key="prompt").value == "Hello there"
    assert all(at.query_params[k] == v for k, v in params.items())
    first = page(PAGE, lang="en", step="1", **params)
    assert first.button_group(key="_choice_kv").value == "4"
    assert first.number_input(key="seed").value == 5


@pytest.mark.parametrize(
    ("key", "raw", "step"),
    [
        ("kv", "3", "1"),
        ("kv", "MHA", "1"),
        ("seed", "-4", "1"),
        ("dtype", "int4", "2"),
        ("tokens", "0", "2"),
        ("tokens", "99999", "2"),
        ("layer", "30", "3"),
        ("layer", "x", "4"),
        ("prompt", "x" * 401, "4"),
    ],
)
def test_bad_url_values_warn_and_fall_back(key, raw, step):
    bad_value(PAGE, step, key, raw)


def test_exports_offer_the_chart_and_the_arrays_of_each_step():
    assert_each_step_exports(PAGE, STEPS, ("gqa_toy", "gqa_memory", "gqa_trap", "gqa_heads"))


@pytest.mark.parametrize("step", STEPS)
def test_students_find_the_step_controls_in_the_sidebar_a_lecturer_on_the_slide(step):
    assert_step_controls_placed(PAGE, step, OWN)


def test_without_the_model_the_toy_step_works_and_the_others_say_how_to_install(page, no_model):
    at = page(PAGE, lang="en", step="1")
    assert not at.exception and len(visible_of(at, "vega_lite_chart")) == 1
    for step in ("2", "3", "4"):
        at = page(PAGE, lang="zh", step=step)
        assert not at.exception
        assert [e.value for e in at.error] == [ZH("gqa.missing")]


def test_the_forward_pass_of_steps_3_and_4_waits_for_its_turn():
    ids = tuple(smollm.encode(loaded.smollm2(), "Grouped heads wait for their turn."))
    layers = assert_waits_for_its_turn(lambda: gv.qkv(ids), 600)
    assert len(layers) == loaded.smollm2().config.n_layers


def test_the_pytorch_check_takes_its_turn_after_the_pass_it_reads_never_inside_it():
    """torch_check reads qkv (a cached pass with a turn of its own) before its own turn: a
    turn asked inside a turn would wait for itself (ui.turns raises NestedTurnError)."""
    optional_module("torch")
    ids = tuple(smollm.encode(loaded.smollm2(), "PyTorch checks the heads in turn."))
    check = assert_waits_for_its_turn(lambda: gv.torch_check(ids), 600)  # qkv's turn first
    assert check.layers == loaded.smollm2().config.n_layers and check.diff < 1e-4


def test_sessions_asking_at_once_for_the_check_and_the_pass_it_reads_all_finish():
    """Two sessions each asking for the PyTorch check and the pass it reads, all at once and
    none cached: a session waiting in the line holds Streamlit's lock on its cached value,
    and no turn is held while waiting for such a lock, so nobody waits for ever."""
    optional_module("torch")
    ids = tuple(smollm.encode(loaded.smollm2(), "Four sessions ask at once."))
    done = []
    calls = [gv.torch_check, gv.qkv, gv.torch_check, gv.qkv]
    workers = [threading.Thread(target=lambda f=f: done.append(f(ids)), daemon=True) for f in calls]
    line = turns()
    with line.turn(first=False):  # a generation's step under way
        for worker in workers:
            worker.start()
        wait_until(lambda: line.waiting(), "a pass waits in the line", 600, 0.01)
    wait_until(lambda: not any(w.is_alive() for w in workers), "every call finishes", 600)
    assert len(done) == len(calls)


def test_the_smaller_cache_question_counts_the_cached_numbers_by_a_loop():
    config = smollm.load_config()
    assert (config.n_heads, config.n_kv_heads) == (gv.ASK_HEADS, gv.ASK_KV_HEADS) == (9, 3)

    def cached_numbers(kv_heads: int) -> int:  # one token's cache, layer by layer
        count = 0
        for _layer in range(config.n_layers):
            for _head in range(kv_heads):
                count += 2 * config.d_head  # its key and its value
        return count

    ratio = cached_numbers(config.n_heads) / cached_numbers(config.n_kv_heads)
    truth = gv.ASK_SMALLER.truth()
    assert truth.number == ratio == 3
    assert truth.is_right("3") and not truth.is_right("9") and not truth.is_right("1/3")
