"""The softmax page: lesson numbers, temperature, naive vs stable, masks, bad logits."""

import math

import numpy as np
import pytest

from core.softmax_numerics import EXP_UNDERFLOW, softmax
from tests.app.conftest import STEP_BAR, keys, noticed, open_exports, texts, visible, visible_of
from ui.i18n import Translator
from ui.views import softmax as view
from ui.views.softmax import MAX_ENTRIES, Problem, parse_logits

PAGE = "pages/4_softmax.py"
STEPS = ("1", "2", "3", "4")  # bars, the score matrix, naive vs stable, masks


def _on_step(at, step: str):
    """Turn to ``step`` with the step bar, as a user would (only that step is drawn)."""
    return at.button_group(key="_step_choice").set_value(step).run()


def _every_step_texts(at) -> str:
    """The visible text of every step, each turned to in turn (one is drawn at a time)."""
    return "\n".join(texts(_on_step(at, step)) for step in STEPS)


def _probs_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("At T = "))


def _notices(at) -> str:
    return "\n".join(f"- {item}" for item in noticed(at))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_in_both_languages(page, lang):
    at = page(PAGE, lang=lang)
    assert not at.exception
    assert not at.warning
    if lang == "zh":
        body = _every_step_texts(at)
        for english in ("What to notice", "probabilities", "naive", "stable", "mask"):
            assert english not in body


@pytest.mark.parametrize("step", ["1", "2", "3", "4"])
def test_presenter_mode_runs_each_step(page, step):
    at = page(PAGE, present="1", step=step, lang="zh")
    assert not at.exception
    assert not at.warning


def test_defaults_show_the_lessons_true_probabilities(page):
    at = page(PAGE)
    line = _probs_line(at)
    assert "p(A) = [0.659, 0.242, 0.099]" in line
    assert "p(B) = [0.580, 0.096, 0.079, 0.158, 0.087]" in line
    note = next(i.value for i in at.info)
    assert "[0.52, 0.09, 0.07, 0.14, 0.08]" in note and "only 0.90" in note
    assert "[0.580, 0.096, 0.079, 0.158, 0.087] (sum 1.000)" in note


def test_bad_logits_warn_and_fall_back_to_the_default(page):
    at = page(PAGE)
    for bad in ["abc", "", "nan", "inf", "1e999", "1,,2", "1,2,", "+∞"]:
        at.text_input(key="logits_a").input(bad).run()
        assert not at.exception
        assert len(at.warning) == 1, bad
        assert "Logits A" in at.warning[0].value and "default" in at.warning[0].value
        assert "p(A) = [0.659, 0.242, 0.099]" in _probs_line(at)
    at.text_input(key="logits_a").input("3, 1").run()
    assert not at.warning


def test_bad_logits_in_the_url_warn_in_chinese_and_fall_back(page):
    at = page(PAGE, lang="zh", logits_b="1, two, 3")
    assert len(at.warning) == 1 and "不是数字" in at.warning[0].value
    assert "p(B) = [0.580, 0.096, 0.079, 0.158, 0.087]" in texts(at)


def test_too_long_url_logits_warn_and_fall_back(page):
    at = page(PAGE, logits_a="1," * 200 + "1")
    cut, default = (w.value for w in at.warning)
    assert "longer than 240 characters" in cut  # the box keeps the first 240…
    assert "121 entries" in default and "default" in default  # …too many logits: the default
    assert "p(A) = [0.659, 0.242, 0.099]" in _probs_line(at)


def test_temperature_changes_the_probabilities(page):
    at = page(PAGE)
    at.slider(key="temp").set_value(0.5).run()
    expected = ", ".join(f"{p:.3f}" for p in softmax([2.0, 1.0, 0.1], temperature=0.5))
    assert f"p(A) = [{expected}]" in _probs_line(at)
    assert expected != "0.659, 0.242, 0.099"
    at.slider(key="temp").set_value(5.0).run()
    hot = softmax([2.0, 1.0, 0.1], temperature=5.0)
    assert f"p(A) = [{', '.join(f'{p:.3f}' for p in hot)}]" in _probs_line(at)


def test_minus_inf_entry_gets_exactly_zero(page):
    at = page(PAGE, logits_b="1, -inf, 2, −∞")
    assert not at.warning
    p = softmax([1.0, -math.inf, 2.0, -math.inf])
    assert p[1] == 0.0 and p[3] == 0.0
    assert f"p(B) = [{p[0]:.3f}, 0, {p[2]:.3f}, 0]" in _probs_line(at)


def test_masking_the_last_entries_gives_exact_zeros_and_renormalises(page):
    at = page(PAGE, masked="3", step="4")
    notes = _notices(at)
    assert "The masked entries (3 of them) get a probability of exactly 0.0" in notes
    assert "together they sum to 1.000" in notes


def test_masking_every_entry_gives_all_zeros_not_nan(page):
    at = page(PAGE, masked="5", step="4")
    assert not at.exception
    assert "return all zeros (sum 0)" in _notices(at)


def test_naive_softmax_overflows_while_stable_stays_correct(page):
    at = page(PAGE, scale="1", step="3")
    table = next(m.value for m in at.markdown if m.value.startswith("|  | naive"))
    assert "NaN" not in table and "+∞" not in table
    at.slider(key="scale").set_value(400).run()
    table = next(m.value for m in at.markdown if m.value.startswith("|  | naive"))
    assert "+∞" in table and "NaN" in table  # naive: e^800 overflows, +∞/+∞
    assert table.splitlines()[-1].rstrip(" |").endswith("1.000")  # stable sum
    assert "first breaks at ×355" in _notices(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_very_negative_logits_break_the_naive_version_by_underflow(page, lang):
    at = page(PAGE, lang=lang, logits_a="-1, -2, -3", step="3")
    s = int(np.ceil(-EXP_UNDERFLOW))  # the first whole scale at which e^(-s) rounds to 0
    expected = Translator(lang)(
        "softmax.notice_breaks_under", s=s, top=f"−{s}.00", limit=f"−{-EXP_UNDERFLOW:.2f}"
    )
    assert expected in _notices(at)
    assert "709.78" not in _notices(at)


def test_naive_never_breaks_for_small_logits_is_reported(page):
    at = page(PAGE, logits_a="0.1, 0.2", step="3")
    assert "survives every scale up to ×1000" in _notices(at)


def test_bad_url_controls_warn_and_fall_back(page):
    at = page(PAGE, temp="nan", scale="0", masked="9")
    assert len(at.warning) == 3
    assert at.slider(key="temp").value == pytest.approx(1.0)
    assert at.slider(key="scale").value == 1
    assert "p(A) = [0.659, 0.242, 0.099]" in _probs_line(at)


@pytest.mark.parametrize(
    "params",
    [
        {"temp": "0.05", "scale": "1000", "logits_a": "1000000, -1000000, 0"},
        {"temp": "5.0", "logits_b": "-inf, -inf", "masked": "0"},
        {"logits_a": ", ".join(["-1e6"] * MAX_ENTRIES), "scale": "1000"},
    ],
)
def test_extreme_values_raise_nothing_and_print_no_raw_nan(page, params):
    at = page(PAGE, **params)
    assert not at.exception and not at.warning
    body = _every_step_texts(at)
    assert not at.exception and not at.warning
    assert "nan" not in body.replace("NaN", "")


# ---- the parser on its own -------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2.0, 1.0, 0.1", (2.0, 1.0, 0.1)),
        (" 1 ,2 ", (1.0, 2.0)),
        ("1，2、3", (1.0, 2.0, 3.0)),
        ("−1.5, -inf, −∞, -INF", (-1.5, -math.inf, -math.inf, -math.inf)),
        ("1e6, -1e6", (1e6, -1e6)),
        ("7", (7.0,)),
    ],
)
def test_parse_logits_accepts(raw, expected):
    assert parse_logits(raw) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("1,,2", "empty_entry"),
        ("1,2,", "empty_entry"),
        ("abc", "not_number"),
        ("1, 2x", "not_number"),
        ("nan", "nan"),
        ("1, NaN", "nan"),
        ("inf", "pos_inf"),
        ("+∞", "pos_inf"),
        ("1e999", "too_large"),
        ("-1e999", "too_large"),
        ("1000001", "too_large"),
        (",".join(["1"] * (MAX_ENTRIES + 1)), "too_many"),
    ],
)
def test_parse_logits_rejects_with_a_reason(raw, reason):
    problem = parse_logits(raw)
    assert isinstance(problem, Problem) and problem.reason == reason


def test_temperature_notices_make_sense_when_t_is_one(page):
    at_one = _every_step_texts(page(PAGE, lang="en"))
    assert "at T = 1 it is" not in at_one and "at T = 1 and" not in at_one
    assert "both panels are the same" in at_one
    assert "lesson 002" not in at_one and "A note for readers of tutorials" in at_one
    warm = _every_step_texts(page(PAGE, lang="en", temp="2.0"))
    assert "At T = 2.00 the largest probability in A is" in warm
    assert "at T = 1 and" in warm  # the matrix step compares the two panels
    assert "random (untrained)" in warm


def test_presenter_slides_fold_controls_and_secondary_tables(page):
    slide = page(PAGE, lang="en", present="1", step="3", scale="800")
    labels = [e.label for e in slide.expander]
    assert "Logits A and B, temperature T" in labels
    assert "The numbers exp sees, entry by entry" in labels
    assert not [s.value for s in slide.subheader]
    student = page(PAGE, lang="en", scale="800", step="3")
    assert "The numbers exp sees, entry by entry" not in [e.label for e in student.expander]


@pytest.mark.parametrize("present", ["0", "1"])
def test_exports_are_built_only_while_their_box_is_open(page, present):
    at = page(PAGE, lang="en", present=present)
    labels = []
    for step in STEPS:  # only the step on screen draws its box
        _on_step(at, step)
        assert not at.get("download_button"), "a closed box sends no button"
        at = open_exports(at)
        assert not at.exception
        labels += [b.proto.label for b in at.get("download_button")]
        on_screen = [b.key for b in visible_of(at, "DownloadButton")]
        if step == "1":
            assert on_screen and all(k.endswith("_softmax_bars") for k in on_screen)
        assert len(on_screen) == len(at.get("download_button")), "no box off screen"
    assert labels.count("PNG") == labels.count("NPZ") == 4  # one box per step
    assert {"SVG", "CSV", "TXT"} <= set(labels)
    _on_step(at, "3")
    at = open_exports(at)
    shown = len(at.get("download_button"))
    at.slider(key="scale").set_value(500).run()  # an open box stays open (in a fragment)
    assert len(at.get("download_button")) == shown


def test_a_presenter_fold_draws_its_table_only_once_opened(page):
    at = page(PAGE, lang="en", present="1", step="3", scale="800")
    label = "The numbers exp sees, entry by entry"
    assert not next(e for e in at.expander if e.label == label).children
    at.session_state["fold_stability_table"] = True
    at.run()
    table = next(e for e in at.expander if e.label == label).markdown
    assert table and "naive: eᶻ" in table[0].value and "+∞" in table[0].value  # scale 800


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, lang="en", scale="400", masked="3", step="1")
    assert not at.exception and not at.warning
    assert len(at.get("vega_lite_chart")) == 1  # the bars; the other three steps send none
    shown = texts(at)
    assert "p(A) = [0.659, 0.242, 0.099]" in shown
    assert "first breaks at" not in shown and "naive: eᶻ" not in shown
    assert "get a probability of exactly 0.0" not in shown
    # the controls of steps 3 and 4 are drawn off screen: they keep the URL's values
    assert at.slider(key="scale").value == 400
    assert at.button_group(key="_choice_masked").value == "3"
    assert at.query_params["scale"] == "400" and at.query_params["masked"] == "3"
    _on_step(at, "3")
    assert len(at.get("vega_lite_chart")) == 1  # the exponent chart only
    assert "first breaks at ×355" in _notices(at)
    assert at.query_params["masked"] == "3" and at.query_params["step"] == "3"


@pytest.mark.parametrize("step", ["1", "4"])
def test_a_bad_value_for_a_step_off_screen_warns_on_screen(page, step):
    at = page(PAGE, lang="en", step=step, scale="abc")  # step 3's slider
    assert not at.exception
    warnings = [w.value for w in visible(at.main) if type(w).__name__ == "Warning"]
    assert any("`scale`" in w for w in warnings), "the warning is where the reader looks"
    assert at.slider(key="scale").value == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_students_find_every_control_of_the_step_in_the_sidebar(page, lang):
    """Students: the logits, T and the step's own control in the sidebar, nothing but the
    step bar in the main area; a slide keeps them above its step (the logits folded)."""
    tr = Translator(lang)
    shared = {"logits_a", "logits_b", "temp"}
    own = {"1": set(), "2": set(), "3": {"scale"}, "4": {"_choice_masked"}}
    for step in STEPS:
        at = page(PAGE, lang=lang, step=step, scale="400", masked="3")
        side = keys(at.sidebar)
        assert shared | own[step] <= side, step
        assert not ({"scale", "_choice_masked"} - own[step]) & side, "one step's control only"
        assert keys(at.main) <= STEP_BAR, step
        assert at.slider(key="scale").value == 400  # off screen: still bound to the URL
        assert at.button_group(key="_choice_masked").value == "3"
        labels = {"3": "softmax.stable_controls", "4": "softmax.mask_controls"}
        if step in labels:
            assert f"**{tr(labels[step])}**" in [m.value for m in at.sidebar.markdown]
        slide = page(PAGE, lang=lang, step=step, present="1")
        assert not (shared | {"scale", "_choice_masked"}) & keys(slide.sidebar)
        box = next(e for e in slide.main.expander if e.label == tr("softmax.settings"))
        assert shared <= keys(box)
        assert own[step] <= keys(slide.main), step


def test_the_cold_question_is_one_hot_by_a_softmax_written_out_by_hand():
    t = view.TEMPERATURE.lo
    logits = [float(x) for x in view.LOGITS_A.default.split(",")]
    for lang in ("en", "zh"):  # the question names the logits and the temperature it uses
        text = view.ASK_COLD.text(Translator(lang))
        assert "[2.0, 1.0, 0.1]" in text and f"T = {t:g}" in text
    assert logits == [2.0, 1.0, 0.1]
    e = [math.exp((x - max(logits)) / t) for x in logits]
    p = [x / sum(e) for x in e]
    assert p[0] > 0.999 and p[1] + p[2] < 1e-3  # one-hot as the page prints it
    truth = view.ASK_COLD.truth()
    assert truth.right == {"one_hot"} and not truth.is_right("uniform")
