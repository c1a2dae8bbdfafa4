"""AppTest of the real-decoder page: causal heads of SmolLM2, the "it" rows, attention sinks,
next-token probabilities, streamed generation and the KV cache, in both languages."""

from functools import cache

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import core.llama as llama
from models import smollm
from tests.app.conftest import ENTRY, texts, visible_of
from ui.i18n import Translator
from ui.views import decoder as dv

PAGE = "pages/10_decoder.py"
TIMEOUT = 600  # the first run loads the model (seconds on a busy machine)


def open_decoder(**params: str) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(PAGE)
    return at.run()


def go(at: AppTest, step: str) -> AppTest:
    """Pick ``step`` in the step bar, as a student clicking it would."""
    return at.button_group(key="_step_choice").set_value(step).run()


@cache
def model() -> smollm.SmolLM:
    return smollm.load()


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
    _, p = llama.top_tokens(logits, 0.5, 1)
    assert f"probability {p[0]:.3f}" in texts(at)
    hot = open_decoder(temp="2.0", step="4")
    _, p_hot = llama.top_tokens(logits, 2.0, 1)
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
    table = at.dataframe[0].value
    cfg = model().config
    n = len(smollm.encode(model(), dv.LESSON))
    shapes = [f"({cfg.n_kv_heads}, {n + k}, {cfg.d_head})" for k in range(4)]
    assert table.iloc[:, 2].tolist() == shapes
    assert len(at.get("vega_lite_chart")) == 1  # the timing chart: the step's only chart


def test_chinese_prompt_says_what_the_model_reads_and_shows_readable_pieces():
    at = open_decoder(prompt="我喜欢猫。", lang="zh")
    assert not at.exception
    assert any("字节" in str(i.value) for i in at.info)
    strip = next(str(m.value) for m in at.markdown if "个词元" in str(m.value))
    assert "我¹ᐟ²" in strip and "\ufffd" not in strip


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
