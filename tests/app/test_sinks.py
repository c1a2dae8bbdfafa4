"""The sliding-window page: the toy mask and its reach through the layers, and on SmolLM2
the attention-sink experiment run on a button (perplexity, predictions, first-token share)."""

import re

import numpy as np
import pytest

import core
from core.findings.sinks import keys_kept, reach_back, share_summary
from core.masks import reach_depth, window_reach
from models import smollm
from tests.app.conftest import (
    STEP_BAR,
    assert_each_step_exports,
    assert_waits_for_its_turn,
    bad_value,
    chart_tables,
    each_step,
    keys,
    open_page,
    texts,
    visible_of,
)
from ui import loaded
from ui.i18n import Translator
from ui.views import sinks as sv

PAGE = "pages/15_sinks.py"
EN, ZH = Translator("en"), Translator("zh")
STEPS = ("1", "2", "3")
OWN = {
    "1": {"n", "window", "sinks", "layers"},
    "2": {"_choice_keep", "sink", "back", "sinks_run"},
    "3": {"_choice_keep", "sink", "sinks_run"},
}
RUN_TIMEOUT = 900  # s: three forward passes of ~530 tokens on a busy 2-core machine


def run(at):
    """Press Run and wait for the model."""
    at.button(key="sinks_run").click()
    return at.run(timeout=RUN_TIMEOUT)


@pytest.fixture(scope="module")
def ran():
    """Step 2 after Run with W = 64, S = 1 (the runs stay cached for the other tests)."""
    at = run_page(lang="en", step="2", keep="64", sink="1")
    return run(at)


def run_page(**params):
    at = open_page(PAGE, **params)
    assert not at.exception
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_every_step_renders_before_any_run(lang, present):
    t = Translator(lang)
    for step, at in each_step(PAGE, "sinks", STEPS, lang, present):  # the chart: its place kept
        if step != "1":
            assert t("sinks.notice_press") in texts(at)


@pytest.mark.parametrize(("n", "window", "sinks", "layers"),
                         [(24, 4, 1, 2), (64, 3, 0, 8), (12, 5, 2, 4), (8, 32, 4, 1)])  # fmt: skip
def test_step_1_states_the_cache_and_the_reach_computed_by_core(page, n, window, sinks, layers):
    toy = {"n": str(n), "window": str(window), "sinks": str(sinks), "layers": str(layers)}
    at = page(PAGE, lang="en", step="1", **toy)
    assert not at.exception and not at.warning
    mask = core.sliding_window_mask(n, window, sinks)
    back = reach_back(reach_depth(mask, layers), n - 1, sinks)
    reach = window_reach(window, layers)
    shown = texts(at)
    assert f"more than **{keys_kept(mask)}** keys" in shown
    assert f"**{reach}**" in shown
    assert f"token {n - 1 - back}" in shown
    cells = next(tb for tb in chart_tables(at, 0) if "state" in tb.columns)
    visible_cells = cells["state"].isin([EN("sinks.state_window"), EN("sinks.state_sink")])
    assert int(visible_cells.sum()) == int(mask.sum())


@pytest.mark.xdist_group("smollm2")
def test_step_2_states_the_perplexities_of_the_runs_and_full_attention_is_window_run(ran):
    assert not ran.exception and not ran.warning
    full, window, both = (sv.model_run(*c) for c in sv.configs(64, 1))
    shown = texts(ran)
    assert f"Full attention: perplexity **{sv.num(full.perplexity)}**" in shown
    assert f"last 64 tokens: **{sv.num(window.perplexity)}**" in shown
    assert f"back to **{sv.num(both.perplexity)}**" in shown
    assert full.perplexity < both.perplexity < window.perplexity  # the sink repairs most of it
    m = loaded.smollm2()
    ids = smollm.encode(m, smollm.sinks_text())
    reference = smollm.window_run(m, ids, None, 0, sv.SCORED)
    assert reference.perplexity == full.perplexity
    ppl = next(tb for tb in chart_tables(ran, 0) if "ppl" in tb.columns)
    np.testing.assert_allclose(ppl["ppl"], [full.perplexity, window.perplexity, both.perplexity])
    # the predictions at 8 tokens before the end, with the real token's probability
    position = len(ids) - 8
    real = smollm.token_labels(m, [ids[position]])[0]
    p = full.target_prob[full.row(position)]
    assert f"At “{real}”" in shown
    assert sv.pct(p) in shown
    assert not re.search(r"\b(nan|inf)\b", shown)


@pytest.mark.xdist_group("smollm2")
def test_a_second_press_runs_nothing_and_a_new_sink_count_runs_only_what_is_missing(ran):
    held = dict(ran.session_state[sv.RUNS_KEY])
    assert set(held) == {(None, 0), (64, 0), (64, 1)}
    run(ran)  # the same configuration again: nothing new
    assert set(ran.session_state[sv.RUNS_KEY]) == set(held)
    assert sv.REQUEST_KEY not in ran.session_state
    ran.slider(key="sink").set_value(4).run()
    ppl = next(tb for tb in chart_tables(ran, 0) if "ppl" in tb.columns)
    assert ppl["text"].tolist()[-1] == EN("sinks.not_run")  # shown as not run, not as a number
    run(ran)
    assert set(ran.session_state[sv.RUNS_KEY]) == set(held) | {(64, 4)}
    ran.slider(key="sink").set_value(1).run()


@pytest.mark.xdist_group("smollm2")
def test_step_3_states_the_first_token_finding_from_the_run(ran):
    ran.button(key="step_next").click().run()
    assert ran.query_params["step"] == "3"
    full = sv.model_run(None, 0)
    s = share_summary(full.first_share, sv.HIGH, sv.LOW)
    assert s.high is not None and s.low  # SmolLM2 has both kinds of layer
    shown = texts(ran)
    a, b = s.high
    assert f"layers {a}–{b} give the first token **{sv.pct(s.high_range[0])} to " in shown
    assert sv.span(s.low) in shown
    assert s.high_range[0] >= sv.HIGH and s.low_max < sv.LOW
    lines = next(tb for tb in chart_tables(ran, 0) if "share" in tb.columns)
    got = lines[lines["config"] == EN("sinks.cfg_full")].sort_values("layer")["share"]
    np.testing.assert_allclose(got, full.first_share)
    assert "decoder" in [
        p.proto.page.split("/")[-1].removesuffix(".py").split("_", 1)[-1]
        for p in ran.main.get("page_link")
    ]
    ran.button(key="step_prev").click().run()


@pytest.mark.xdist_group("smollm2")
def test_chinese_after_a_run_has_no_english_and_no_raw_numbers(page, ran):
    at = page(PAGE, lang="zh", step="2", keep="64", sink="1")
    at = run(at)  # cached: instant
    shown = texts(at)
    assert ZH("sinks.notice_window").split("：")[0] in shown
    assert not re.search(r"\b(nan|inf)\b", shown)


def test_the_text_is_in_a_closed_box_as_plain_text(page):
    at = page(PAGE, lang="en", step="2")
    assert "Every morning" not in texts(at)  # closed: not even drawn
    at.session_state["fold_sinks_text"] = True  # the reader opens it
    at.run()
    box = next(e for e in at.main.expander if e.label == EN("sinks.text_box"))
    body = " ".join(m.value for m in box.markdown)
    assert "Every morning before the ferry left" in body
    assert "\\." in body  # markdown specials escaped


def test_url_state_restores_every_control(page):
    params = {
        "n": "30",
        "window": "6",
        "sinks": "2",
        "layers": "5",
        "keep": "128",
        "sink": "3",
        "back": "40",
    }
    at = page(PAGE, lang="en", step="1", **params)
    assert not at.exception and not at.warning
    assert at.slider(key="n").value == 30 and at.slider(key="window").value == 6
    assert at.slider(key="sinks").value == 2 and at.slider(key="layers").value == 5
    assert at.button_group(key="_choice_keep").value == "128"
    assert at.slider(key="sink").value == 3 and at.slider(key="back").value == 40
    at.button(key="step_next").click().run()
    assert at.query_params["keep"] == "128" and at.query_params["n"] == "30"


@pytest.mark.parametrize(
    ("key", "raw", "step"),
    [("n", "1000", "1"), ("window", "0", "1"), ("sinks", "x", "1"), ("layers", "-2", "1"),
     ("keep", "17", "2"), ("sink", "99", "3"), ("back", "-1", "2"), ("back", "1e3", "1")],
)  # fmt: skip
def test_bad_url_values_warn_and_fall_back(key, raw, step):
    assert f"`{key}`" in bad_value(PAGE, step, key, raw).warning[0].value


def test_students_find_the_controls_in_the_sidebar_and_a_slide_in_its_step(page):
    for step in STEPS:
        at = page(PAGE, lang="en", step=step)
        assert OWN[step] <= keys(at.sidebar), step
        assert keys(at.main) <= STEP_BAR, step
        slide = page(PAGE, lang="en", step=step, present="1")
        assert OWN[step] <= keys(slide.main), step
        assert not OWN[step] & keys(slide.sidebar), step


@pytest.mark.xdist_group("smollm2")
def test_exports_offer_the_chart_and_the_arrays(ran):
    assert_each_step_exports(PAGE, STEPS, ("sinks_mask", "sinks_perplexity", "sinks_first_share"))


def test_a_configuration_s_run_waits_for_its_turn():
    """Its ~530 tokens wait like any pass (the text's tokens are read before the turn)."""
    result = assert_waits_for_its_turn(lambda: sv.model_run(48, 3), RUN_TIMEOUT)  # uncached
    assert (result.window, result.sinks) == (48, 3)


def test_without_the_model_the_mask_step_works_and_the_model_steps_say_how_to_install(
    page, no_model
):
    at = page(PAGE, lang="en", step="1")
    assert not at.exception and len(visible_of(at, "vega_lite_chart")) == 1
    for step in ("2", "3"):
        for present in ("0", "1"):
            at = page(PAGE, lang="zh", step=step, present=present)
            assert not at.exception
            assert [e.value for e in at.error] == [ZH("sinks.missing")]
            assert not visible_of(at, "vega_lite_chart")
            shown = keys(at.main if present == "1" else at.sidebar)
            assert OWN[step] <= shown  # the controls keep the link's values
