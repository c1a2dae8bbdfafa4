"""The scaling page: scores with and without ÷√d_k, and the variance/saturation/gradient
experiments behind it."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import embed_tokens, init_projections, tokenize
from core.experiments import compare_scaling
from core.findings.scaling import PEAKED, SURER, summarize_rows
from tests.app.conftest import open_exports, texts, visible, visible_of
from ui import charts
from ui.charts import fmt
from ui.exports import chart_svg
from ui.i18n import Translator
from ui.views import scaling as view

PAGE = "pages/3_scaling.py"
EN, ZH = Translator("en"), Translator("zh")
STEPS = ("1", "2", "3", "4")  # the sentence's scores, variance, saturation, gradient


def on_step(at: AppTest, step: str) -> AppTest:
    """Turn to ``step`` with the step bar, as a user would (only that step is drawn)."""
    return at.button_group(key="_step_choice").set_value(step).run()


def every_step_metrics(at: AppTest) -> list[str]:
    """The values of every step's readouts, each step turned to in turn (ends on step 4)."""
    return [m.value for step in STEPS for m in on_step(at, step).metric]


def every_step_texts(at: AppTest) -> str:
    """The visible text of every step, each turned to in turn (ends on step 4)."""
    return "\n".join(texts(on_step(at, step)) for step in STEPS)


def metric(at: AppTest, key: str, t: Translator = EN, **values: object) -> float:
    """The number shown by the st.metric whose label is ``t(key, **values)``."""
    label = t(key, **values)
    (value,) = [m.value for m in at.metric if m.label == label]
    return float(value.replace("−", "-"))


def metric_text(at: AppTest, key: str, **values: object) -> str:
    (value,) = [m.value for m in at.metric if m.label == EN(key, **values)]
    return value


def test_page_opens_in_english_with_the_lesson_numbers(page):
    at = page(PAGE, lang="en")
    assert not at.exception
    assert not at.warning
    assert at.title[0].value == EN("scaling.title")
    x = embed_tokens(tokenize("The cat sat on the mat"), 8, "lesson", 42, False)
    w_q, w_k, _ = init_projections(8, 4, 4, 42)
    c = compare_scaling(x, w_q, w_k)
    raw, scaled = summarize_rows(c.raw, c.raw_weights), summarize_rows(c.scaled, c.scaled_weights)
    assert metric_text(at, "scaling.m_std_raw") == fmt(raw.score_std)
    assert metric_text(at, "scaling.m_std_scaled", d_k=4) == fmt(scaled.score_std)
    assert metric_text(at, "scaling.m_max_scaled") == fmt(scaled.max_weight, 3)
    # at d_k = 4 scaling divides every score by exactly 2
    assert raw.score_std == pytest.approx(2 * scaled.score_std)
    assert metric(at, "scaling.m_std_raw") == pytest.approx(
        2 * metric(at, "scaling.m_std_scaled", d_k=4), abs=0.02
    )
    assert metric(at, "scaling.m_max_raw") > metric(at, "scaling.m_max_scaled")


def test_page_opens_in_chinese(page):
    at = page(PAGE, lang="zh")
    assert not at.exception
    assert at.title[0].value == ZH("scaling.title")
    titles = [s.value for step in STEPS for s in on_step(at, step).subheader]
    assert titles == [ZH(f"scaling.step{i}_title") for i in (1, 2, 3, 4)]
    assert metric(on_step(at, "2"), "scaling.m_var_theory", t=ZH) == 64


def test_presenter_mode_runs_and_shows_one_step_at_a_time(page):
    for step in ("1", "2", "3", "4"):
        at = page(PAGE, lang="zh", present="1", step=step)
        assert not at.exception, step
        assert not at.warning, step
        assert [s.value for s in visible_of(at, "Subheader")] == [ZH(f"scaling.step{step}_title")]
        settings = [e for e in visible(at.main) if getattr(e, "key", None) == "samples"]
        assert len(settings) == (0 if step == "1" else 1), "experiment settings on screen"


def test_raising_hist_dk_raises_the_measured_variance_and_scaling_keeps_it_near_one(page):
    low = page(PAGE, lang="en", hist_dk="4", step="2")
    high = page(PAGE, lang="en", hist_dk="256", step="2")
    var_low = metric(low, "scaling.m_var_raw", d_k=4)
    var_high = metric(high, "scaling.m_var_raw", d_k=256)
    assert var_high > 20 * var_low
    assert var_low == pytest.approx(4, rel=0.1)
    assert var_high == pytest.approx(256, rel=0.1)
    assert metric(high, "scaling.m_var_theory") == 256
    for at, d_k in ((low, 4), (high, 256)):
        assert metric(at, "scaling.m_var_scaled", d_k=d_k) == pytest.approx(1.0, abs=0.1)


def test_the_hist_dk_control_drives_the_readout(page):
    at = page(PAGE, lang="en", step="2")
    before = metric(at, "scaling.m_var_raw", d_k=64)
    at.button_group(key="_choice_hist_dk").set_value("512").run()
    assert not at.exception
    assert metric(at, "scaling.m_var_raw", d_k=512) > 4 * before


def test_unscaled_rows_saturate_and_lose_their_gradient_at_large_d_k(page):
    at = page(PAGE, lang="en", step="3")
    top_raw = metric(at, "scaling.m_top_raw", d_k=512)
    top_scaled = metric(at, "scaling.m_top_scaled", d_k=512)
    assert top_raw > 0.9 > 0.5 > top_scaled
    assert metric(at, "scaling.m_ent_raw", d_k=512) < metric(at, "scaling.m_ent_scaled", d_k=512)
    on_step(at, "4")
    g_raw = metric(at, "scaling.m_grad_raw", d_k=512)
    g_scaled = metric(at, "scaling.m_grad_scaled", d_k=512)
    assert 0 < g_raw < g_scaled / 4


def test_experiment_seed_and_sample_count_change_the_measurement(page):
    base = metric(page(PAGE, lang="en", step="2"), "scaling.m_var_raw", d_k=64)
    other = page(PAGE, lang="en", exp_seed="7", step="2")
    other_seed = metric(other, "scaling.m_var_raw", d_k=64)
    fewer = page(PAGE, lang="en", samples="1000", step="2")
    assert other_seed != base
    assert metric(fewer, "scaling.m_var_raw", d_k=64) != base
    assert EN("scaling.variance_caption", n=1000) in [c.value for c in fewer.caption]


def test_unit_variance_q_k_make_d_k_64_unscaled_rows_peaked(page):
    xavier = page(PAGE, lang="en", d_k="64")
    unit = page(PAGE, lang="en", d_k="64", unit_qk="true")
    assert not unit.exception
    spread_x = metric(xavier, "scaling.m_std_raw")
    spread_u = metric(unit, "scaling.m_std_raw")
    assert spread_u > 3 * spread_x
    # √64 = 8: the scaled spread is an eighth of the raw one
    assert metric(unit, "scaling.m_std_scaled", d_k=64) == pytest.approx(spread_u / 8, abs=0.01)
    assert metric(unit, "scaling.m_max_raw") > 2 * metric(unit, "scaling.m_max_scaled")


def test_the_d_k_slider_drives_the_score_matrices(page):
    at = page(PAGE, lang="en", unit_qk="true")
    before = metric(at, "scaling.m_std_raw")
    at.slider(key="d_k").set_value(32).run()
    assert not at.exception
    assert metric(at, "scaling.m_std_raw") != before
    assert any(m.label == EN("scaling.m_std_scaled", d_k=32) for m in at.metric)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("samples", "abc"),
        ("exp_seed", "-1"),
        ("hist_dk", "1e99"),
        ("n_keys", "0"),
        ("unit_qk", "x"),
    ],
)
def test_bad_url_params_warn_and_fall_back(page, key, raw):
    at = page(PAGE, lang="en", **{key: raw})
    assert not at.exception
    assert len(at.warning) == 1
    assert f"`{key}`" in at.warning[0].value
    default = page(PAGE, lang="en")
    assert every_step_metrics(at) == every_step_metrics(default)


def test_bad_params_together_in_chinese_warn_in_chinese(page):
    at = page(PAGE, lang="zh", samples="abc", exp_seed="-1", hist_dk="1e99")
    assert not at.exception
    assert len(at.warning) == 3
    expected = ZH("params.invalid", name="samples", value="abc", default="2000")
    assert expected in [w.value for w in at.warning]


def test_extreme_control_values_raise_nothing(page):
    at = page(
        PAGE,
        lang="en",
        d_model="64",
        d_k="64",
        unit_qk="true",
        samples="1000",
        exp_seed=str(2**32 - 1),
        n_keys="64",
        hist_dk="1",
        text="a " * 32,
    )
    assert not at.exception
    assert not at.warning
    values = every_step_metrics(at)
    assert not at.exception and not at.warning
    assert values and not any("nan" in v or "inf" in v for v in values)
    # with d_k = 1 the histogram's two series are the same samples
    on_step(at, "2")
    assert metric(at, "scaling.m_var_raw", d_k=1) == pytest.approx(
        metric(at, "scaling.m_var_scaled", d_k=1), abs=0.01
    )


def test_exports_are_offered_outside_presenter_mode(page):
    at = page(PAGE, lang="en")
    labels = []
    for step in STEPS:  # only the step on screen draws its box
        at = open_exports(on_step(at, step))
        labels += [e.proto.label for e in at.get("download_button")]
    assert {"PNG", "SVG", "CSV", "NPZ", "TXT"} <= set(labels)
    assert len(labels) == 5 + 4 * 3  # scores (5), three experiments (4 each)
    assert np.isfinite(metric(at, "scaling.m_grad_raw", d_k=512))


def test_presenter_mode_exports_only_the_step_on_screen(page):
    at = open_exports(page(PAGE, lang="en", present="1", step="1"))
    keys = {b.key for b in visible_of(at, "DownloadButton")}
    assert keys and all(k.endswith("scaling_scores") for k in keys)


def test_the_score_chart_exports_as_svg_with_its_data():
    m = np.array([[1.0, -2.0], [3.0, 0.5]])
    spec = charts.to_spec(view.score_chart(EN, (m, m / 2, m / 4, m / 8), ("a", "b"), 4), False)
    spec = json.loads(json.dumps(spec))  # plain JSON, as sent to the browser and the exports
    assert set(spec["datasets"]) == {"scores", "weights"}
    assert [p["data"]["name"] for p in spec["vconcat"]] == ["scores", "weights"]
    assert len(charts.table(spec)) == 4 * 4  # four 2 × 2 panels, one row per cell
    assert "<svg" in chart_svg(spec)


def test_gradient_text_states_the_true_maximum_with_live_numbers(page):
    at = page(PAGE, lang="en", n_keys="8")
    shown = every_step_texts(at)  # the page is on step 4, the gradient's
    assert "largest for an even row" not in shown
    even, half = view.even_row_norms(8)
    assert even == pytest.approx(np.sqrt(7) / 8) and half == pytest.approx(0.5)
    assert f"even over all 8 keys {fmt(even, 3)}, half-and-half on two keys {fmt(half, 3)}" in shown
    scaled = metric(at, "scaling.m_grad_scaled", d_k=512)
    assert ("lies above the" in shown) == (scaled > even)
    assert "lesson 000" not in shown and "This is the classic warning" in shown


def test_d_k_one_says_scaling_changes_nothing(page):
    shown = texts(page(PAGE, lang="en", d_k="1"))
    assert "dividing changes nothing" in shown and "far more sure" not in shown


def test_histogram_gives_each_series_its_own_bins():
    raw_edges, raw_counts, scaled_edges, scaled_counts = view.histogram_data(10_000, 0, 9)
    assert abs(int(raw_counts.max()) - int(scaled_counts.max())) <= 2  # no spike: own bins
    np.testing.assert_allclose(scaled_edges[[0, -1]], raw_edges[[0, -1]] / np.sqrt(512))


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, lang="en", hist_dk="256", samples="5000", d_k="16", step="1")
    assert not at.exception and not at.warning
    assert len(at.get("vega_lite_chart")) == 1  # the score heatmaps; no experiment is sent
    labels = [m.label for m in at.metric]
    assert EN("scaling.m_std_raw") in labels
    assert EN("scaling.m_var_raw", d_k=256) not in labels
    assert EN("scaling.m_grad_raw", d_k=512) not in labels
    # steps 2-4's controls are drawn hidden: they keep the URL's values
    assert at.button_group(key="_choice_hist_dk").value == "256"
    assert at.slider(key="samples").value == 5000
    assert at.query_params["hist_dk"] == "256" and at.query_params["samples"] == "5000"
    on_step(at, "4")
    assert len(at.get("vega_lite_chart")) == 1  # the gradient chart only
    assert at.slider(key="d_k").value == 16  # step 1's slider, now off screen
    assert at.query_params["d_k"] == "16" and at.query_params["hist_dk"] == "256"
    assert EN("scaling.m_std_raw") not in [m.label for m in at.metric]


SENTENCE = {"text", "d_model", "d_k", "unit_qk"}  # step 1's controls (some of them)
EXPERIMENTS = {"samples", "exp_seed", "n_keys"}  # steps 2-4's
HIST = "_choice_hist_dk"  # step 2's own


@pytest.mark.parametrize(
    ("step", "in_sidebar"),
    [("1", SENTENCE), ("2", EXPERIMENTS | {HIST}), ("3", EXPERIMENTS), ("4", EXPERIMENTS)],
)
def test_students_find_the_controls_of_the_step_on_screen_in_the_sidebar(page, step, in_sidebar):
    """Students: the sidebar holds the controls of the step on screen and no others (the
    others are drawn hidden in the main area, so they stay in the URL); a slide keeps them
    all in the main area, the step's in its closed settings box."""
    at = page(PAGE, lang="en", step=step, hist_dk="256", d_k="16")
    keys = SENTENCE | EXPERIMENTS | {HIST}
    sidebar = {getattr(e, "key", None) for e in visible(at.sidebar)} & keys
    assert sidebar == in_sidebar
    assert not {getattr(e, "key", None) for e in visible(at.main)} & keys
    assert at.button_group(key=HIST).value == "256" and at.slider(key="d_k").value == 16
    slide = page(PAGE, lang="en", step=step, present="1")
    assert not {getattr(e, "key", None) for e in visible(slide.sidebar)} & keys
    assert in_sidebar <= {getattr(e, "key", None) for e in visible(slide.main)}


def literal_top_weight(d_k: int, rows: int, n_keys: int, seed: int) -> float:
    """The mean top weight of unscaled softmax rows of ``n_keys`` literal dot products of
    random N(0, 1) vectors of width ``d_k`` (not the page's shortcut through χ² draws)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((rows, 1, d_k))
    k = rng.standard_normal((rows, n_keys, d_k))
    s = (q * k).sum(axis=-1)  # (rows, n_keys)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return float((e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean())


def test_the_saturation_question_is_answered_by_literal_random_dot_products():
    n_keys = view.N_KEYS.default
    assert (view.D_KS[0], view.D_KS[-1], n_keys) == (1, 512, 8)  # as the question says
    narrow, wide = (literal_top_weight(d, 2000, n_keys, seed=7) for d in (1, 512))
    expected = (
        "peakier" if wide - narrow >= SURER else "flatter" if narrow - wide >= SURER else "same"
    )
    assert view.ASK_SATURATION.truth().right == {expected} == {"peakier"}
    # the why: the largest score takes almost all the weight (on the page's own curve too)
    raw, _ = view.saturation_data(n_keys, view.EXP_SEED.default)
    assert wide > PEAKED and raw.max_weight[-1] > PEAKED
