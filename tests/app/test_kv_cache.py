"""AppTest of the KV cache page: stepping the cache, cached == causal, costs and memory."""

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import chart_tables, keys, order, texts, visible_of
from ui.i18n import Translator
from ui.views import kv_cache as view

PAGE = "pages/8_kv_cache.py"
N_LESSON = 6
DECODE, COST = "1", "2"  # the steps (?step=): only one is drawn


def panel(at: AppTest, name: str) -> np.ndarray:
    """A panel of the cache chart as a matrix, NaN where a cell is empty."""
    candidates = [f for f in chart_tables(at, 0) if "panel" in f and (f["panel"] == name).all()]
    frame = max(candidates, key=len)
    out = np.full((frame["i"].max() + 1, frame["j"].max() + 1), np.nan)
    out[frame["i"], frame["j"]] = pd.to_numeric(frame["value"])
    return out


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def lesson_causal_weights() -> np.ndarray:
    """Lesson 002's sentence with a causal mask, computed here independently."""
    x = np.random.default_rng(42).normal(0, 1, (N_LESSON, 8))
    rng = np.random.default_rng(42)
    w_q = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    w_k = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    s = (x @ w_q) @ (x @ w_k).T / 2.0
    s = np.where(np.tril(np.ones((N_LESSON, N_LESSON))) > 0, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_page_runs_in_english_and_chinese(page):
    en = page(PAGE)
    assert not en.exception
    assert en.title[0].value == "KV cache"
    zh = page(PAGE, lang="zh", step=COST)
    assert not zh.exception
    assert zh.title[0].value == "KV 缓存"
    assert "缓存省了什么" in texts(zh)
    assert "What the cache saves" not in texts(zh)


@pytest.mark.parametrize("step", ["1", "2"])
def test_presenter_mode_shows_one_step(page, step):
    at = page(PAGE, present="1", step=step)
    assert not at.exception
    assert not visible_of(at, "Subheader")  # the step bar names the step
    assert len(visible_of(at, "vega_lite_chart")) == 1


def test_stepping_adds_one_cache_row_and_cached_weights_equal_the_causal_row(page):
    at = page(PAGE, t="0")
    full = lesson_causal_weights()
    d_k = 4
    for t in range(N_LESSON):
        if t:
            at.slider(key="t").set_value(t).run()
        assert not at.exception
        assert metric(at, "Rows in the cache") == str(t + 1)
        k = panel(at, "K")
        assert k.shape == (N_LESSON, d_k)
        assert np.isfinite(k[: t + 1]).all() and np.isnan(k[t + 1 :]).all()
        v = panel(at, "V")
        assert np.isfinite(v[: t + 1]).all() and np.isnan(v[t + 1 :]).all()
        w = panel(at, "weights")  # row 0: from the cache, row 1: row t of the full matrix
        np.testing.assert_allclose(w[0, : t + 1], w[1, : t + 1], atol=1e-12)
        assert np.isnan(w[0, t + 1 :]).all()  # the cache has no later keys
        np.testing.assert_array_equal(w[1, t + 1 :], 0.0)
        np.testing.assert_allclose(w[1], full[t], atol=1e-12)
        assert float(metric(at, "max |cache − full row t|").replace("−", "-")) < 1e-12


def test_cost_controls_drive_the_numbers(page):
    at = page(PAGE, step=COST)
    before = texts(at)
    assert "The last of the 2048 steps alone costs 4.92 × 10⁶ multiply-adds" in before
    assert "144 MiB in float32 or 72 MiB in float16" in before  # 2·2048·768·12 floats
    at.slider(key="n_max").set_value(1024).run()
    assert "72 MiB in float32 or 36 MiB in float16" in texts(at)
    at.number_input(key="layers").set_value(24).run()
    assert "144 MiB in float32" in texts(at)
    data = max(chart_tables(at, 0), key=len)  # the step's one chart
    per_step = data[data["panel"] == "per step"]
    with_c = per_step[per_step["series"] == "with cache"]["value"].to_numpy()
    without = per_step[per_step["series"] == "without cache"]["value"].to_numpy()
    assert (without >= with_c).all() and without[-1] > 100 * with_c[-1]


def test_bad_url_params_warn_and_fall_back(page):
    at = page(PAGE, t="99", n_max="abc", width="0", layers="1e9", log="maybe", d_model="-3")
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in ("t", "n_max", "width", "layers", "log", "d_model"):
        assert f"`{key}`" in warned
    assert at.slider(key="t").value == 2
    assert at.slider(key="n_max").value == 2048
    assert metric(at, "Rows in the cache") == "3"


def test_extreme_values_raise_nothing(page):
    long_text = " ".join(f"w{i}" for i in range(32))
    sizes = {"d_model": "64", "d_k": "64", "d_v": "1", "n_max": "8192", "width": "8192"}
    at = page(PAGE, text=long_text, t="31", **sizes, layers="128", log="false")
    assert not at.exception
    assert not at.warning
    assert metric(at, "Rows in the cache") == "32"
    assert "nan" not in texts(at).lower()
    at.query_params["step"] = COST
    assert not at.run().exception
    assert not at.warning
    assert "nan" not in texts(at).lower()
    one = page(PAGE, text="Hi")
    assert not one.exception
    assert metric(one, "Rows in the cache") == "1"


def test_notices_fit_the_first_and_the_last_step(page):
    first = texts(page(PAGE, t="0"))
    assert "no earlier token whose key" in first and "nothing is reused yet" in first
    assert "the rows above were computed once" not in first
    last = texts(page(PAGE, t="5")) + texts(page(PAGE, t="5", step=COST))
    assert "The keys after" not in last  # nothing comes after the last token
    assert "× as many multiply-adds" in last and "1393× more" not in last
    assert "random (untrained)" in last


def test_only_the_step_on_screen_draws_its_charts_and_both_keep_their_controls(page):
    at = page(PAGE, t="4", n_max="1024", layers="24")  # step 1: the cache chart only
    assert len(at.get("vega_lite_chart")) == 1 and panel(at, "K").shape == (N_LESSON, 4)
    assert "72 MiB" not in texts(at) and "What the cache saves" not in texts(at)
    assert at.slider(key="n_max").value == 1024 and at.number_input(key="layers").value == 24
    assert at.query_params["n_max"] == "1024" and at.query_params["layers"] == "24"
    at = page(PAGE, t="4", n_max="1024", layers="24", step=COST)  # step 2: the costs only
    assert len(at.get("vega_lite_chart")) == 1 and not at.metric
    assert "144 MiB in float32" in texts(at)  # 2·1024·768·24 floats
    assert at.slider(key="t").value == 4 and at.query_params["t"] == "4"
    at = page(PAGE, n_max="abc")  # a bad value of step 2 warns on step 1, where it is seen
    assert any("`n_max`" in w.value for w in visible_of(at, "Warning"))


def test_first_step_says_no_earlier_token_is_reused_not_that_the_cache_is_empty(page):
    from core.kv_cache import decode_costs
    from ui.i18n import Translator
    from ui.views.kv_cache import count

    first = decode_costs(N_LESSON, 8, 4, 4).with_cache[0]  # the lesson sentence's sizes
    for lang in ("en", "zh"):
        at = page(PAGE, t="0", lang=lang)
        tr = Translator(lang)
        assert metric(at, tr("kv_cache.rows")) == "1"  # the new token's own row is cached
        shown = texts(at)
        assert tr("kv_cache.notice_work_first", with_=count(first)) in shown
        for old in ("nothing is cached yet", "缓存里还什么都没有"):
            assert old not in shown
    assert "no earlier token whose key and value could be reused" in texts(page(PAGE, t="0"))


def test_work_notice_points_to_step_2_for_the_real_sizes_not_below(page):
    en = page(PAGE, t="3")
    assert "Step 2 shows the gap at real model sizes." in texts(en)
    assert "chart below" not in texts(en)
    assert len(en.get("vega_lite_chart")) == 1  # the cost chart is not on this screen
    zh = page(PAGE, t="3", lang="zh")
    assert "第 2 步展示真实模型规模下的差距" in texts(zh) and "下面的图表" not in texts(zh)


def test_chinese_notices_quote_the_token(page):
    at = page(PAGE, lang="zh", t="2")
    word = at.text_input(key="text").value[2]  # per-character tokens: "在" by default
    shown = texts(at)
    assert f"“**{word}**”的查询只关注缓存中的键" in shown
    assert f"“**{word}**”之后的键" in shown
    assert f"**{word}** 的查询" not in shown and f"**{word}** 之后" not in shown


SENTENCE = {"text", "d_model", "d_k", "d_v", "seed", "pos", "_choice_embedding"}
DECODE_CONTROLS, COST_CONTROLS = SENTENCE | {"t"}, {"n_max", "width", "layers", "log"}


@pytest.mark.parametrize(
    ("step", "shown", "hidden"),
    [(DECODE, DECODE_CONTROLS, COST_CONTROLS), (COST, COST_CONTROLS, DECODE_CONTROLS)],
)
def test_students_move_the_step_controls_in_the_sidebar_a_lecturer_on_the_slide(
    page, step, shown, hidden
):
    at = page(PAGE, step=step)
    assert shown <= keys(at.sidebar)  # beside the chart they change
    assert not shown & keys(at.main)
    assert not hidden & (keys(at.sidebar) | keys(at.main))  # the other step's: kept hidden
    assert at.slider(key="t").value == 2 and at.slider(key="n_max").value == 2048
    slide = page(PAGE, step=step, present="1")
    assert shown <= keys(slide.main) and not shown & keys(slide.sidebar)
    assert not hidden & keys(slide.main)


def test_a_student_sees_title_step_bar_chart_then_the_text(page):
    """The page's anatomy: the intro and the step's text come below its chart (the intro
    on the first step only)."""
    tr = Translator("en")
    seen = order(page(PAGE))
    first = seen.index("chart")
    assert seen.index("Title") < seen.index("ButtonGroup") < first  # the step bar
    assert first < seen.index(tr("kv_cache.intro")) < seen.index(tr("kv_cache.s1_title"))
    seen = order(page(PAGE, step=COST))
    assert seen.index("chart") < seen.index(tr("kv_cache.s2_title"))
    assert tr("kv_cache.intro") not in seen


def test_the_projections_question_counts_projections_by_a_plain_decoding_loop():
    n = view.ASK_TOKENS
    with_cache = without = 0
    cache: list[int] = []
    for token in range(n):  # one decoding step per token
        cache.append(token)  # with the cache: only the new token's K and V are projected
        with_cache += 1
        without += len(cache)  # without it: every token so far, again
    truth = view.ASK_PROJECTIONS.truth()
    assert truth.number == without / with_cache == 5
    assert truth.is_right("5") and not truth.is_right("4.5") and not truth.is_right("4")
    for lang in ("en", "zh"):  # the text names the count and the why states the sums
        t = Translator(lang)
        assert str(n) in view.ASK_PROJECTIONS.text(t)
        assert all(f"{x}" in view.ASK_PROJECTIONS.why(t) for x in (n, without, 5))
