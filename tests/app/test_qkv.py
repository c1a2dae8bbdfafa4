"""The Q, K, V page: matrices with shapes, one followed token, the fused projection, and
lesson 002's numbers."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import embed_tokens, init_projections, self_attention_trace, tokenize
from tests.app.conftest import chart_extent, chart_tables, texts, visible, visible_of
from ui import charts
from ui.i18n import Translator

PAGE = "pages/2_qkv.py"
EN, ZH = Translator("en"), Translator("zh")
LESSON_WEIGHTS_ROW0 = "[0.097, 0.122, 0.236, 0.445, 0.047, 0.052]"
LESSON_OUTPUT_ROW0 = "[−0.233, 0.443, 1.035, 0.550]"
STEP_KEYS = ("matrices_title", "follow_title", "fused_title", "lesson_title")
BAR_KEYS = (*STEP_KEYS[:3], "lesson_bar")  # the step bar's labels (step 4: a shorter one)


def tex_vector(values) -> str:
    """A vector as the page writes it in LaTeX: 2 decimals, as its heatmap cells."""
    return r"\left[\," + r",\ ".join(f"{v:.2f}" for v in values) + r"\,\right]"


def follow_tex(at: AppTest) -> str:
    (tex,) = [e.value for e in at.latex if "x_{" in e.value]
    return tex


def x_row(at: AppTest, i: int) -> str:
    """The numbers of x_i in the "follow one token" equations."""
    start = re.escape(f"x_{{{i}}} &= ")
    match = re.search(start + r"(\\left\[.*?\\right\])", follow_tex(at))
    assert match, follow_tex(at)
    return match.group(1)


def differences(at: AppTest) -> list[float]:
    labels = [EN("qkv.fused_metric", name=n) for n in "QKV"]
    return [float(m.value) for m in at.metric if m.label in labels]


def step_1_panels(at: AppTest) -> dict[str, pd.DataFrame]:
    """Step 1's matrices by name, as drawn (the grid's empty corner has no cells)."""
    return {t.panel[0]: t for t in chart_tables(at, 0) if len(t)}


def trace(text="The cat sat on the mat", d_model=8, d_k=4, d_v=4, seed=42, mode="lesson"):
    x = embed_tokens(tokenize(text), d_model, mode, seed, False)
    return self_attention_trace(x, *init_projections(d_model, d_k, d_v, seed))


def test_opens_with_lesson_002_reproduced(page):
    at = page(PAGE, lang="en")
    assert not at.exception
    assert not at.warning
    assert at.title[0].value == EN("qkv.title")
    tr = trace()
    assert f"q = [{', '.join(f'{v:.2f}' for v in tr.q[0])}]".replace("-", "−") in texts(at)
    at = page(PAGE, lang="en", step="4")
    shown = texts(at)
    assert LESSON_WEIGHTS_ROW0 in shown and LESSON_OUTPUT_ROW0 in shown
    assert [s.value for s in at.success] == [EN("qkv.lesson_match")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_students_see_one_step_and_only_it_is_drawn(page, lang):
    t = Translator(lang)
    for step, key in enumerate(STEP_KEYS, start=1):
        at = page(PAGE, lang=lang, step=str(step), token="2")
        assert not at.exception
        assert [s.value for s in at.subheader] == [t(f"qkv.{key}")], "one step on screen"
        assert len(at.get("vega_lite_chart")) == 1, "off-screen steps draw no chart"
        assert at.button_group(key="_choice_token").value == "2", "the token stays in the URL"
        assert at.query_params["token"] == "2"


def test_chinese_page_is_translated(page):
    for step in ("1", "2", "3", "4"):
        at = page(PAGE, lang="zh", step=step)
        assert not at.exception
        assert at.title[0].value == ZH("qkv.title")
        assert EN("blocks.notice") not in texts(at)


@pytest.mark.parametrize("step", ["1", "2", "3", "4"])
def test_presenter_mode_shows_one_step(page, step):
    at = page(PAGE, lang="zh", present="1", step=step)
    assert not at.exception
    assert not at.warning
    assert not visible_of(at, "Subheader")  # the step bar names the step:
    bar = at.button_group(key="_step_choice")
    assert bar.value == step
    assert bar.format_func(step) == f"{step} · {ZH(f'qkv.{BAR_KEYS[int(step) - 1]}')}"
    picker = [e for e in visible(at.main) if getattr(e, "key", None) == "_choice_token"]
    assert len(picker) == (1 if step in ("1", "2") else 0), "the token picker is on screen"
    assert len(at.button_group(key="_choice_token").options) == 6, "drawn (hidden) on every step"


def test_fused_projection_matches_within_rounding_for_odd_sizes(page):
    sizes = {"d_model": "37", "d_k": "13", "d_v": "29", "seed": "123"}
    at = page(PAGE, lang="en", step="3", **sizes)
    assert not at.exception
    diffs = differences(at)
    assert len(diffs) == 3 and all(0 <= d < 1e-12 for d in diffs)
    at = page(PAGE, lang="en", step="1", **sizes)
    assert r"(8\times" not in " ".join(e.value for e in at.latex)
    assert r"(37\times13)" in " ".join(e.value for e in at.latex)


def test_changing_d_k_changes_the_shapes_shown(page):
    def shapes(at: AppTest) -> str:
        (tex,) = [e.value for e in at.latex if "underbrace" in e.value]
        return tex.strip("$\n")

    at = page(PAGE, lang="en")
    assert shapes(at).startswith("Q = X") and r"(8\times4)" in shapes(at)
    assert r"(6\times4)" in shapes(at)
    at.slider(key="d_k").set_value(7).run()
    assert r"(8\times7)" in shapes(at) and r"(6\times7)" in shapes(at)
    assert "Q, K (6 × 7)" in texts(at)
    at.button_group(key="_choice_projection").set_value("v").run()
    assert shapes(at).startswith("V = X") and r"(8\times4)" in shapes(at), "d_v stays 4"
    at = page(PAGE, lang="en", step="4", d_k="7")
    assert LESSON_WEIGHTS_ROW0 not in texts(at)
    assert [s.value for s in at.info] == [EN("qkv.lesson_differs")]


def test_picking_a_token_follows_its_row(page):
    at = page(PAGE, lang="en", step="2")
    tr = trace()
    assert tex_vector(tr.q[0]) in follow_tex(at)
    at.button_group(key="_choice_token").set_value("3").run()
    assert not at.exception
    assert x_row(at, 3) == tex_vector(tr.x[3])
    assert tex_vector(tr.q[3]) in follow_tex(at) and tex_vector(tr.v[3]) in follow_tex(at)
    assert tex_vector(tr.q[0]) not in follow_tex(at)
    at = page(PAGE, lang="en", step="1", token="3")
    assert "token 3, “on”" in texts(at)


def test_token_in_the_url_is_restored(page):
    at = page(PAGE, lang="en", step="2", token="2")
    assert at.button_group(key="_choice_token").value == "2"
    assert x_row(at, 2) == tex_vector(trace().x[2])


def test_lesson_button_restores_the_lesson_after_changes(page):
    at = page(PAGE, lang="en", step="4", seed="7", d_model="12")
    assert LESSON_WEIGHTS_ROW0 not in texts(at)
    (button,) = [b for b in at.sidebar.button if b.key == "lesson_example"]  # icon only
    button.click().run()
    assert at.slider(key="d_model").value == 8 and at.number_input(key="seed").value == 42
    assert LESSON_WEIGHTS_ROW0 in texts(at) and LESSON_OUTPUT_ROW0 in texts(at)


def test_stable_mode_gives_a_repeated_word_the_same_vector(page):
    stable = page(PAGE, lang="en", step="2", embedding="stable", token="0")
    first = x_row(stable, 0)
    stable.button_group(key="_choice_token").set_value("4").run()
    assert x_row(stable, 4) == first, "“The” and “the” share one vector in stable mode"
    lesson = page(PAGE, lang="en", step="2", token="4")
    assert x_row(lesson, 4) != x_row(page(PAGE, lang="en", step="2"), 0)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"text": " ".join(["word"] * 40)}, "40 tokens"),
        ({"text": "我" * 33}, "33 tokens"),
        ({"text": "   "}, ""),
        ({"text": ""}, ""),
    ],
)
def test_bad_sentences_warn_and_fall_back_to_the_lesson(page, params, expected):
    at = page(PAGE, lang="en", step="4", **params)
    assert not at.exception
    assert at.warning and expected in at.warning[0].value
    assert LESSON_WEIGHTS_ROW0 in texts(at)


@pytest.mark.parametrize(
    "params",
    [{"token": "99"}, {"token": "abc"}, {"token": "-1"}, {"embedding": "bogus"}, {"d_k": "0"}],
)
def test_bad_url_values_warn_and_fall_back(page, params):
    at = page(PAGE, lang="en", step="4", **params)
    assert not at.exception
    assert at.warning
    assert LESSON_WEIGHTS_ROW0 in texts(at)
    assert at.button_group(key="_choice_token").value == "0"


def test_a_stored_token_beyond_a_shortened_sentence_falls_back(page):
    at = page(PAGE, lang="en", step="2", token="5")
    at.text_input(key="text").set_value("hello world").run()
    assert not at.exception
    assert at.warning
    assert at.button_group(key="_choice_token").value == "0"
    assert x_row(at, 0) == tex_vector(trace("hello world").x[0])


def test_extreme_sizes_run(page):
    text = " ".join(f"w{i}" for i in range(32))
    at = page(PAGE, lang="en", step="3", text=text, d_model="64", d_k="64", d_v="64", token="31")
    assert not at.exception
    assert not at.warning
    assert len(differences(at)) == 3 and all(d < 1e-12 for d in differences(at))
    at = page(PAGE, lang="en", d_model="2", d_k="1", d_v="1")
    assert not at.exception


def test_large_sizes_shorten_vectors_and_name_the_lesson(page):
    sizes = {"d_model": "64", "d_k": "64", "d_v": "64"}
    at = page(PAGE, lang="en", **sizes)
    shown = texts(at)
    q_line = next(m.value for m in at.markdown if "comes from row 0 of X alone" in m.value)
    assert q_line.count(",") < 12 and "…" in q_line  # not all 64 numbers
    assert "exactly the same Q, K and V" in shown or "floating-point rounding" in shown
    assert "random (untrained)" in shown
    at = page(PAGE, lang="en", step="4", **sizes)
    shown = texts(at) + at.button_group(key="_step_choice").format_func("4")
    assert "lesson 002" not in shown and "Check against the worked example" in shown


def test_the_grid_fits_the_first_screen_and_keeps_its_spec_while_its_cells_do(page):
    at = page(PAGE, lang="en", d_model="2")
    specs = []
    for d_model in range(2, 8):  # 26 px cells: d_model + 6 rows fit the room up to 7
        at.slider(key="d_model").set_value(d_model).run()
        (chart,) = at.get("vega_lite_chart")
        specs.append((chart.proto.spec, tuple(d.name for d in chart.proto.datasets)))
    assert len(set(specs)) == 1, "same spec from d_model 2 to 7: only the rows change"
    for d_model in (8, 16, 32, 64):  # W is d_model rows high: the cells shrink instead
        at.slider(key="d_model").set_value(d_model).run()
        width, height = chart_extent(at, 0)
        assert width <= charts.PAGE_WIDTH and height <= charts.PAGE_HEIGHT, d_model
    spec = json.loads(specs[0][0])
    corner, w, x, q = spec["concat"]  # W above Q, X left of it: Q[i, j] = X row i · W column j
    assert spec["columns"] == 2 and corner["data"] == {"values": []}
    assert [part["data"]["name"] for part in (x, w, q)] == ["cells", "cells_1", "cells_2"]
    assert x["title"]["text"]["expr"].startswith('data("cells")')
    assert spec["resolve"] == {"scale": {"color": "independent"}}, "each its own colours"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_step_1_draws_the_picked_projection_and_keeps_it_in_the_url(page, lang):
    tr, ws = trace(), init_projections(8, 4, 4, 42)
    at = page(PAGE, lang=lang, token="2")
    drawn = step_1_panels(at)
    assert list(drawn) == ["X", "W_Q", "Q"], "X · W_Q = Q by default"
    at.button_group(key="_choice_projection").set_value("v").run()
    assert not at.exception and at.query_params["projection"] == "v"
    drawn = step_1_panels(at)
    assert list(drawn) == ["X", "W_V", "V"]
    assert np.allclose(drawn["W_V"].value.to_numpy().reshape(8, 4), ws[2])
    assert np.allclose(drawn["V"].value.to_numpy().reshape(6, 4), tr.v)
    v_row = ", ".join(f"{x:.2f}" for x in tr.v[2]).replace("-", "−")
    assert f"v = [{v_row}]" in texts(at), "the note quotes the followed token's row of V"
    at = page(PAGE, lang=lang, projection="k")
    assert list(step_1_panels(at)) == ["X", "W_K", "K"], "restored from the URL"


def test_a_bad_projection_in_the_url_warns_and_falls_back_to_q(page):
    at = page(PAGE, lang="en", projection="z")
    assert not at.exception
    assert len(at.warning) == 1
    assert list(step_1_panels(at)) == ["X", "W_Q", "Q"]
    assert "projection" not in at.query_params


def _walk(node: object, key: str) -> list:
    """Every value of ``key`` anywhere in a chart spec."""
    if isinstance(node, dict):
        found = [node[key]] if key in node else []
        return found + [x for v in node.values() for x in _walk(v, key)]
    if isinstance(node, list):
        return [x for v in node for x in _walk(v, key)]
    return []


def test_the_lesson_check_prints_its_three_decimals_large_enough_to_read(page):
    spec = json.loads(page(PAGE, lang="en", step="4").get("vega_lite_chart")[0].proto.spec)
    cells = [w["step"] for w in _walk(spec, "width") if isinstance(w, dict)]
    fonts = [
        m["fontSize"]
        for m in _walk(spec, "mark")
        if isinstance(m, dict) and m.get("type") == "text"
    ]
    assert len(cells) == 2 and min(cells) >= 40  # the weights and the output, 6 tokens
    assert fonts and min(fonts) >= 11  # "−0.233" at a size a student reads


PICKERS = ("_choice_token", "_choice_projection")


@pytest.mark.parametrize(
    ("step", "in_sidebar"),
    [("1", PICKERS), ("2", PICKERS[:1]), ("3", ()), ("4", ())],
)
def test_students_pick_in_the_sidebar_the_controls_of_the_step_on_screen(page, step, in_sidebar):
    """Students: the sentence's settings in the sidebar on every step, with the token (steps
    1 and 2) and the projection (step 1) while their step is on screen; the others are
    drawn hidden in the main area (they stay in the URL). A slide: all in the main area."""
    at = page(PAGE, lang="en", step=step, token="2", projection="k")
    sidebar = {getattr(e, "key", None) for e in visible(at.sidebar)}
    assert {"text", "lesson_example", "d_model", "d_k", "d_v"} <= sidebar
    assert {k for k in PICKERS if k in sidebar} == set(in_sidebar)
    assert not {getattr(e, "key", None) for e in visible(at.main)} & set(PICKERS)
    assert at.button_group(key="_choice_token").value == "2"  # drawn on every step
    assert at.button_group(key="_choice_projection").value == "k"
    slide = page(PAGE, lang="en", step=step, present="1")
    assert not [e for e in visible(slide.sidebar) if getattr(e, "key", None) == "d_model"]
    on_slide = {getattr(e, "key", None) for e in visible(slide.main)}
    assert "d_model" in on_slide  # in the closed settings box above the step
    assert {k for k in PICKERS if k in on_slide} == set(in_sidebar)
