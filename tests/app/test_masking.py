"""AppTest of the masks page: causal and padding masks, generation order, −∞ versus −1e9."""

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import tokenize
from tests.app.conftest import STEP_BAR, chart_tables, keys, texts, visible, visible_of
from ui.i18n import Translator
from ui.sentence import LESSON_TEXT, NATIVE_TEXT
from ui.views import masking as view

PAGE = "pages/6_masking.py"
N_LESSON = 6  # "The cat sat on the mat"


def panel(at: AppTest, index: int, name: str) -> np.ndarray:
    """A heatmap panel of a chart as a matrix (NaN where the cell is −∞ / empty)."""
    frames = [f for f in chart_tables(at, index) if "panel" in f and (f["panel"] == name).all()]
    frame = max(frames, key=len)
    out = np.full((frame["i"].max() + 1, frame["j"].max() + 1), np.nan)
    out[frame["i"], frame["j"]] = pd.to_numeric(frame["value"])
    return out


def fill_table(at: AppTest):
    return at.table[0].value


def no_nan_anywhere(at: AppTest) -> None:
    assert "nan" not in texts(at).lower()
    for i in range(len(at.get("vega_lite_chart"))):
        for frame in chart_tables(at, i):
            if "text" in frame:
                assert not frame["text"].str.lower().str.contains("nan").any()
    for table in at.table:
        assert "nan" not in table.value.to_string().lower()


def every_step(page, **params: str) -> list[AppTest]:
    """The page opened on each of its three steps (a student sees one step at a time)."""
    return [page(PAGE, **params, step=str(k)) for k in (1, 2, 3)]


def lesson_weights(causal: bool) -> np.ndarray:
    """Lesson 002's sentence computed here independently, with the masking exercise's −∞."""
    rng = np.random.default_rng(42)
    x = rng.normal(0, 1, (N_LESSON, 8))
    rng = np.random.default_rng(42)
    w_q = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    w_k = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    w_v = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    scores = (x @ w_q) @ (x @ w_k).T / 2.0
    if causal:
        scores = np.where(np.tril(np.ones((N_LESSON, N_LESSON))) > 0, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    assert w_v.shape == (8, 4)
    return e / e.sum(axis=1, keepdims=True)


def test_page_runs_in_english_and_chinese(page):
    en = page(PAGE)
    assert not en.exception
    assert en.title[0].value == "Masks"
    zh = page(PAGE, lang="zh", step="2")
    assert not zh.exception
    assert zh.title[0].value == "掩码"
    assert "为什么解码器不能偷看后面的词" in texts(zh)
    assert "Why a decoder" not in texts(zh)


def test_only_the_step_on_screen_draws_its_charts(page):
    params = {"gen": "4", "row": "1", "dtype": "float16", "temp": "0.5"}
    at = page(PAGE, lang="en", step="1", **params)
    assert not at.exception and not at.warning
    assert len(at.get("vega_lite_chart")) == 1  # the mask chart; not steps 2 and 3
    assert [s.value for s in at.subheader] == ["Masks on your sentence"]
    assert not at.table  # step 3's table of fills
    assert "Many tutorials fill hidden scores" not in texts(at)  # step 3's text
    # steps 2 and 3 keep their controls, hidden, bound to the URL
    assert at.slider(key="gen").value == 4
    assert at.slider(key="row").value == 1
    assert at.segmented_control(key="_choice_dtype").value == "float16"
    assert at.slider(key="temp").value == 0.5
    assert {k: at.query_params[k] for k in params} == params
    at.button(key="step_next").click().run()  # step 2: its slider where it was left
    assert at.query_params["step"] == "2"
    assert len(at.get("vega_lite_chart")) == 1
    assert at.slider(key="gen").value == 4 and at.query_params["temp"] == "0.5"
    assert "Without the mask, the query of **the** puts" in texts(at)  # token 4


@pytest.mark.parametrize("step", ["1", "2", "3"])
def test_presenter_mode_shows_one_step(page, step):
    """A slide shows the step's one chart; the step bar names it (no heading repeats it)."""
    at = page(PAGE, present="1", step=step, lang="zh")
    assert not at.exception
    bar = at.button_group(key="_step_choice")
    title = Translator("zh")(f"masking.s{step}_title")
    assert bar.value == step and bar.options[int(step) - 1] == f"{step} · {title}"
    assert not visible_of(at, "Subheader")
    assert len(visible_of(at, "vega_lite_chart")) == 1


def test_causal_mask_zeroes_the_upper_triangle_and_rows_still_sum_to_one(page):
    at = page(PAGE)
    w = panel(at, 0, "weights after masking")
    assert w.shape == (N_LESSON, N_LESSON)
    np.testing.assert_array_equal(w[np.triu_indices(N_LESSON, 1)], 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, lesson_weights(causal=True), atol=1e-12)
    after = panel(at, 0, "scores after masking")
    assert np.isnan(after[np.triu_indices(N_LESSON, 1)]).all()  # −∞ cells

    at.toggle(key="causal").set_value(False).run()
    w = panel(at, 0, "weights after masking")
    assert (w[np.triu_indices(N_LESSON, 1)] > 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, lesson_weights(causal=False), atol=1e-12)


def test_padding_masks_the_pad_columns_in_every_row(page):
    at = page(PAGE, pad="2", causal="false")
    w = panel(at, 0, "weights after masking")
    assert w.shape == (N_LESSON + 2, N_LESSON + 2)
    np.testing.assert_array_equal(w[:, N_LESSON:], 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    assert "The 2 [PAD] columns get weight 0" in texts(at)
    at.slider(key="pad").set_value(3).run()
    w = panel(at, 0, "weights after masking")
    np.testing.assert_array_equal(w[:, N_LESSON:], 0.0)
    assert w.shape == (N_LESSON + 3, N_LESSON + 3)


def test_fully_masked_rows_give_zero_weights_and_no_nan_on_screen(page):
    runs = every_step(page, pad="2", pad_side="left", row="0")
    at = runs[0]
    assert not at.exception
    w = panel(at, 0, "weights after masking")
    np.testing.assert_array_equal(w[:2], 0.0)  # [PAD]₀ and [PAD]₁ see no key
    np.testing.assert_allclose(w[2:].sum(axis=1), 1.0, atol=1e-12)
    assert "have no visible key at all" in texts(at)
    table = fill_table(runs[2])
    blank = table["every key masked: weights"].tolist()
    assert blank[0] == "all 0"  # −∞: the guard gives a zero row
    assert blank[1] == "0.1250 each"  # −1e9: uniform 1/8 over every key
    assert table["every key masked: length of output"].tolist()[0] == "0.0000"
    assert table["softmax without a guard"].tolist()[:2] == ["0/0: undefined", "well defined"]
    for at in runs:
        no_nan_anywhere(at)


def test_every_key_masked_panel_is_zero_for_minus_inf_and_uniform_for_minus_1e9(page):
    at = page(PAGE, step="3")
    blank = panel(at, 0, "query sat, every key masked")
    np.testing.assert_array_equal(blank[0], 0.0)
    np.testing.assert_allclose(blank[1], 1 / N_LESSON, atol=1e-7)  # float32 by default
    yours = panel(at, 0, "query sat, your mask")
    np.testing.assert_allclose(yours[0], yours[1], atol=1e-7)
    np.testing.assert_array_equal(yours[:, 3:], 0.0)  # causal: 'sat' cannot see later tokens


def test_float16_turns_large_negatives_into_minus_infinity(page):
    at = page(PAGE, dtype="float16", step="3")
    table = fill_table(at)
    assert table["masked score ÷ T, as stored"].tolist() == ["−∞", "−∞", "−1e+04"]
    assert table["every key masked: weights"].tolist()[:2] == ["all 0", "all 0"]
    assert "In float16, −1e9 is stored as −∞ too" in texts(at)
    at.slider(key="temp").set_value(0.1).run()
    table = fill_table(at)
    assert table["masked score ÷ T, as stored"].tolist()[2] == "−∞"  # −1e4 / 0.1 overflows
    assert table["softmax without a guard"].tolist() == ["0/0: undefined"] * 3
    no_nan_anywhere(at)
    at.segmented_control(key="_choice_dtype").set_value("float64").run()
    assert fill_table(at)["masked score ÷ T, as stored"].tolist() == ["−∞", "−1e+10", "−1e+05"]


def test_generation_step_moves_the_look_ahead_share(page):
    at = page(PAGE, step="2")
    frames = chart_tables(at, 0)
    data = max(frames, key=len)
    with_mask = data[data["series"] == "with causal mask"]
    assert (with_mask["weight"].to_numpy()[3:] == 0).all()  # step 2: tokens 3.. do not exist
    shares = {}
    for gen in (0, 2):
        at.slider(key="gen").set_value(gen).run()
        notice = next(m.value for m in at.markdown if "Without the mask, the query" in m.value)
        shares[gen] = notice.split(" puts ")[1].split(" of its")[0]
    free = lesson_weights(causal=False)
    assert shares[0] == f"{free[0, 1:].sum():.1%}"
    assert shares[2] == f"{free[2, 3:].sum():.1%}"
    at.slider(key="gen").set_value(N_LESSON - 1).run()  # the last token: nothing to hide
    assert "is the last token" in texts(at) and "Without the mask, the query" not in texts(at)


def test_bad_url_params_warn_and_fall_back(page):
    bad = {"causal": "maybe", "pad": "99", "pad_side": "middle", "dtype": "float8", "temp": "nan"}
    bad |= {"row": "-1", "gen": "abc", "embedding": "x"}
    at = page(PAGE, **bad)
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in ("causal", "pad", "pad_side", "dtype", "temp", "row", "gen", "embedding"):
        assert f"`{key}`" in warned
    assert at.toggle(key="causal").value is True
    assert at.slider(key="pad").value == 0
    assert at.segmented_control(key="_choice_pad_side").value == "right"
    assert at.segmented_control(key="_choice_dtype").value == "float32"
    assert at.slider(key="temp").value == 1.0
    assert "pad_side" not in at.query_params


def test_pad_side_is_a_raw_token_in_the_url(page):
    at = page(PAGE, pad="1", lang="zh")
    at.segmented_control(key="_choice_pad_side").set_value("left").run()
    assert at.query_params["pad_side"] == "left"
    at.segmented_control(key="_choice_pad_side").set_value("right").run()
    assert "pad_side" not in at.query_params


def test_extreme_values_raise_nothing(page):
    long_text = " ".join(f"w{i}" for i in range(32))
    sizes = {"pad": "8", "pad_side": "left", "d_model": "64", "d_k": "1", "d_v": "64"}
    extremes = {"dtype": "float16", "temp": "0.05", "row": "39", "gen": "31"}
    runs = every_step(page, text=long_text, **sizes, **extremes)
    for at in runs:
        assert not at.exception
        assert not at.warning
        no_nan_anywhere(at)
    ones = every_step(page, text="Hello", causal="true")
    for one in ones:
        assert not one.exception
    w = panel(ones[0], 0, "weights after masking")
    np.testing.assert_array_equal(w, [[1.0]])


def test_notices_make_sense_at_default_settings(page):
    runs = every_step(page)
    at = runs[0]
    shown = "\n".join(texts(run) for run in runs)
    assert "random (untrained)" in shown
    assert "from 1.000000 to 1.000000" not in shown
    # rows that see a key sum to 1: exactly, or with the deviation spelled out
    assert "sums to exactly 1" in shown or "the largest deviation is" in shown
    assert "τ" not in shown and "Temperature T" in [s.label for s in at.slider]
    assert "our lesson" not in shown and "Many tutorials fill hidden scores" in shown


def test_fill_notice_says_whether_minus_1e4_can_overflow_on_the_slider(page):
    f64 = texts(page(PAGE, dtype="float64", step="3"))
    assert "far below this slider's lowest T" in f64
    cold = texts(page(PAGE, dtype="float16", temp="0.1", step="3"))  # 1e4 / 0.1 > 65504
    assert "it has overflowed" in cold
    warm = texts(page(PAGE, dtype="float16", temp="1.0", step="3"))
    assert "still finite" in warm


def test_chinese_opens_on_a_chinese_sentence_with_the_lesson_one_click_away(page):
    from ui.i18n import Translator

    zh = Translator("zh")
    at = page(PAGE, lang="zh")
    assert at.text_input(key="text").value == "猫坐在垫子上"
    cols = next(f for f in chart_tables(at, 0) if "col" in f)["col"].tolist()
    assert "猫" in cols and "The" not in cols
    lesson = at.button(key="lesson_example")  # the icon button beside the sentence
    assert lesson.help == zh("sentence.lesson_help")
    lesson.click().run()
    assert at.text_input(key="text").value == "The cat sat on the mat"
    assert not at.exception


def test_a_bad_value_for_a_step_off_screen_warns_on_screen(page):
    at = page(PAGE, lang="en", gen="abc", row="x")  # steps 2 and 3's sliders, on step 1
    assert not at.exception
    warnings = " ".join(w.value for w in visible(at.main) if type(w).__name__ == "Warning")
    assert "`gen`" in warnings and "`row`" in warnings


@pytest.mark.parametrize("present", ["0", "1"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_step_texts_name_the_panels_by_title_not_by_side(page, lang, present):
    """Students see the panels one below the other, a slide side by side: no "left/right"."""
    from ui.i18n import Translator

    tr = Translator(lang)
    step1 = page(PAGE, lang=lang, present=present, step="1")
    intro = next(m.value for m in step1.markdown if tr("masking.before") in m.value)
    titles = [tr(f"masking.{k}") for k in ("before", "after", "weights")]
    assert all(title in intro for title in titles)
    panels = {f["panel"].iloc[0] for f in chart_tables(step1, 0) if "panel" in f}
    assert set(titles) <= panels  # the names in the text are the chart's panels
    step3 = page(PAGE, lang=lang, present=present, step="3")
    shown = texts(step1) + texts(step3)
    for side in ("Left:", "Right:", "right panel", "左边", "右边"):
        assert side not in shown


def test_hidden_cell_claim_only_when_a_cell_is_hidden(page):
    claim = "The largest weight on any hidden cell is"
    at = page(PAGE)  # causal mask on: the upper triangle is hidden
    w = panel(at, 0, "weights after masking")
    top = w[np.triu_indices(N_LESSON, 1)].max()
    assert f"{claim} {top:g}: masked means exactly zero" in texts(at)
    for params in ({"causal": "false"}, {"text": "Hello"}):  # no cell hidden at all
        at = page(PAGE, **params)
        assert claim not in texts(at)
        assert "No cell is hidden with these settings" in texts(at)
    zh = page(PAGE, lang="zh", causal="false")
    assert "没有任何格子被遮住" in texts(zh) and "最大的权重是" not in texts(zh)
    padded = page(PAGE, causal="false", pad="1")  # the [PAD] key is hidden
    assert claim in texts(padded)


def test_pad_rows_are_not_said_to_produce_outputs_when_they_see_no_key(page):
    left = texts(page(PAGE, pad="2", pad_side="left"))  # + causal: [PAD] rows see nothing
    assert "the [PAD] rows themselves see no key at all" in left
    assert "still produce outputs" not in left
    assert "These rows have no visible key at all (padding at the start + causal mask): " in left
    for params in ({"pad_side": "right"}, {"pad_side": "left", "causal": "false"}):
        shown = texts(page(PAGE, pad="2", **params))
        assert "the [PAD] rows still produce outputs" in shown
        assert "no visible key at all" not in shown


def test_one_later_token_is_singular(page):
    at = page(PAGE, step="2", gen=str(N_LESSON - 2))
    leak = lesson_weights(causal=False)[N_LESSON - 2, N_LESSON - 1]
    assert f"puts {leak:.1%} of its attention on the 1 later token, which" in texts(at)
    assert "1 later tokens" not in texts(at)


def test_chinese_notices_quote_the_token(page):
    step2 = page(PAGE, lang="zh", step="2", gen="2")
    word = step2.text_input(key="text").value[2]  # per-character tokens: "在" by default
    data = max(chart_tables(step2, 0), key=len)
    free = data[data["series"] == "不加掩码"]["weight"].to_numpy()
    leak = free[3:].sum()  # row 2 without the mask, on the tokens after it
    shown = texts(step2)
    assert f"不加掩码时，“**{word}**”的查询把 {leak:.1%} 的注意力" in shown
    assert f"模型生成“**{word}**”时" in shown and f"**{word}** 的查询" not in shown
    step3 = page(PAGE, lang="zh", step="3", row="2")
    assert f"查询“**{word}**”至少还能看到一个键" in texts(step3)
    panels = {f["panel"].iloc[0] for f in chart_tables(step3, 0) if "panel" in f}
    assert {f"查询“{word}”，你的掩码", f"查询“{word}”，所有键都被遮住"} <= panels
    last = page(PAGE, lang="zh", step="2", gen="5")
    assert f"“**{last.text_input(key='text').value[5]}**”是最后一个词" in texts(last)


MASKS = {"causal", "pad", "_choice_pad_side"}
FILLS = {"row", "temp", "_choice_dtype"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_students_find_every_control_of_the_step_in_the_sidebar(page, lang):
    """Students: the sentence and the step's controls in the sidebar, none in the main area
    but the step bar; a slide keeps them in its step: the sentence and, where a mask is
    shown, its switches folded under the step's text, the step's own above its chart."""
    from ui.i18n import Translator

    tr = Translator(lang)
    for step, own in (("1", MASKS), ("2", {"gen"}), ("3", FILLS)):
        at = page(PAGE, lang=lang, step=step, pad="1", gen="3", row="1")
        side = keys(at.sidebar)
        assert {"text", "d_model", "lesson_example", "seed"} | own <= side, step
        assert keys(at.main) <= STEP_BAR, step
        # the other steps' controls stay bound to the URL, out of sight
        assert at.slider(key="pad").value == 1 and at.slider(key="gen").value == 3
        assert at.slider(key="row").value == 1
        if step == "2":  # no mask on this step: its switches wait in a hidden step
            assert not MASKS & side
            assert tr("masking.sentence_controls") in texts(at)
        fold = [e for e in at.sidebar.expander if e.label == tr("masking.masks_fold")]
        assert (len(fold) == 1) == (step == "3"), "step 3 folds the mask switches"
        if fold:
            assert MASKS.issubset(keys(fold[0]))
        slide = page(PAGE, lang=lang, step=step, present="1", gen="3")
        assert not (MASKS | FILLS | {"gen", "text", "d_model"}) & keys(slide.sidebar)
        folds = {e.label: keys(e) for e in slide.main.expander}
        assert {"text", "d_model"} <= folds[tr("masking.sentence_controls")]
        if step == "2":  # no mask on this step: its switches wait in a hidden step
            assert tr("masking.masks_fold") not in folds and not MASKS & keys(slide.main)
        else:
            assert MASKS.issubset(folds[tr("masking.masks_fold")])
        shown = keys(slide.main)
        assert own <= shown or step == "1", step  # steps 2 and 3: above the chart


def test_the_visible_keys_question_counts_the_keys_up_to_the_query_by_a_loop():
    n = len(tokenize(LESSON_TEXT))
    assert n == len(tokenize(NATIVE_TEXT["zh"])) == 6  # "a 6-token sentence", both
    query = view.ASK_QUERY
    seen = 0
    for key in range(n):  # causal: a key at or before the query's position
        if key <= query:
            seen += 1
    truth = view.ASK_VISIBLE.truth()
    assert truth.number == seen == 4
    assert truth.is_right("4") and not truth.is_right("3") and not truth.is_right("5")
    assert f"position {query}" in view.ASK_VISIBLE.text(Translator("en"))
