"""AppTest of the real-encoder page: all-MiniLM-L6-v2's heads, head search, two sentences."""

from functools import cache

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from models import minilm
from tests.app.conftest import chart_tables, texts, visible_of
from ui.safe import plain
from ui.views.encoder import LESSON, WIDE

PAGE = "pages/9_encoder.py"


@cache
def model():
    return minilm.load_weights(), minilm.load_tokenizer()


@cache
def reference(text: str) -> tuple[list[str], np.ndarray]:
    """The page's numbers computed here, straight from the model package."""
    weights, tokenizer = model()
    encoded = minilm.encode(tokenizer, text)
    return encoded.tokens, minilm.run(weights, encoded).attention


def metric(at: AppTest) -> tuple[str, str]:
    m = visible_of(at, "Metric")[0]
    return m.label, m.value


def go(at: AppTest, step: str) -> AppTest:
    """Pick ``step`` in the step bar, as a student clicking it would."""
    return at.button_group(key="_step_choice").set_value(step).run()


def head_matrix(at: AppTest) -> np.ndarray:
    """The large head heatmap (the first chart) as a matrix."""
    frame = max(chart_tables(at, 0), key=len)
    out = np.full((frame["i"].max() + 1, frame["j"].max() + 1), np.nan)
    out[frame["i"], frame["j"]] = frame["value"].astype(float)
    return out


def test_page_shows_it_attending_to_animal_in_l3h1_in_english_and_chinese(page):
    tokens, attention = reference(LESSON)
    it, animal = tokens.index("it"), tokens.index("animal")
    expected = f"{attention[3, 1, it, animal]:.3f}"
    en = page(PAGE)
    assert not en.exception
    assert en.title[0].value == "Inside a real encoder"
    assert metric(en) == ("L3H1: it → animal", expected)
    np.testing.assert_allclose(head_matrix(en), attention[3, 1], atol=1e-6)
    assert "all-MiniLM-L6-v2" in texts(en)
    zh = page(PAGE, lang="zh")
    assert not zh.exception
    assert zh.title[0].value == "真实编码器内部"
    assert metric(zh) == ("L3H1: it → animal", expected)
    assert "平均会把专门干这件事的头淹没" in texts(go(zh, "2"))  # the averaging step


def test_default_head_is_the_one_head_search_ranks_first(page):
    at = page(PAGE, step="3")  # head search
    assert at.segmented_control(key="_choice_layer").value == "3"
    assert at.selectbox(key="_choice_head").value == "1"
    assert "layer" not in at.query_params and "head" not in at.query_params
    buttons = [b.label for b in at.button if b.key and b.key.startswith("pick_")]
    assert buttons[0].startswith("1. L3H1 · ") and buttons[1].startswith("2. L5H11 · ")
    _, attention = reference(LESSON)
    assert buttons[1].endswith(f"{attention[5, 11, 10, 2]:.3f}")


def test_head_search_button_selects_that_head_everywhere(page):
    at = page(PAGE, step="3")  # head search
    at.button(key="pick_L5H11").click().run()
    assert at.query_params["layer"] == ["5"] or at.query_params["layer"] == "5"
    go(at, "1")  # the head's own step
    assert metric(at)[0] == "L5H11: it → animal"
    _, attention = reference(LESSON)
    np.testing.assert_allclose(head_matrix(at), attention[5, 11], atol=1e-6)


@pytest.mark.parametrize("step", ["1", "2", "3", "4", "5"])
def test_presenter_mode_shows_one_step_with_its_chart(page, step):
    at = page(PAGE, present="1", step=step)
    assert not at.exception
    assert not visible_of(at, "Subheader")  # the step bar names the step
    assert at.button_group(key="_step_choice").value == step
    assert len(visible_of(at, "vega_lite_chart")) == 1


def test_averaging_notice_is_computed_from_the_layer_mean(page):
    tokens, attention = reference(LESSON)
    it, animal = tokens.index("it"), tokens.index("animal")
    mean = attention[3, :, it, animal].mean()
    body = texts(page(PAGE, step="2"))  # all heads at once
    assert f"in layer 3 the mean over its 12 heads puts {mean:.3f}" in body
    cls = attention[..., 0].mean(axis=(1, 2))  # (L,) mean weight on [CLS] per layer
    assert f"to {cls.max():.2f} (L{int(cls.argmax())})" in body


def test_hiding_special_tokens_drops_them_and_renormalises_rows(page):
    at = page(PAGE, hide_special="true")
    assert not at.exception
    w = head_matrix(at)
    tokens, attention = reference(LESSON)
    assert w.shape == (len(tokens) - 2, len(tokens) - 2)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-5)
    raw = attention[3, 1, 1:-1, 1:-1]
    np.testing.assert_allclose(w, raw / raw.sum(axis=1, keepdims=True), atol=1e-5)
    assert "each row was rescaled" in texts(go(at, "2"))  # the averaging step's notice


def test_several_query_tokens_get_a_row_of_panels_each(page):
    at = page(PAGE, q="10,2", step="2")  # all heads at once
    assert not at.exception
    grids = [f for f in chart_tables(at, 0) if "panel" in f and set(f["panel"]) >= {"L0", "L5"}]
    assert len(grids) == 2
    assert at.query_params["q"] in ("10,2", ["10,2"])


def test_comparison_states_what_changed_in_the_selected_head(page):
    at = page(PAGE, step="4")
    body = texts(at)
    tokens_b, attention_b = reference(WIDE)
    wb = attention_b[3, 1, tokens_b.index("it")]
    assert "`tired` → `wide`" in body
    assert f"to **{wb[tokens_b.index('animal')]:.3f}** (B)" in body
    top_b = tokens_b[int(wb.argmax())]
    assert f"**{plain(top_b)}** in B" in body


def test_explain_this_weight_recomputes_the_forward_pass(page):
    at = page(PAGE, step="5")
    body = texts(at)
    assert "Recomputed here" in body
    diff = float(body.split("(difference ")[1].split(")")[0])
    assert diff < 1e-6
    assert any("sqrt{d_k}" in latex.value for latex in at.latex)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chinese_text_says_the_model_cannot_read_it_and_shows_the_lesson(page, lang):
    at = page(PAGE, lang=lang, text="动物没有过马路，因为它太累了。")
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert "[UNK]" in warned and LESSON in warned
    assert ("cannot read" in warned) if lang == "en" else ("读不懂" in warned)
    assert metric(at)[0] == "L3H1: it → animal"  # the lesson sentence instead of noise


def test_long_text_is_cut_with_a_message(page):
    at = page(PAGE, text="the animal was tired " * 35)
    assert not at.exception
    assert "tokens; this page reads the first 128" in " ".join(w.value for w in at.warning)
    assert head_matrix(at).shape == (128, 128)


def test_empty_text_falls_back_to_the_lesson(page):
    at = page(PAGE, text=" ")
    assert "has no words" in " ".join(w.value for w in at.warning)
    assert metric(at)[0] == "L3H1: it → animal"


def test_bad_url_params_warn_and_fall_back(page):
    at = page(PAGE, layer="9", head="x", target="99", hide_special="maybe", q="1,abc")
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in ("layer", "head", "target", "hide_special", "q"):
        assert f"`{key}`" in warned
    assert metric(at)[0] == "L3H1: it → animal"
    assert "nan" not in texts(at).lower()


def test_presenter_comparison_shows_the_query_rows_large(page):
    at = page(PAGE, present="1", step="4")
    frames = [f for f in chart_tables(at, 0) if "row" in f]  # the one chart: step 4's
    pair = next(f for f in frames if set(f["row"]) == {"A: it", "B: it"})
    _, attention_a = reference(LESSON)
    _, attention_b = reference(WIDE)
    b_row = pair[pair["row"] == "B: it"].sort_values("j")["value"].astype(float).to_numpy()
    np.testing.assert_allclose(b_row, attention_b[3, 1, 10], atol=1e-6)
    assert "tired/wide" in set(pair["col"])
    diff = next(f for f in frames if set(f["row"]) == {"B − A"})
    assert diff["value"].astype(float).abs().max() == pytest.approx(
        np.abs(attention_b[3, 1, 10] - attention_a[3, 1, 10]).max(), abs=1e-6
    )


def test_adding_a_query_token_keeps_the_default_head(page):
    at = page(PAGE, q="10,2")
    assert metric(at)[0] == "L3H1: it → animal"  # the first query decides the default head


def test_presenter_steps_are_short_and_keep_every_control_in_the_url(page):
    at = page(PAGE, present="1", step="4", head="11", layer="5")
    shown = " ".join(m.value for m in visible_of(at, "Markdown"))
    assert "does the row of “it” move" in shown  # the one-line version for the projector
    assert "The lesson's third exercise" not in shown  # the student's paragraph
    assert "Changed tokens" not in shown  # the chart's columns say it: tired/wide
    assert "In **L5H11**" in shown  # the notice still speaks of the head in the URL
    assert at.query_params["head"] in ("11", ["11"]) and at.query_params["layer"] in ("5", ["5"])
    assert "The lesson's third exercise" in texts(page(PAGE, step="4"))  # students read it all


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, q="10,2", head="11", layer="5")
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 1  # the head's heatmap; not grid, search, …
    assert "The lesson's third exercise" not in texts(at)  # step 4's text is not sent
    assert not any(b.key and b.key.startswith("pick_") for b in at.button)  # step 3's
    go(at, "4")
    assert len(at.get("vega_lite_chart")) == 1  # the comparison alone
    assert "The lesson's third exercise" in texts(at)
    # the settings (queries, head) are on every step and keep their URL values
    assert at.pills(key="_q_pick").value == ["10", "2"]
    assert at.selectbox(key="_choice_head").value == "11"
    assert at.query_params["q"] in ("10,2", ["10,2"])
    assert at.query_params["head"] in ("11", ["11"]) and at.query_params["layer"] in ("5", ["5"])
