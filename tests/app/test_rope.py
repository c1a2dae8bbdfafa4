"""The rotary-positions page: one pair turning (the score depends only on m − n), the score
grids with RoPE and with absolute positions, the wavelengths of SmolLM2's pairs read from its
file, and the rotation inside the model (core's apply_rope)."""

import numpy as np
import pytest

import core
from core.findings.rope import diagonal_spread
from core.rope import (
    absolute_score_grid,
    pair_angle,
    rope_relative_score,
    rope_score,
    rope_score_grid,
    rope_slow_pairs,
    rope_wavelengths,
    rotated_pair,
    toy_qk,
)
from models import smollm
from models.smollm_probe import layer_queries
from tests.app.conftest import (
    assert_each_step_exports,
    assert_every_step_renders,
    assert_step_controls_placed,
    assert_waits_for_its_turn,
    bad_value,
    chart_tables,
    texts,
    visible_of,
)
from ui import loaded
from ui.i18n import Translator
from ui.views import rope as rv

PAGE = "pages/12_rope.py"
EN, ZH = Translator("en"), Translator("zh")
STEPS = ("1", "2", "3", "4")
LESSON = "The animal didn't cross the street because it was too tired."
OWN = {  # each step's controls on screen (students: the sidebar; a slide: the step)
    "1": {"_choice_base", "seed", "pair", "m", "n", "shift"},
    "2": {"_choice_base", "seed", "grid"},
    "3": {"_choice_base"},
    "4": {"prompt", "layer", "head"},
}


def cfg():
    return smollm.load_config()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_every_step_renders_in_both_languages_and_modes(lang, present):
    assert_every_step_renders(PAGE, "rope", STEPS, lang, present)


def test_step_1_states_core_s_scores_equal_after_a_shift_and_different_one_place_on(page):
    at = page(PAGE, lang="en", step="1")  # m = 5, n = 2, Δ = 100, base 10 000, seed 42
    q, k = toy_qk(rv.TOY_D, 42)
    s, s2, s3 = (rope_score(q, k, m, n, 1e4) for m, n in [(5, 2), (105, 102), (5, 3)])
    assert abs(s - s2) < 1e-12 and abs(s - s3) > 0.1  # the (5, 2) and (105, 102)
    shown = texts(at)
    assert f"(m, n) = (5, 2): **{rv.num(s)}**; at (105, 102): **{rv.num(s2)}**" in shown
    assert f"rounding ({rv.sci(abs(s - s2))})" in shown
    assert f"gives {rv.num(rope_relative_score(q, k, 3, 1e4))}." in shown
    assert f"changes: **{rv.num(s3)}** (by {rv.num(abs(s3 - s))})" in shown
    angle = np.degrees(pair_angle(rotated_pair(q, 0, 5, 1e4), rotated_pair(k, 0, 2, 1e4)))
    assert f"The angle from q to k is {rv.num(angle, 1)}°" in shown


def test_step_1_follows_the_sliders_and_draws_the_turned_pairs(page):
    at = page(
        PAGE, lang="en", step="1", base="100000", seed="7", pair="3", m="40", n="9", shift="17"
    )
    assert not at.exception and not at.warning
    q, k = toy_qk(rv.TOY_D, 7)
    s = rope_score(q, k, 40, 9, 1e5)
    assert f"at (57, 26): **{rv.num(rope_score(q, k, 57, 26, 1e5))}**" in texts(at)
    assert f"**{rv.num(s)}**" in texts(at)
    rows = next(tb for tb in chart_tables(at, 0) if "label" in tb.columns)
    turned = rows[(rows.panel == 1) & rows.turned]
    np.testing.assert_allclose(
        turned[["x", "y"]].to_numpy(), [rotated_pair(q, 3, 57, 1e5), rotated_pair(k, 3, 26, 1e5)]
    )
    assert list(turned.label) == ["q₅₇", "k₂₆"]


def test_step_2_grids_are_core_s_and_only_rope_is_constant_along_diagonals(page):
    at = page(PAGE, lang="en", step="2", grid="9")
    q, k = toy_qk(rv.TOY_D, 42)
    rope, absolute = rope_score_grid(q, k, 9, 1e4), absolute_score_grid(q, k, 9)
    shown = texts(at)
    assert f"differ by at most {rv.sci(diagonal_spread(rope))} (rounding)" in shown
    assert f"differ by up to {rv.num(diagonal_spread(absolute), 2)}:" in shown
    assert diagonal_spread(absolute) > 1 and diagonal_spread(rope) < 1e-12
    cells = [tb for tb in chart_tables(at, 0) if "value" in tb.columns]
    drawn = {tb.panel[0]: tb.sort_values(["i", "j"]).value.to_numpy() for tb in cells}
    np.testing.assert_allclose(drawn["rope"], rope.ravel())
    np.testing.assert_allclose(drawn["absolute"], absolute.ravel())


def test_step_3_reads_base_width_and_context_from_the_model_file(page):
    c = cfg()
    at = page(PAGE, lang="en", step="3")
    shown = texts(at)
    waves = rope_wavelengths(c.d_head, c.rope_base)
    slow = rope_slow_pairs(c.d_head, c.rope_base, c.context)
    assert (c.rope_base, c.d_head, c.context, slow) == (1e5, 64, 8192, 12)  # the facts
    assert "base b = 100\u00a0000, head width d = 64 (32 pairs)" in shown
    assert "contexts of 8\u00a0192 tokens" in shown
    assert f"from {rv.num(waves[0], 1)} tokens (pair 0) to {rv.grouped(round(waves[-1]))}" in shown
    assert "6.3 tokens" in shown and "438\u00a0460 tokens" in shown
    assert f"{slow} of the 32 pairs turn less than once over 8\u00a0192 tokens" in shown
    # the toy base of step 1 (10 000 by default) drawn beside it: fewer slow pairs
    toy_slow = rope_slow_pairs(c.d_head, 1e4, c.context)
    assert f"only {toy_slow} of the 32 pairs" in shown and toy_slow < slow
    lines = next(tb for tb in chart_tables(at, 0) if "wave" in tb.columns)
    model = lines[lines.series == EN("rope.series_model", base="100\u00a0000")]
    np.testing.assert_allclose(model.sort_values("pair").wave, waves)


def test_step_3_with_the_model_s_own_base_draws_one_line(page):
    at = page(PAGE, lang="zh", step="3", base="100000")
    assert ZH("rope.notice_same_base") in texts(at)
    lines = next(tb for tb in chart_tables(at, 0) if "wave" in tb.columns)
    assert lines.series.nunique() == 1


def test_step_4_shows_the_model_s_angles_and_that_its_rope_is_core_s(page):
    c = cfg()
    at = page(PAGE, lang="en", step="4", layer="7", head="5")
    assert not at.exception and not at.warning
    ids = smollm.encode(loaded.smollm2(), LESSON)
    lq = layer_queries(loaded.smollm2(), ids)[7]
    turned = core.apply_rope(lq.before[5], lq.cos, lq.sin)
    diff = float(np.abs(turned - lq.after[5]).max())
    shown = texts(at)
    assert "`core.llama.apply_rope is core.apply_rope` gives `True`" in shown
    assert f"largest difference {rv.sci(diff)}." in shown and diff == 0
    turns = core.rope_frequencies(c.d_head, c.rope_base) * (len(ids) - 1) / (2 * np.pi)
    assert f"pair 0 turns {rv.num(turns[0], 2)} times round" in shown
    assert f"{rope_slow_pairs(c.d_head, c.rope_base, len(ids))} of the 32 pairs" in shown
    cos = next(tb for tb in chart_tables(at, 0) if "value" in tb.columns and tb.panel[0] == "cos")
    np.testing.assert_allclose(cos.sort_values(["i", "j"]).value, lq.cos.ravel(), rtol=1e-6)


def test_step_4_a_chinese_prompt_gets_the_note_and_an_empty_one_the_example(page):
    at = page(PAGE, lang="zh", step="4", prompt="我喜欢猫")
    assert not at.exception
    assert ZH("rope.chinese") in [e.value for e in at.info]
    empty = page(PAGE, lang="en", step="4", prompt="   ")
    assert EN("rope.empty") in [w.value for w in empty.warning]
    assert "13 tokens of your prompt" in texts(empty)


def test_url_state_restores_every_control_and_survives_a_step_change(page):
    params = {
        "base": "1000",
        "seed": "9",
        "pair": "4",
        "m": "11",
        "n": "30",
        "shift": "2",
        "grid": "7",
        "layer": "3",
        "head": "2",
        "prompt": "Hello there",
    }
    at = page(PAGE, lang="en", step="1", **params)
    assert not at.exception and not at.warning
    assert at.button_group(key="_choice_base").value == "1000"
    assert [at.slider(key=k).value for k in ("pair", "m", "n", "shift")] == [4, 11, 30, 2]
    assert at.number_input(key="seed").value == 9
    at.button(key="step_next").click().run()
    assert at.query_params["step"] == "2"
    assert at.slider(key="grid").value == 7 and at.button_group(key="_choice_base").value == "1000"
    assert all(at.query_params[k] == v for k, v in params.items())
    last = page(PAGE, lang="en", step="4", **params)
    assert [last.slider(key=k).value for k in ("layer", "head")] == [3, 2]
    assert last.text_input(key="prompt").value == "Hello there"


@pytest.mark.parametrize(
    ("key", "raw", "step"),
    [
        ("base", "7", "1"),
        ("pair", "99", "1"),
        ("m", "-1", "1"),
        ("shift", "x", "1"),
        ("seed", "1e99", "2"),
        ("grid", "abc", "2"),
        ("grid", "300", "2"),
        ("layer", "30", "4"),
        ("head", "9", "4"),
        ("prompt", "x" * 401, "4"),
    ],
)
def test_bad_url_values_warn_and_fall_back(key, raw, step):
    bad_value(PAGE, step, key, raw)


def test_a_bad_value_of_a_hidden_step_s_control_warns_on_the_step_on_screen(page):
    at = page(PAGE, lang="en", step="2", layer="x")
    assert any("layer" in w.value for w in at.warning)


def test_exports_offer_the_chart_and_the_arrays_of_each_step():
    assert_each_step_exports(PAGE, STEPS, ("rope_pair", "rope_grid", "rope_waves", "rope_model"))


@pytest.mark.parametrize("step", STEPS)
def test_students_find_the_step_controls_in_the_sidebar_a_lecturer_on_the_slide(step):
    assert_step_controls_placed(PAGE, step, OWN)


def test_without_the_model_the_toy_steps_work_and_the_model_steps_say_how_to_install(
    page, no_model
):
    for step in ("1", "2"):
        at = page(PAGE, lang="en", step=step)
        assert not at.exception and len(visible_of(at, "vega_lite_chart")) == 1
    for step in ("3", "4"):
        at = page(PAGE, lang="zh", step=step)
        assert not at.exception
        assert [e.value for e in at.error] == [ZH("rope.missing")]


def test_step_4_s_forward_pass_waits_for_its_turn():
    ids = tuple(smollm.encode(loaded.smollm2(), "Rotations wait for their turn."))
    lq = assert_waits_for_its_turn(lambda: rv.queries(ids), 600)
    assert len(lq) == cfg().n_layers


def score_by_hand(q: np.ndarray, k: np.ndarray, m: int, n: int, base: float) -> float:
    """q turned to position m and k to n, pair by pair with a 2 × 2 rotation, then q·k."""
    d = len(q)
    total = 0.0
    for i in range(d // 2):
        theta = base ** (-2 * i / d)
        a, b = m * theta, n * theta
        qx = q[2 * i] * np.cos(a) - q[2 * i + 1] * np.sin(a)
        qy = q[2 * i] * np.sin(a) + q[2 * i + 1] * np.cos(a)
        kx = k[2 * i] * np.cos(b) - k[2 * i + 1] * np.sin(b)
        ky = k[2 * i] * np.sin(b) + k[2 * i + 1] * np.cos(b)
        total += qx * kx + qy * ky
    return float(total)


def test_the_depends_question_is_the_offset_by_a_rotation_written_out_by_hand():
    base, m, n, shift = float(rv.BASE.default), rv.M.default, rv.N.default, rv.SHIFT.default
    assert (base, shift) == (10_000, 100)  # as the question and its why say
    q, k = toy_qk(rv.TOY_D, rv.SEED.default)
    here, shifted, further = (
        score_by_hand(q, k, m, n, base),
        score_by_hand(q, k, m + shift, n + shift, base),
        score_by_hand(q, k, m, n + 1, base),
    )
    assert abs(here - shifted) < 1e-9 < abs(here - further)  # the offset, not the positions
    assert rv.ASK_DEPENDS.truth().right == {"offset"}
