"""The multi-head attention page: heads among the divisors of d_model, per-head weights and
their average, batched == per-head loop, and the optional PyTorch cross-check."""

import json
import re
import sys

import numpy as np
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from core import embed_tokens, tokenize
from core.multihead import init_multihead
from tests.app.conftest import STEP_BAR, chart_extent, open_page, texts, visible, visible_of
from tests.conftest import optional_module
from ui import charts
from ui.i18n import Translator
from ui.sentence import LESSON_TEXT, NATIVE_TEXT
from ui.views import multi_head as view

PAGE = "pages/7_multi_head.py"
LONG_TEXT = " ".join(f"w{i}" for i in range(32))  # the 32-token maximum
SPLIT, WEIGHTS, MERGE, CHECK = "1", "2", "3", "4"  # the steps (?step=): only one is drawn


def page_widgets(at) -> list[str]:
    """The keys of the widgets on screen in the main area, the step bar's aside."""
    widgets = [e for e in visible(at.main) if getattr(e, "key", None) is not None]
    return [e.key for e in widgets if e.key not in STEP_BAR]


def page(**params: str):
    at = open_page(PAGE, **params)
    assert not at.exception, at.exception
    return at


def chart_data(at, name: str):
    """The named dataset of the charts on screen, as a DataFrame."""
    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            if ds.name == name:
                return convert_arrow_bytes_to_pandas_df(ds.data.data)
    raise AssertionError(f"no dataset {name!r} on the page")


def panels(at) -> dict[str, np.ndarray]:
    """The weight heatmap's panels as matrices, in the order drawn."""
    df = chart_data(at, "weights")
    return {
        p: g.pivot(index="i", columns="j", values="value").to_numpy()
        for p, g in df.groupby("panel", sort=False)
    }


def _number(text: str) -> float:
    return float(text.replace("−", "-"))  # ``2.2e−16`` style, typographic minus


def metrics(at) -> dict[str, float]:
    """Step 4's differences, label -> the number shown: for students the rows of its table,
    on a slide its metrics."""
    if at.metric:
        return {m.label: _number(m.value) for m in at.metric}
    (table,) = [t.value for t in at.table if "Largest difference" in t.value.columns]
    return dict(zip(table["Compared"], map(_number, table["Largest difference"]), strict=True))


def stage_table(at):
    """Step 1's table of the eight stages (a DataFrame)."""
    return next(t.value for t in at.table if "NumPy" in t.value.columns)


def shapes(at) -> list[str]:
    """The shape column of the stage table, top to bottom."""
    return [re.fullmatch(r"`(\([\d, ]+\))`", s).group(1) for s in stage_table(at)["Shape"]]


def heads(at):
    return at.segmented_control(key="_choice_heads")  # ui.params.select's widget for ?heads=


def divisors(n: int) -> list[str]:
    return [str(d) for d in range(1, n + 1) if n % d == 0]


def test_page_runs_in_english_and_chinese():
    en, zh = page(lang="en"), page(lang="zh")
    assert en.title[0].value == "Multi-head attention"
    assert zh.title[0].value == "多头注意力"
    assert "把 d_model 拆成 h 个头" in texts(zh)
    assert not en.warning and not zh.warning


def test_presenter_mode_shows_one_step_at_a_time():
    at = page(present="1")
    assert [s.value for s in visible_of(at, "Subheader")] == ["Split d_model into h heads"]
    seen = []
    for step in ("1", "2", "3", "4"):
        at = page(present="1", step=step, lang="zh")
        assert len(visible_of(at, "Subheader")) == 1
        seen.append(visible_of(at, "Subheader")[0].value)
    assert seen == [
        "把 d_model 拆成 h 个头",
        "每个头一种注意力分布",
        "拼接各头，再乘 W_O",
        "等价于分别运行 h 次注意力",
    ]
    assert len(visible_of(at, "Metric")) >= 2  # step 4: numbers, no charts
    assert not visible_of(at, "vega_lite_chart")
    assert not at.get("popover")  # no export box: the other steps' boxes are not drawn either
    assert not visible_of(at, "DownloadButton")  # nothing to export on a step without charts


@pytest.mark.parametrize("d_model", ["2", "6", "12", "60", "64"])
def test_only_divisors_of_d_model_are_offered(d_model):
    at = page(d_model=d_model)
    assert heads(at).options == divisors(int(d_model))
    assert all(int(d_model) % int(h) == 0 for h in heads(at).options)


def test_heads_that_do_not_divide_d_model_warn_and_fall_back():
    at = page(d_model="8", heads="3")
    assert "h = 3 does not divide d_model = 8" in at.warning[0].value
    assert heads(at).value == "2"
    assert shapes(at)[2] == "(6, 2, 4)"  # the reshape uses the fallback h = 2


@pytest.mark.parametrize("raw", ["abc", "0", "-2", "08", "1e9"])
def test_unusable_heads_in_the_link_warn_and_fall_back(raw):
    at = page(heads=raw, step=CHECK)
    assert at.warning, raw
    assert heads(at).value == "2"
    assert metrics(at)["max |batched − loop|, output"] < 1e-12


def test_moving_d_model_keeps_the_head_count_by_landing_on_its_multiples():
    at = page()
    heads(at).set_value("4").run()
    at.slider(key="d_model").set_value(9).run()  # one step up from 8: on to 12, h stays 4
    assert not at.exception and not at.warning
    assert at.slider(key="d_model").value == 12 and heads(at).value == "4"
    assert shapes(at)[2] == "(6, 4, 3)"
    at.slider(key="d_model").set_value(11).run()  # one step down from 12: on to 8
    assert at.slider(key="d_model").value == 8 and shapes(at)[2] == "(6, 4, 2)"
    at.slider(key="d_model").set_value(2).run()  # below h: the smallest multiple, 4
    assert at.slider(key="d_model").value == 4 and heads(at).value == "4"


def test_heads_drive_the_stage_shapes_and_the_panels():
    two, four = page(), page(heads="4")
    assert shapes(two) == [
        "(6, 8)",
        "(6, 8)",
        "(6, 2, 4)",
        "(2, 6, 4)",
        "(2, 6, 6)",
        "(2, 6, 4)",
        "(6, 8)",
        "(6, 8)",
    ]
    assert shapes(four)[2:6] == ["(6, 4, 2)", "(4, 6, 2)", "(4, 6, 6)", "(4, 6, 2)"]
    assert "d_k = d_v = d_model / h = 8 / 4 = 2" in texts(four)
    two, four = page(step=WEIGHTS), page(heads="4", step=WEIGHTS)
    assert list(panels(two)) == ["head 0", "head 1", "average"]  # numbered from 0, as tokens
    assert list(panels(four)) == ["head 0", "head 1", "head 2", "head 3", "average"]
    assert not np.allclose(panels(two)["head 0"], panels(four)["head 0"])


def test_average_panel_is_the_mean_of_the_head_panels():
    for params in ({}, {"heads": "4", "seed": "7"}, {"d_model": "12", "heads": "3"}):
        mats = panels(page(**params, step=WEIGHTS))
        average = mats.pop("average")
        np.testing.assert_allclose(average, np.mean(list(mats.values()), axis=0), atol=1e-12)
        np.testing.assert_allclose(average.sum(axis=1), 1.0)


def test_batched_and_loop_results_agree_on_screen():
    for params in ({}, {"d_model": "12", "heads": "3"}, {"d_model": "64", "heads": "16"}):
        shown = metrics(page(**params, step=CHECK))
        assert shown["max |batched − loop|, output"] < 1e-12, params
        assert shown["max |batched − loop|, weights"] < 1e-12, params


def test_notice_numbers_follow_the_seed():
    a, b = page(step=WEIGHTS), page(seed="7", step=WEIGHTS)
    notice_a = next(m.value for m in a.markdown if "head 0 →" in m.value)
    notice_b = next(m.value for m in b.markdown if "head 0 →" in m.value)
    assert re.search(r"head 0 → “.+” \(0\.\d\d\)", notice_a)
    assert notice_a != notice_b


def test_concat_w_o_and_output_are_drawn_with_their_shapes():
    at = page(heads="4", step=MERGE)
    concat, w_o, out = (chart_data(at, k) for k in ("concat", "w_o", "output"))
    assert (concat.i.max() + 1, concat.j.max() + 1) == (6, 8)
    assert (w_o.i.max() + 1, w_o.j.max() + 1) == (8, 8)
    assert (out.i.max() + 1, out.j.max() + 1) == (6, 8)
    assert concat.col.iloc[:8].tolist() == [f"h{i}·{j}" for i in (0, 1, 2, 3) for j in (0, 1)]
    c = concat.pivot(index="i", columns="j", values="value").to_numpy()
    w = w_o.pivot(index="i", columns="j", values="value").to_numpy()
    o = out.pivot(index="i", columns="j", values="value").to_numpy()
    np.testing.assert_allclose(c @ w, o, atol=1e-12)  # the output really is concat @ W_O


def test_extreme_settings_run():
    at = page(d_model="64", heads="64", text=LONG_TEXT)
    assert shapes(at)[3] == "(64, 32, 1)"
    at = page(d_model="64", heads="64", text=LONG_TEXT, step=WEIGHTS)
    assert len(panels(at)) == 9  # 8 heads drawn + the average; the caption says so
    assert "first 8 of the 64 heads" in texts(at)
    at = page(d_model="2", heads="1", seed="4294967295")
    assert heads(at).options == ["1", "2"]
    at = page(d_model="61", heads="61", lang="zh", present="1", step="4")
    assert heads(at).value == "61"


def test_without_torch_the_page_says_how_to_enable_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # torch absent, even where installed
    at = page(step=CHECK)
    assert "pip install torch" in at.info[0].value
    assert not any("torch" in label for label in metrics(at))
    assert "max |batched − loop|, output" in metrics(at)
    slide = page(step=CHECK, present="1")
    assert "pip install torch" in slide.info[0].value
    assert not any("torch" in label for label in metrics(slide))
    zh = page(lang="zh", step=CHECK)
    assert "未安装 PyTorch" in zh.info[0].value


def test_torch_nn_multihead_attention_agrees_when_installed():
    # torch is an optional extra, not a requirement of the app: CI installs it (and fails
    # without it); elsewhere this is skipped with the reason, the test above runs everywhere.
    torch = optional_module("torch")
    from ui.views.multi_head import torch_check

    for params in ({}, {"d_model": "12", "heads": "3"}, {"d_model": "16", "heads": "16"}):
        shown = metrics(page(**params, step=CHECK))
        for what in ("output", "averaged weights", "per-head weights"):
            assert shown[f"max |ours − torch|, {what}"] < 1e-12, (params, what)
    x = np.random.default_rng(5).normal(size=(5, 8))
    check = torch_check(x, 8, 4, 11)
    assert check.version == torch.__version__
    assert max(check.output_diff, check.average_diff, check.per_head_diff) < 1e-12


def test_torch_is_frozen_out_of_the_garbage_collectors_sight_once_imported():
    # ~140 000 objects that live as long as the server: a full collection walking them all
    # paused the rerun it fell on (gen-2 collections of 60-140 ms in bench_rerun's process).
    import gc

    import ui.views.multi_head as mh

    torch = optional_module("torch")
    page()  # start-up's objects are frozen once per process, here at the latest
    gc.unfreeze()  # as when torch is first needed after that
    mh._torch.clear()  # torch as the process's first cross-check imports it
    mh._torch_run.clear()
    metrics(page(step=CHECK))
    walked = {id(o) for o in gc.get_objects()}  # what a full collection walks
    for module in (torch, torch.nn, torch.nn.functional, torch.nn.modules.activation):
        assert id(vars(module)) not in walked, module.__name__


def test_sentence_controls_drive_the_page_and_the_lesson_button_restores_them():
    at = page(seed="7", d_model="12", heads="3")
    assert shapes(at)[2] == "(6, 3, 4)"
    at.button(key="lesson_example").click().run()  # the icon button beside the sentence
    assert not at.exception
    assert at.slider(key="d_model").value == 8 and at.number_input(key="seed").value == 42
    assert heads(at).value == "2"  # 3 does not divide 8: back to the default, with a warning
    assert "h = 3 does not divide d_model = 8" in at.warning[0].value
    words = page(text="one two three")
    assert shapes(words)[0] == "(3, 8)"


def test_the_page_charts_export_to_png_svg_and_csv():
    # The heatmaps are Vega-Lite dicts (ui/charts.py says why); the shared exports must
    # still turn them into images offline, and their data into a CSV.
    import core
    from ui import charts
    from ui.exports import chart_png, chart_svg, csv_text
    from ui.i18n import Translator
    from ui.views import multi_head as mh

    t = Translator("zh")
    tokens = core.tokenize("猫坐在垫子上")
    view = mh.compute(core.embed_tokens(tokens, 8, "stable", 1, False), 8, 4, 1)
    weights = charts.to_spec(
        mh.weights_chart(t, False, view.trace.weights, view.average, tokens), False
    )
    tr = view.trace
    strip = mh.output_chart(t, True, tr.concat, view.weights[3], tr.output, 4, tokens)
    strip = charts.to_spec(strip, True)
    assert chart_png(weights).startswith(b"\x89PNG")
    assert "<svg" in chart_svg(strip)
    assert set(charts.table(weights).panel) == {"头 0", "头 1", "头 2", "头 3", "平均"}
    assert csv_text(charts.table(strip)).startswith("\ufeffpanel,row,col")


def test_random_heads_are_called_nearly_flat_not_disagreeing():
    from ui.views import multi_head as mh

    at = page(step=WEIGHTS)
    shown = panels(at)
    shown.pop("average")
    best = max(float(m.max(axis=1).max()) for m in shown.values())
    notice = next(m.value for m in at.markdown if "head 0 →" in m.value)
    assert "random (untrained)" in texts(at)
    if best < mh.FLAT / 6:  # no head much sharper than an even row over 6 tokens
        assert "nearly flat" in notice and "disagree" not in notice


def test_eight_heads_fill_their_rows_without_an_empty_panel():
    from ui.views import multi_head as mh

    assert mh.panel_columns(9) == 3  # 8 heads + the average: 3 × 3, not 5 + 4
    assert [mh.panel_columns(n) for n in (2, 3, 5, 7)] == [2, 3, 5, 4]  # 7: 4 + 3


def test_only_the_step_on_screen_draws_its_charts_and_runs_its_checks(monkeypatch):
    from ui.views import multi_head as mh

    torch_runs = []
    real = mh.torch_check
    monkeypatch.setattr(mh, "torch_check", lambda *a: torch_runs.append(a) or real(*a))
    at = page(heads="4")  # step 1: the stage table only
    assert shapes(at)[2] == "(6, 4, 2)"
    assert not at.get("vega_lite_chart"), "the heads' chart and the merge strip are off screen"
    assert len(at.table) == 1 and not at.metric, "the loop's and torch's table belong to step 4"
    assert not torch_runs, "the loop and torch checks belong to step 4"
    at = page(heads="4", d_model="12", step=MERGE)
    drawn = {ds.name for chart in at.get("vega_lite_chart") for ds in chart.proto.datasets}
    assert "concat" in drawn and "weights" not in drawn, "the merge strip only"
    assert not at.table and not torch_runs, "no stage table and no checks on step 3"
    assert heads(at).value == "4" and at.slider(key="d_model").value == 12  # still in the URL
    assert at.query_params["heads"] == "4" and at.query_params["d_model"] == "12"
    at = page(heads="4", step=CHECK)
    assert len(torch_runs) == 1 and not at.get("vega_lite_chart")


def test_the_merge_strip_fits_a_student_s_first_screen_at_every_d_model():
    # Side by side while d_model is small; one below the other once W_O's d_model rows make
    # a row of three too small; the whole strip within the student's room either way.
    at = page(step=MERGE)
    (small,) = at.get("vega_lite_chart")  # d_model = 8: side by side
    assert len(json.loads(small.proto.spec)["hconcat"]) == 3
    for d_model in (8, 16, 32, 64):
        at.slider(key="d_model").set_value(d_model).run()
        width, height = chart_extent(at, 0)
        assert width <= charts.PAGE_WIDTH and height <= charts.PAGE_HEIGHT, d_model
    (large,) = at.get("vega_lite_chart")  # d_model = 64: concat, W_O and output stacked
    assert len(json.loads(large.proto.spec)["vconcat"]) == 3


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_head_is_called_single_head_attention_with_nothing_to_compare(lang):
    from ui.i18n import Translator

    t = Translator(lang)
    shown = texts(page(lang=lang, heads="1", step=WEIGHTS))
    assert t("multi_head.notice_split_one", d_model=8) in shown
    assert t("multi_head.notice_average_one") in shown
    comparing = {
        "en": ("most confident head", "by chance", "heads pick"),
        "zh": ("最确定的那个头", "偶然", "各个头最看重"),
    }[lang]
    assert not [phrase for phrase in comparing if phrase in shown]  # one head: no comparison
    shown_two = texts(page(lang=lang, heads="2", step=WEIGHTS))
    assert t("multi_head.notice_split", d_model=8, h=2, d_k=4) in shown_two


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_students_find_every_control_in_the_sidebar_a_slide_above_its_step(lang):
    controls = ("heads", "d_model", "text", "seed")  # h, the sentence, the folded extras
    for step in (SPLIT, WEIGHTS, MERGE, CHECK):
        student = page(lang=lang, step=step)
        assert heads(student) in student.sidebar.segmented_control
        for key in controls[1:3]:
            assert key in [w.key for w in (*student.sidebar.slider, *student.sidebar.text_input)]
        assert student.sidebar.number_input(key="seed").value == 42
        assert not page_widgets(student), step
        slide = page(lang=lang, step=step, present="1")
        assert "_choice_heads" not in [w.key for w in slide.sidebar.segmented_control]
        assert not slide.sidebar.slider and not slide.sidebar.text_input
        assert heads(slide) in slide.main.segmented_control
        assert slide.main.slider(key="d_model").value == 8  # in the closed settings expander
        assert Translator(lang)("multi_head.settings") in [e.label for e in slide.main.expander]


def favourite_keys(x: np.ndarray, h: int, seed: int) -> np.ndarray:
    """Each head's favourite key from each query, head by head by hand: head i scores with
    its own columns of W_Q and W_K (softmax keeps the order, so the scores decide).

    Shapes: ``x`` ``(n, d_model)`` -> ``(h, n)``.
    """
    w_q, w_k, _, _ = init_multihead(x.shape[1], h, seed)
    d_k = x.shape[1] // h
    picks = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        q, k = x @ w_q[:, cols], x @ w_k[:, cols]
        picks.append([int(np.argmax(q[j] @ k.T)) for j in range(len(x))])
    return np.array(picks)


def test_the_agree_question_compares_each_heads_favourite_key_computed_head_by_head():
    assert view.DEFAULT_HEADS == 2  # as the question says, with d_model 8 and seed 42
    x = embed_tokens(tokenize(LESSON_TEXT), 8, "lesson", 42)
    # the lesson's embeddings depend on the position only: the Chinese opening sentence
    # (which a Chinese class sees) gives the same heads
    np.testing.assert_array_equal(x, embed_tokens(tokenize(NATIVE_TEXT["zh"]), 8, "lesson", 42))
    picks = favourite_keys(x, 2, 42)
    same = picks[0] == picks[1]  # (n,) queries where both heads pick the same key
    expected = "all" if same.all() else "some" if same.any() else "none"
    assert view.ASK_AGREE.truth().right == {expected}
