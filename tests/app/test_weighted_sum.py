"""The weighted-sum page: one query's weights, the scaled values, their sum, and O = A V."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import embed_tokens, init_projections, self_attention_trace, tokenize
from core.attention import mix_row
from tests.app.conftest import noticed, texts, visible, visible_of
from ui.i18n import Translator

PAGE = "pages/5_weighted_sum.py"
EN, ZH = Translator("en"), Translator("zh")
STEP_KEYS = ("row_title", "scale_title", "sum_title", "matrix_title")
LESSON_OUTPUT_ROW0 = "[−0.233, 0.443, 1.035, 0.550]"


def trace(text="The cat sat on the mat", d_model=8, d_k=4, d_v=4, seed=42):
    x = embed_tokens(tokenize(text), d_model, "lesson", seed, False)
    return self_attention_trace(x, *init_projections(d_model, d_k, d_v, seed))


def row_text(values) -> str:
    """A row of numbers as the page prints it."""
    return "[" + ", ".join(f"{v:.3f}".replace("-", "−") for v in values) + "]"


def tex_vector(values) -> str:
    return r"\left[\," + r",\ ".join(f"{v:.3f}" for v in values) + r"\,\right]"


def sum_tex(at: AppTest) -> str:
    (tex,) = [e.value for e in at.latex if r"\sum_{j}" in e.value]
    return tex


def every_step(page, **params: str) -> list[AppTest]:
    """The page opened on each of its steps (a student sees one step at a time)."""
    return [page(PAGE, **params, step=str(k)) for k in range(1, len(STEP_KEYS) + 1)]


def test_opens_in_english_with_the_lesson_output_row(page):
    row, scale, total, matrix = every_step(page, lang="en")
    for at in (row, scale, total, matrix):
        assert not at.exception
        assert not at.warning
    subheaders = [s.value for at in (row, scale, total, matrix) for s in at.subheader]
    assert subheaders == [EN(f"weighted_sum.{k}") for k in STEP_KEYS]
    assert LESSON_OUTPUT_ROW0 in texts(matrix)
    assert sum_tex(total).endswith(
        r"&= \left[\,-0.233,\ 0.443,\ 1.035,\ 0.550\,\right]\end{aligned}" + "\n$$"
    )
    assert "0.097" in sum_tex(total) and "0.445" in sum_tex(total), "lesson weights row 0"
    assert "The weights add up to 1.000." in texts(row)


def test_opens_in_chinese(page):
    runs = every_step(page, lang="zh")
    for at in runs:
        assert not at.exception
        assert at.title[0].value == ZH("weighted_sum.title")
    subheaders = [s.value for at in runs for s in at.subheader]
    assert subheaders == [ZH(f"weighted_sum.{k}") for k in STEP_KEYS]


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, lang="en", token="3", d_v="6", step="1")
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 1  # the weight bars; not the three strips
    assert [s.value for s in at.subheader] == [EN("weighted_sum.row_title")]
    assert not [e for e in at.latex if r"\sum_{j}" in e.value]  # step 3's sum
    assert "Output row" not in texts(at)  # step 4's
    assert at.button_group(key="_choice_token").value == "3"  # followed on every step
    assert at.query_params["token"] == "3" and at.query_params["d_v"] == "6"
    at.button(key="step_next").click().run()  # step 2 keeps the token and the sizes
    assert at.query_params["step"] == "2" and at.query_params["token"] == "3"
    assert at.button_group(key="_choice_token").value == "3"
    assert len(at.get("vega_lite_chart")) == 1
    assert [s.value for s in at.subheader] == [EN("weighted_sum.scale_title")]


@pytest.mark.parametrize("step", ["1", "2", "3", "4"])
def test_presenter_mode_shows_one_step(page, step):
    at = page(PAGE, lang="zh", present="1", step=step)
    assert not at.exception
    assert not at.warning
    assert not visible_of(at, "Subheader")  # the step bar names the step
    assert len(visible_of(at, "vega_lite_chart")) == 1  # this step's chart, not the others


def test_output_row_is_the_trace_output_of_the_chosen_token(page):
    at = page(PAGE, lang="en", token="2", step="4")
    tr = trace()
    assert row_text(tr.output[2]) in texts(at)
    at = page(PAGE, lang="en", token="2", step="3")
    assert sum_tex(at).startswith(r"$$" + "\n" + r"\begin{aligned}o_{2}")
    assert tex_vector(tr.output[2]) in sum_tex(at)
    for j in range(6):  # every term: α_2j · v_j
        assert f"{tr.weights[2, j]:.3f}" + r"\cdot\underbrace{" + tex_vector(tr.v[j]) in sum_tex(at)


def test_changing_the_token_changes_the_output_row(page):
    at = page(PAGE, lang="en", step="4")
    tr = trace()
    assert row_text(tr.output[0]) in texts(at)
    at.button_group(key="_choice_token").set_value("4").run()
    assert not at.exception
    assert row_text(tr.output[4]) in texts(at)
    assert row_text(tr.output[0]) not in texts(at)
    at.button(key="step_prev").click().run()  # step 3 follows the same token
    assert tex_vector(tr.output[4]) in sum_tex(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notice_names_the_biggest_piece_of_the_output_as_well_as_the_largest_weight(page, lang):
    tr, t = trace(), Translator(lang)
    tokens = tokenize("The cat sat on the mat")
    branches = set()
    for i in range(len(tokens)):
        mix = mix_row(tr.weights[i], tr.v)
        top, big = int(np.argmax(mix.weights)), int(np.argmax(mix.sizes))
        key = "weighted_sum.notice_top" if top == big else "weighted_sum.notice_top_other"
        branches.add(key)
        w, size, top_size = (f"{x:.3f}" for x in (mix.weights[top], mix.sizes[big], mix.sizes[top]))
        words = {"token": tokens[i], "top": tokens[top], "big": tokens[big]}
        expected = t(key, **words, w=w, size=size, top_size=top_size)
        assert expected in texts(page(PAGE, lang=lang, token=str(i)))
    assert len(branches) == 2  # the lesson sentence has rows of both kinds


def test_sizes_drive_the_output(page):
    at = page(PAGE, lang="en", d_v="6", seed="3", token="1", step="4")
    tr = trace(d_v=6, seed=3)
    assert row_text(tr.output[1]) in texts(at)
    assert "here 6 × 6" in texts(at)


@pytest.mark.parametrize("raw", ["17", "6", "x", "-2"])
def test_out_of_range_token_in_the_url_warns_and_falls_back(page, raw):
    at = page(PAGE, lang="en", token=raw, step="4")
    assert not at.exception
    assert at.warning and "token" in at.warning[0].value
    assert at.button_group(key="_choice_token").value == "0"
    assert LESSON_OUTPUT_ROW0 in texts(at)


def test_long_sentence_shows_the_largest_terms_and_sums_the_rest(page):
    text = " ".join(f"w{i}" for i in range(20))
    at = page(PAGE, lang="en", text=text, token="7", step="3")
    assert not at.exception
    tr = trace(text)
    tex = sum_tex(at)
    assert tex.count(r"\underbrace") == 6
    assert r"\notin" in tex and tex_vector(tr.output[7]) in tex
    assert "The 14 smallest terms" in texts(at)


def test_extreme_sizes_run(page):
    text = " ".join(f"w{i}" for i in range(32))
    for at in every_step(page, lang="en", text=text, d_model="64", d_k="64", d_v="64", token="31"):
        assert not at.exception
        assert not at.warning
    solo = every_step(page, lang="en", text="solo", d_model="2", d_k="1", d_v="1")
    for at in solo:
        assert not at.exception
    assert "The weights add up to 1.000." in texts(solo[0])


def test_wide_values_print_a_shortened_output_row(page):
    at = page(PAGE, lang="en", d_v="64", step="4")
    row = next(m.value for m in at.markdown if m.value.startswith("Output row"))
    assert row.count(",") == 6 and "…" in row  # first four, …, last two
    assert "random (untrained)" in texts(page(PAGE, lang="en", d_v="64", step="1"))


@pytest.mark.parametrize("present", ["0", "1"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_step_carries_its_own_notes(page, present, lang):
    """Students and slides alike: step 1 notices the largest weight and that the weights are
    untrained, step 3 the weighted average, step 4 the output's width and leads on; no step
    repeats another's notes."""
    t = Translator(lang)
    mix = mix_row(trace().weights[0], trace().v)
    average = t("weighted_sum.notice_average", total=f"{mix.weight_total:.3f}")
    width = t("weighted_sum.notice_width", d_v=4, n=6)
    untrained = t("weighted_sum.untrained")
    leads_on = {t("weighted_sum.back_link"), t("weighted_sum.next_link")}
    runs = every_step(page, lang=lang, present=present)
    notices, shown_untrained, links = [], [], []
    for at in runs:
        assert not at.exception
        notices.append([f"- {item}" for item in noticed(at)])
        shown_untrained.append(untrained in texts(at))
        links.append({e.label for e in visible(at.main) if type(e).__name__ == "PageLink"})
    assert [len(items) for items in notices] == [1, 0, 1, 1], "one item on steps 1, 3 and 4"
    assert average not in notices[0][0] and width not in notices[0][0]
    assert notices[2] == [f"- {average}"] and notices[3] == [f"- {width}"]
    assert shown_untrained == [True, False, False, False]
    assert [leads_on <= found for found in links] == [False, False, False, True]
