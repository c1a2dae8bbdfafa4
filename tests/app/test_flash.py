"""The FlashAttention page: one query's row tile by tile, the tiled result against ordinary
attention (and a softmax without the max), and the paper's memory and traffic model."""

import numpy as np
import pytest

import core
from core.findings.flash import FLOAT32_EXP_LIMIT, first_nan
from core.flash import logit_growth, tiled_errors, toy_qkv, traffic_curves, traffic_ratio_limit
from tests.app.conftest import (
    STEP_BAR,
    assert_each_step_exports,
    assert_every_step_renders,
    bad_value,
    chart_tables,
    keys,
    texts,
)
from ui.i18n import Translator
from ui.views import flash as fv

PAGE = "pages/14_flash.py"
EN, ZH = Translator("en"), Translator("zh")
STEPS = ("1", "2", "3")
TOY = {"keys", "block", "causal", "seed"}
OWN = {"1": {"query", "tile"}, "2": {"factor"}, "3": {"_choice_d", "sram"}}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_every_step_renders_in_both_languages_and_modes(lang, present):
    assert_every_step_renders(PAGE, "flash", STEPS, lang, present)


def test_step_1_states_the_running_maximum_and_sum_of_core_s_trace(page):
    where = {"lang": "en", "step": "1", "keys": "24", "block": "5", "query": "17"}
    at = page(PAGE, **where, tile="3", causal="true", seed="4")
    assert not at.exception and not at.warning
    q, k, v = toy_qkv(24, fv.D, 4)
    _, trace = core.flash_attention(q, k, v, 5, core.causal_mask(24))
    m, ell = trace.running_max[2, 17], trace.running_sum[2, 17]
    shown = texts(at)
    assert f"**{fv.num(m)}**" in shown
    assert f"ℓ = **{ell:.3f}**" in shown
    assert "(keys 10–14)" in shown  # the third tile of 5
    assert "of this row's 24 scores" in shown
    # the last tile: the tiled output equals ordinary attention, to the stated difference
    last = page(PAGE, **where, tile="5", causal="true", seed="4")
    out, _ = core.flash_attention(q, k, v, 5, core.causal_mask(24))
    ref, _ = core.scaled_dot_product_attention(q, k, v, core.causal_mask(24))
    diff = fv.sci(float(np.abs(out[17] - ref[17]).max()))
    assert f"equals ordinary attention's to {diff}" in texts(last)


def test_step_1_chart_colours_the_tiles_read_and_the_masked_keys(page):
    at = page(PAGE, lang="en", step="1", keys="20", block="6", query="9", tile="2", causal="true")
    tables = chart_tables(at, 0)
    bars = next(tb for tb in tables if "state" in tb.columns and "score" in tb.columns)
    states = bars.sort_values("j")["state"].tolist()
    seen, now, ahead, hidden = (
        EN(f"flash.state_{k}") for k in ("seen", "current", "ahead", "hidden")
    )
    assert states[:6] == [seen] * 6 and states[6:10] == [now] * 4
    assert states[10:12] == [hidden] * 2  # keys 10 and 11 of tile 2 come after query 9
    assert set(states[12:]) == {hidden}  # causal: every key after the query
    assert ahead not in states  # every visible key is read by tile 2


@pytest.mark.parametrize("factor", ["1", "30"])
def test_step_2_states_core_s_errors_and_the_nan_as_a_word(page, factor):
    at = page(PAGE, lang="en", step="2", factor=factor)
    assert not at.exception
    q, k, v = toy_qkv(40, fv.D, 0)
    errors = tiled_errors(q * float(factor), k, v, fv.BLOCKS)
    shown = texts(at)
    assert f"at most **{fv.sci(float(errors[:, 0].max()))}**" in shown
    assert f"at most **{fv.sci(float(errors[:, 1].max()))}**" in shown
    growth = logit_growth(q, k, v, 8, fv.FACTORS, None)
    start = first_nan(growth)
    assert start is not None
    if factor == "30":  # past the overflow: the naive softmax is NaN, said as a word
        assert f"gives **{EN('flash.nan')}**" in shown
        assert f"stays within **{fv.sci(float(growth.tiled[29]))}**" in shown
        assert f"above {FLOAT32_EXP_LIMIT:.1f}" in shown
    else:
        assert f"From ×{start:.0f} on" in shown
    zh = page(PAGE, lang="zh", step="2", factor="30")
    assert ZH("flash.nan") in texts(zh)  # "NaN（非数）"


def test_step_3_states_the_paper_model_ratios_computed_by_core(page):
    at = page(PAGE, lang="en", step="3")
    tr = traffic_curves(np.array([1024, 4096, 16384]), 64, 100_000)
    r1, r4, r16 = (f"{r:.1f}" for r in tr.ratio)
    assert (r1, r4, r16) == ("5.6", "7.1", "7.8")  # the figures
    assert f"**{r1}×**, **{r4}×** and **{r16}×**" in texts(at)
    assert f"near **{traffic_ratio_limit(64, 100_000):.1f}×**" in texts(at)
    assert EN("flash.assumptions") in texts(at)
    other = page(PAGE, lang="en", step="3", d="128", sram="50")
    tr = traffic_curves(np.array([1024, 4096, 16384]), 128, 50_000)
    assert "**{:.1f}×**, **{:.1f}×** and **{:.1f}×**".format(*tr.ratio) in texts(other)
    assert "below 1" in texts(page(PAGE, lang="en", step="3", d="256", sram="20"))
    ratio = next(tb for tb in chart_tables(other, 0) if "ratio" in tb.columns)
    full = traffic_curves(fv.LENGTHS, 128, 50_000)
    np.testing.assert_allclose(ratio.sort_values("T")["ratio"], full.ratio)


def test_step_3_says_what_this_numpy_version_holds_and_what_the_real_kernel_holds(page):
    """The tiled NumPy version holds T x B_c scores; the kernel one B_r x B_c block on chip
    and O(T) numbers besides the output (the issue: the two were one sentence)."""
    shown = texts(page(PAGE, lang="en", step="3", d="128", sram="50"))
    tr = traffic_curves(np.array([16384]), 128, 50_000)
    assert f"(T × B_c, B_c = {tr.block})" in shown
    assert f"({fv.big(tr.query_block * tr.block)}, B_r = {tr.query_block})" in shown
    assert "O(T), not O(T²)" in shown


def test_url_state_restores_every_control(page):
    params = {
        "keys": "33",
        "block": "7",
        "causal": "true",
        "seed": "9",
        "query": "12",
        "tile": "2",
        "factor": "25",
        "d": "128",
        "sram": "250",
    }
    at = page(PAGE, lang="en", step="1", **params)
    assert not at.exception and not at.warning
    assert at.slider(key="keys").value == 33 and at.slider(key="block").value == 7
    assert at.toggle(key="causal").value is True and at.number_input(key="seed").value == 9
    assert at.slider(key="query").value == 12 and at.slider(key="tile").value == 2
    assert at.slider(key="factor").value == 25 and at.slider(key="sram").value == 250
    assert at.button_group(key="_choice_d").value == "128"
    at.button(key="step_next").click().run()  # step 2 keeps the toy head
    assert at.query_params["step"] == "2" and at.slider(key="keys").value == 33
    assert at.query_params["tile"] == "2" and at.query_params["d"] == "128"


@pytest.mark.parametrize(
    ("key", "raw"),
    [("keys", "abc"), ("keys", "999"), ("block", "0"), ("factor", "1e9"), ("d", "65"),
     ("sram", "-4"), ("query", "77"), ("tile", "x"), ("causal", "maybe")],
)  # fmt: skip
def test_bad_url_values_warn_and_fall_back(key, raw):
    at = bad_value(PAGE, {"factor": "2", "d": "3", "sram": "3"}.get(key, "1"), key, raw)
    assert f"`{key}`" in at.warning[0].value


def test_students_find_the_controls_in_the_sidebar_and_a_slide_in_its_step(page):
    for step in STEPS:
        at = page(PAGE, lang="en", step=step)
        side = keys(at.sidebar)
        toy = TOY if step in ("1", "2") else set()
        assert toy | OWN[step] <= side, step
        assert keys(at.main) <= STEP_BAR, step
        slide = page(PAGE, lang="en", step=step, present="1")
        shown = keys(slide.main)
        assert OWN[step] <= shown, step
        assert not (TOY | OWN[step]) & keys(slide.sidebar), step
        if toy:  # a slide folds the toy head's settings in a closed box
            box = next(e for e in slide.main.expander if e.label == EN("flash.toy"))
            assert keys(box) >= TOY


def test_exports_offer_the_chart_and_the_arrays_of_each_step():
    assert_each_step_exports(PAGE, STEPS, ("flash_tiles", "flash_agreement", "flash_traffic"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fewer_keys_move_the_query_row_into_range_instead_of_an_error(page, lang):
    """The query row's range is the number of keys: a row left above its new end moves to
    the last row (Streamlit would refuse the slider: StreamlitValueAboveMaxError)."""
    at = page(PAGE, lang=lang, keys="113", step="1")
    at.slider(key="query").set_value(100).run()
    at = at.slider(key="keys").set_value(22).run()
    assert not at.exception
    assert at.slider(key="query").value == 21 and at.slider(key="query").max == 21
    at = at.slider(key="keys").set_value(68).run()
    assert not at.exception and at.slider(key="query").value == 21  # the row it was moved to
