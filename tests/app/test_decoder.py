"""AppTest of the real-decoder page: causal heads of SmolLM2, the "it" rows, attention sinks,
next-token probabilities, streamed generation and the KV cache, in both languages."""

import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import core.llama as llama
from core.sampling import GREEDY, Sampling, distribution
from models import smollm
from tests.app.conftest import (
    assert_waits_for_its_turn,
    chart_tables,
    keys,
    open_page,
    order,
    texts,
    visible,
    visible_of,
)
from tests.conftest import smollm2
from ui import prompt as typed
from ui.i18n import Translator
from ui.views import decoder as dv

PAGE = "pages/10_decoder.py"
TIMEOUT = 600  # the first run loads the model (seconds on a busy machine)


def open_decoder(**params: str) -> AppTest:
    return open_page(PAGE, timeout=TIMEOUT, **params)


def go(at: AppTest, step: str) -> AppTest:
    """Pick ``step`` in the step bar, as a student clicking it would."""
    return at.button_group(key="_step_choice").set_value(step).run()


def model() -> smollm.SmolLM:
    return smollm2()  # one per test process (tests/conftest.py)


def press(at: AppTest, label: str) -> AppTest:
    button = next(b for b in at.button if b.label == label)
    return button.click().run()


def test_page_runs_in_english_with_the_lesson_numbers_computed_live():
    at = open_decoder()
    assert not at.exception
    assert at.title[0].value == "A real language model"
    tokens, att = smollm.decoder_attention(dv.LESSON, model())
    _, wide = smollm.decoder_attention(dv.WIDE, model())
    words = [tok.strip() for tok in tokens]
    it, animal, street = words.index("it"), words.index("animal"), words.index("street")
    charts = [len(at.get("vega_lite_chart"))]
    body = texts(go(at, "2"))  # why "it" cannot know yet
    charts.append(len(at.get("vega_lite_chart")))
    assert f"animal {att[13, 8, it, animal]:.3f}, street {att[13, 8, it, street]:.3f}" in body
    diff = np.abs(att[:, :, it] - wide[:, :, it]).max()
    assert f"all 30 × 9 heads is **{diff:.1f}**" in body
    adj = len(tokens) - 2
    assert f"animal {wide[4, 2, adj, animal]:.3f} and street {wide[4, 2, adj, street]:.3f}" in body
    body = texts(go(at, "3"))  # attention sinks
    charts.append(len(at.get("vega_lite_chart")))
    share = llama.first_token_share(att)
    assert f"puts {np.median(share):.2f} of its weight" in body
    assert f"{int((share > 0.5).sum())} of 270 heads" in body
    charts.append(len(go(at, "4").get("vega_lite_chart")))
    assert not at.exception
    assert charts == [1, 1, 1, 1]  # heads, "it" rows, sinks, next token: one a step


def test_page_runs_in_chinese():
    at = open_decoder(lang="zh")
    assert not at.exception
    assert at.title[0].value == "真实的语言模型"
    assert "为什么解码器此时还无从知道" in texts(go(at, "2"))  # the step's heading


def test_next_token_probabilities_follow_the_temperature():
    at = open_decoder(temp="0.5", step="4")  # next token
    ids = smollm.encode(model(), dv.LESSON)
    logits = llama.forward(model().weights, ids, all_logits=False).logits[-1]
    p = np.sort(distribution(logits, Sampling(0.5)))[::-1]
    assert f"probability {p[0]:.3f}" in texts(at)
    hot = open_decoder(temp="2.0", step="4")
    p_hot = np.sort(distribution(logits, Sampling(2.0)))[::-1]
    assert f"probability {p_hot[0]:.3f}" in texts(hot) and p_hot[0] < p[0]


def test_generate_streams_the_same_text_as_the_entry_point():
    at = press(open_decoder(n_gen="5", step="4"), "Generate")
    assert not at.exception
    expected = smollm.generate(dv.LESSON, 5, model=model())
    labels = smollm.token_labels(model(), smollm.encode(model(), dv.LESSON + expected)[13:])
    body = texts(at)
    assert "5 tokens with KV cache, greedy" in body
    assert all(lab.strip() in body for lab in labels if lab.strip())
    again = at.run()  # a rerun shows the kept result without generating again
    assert "5 tokens with KV cache, greedy" in texts(again)


def test_compare_gives_the_same_tokens_and_the_cache_growth():
    at = press(open_decoder(n_gen="4", step="5"), "Generate with and without the cache")
    assert not at.exception
    body = texts(at)
    assert "exactly the same tokens" in body
    table = at.table[0].value
    cfg = model().config
    n = len(smollm.encode(model(), dv.LESSON))
    shapes = [f"({cfg.n_kv_heads}, {n + k}, {cfg.d_head})" for k in range(4)]
    assert table.iloc[:, 2].tolist() == shapes
    assert len(at.get("vega_lite_chart")) == 1  # the timing chart: the step's only chart


def test_chinese_prompt_says_what_the_model_reads_and_shows_readable_pieces():
    at = open_decoder(prompt="我喜欢猫。", lang="zh")
    assert not at.exception
    assert any("字节" in str(i.value) for i in at.info)
    strip = next(str(m.value) for m in at.markdown if "个 token：" in str(m.value))
    assert "我¹ᐟ²" in strip and "\ufffd" not in strip


CHINESE = "我喜欢吃苹果，因为"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_chinese_prompt_reads_as_characters_and_its_sink_is_not_meaning(lang):
    """Text shows whole characters (the token view keeps the pieces); a weight on the first
    token is called a sink, never a word's meaning; step 2 says it ignores the prompt."""
    tr = Translator(lang)
    ids = smollm.encode(model(), CHINESE)
    result = llama.forward(model().weights, ids, all_logits=False)
    at = open_decoder(prompt=CHINESE, lang=lang, layer="20", head="3", query=str(len(ids) - 1))
    assert not at.exception
    assert tr("decoder.chinese") in texts(at)
    row = result.attention[20, 3, len(ids) - 1]
    first = smollm.token_labels(model(), ids)[0]
    assert int(row.argmax()) == 0  # this head parks its weight on the first token
    assert "is the prompt's first token" in texts(at) or "是提示词的第一个 token" in texts(at)
    assert f"**{first}**" in texts(at)
    why = texts(go(at, "2"))
    assert tr("decoder.fixed_pair") in why
    assert tr("decoder.fixed_pair") not in texts(open_decoder(lang=lang, step="2"))
    step4 = press(go(at, "4"), tr("decoder.generate"))
    assert not step4.exception
    expected = smollm.generate(CHINESE, 12, model=model())
    body = texts(step4)
    assert CHINESE in body  # the prompt as characters, not as 我¹ᐟ² 我²ᐟ²
    assert "¹ᐟ" not in body.split(CHINESE, 1)[1].split("\n", 1)[0]  # nor what follows it
    assert "".join(expected.split()) and all(
        ch in body for ch in expected if ch.strip() and ch != "\ufffd"
    )
    bars = chart_tables(step4, 0)
    tokens = {str(v) for frame in bars if "token" in frame for v in frame["token"]}
    assert tokens and not any("\ufffd" in tok for tok in tokens)


def warnings(at: AppTest) -> str:
    return " ".join(str(w.value) for w in at.warning)


def test_empty_prompt_warns_and_uses_the_example():
    at = open_decoder(prompt="   ")
    assert not at.exception
    assert Translator("en")("decoder.empty") in warnings(at)
    assert "**13 tokens:**" in texts(at)


def test_long_prompt_is_capped_with_a_message():
    long = "word " * 70  # 350 characters (the box takes 400), more than 64 tokens
    at = open_decoder(prompt=long)
    assert not at.exception
    total = len(smollm.encode(model(), long))
    cap = smollm.MAX_PROMPT_TOKENS
    assert total > cap
    assert Translator("en")("decoder.capped", total=total, cap=cap) in warnings(at)
    assert f"**{cap} tokens:**" in texts(at)


@pytest.mark.parametrize("params", [{"layer": "99"}, {"temp": "nan"}, {"head": "-1"}])
def test_bad_url_values_warn_and_fall_back(params):
    at = open_decoder(**params)
    assert not at.exception
    (key,) = params
    assert f"`{key}`" in warnings(at)
    assert "In layer 13, head 8," in texts(at)  # the defaults


def test_presenter_mode_shows_one_step_with_its_chart():
    at = open_decoder(present="1", step="3")
    assert not at.exception
    assert [s.value for s in visible_of(at, "Subheader")] == ["Attention sink: the first token"]
    assert len(visible_of(at, "vega_lite_chart")) == 1


def test_only_the_step_on_screen_draws_its_charts():
    at = open_decoder(temp="0.5", n_gen="5", adj_layer="7")
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 1  # the causal heads; no sinks, no next token
    assert not any(b.label == "Generate" for b in at.button)  # step 4's button
    assert "probability" not in texts(at)  # step 4's notice is not sent
    # the hidden steps' controls keep their URL values
    assert at.slider(key="temp").value == 0.5 and at.query_params["temp"] in ("0.5", ["0.5"])
    assert at.slider(key="n_gen").value == 5 and at.query_params["n_gen"] in ("5", ["5"])
    assert at.slider(key="adj_layer").value == 7
    assert at.query_params["adj_layer"] in ("7", ["7"])
    assert "probability" in texts(go(at, "4"))  # and the step that uses them sees them
    assert at.slider(key="temp").value == 0.5
    assert at.query_params["adj_layer"] in ("7", ["7"])


def drawn_layout(at: AppTest) -> str:
    """How the step's one chart lays out its two parts: "beside" or "stacked"."""
    spec = json.loads(visible_of(at, "vega_lite_chart")[0].proto.spec)
    if len(spec.get("hconcat", [])) > 1:
        return "beside"
    assert len(spec.get("concat", [])) > 1 or len(spec.get("vconcat", [])) > 1
    return "beside" if spec.get("concat") and spec.get("columns", 2) > 1 else "stacked"


@pytest.mark.parametrize(
    ("present", "lang", "step", "beside", "stacked"),
    [
        ("0", "en", "1", "; on the right, the same", "; below, the same"),
        ("1", "en", "1", "Right: this query's row", "Bottom: this query's row"),
        ("0", "zh", "1", "；右边是同一个查询", "；下方是同一个查询"),
        ("1", "zh", "1", "右图：这个查询", "下图：这个查询"),
        ("0", "en", "3", "Left: the share", "Top: the share"),
        ("0", "zh", "3", "右图：换一个开头", "下图：换一个开头"),
    ],
)
def test_step_text_names_where_the_charts_really_are(present, lang, step, beside, stacked):
    at = open_decoder(present=present, lang=lang, step=step)
    assert not at.exception
    layout = drawn_layout(at)
    assert layout == "beside"  # students too: the chart has the page's width, its parts fit it
    body = texts(at)
    assert (beside if layout == "beside" else stacked) in body
    assert (stacked if layout == "beside" else beside) not in body


def test_two_sentences_differ_in_the_adjective_before_the_full_stop():
    a, b = smollm.encode(model(), dv.LESSON), smollm.encode(model(), dv.WIDE)
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    assert len(a) == len(b) and differ == [len(a) - 2]  # one token, not the last
    assert smollm.token_labels(model(), a[-1:]) == ["."]
    for lang in ("en", "zh"):
        body = texts(open_decoder(step="2", lang=lang))
        assert "last word" not in body and "最后一个词" not in body
        assert not re.search(r"\.`[.。]", body)  # a sentence's own full stop, then another
    assert "句末句号前的那个形容词" in body
    assert "differ in a single token: the adjective just before" in texts(open_decoder(step="2"))


def fake_run(step_ms: list[float], cache: bool, n_prompt: int = 13) -> dv.Generation:
    settings = dv.Settings(tuple(range(n_prompt)), len(step_ms), GREEDY)
    k = len(step_ms)
    return dv.Generation(
        settings,
        cache,
        tokens=list(range(k)),
        labels=["x"] * k,
        spans=["x"] * k,
        text="",
        step_ms=step_ms,
        cache_len=[n_prompt + i for i in range(k)],
        cache_bytes=[1024 * (n_prompt + i) for i in range(k)],
        batch=[0] + [1] * (k - 1),
        stopped=False,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_speed_notice_says_what_the_timer_measured_not_that_the_gap_grows(lang):
    ctx = SimpleNamespace(t=Translator(lang), presenter=False)
    on = fake_run([300.0] + [40.0] * 11, True)
    flat = dv.growth_notice(ctx, on, fake_run([240.0, 230.0] + [200.0] * 9 + [185.0], False))
    rising = dv.growth_notice(ctx, on, fake_run([100.0 + 10 * i for i in range(12)], False))
    if lang == "en":
        assert "step 12 feeds the model 24 tokens against 13 at step 1: 1.8× as many" in flat[0]
        assert "Measured: 240 ms at step 1, 185 ms at step 12 (0.77×)" in flat[0]
        assert "did not grow like that" in flat[1] and "took 40 ms" in flat[1]
        assert "grew with the length" in rising[1]
    else:
        assert "实测：第 1 步 240 毫秒，第 12 步 185 毫秒（0.77 倍）" in flat[0]
        assert "并没有这样增长" in flat[1] and "也随长度增加了" in rising[1]
    assert dv.growth_notice(ctx, on, fake_run([50.0], False)) == []  # one step: nothing to compare


def test_speed_notice_on_the_page_quotes_the_chart():
    at = press(open_decoder(n_gen="4", step="5"), "Generate with and without the cache")
    body = texts(at)
    assert "the gap grows with the length" not in body
    frame = max(chart_tables(at, 0), key=len)
    off = frame[frame["mode"] == "without cache"].sort_values("step")["ms"].to_numpy()
    assert f"Measured: {off[0]:.0f} ms at step 1, {off[-1]:.0f} ms at step 4" in body
    grew = off[-1] / off[0] >= dv.GREW
    assert ("grew with the length too" in body) == grew
    assert ("did not grow like that" in body) == (not grew)


def test_chinese_lists_use_chinese_punctuation():
    tokens, att = smollm.decoder_attention(dv.LESSON, model())
    words = [tok.strip() for tok in tokens]
    it = words.index("it")
    row = att[13, 8, it, : it + 1]
    first, second = np.argsort(-row, kind="stable")[:2]
    zh = texts(open_decoder(lang="zh"))
    expected = (
        f"**{words[first]}**（{row[first]:.3f}），其次是 **{words[second]}**（{row[second]:.3f}）"
    )
    assert expected in zh
    assert f"**{words[first]}** ({row[first]:.3f}), then" in texts(open_decoder())


def test_chinese_temperature_divides_the_scores():
    zh = texts(open_decoder(lang="zh", step="4"))
    assert "先把分数除以温度" in zh and "去除分数" not in zh


def test_sink_notice_says_so_when_a_prompt_shows_no_sink():
    ctx = SimpleNamespace(t=Translator("en"))
    p = dv.Prompt("a b", (1, 2), ["a", " b"], "a b", 2, False)
    held = dv.sink_notice(ctx, [(p, np.full((2, 3), 0.8)), (p, np.full((2, 3), 0.9))])
    varies = dv.sink_notice(ctx, [(p, np.full((2, 3), 0.8)), (p, np.full((2, 3), 0.2))])
    assert "whatever the prompt starts with" in held[-1]
    assert "whatever the prompt starts with" not in varies[-1] and "medians" in varies[-1]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_one_token_prompt_leaves_one_sink_chart_and_the_text_says_one(lang):
    t = Translator(lang)
    at = open_decoder(lang=lang, step="3", sink_prompt="The")
    assert len(at.get("vega_lite_chart")) == 1
    assert t("decoder.one_token") in [i.value for i in at.info]
    shown = [m.value for m in at.markdown]
    assert t("decoder.s3_text_one") in shown
    assert not any(
        t("decoder.part_top") + ":" in m or t("decoder.part_left") + ":" in m for m in shown
    )


@pytest.mark.parametrize(
    ("text", "spec", "place"),
    [
        ("en", {"hconcat": [{}, {}]}, ("on the right", "Left", "Right")),
        ("en", {"vconcat": [{}, {}]}, ("below", "Top", "Bottom")),
        ("zh", {"concat": [{}, {}], "columns": 1}, ("下方", "上图", "下图")),
    ],
)
def test_places_name_the_parts_as_the_chart_lays_them_out(text, spec, place):
    ctx = SimpleNamespace(t=Translator(text))
    assert tuple(dv.places(ctx, spec).values()) == place


def labels(node) -> set[str]:
    """The labels of the buttons on screen under ``node``."""
    return {e.label for e in visible(node) if type(e).__name__ == "Button"}


STEP_CONTROLS = {  # each step's own controls (widget keys, or button labels)
    "1": {"layer", "head", "_choice_query"},
    "2": {"adj_layer", "adj_head"},
    "3": {"sink_prompt"},
    "4": {"temp", "n_gen", "sample", "cache", "top_k", "top_p", "seed", "Generate"},
    "5": {"Generate with and without the cache"},
    "6": {"Measure batching"},
}


def test_students_move_every_control_in_the_sidebar_a_lecturer_on_the_slide():
    for step, own in STEP_CONTROLS.items():
        at = open_decoder(step=step)
        side, main = keys(at.sidebar) | labels(at.sidebar), keys(at.main) | labels(at.main)
        others = set().union(*STEP_CONTROLS.values()) - own
        assert own | {"prompt"} <= side, step
        assert not (own | {"prompt"}) & main, step
        assert not others & (side | main), step  # the other steps' controls: hidden
        slide = open_decoder(step=step, present="1")
        shown = keys(slide.main) | labels(slide.main)
        assert own | {"prompt"} <= shown and not own & keys(slide.sidebar), step


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_shows_title_step_bar_chart_then_text_like_the_other_pages(lang):
    """Issue 29 item 6: the step bar comes right below the title (no intro between them),
    then the chart, then the text; the intro on the first step only, below its chart."""
    t = Translator(lang)
    sz = typed.sizes(model())
    intro = t("decoder.intro", **sz)
    for step in range(1, 7):
        seen = order(open_decoder(lang=lang, step=str(step)))
        first = seen.index("chart")
        assert seen.index("Title") + 1 == seen.index("PageLink" if step == 1 else "Button")
        assert seen.index("ButtonGroup") < first < seen.index(t(f"decoder.s{step}_title"))
        assert (intro in seen) == (step == 1)
        if step == 1:
            assert first < seen.index(intro)


def test_step_5_keeps_the_timing_chart_in_view_before_the_first_run():
    at = open_decoder(step="5")
    assert len(visible_of(at, "vega_lite_chart")) == 1
    tables = chart_tables(at, 0)
    assert not any(len(f) for f in tables if "hint" not in f)  # no timings yet…
    hints = [f["hint"].tolist() for f in tables if "hint" in f]
    assert hints == [[Translator("en")("decoder.timing_empty")]]  # …and how to get them
    assert Translator("en")("decoder.compare_hint") in texts(at)
    assert not visible_of(open_decoder(step="5", present="1"), "vega_lite_chart")  # a slide


def test_generation_times_each_step_and_stops_at_the_end_of_text_token():
    m = model()
    ids = tuple(smollm.encode(m, "Hello"))
    g = dv.generate(m, dv.Settings(ids, 20, GREEDY), True, lambda spans: None)
    expected = [s.token for s in llama.generate_steps(m.weights, list(ids), 20, stop=m.eos_id)]
    assert g.tokens == expected
    assert len(g.step_ms) == len(g.tokens) and all(ms > 0 for ms in g.step_ms)
    assert g.stopped == (expected[-1] == m.eos_id)


def test_the_pages_own_forward_pass_waits_for_its_turn():
    ids = tuple(smollm.encode(model(), "Turns are taken in this process."))
    out = assert_waits_for_its_turn(lambda: dv.run(ids), TIMEOUT)
    assert out.attention.shape[-1] == len(ids)


def test_the_query_list_shows_the_tokens_as_they_read():
    """The query token's select box shows text as text: the lesson's full stop reads ".",
    not the markdown-escaped "\\."."""
    at = open_decoder(step="1")
    options = at.selectbox(key="_choice_query").options
    assert "." in options and not any("\\" in o for o in options)


def test_the_last_token_question_is_the_models_mean_row_and_the_first_token_leads_it():
    labels, attention = smollm.decoder_attention(dv.LESSON, model())
    last = len(labels) - 1
    total = np.zeros(len(labels))
    for layer in attention:  # every layer and head's row of the last token, added up
        for head in layer:
            total += head[last]
    row = total / (attention.shape[0] * attention.shape[1])
    truth = dv.ASK_LAST.truth()
    np.testing.assert_allclose([truth.weights[str(j)] for j in range(len(labels))], row, atol=1e-6)
    assert labels[last] == "." and labels[0] == "The"  # the question's "last one, “.”"
    assert truth.right == {"0"} and int(np.argmax(row)) == 0  # the sink: the first token
    options = dv.ASK_LAST.labelled(Translator("en"))
    assert [o.label for o in options] == [label.strip() for label in labels]


def next_bars(at: AppTest) -> pd.DataFrame:
    """Step 4's bars: token, probability, and whether the setting keeps it."""
    (frame,) = [f for f in chart_tables(at, 0) if "kept" in f]
    return frame


def test_top_k_colours_the_k_most_likely_bars_and_says_how_many_tokens_stay():
    at = open_decoder(step="4", sample="true", top_k="3")
    assert not at.exception
    frame = next_bars(at)
    picked = Translator("en")("decoder.kept")
    assert frame["kept"].tolist() == [picked] * 3 + [Translator("en")("decoder.dropped")] * 7
    body = texts(at)
    assert "Top-k 3: only the 3 most likely tokens stay in the draw." in body
    assert "With this setting 3 of the 49 152 tokens can be written" in body


def test_top_p_keeps_the_fewest_tokens_that_reach_it_counted_on_the_real_scores():
    at = open_decoder(step="4", sample="true", top_p="0.3", temp="1.0", lang="zh")
    assert not at.exception
    ids = smollm.encode(model(), dv.LESSON)
    p = np.sort(distribution(dv.run(tuple(ids)).logits, Sampling(1.0)))[::-1]
    n = int(np.searchsorted(np.cumsum(p), 0.3) + 1)  # the fewest that reach 0.3
    assert f"有 {n} 个可能被写出" in texts(at)
    assert (next_bars(at)["kept"] == Translator("zh")("decoder.kept")).sum() == n


def test_top_p_zero_and_temperature_zero_are_greedy_by_a_stated_rule():
    zero_p = open_decoder(step="4", sample="true", top_p="0")
    assert not zero_p.exception
    assert (next_bars(zero_p)["kept"] == "can be picked").sum() == 1
    assert Translator("en")("decoder.notice_top_p_zero") in texts(zero_p)
    cold = open_decoder(step="4", sample="true", temp="0")
    assert not cold.exception
    assert next_bars(cold)["p"].iloc[0] == 1.0  # all the probability on the top token
    assert "At temperature 0 the most likely next token" in texts(cold)
    assert Translator("en")("decoder.notice_greedy") in texts(cold)


@pytest.mark.parametrize("params", [{"top_k": "100000"}, {"temp": "1e6"}, {"top_p": "-0.5"}])
def test_sampling_values_out_of_range_in_the_link_warn_and_fall_back(params):
    at = open_decoder(step="4", sample="true", **params)
    assert not at.exception
    (key,) = params
    assert f"`{key}`" in warnings(at)
    assert "Top-k is off (0)" in texts(at) and "Top-p is 1" in texts(at)  # the defaults


def test_a_sampled_generation_in_the_batch_writes_what_one_at_a_time_writes():
    m = model()
    ids = tuple(smollm.encode(m, dv.LESSON))
    hot = Sampling(0.9, top_k=40, top_p=0.9, seed=3)
    g = dv.generate(m, dv.Settings(ids, 8, hot), True, lambda spans: None)
    ref = llama.generate_steps(m.weights, list(ids), 8, sampling=hot, stop=m.eos_id)
    assert g.tokens == [s.token for s in ref]
    assert g.batch[0] == 0 and all(b >= 1 for b in g.batch[1:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_measuring_batching_draws_both_bars_for_each_size_and_says_what_they_show(lang):
    t = Translator(lang)
    before = open_decoder(step="6", lang=lang)
    assert t("decoder.cost_hint") in texts(before)
    at = press(before, t("decoder.measure"))
    assert not at.exception
    (frame,) = [f for f in chart_tables(at, 0) if "what" in f]
    assert len(frame) == 6 and (frame["ms"] > 0).all()
    step = frame[frame["what"] == t("decoder.cost_step")]["ms"].tolist()
    body = texts(at)
    assert f"{step[0]:.0f}" in body and f"{step[-1]:.0f}" in body  # the notice quotes the bars
    mb = f"{llama.weight_bytes(model().weights) / 1e6:.0f} MB"
    assert mb in body
