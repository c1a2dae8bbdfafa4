"""AppTest of the training page: Train, the snapshot steps and slider, presenter slides, the
√d_k view, where the controls are."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import chart_tables, texts, visible, visible_of

PAGE = "pages/16_training.py"
SHORT = {"steps": "60"}  # a short run keeps the tests quick; the page's logic is the same
# The steps, for students and on a slide alike: Train, four snapshots (start, early, a third
# of the way, the end with the slider through every snapshot), why √d_k.
SNAPSHOTS, SCRUB, WHY = ("2", "3", "4", "5"), "5", "6"


def train_button(at: AppTest, label: str = "Train"):
    return next(b for b in at.button if b.label == label)


def go(at: AppTest, step: str) -> AppTest:
    """Pick ``step`` in the step bar, as a student clicking it would."""
    return at.button_group(key="_step_choice").set_value(step).run()


def curve_steps(at: AppTest, index: int = 0) -> int:
    """How many steps the loss curve of the ``index``-th chart holds."""
    frames = [
        f for f in chart_tables(at, index) if {"step", "y", "run"} <= set(f)
    ]  # not the axes' end
    return int(max(len(f) for f in frames)) if frames else 0


def probe_weights(at: AppTest, index: int) -> np.ndarray:
    frame = next(f for f in chart_tables(at, index) if "panel" in f)
    return frame["value"].to_numpy(dtype=float)


@pytest.mark.parametrize("lang,title,train", [("en", "Watch attention learn", "Train"),
                                              ("zh", "看注意力学习", "训练")])  # fmt: skip
def test_press_train_draws_the_curves_and_links_the_finished_run(page, lang, title, train):
    at = page(PAGE, lang=lang, **SHORT)
    assert not at.exception
    assert at.title[0].value == title
    assert at.info, "an untrained page says so"
    assert curve_steps(at) == 0  # no curve before training
    train_button(at, train).click().run()
    assert not at.exception
    assert at.query_params["run"] == "1"
    assert curve_steps(at) == 60
    shown = texts(at)
    assert (
        ("95 %" in shown or "not reached" in shown)
        if lang == "en"
        else ("95%" in shown or "没有达到" in shown)
    )
    if lang == "zh":
        assert "reached" not in shown and "Train" not in shown


def test_a_shared_link_shows_the_finished_run_at_once(page):
    at = page(PAGE, run="1", **SHORT)
    assert not at.exception
    assert curve_steps(at) == 60
    assert not any("Not trained" in str(i.value) for i in at.info)
    assert any(s.key == "at" for s in at.slider)


def test_step_slider_scrubs_through_the_snapshots(page):
    at = page(PAGE, run="1", step=SCRUB, **SHORT)  # the scrub step: its chart is the only one
    slider = next(s for s in at.slider if s.key == "at")
    assert slider.value == 60
    end = probe_weights(at, 0)
    slider.set_value(0).run()
    assert not at.exception
    start = probe_weights(at, 0)
    assert start.max() < end.max()  # spread out at step 0, sharp after training
    assert "step 0" in texts(at)
    np.testing.assert_allclose(start.reshape(-1, 9).sum(axis=1), 1.0, atol=0.02)


def test_play_button_switches_to_pause(page):
    at = page(PAGE, run="1", step=SCRUB, **SHORT)
    train_button(at, "Play").click().run()
    assert not at.exception
    assert any(b.label == "Pause" for b in at.button)


def test_twin_trains_both_runs_from_the_same_start(page):
    at = page(PAGE, run="1", twin="true", **SHORT)
    assert not at.exception
    frame = next(f for f in chart_tables(at, 0) if "run" in f)
    assert set(frame["run"]) == {"d_k 16, ÷√d_k", "d_k 16, no scaling"}


@pytest.mark.parametrize("step", ["1", "3", "5"])
def test_presenter_mode_shows_one_slide_with_one_chart(page, step):
    at = page(PAGE, present="1", step=step, lang="zh", **SHORT)
    assert not at.exception
    # the snapshot slides (2-5) are named by the step bar alone
    assert len(visible_of(at, "Subheader")) == (0 if step in ("3", "5") else 1)
    assert at.button_group(key="_step_choice").value == step
    assert len(visible_of(at, "vega_lite_chart")) == 1
    bar = [o.content for g in at.get("button_group") for o in g.proto.options if " · " in o.content]
    assert len(bar) == 6  # train, four snapshot slides, why √d_k
    assert bar[1].endswith("第 0 步") and bar[4].endswith("第 60 步")


def test_why_view_measures_four_runs_and_links_the_scaling_page(page):
    at = page(PAGE, step=WHY, **SHORT)
    assert not at.exception
    table = at.table[0].value
    assert list(table.columns[1:]) == [
        "d_k 256, ÷√d_k",
        "d_k 256, no scaling",
        "d_k 16, ÷√d_k",
        "d_k 16, no scaling",
    ]
    std = table.iloc[3, 1:].astype(float).to_numpy()
    assert std[1] > 8 * std[0]  # unscaled spread at d_k 256 ≫ scaled
    assert any("scaling" in str(p.proto.page) for p in at.get("page_link"))
    assert "nan" not in table.to_string().lower()


def test_why_view_trains_its_four_runs_as_it_opens_for_students_too(page):
    """A step shows its chart: the comparison runs as the step opens (four short runs, cached
    per setting), with no button to press first."""
    at = page(PAGE, step=WHY, **SHORT)
    assert not at.exception
    assert at.table and len(visible_of(at, "vega_lite_chart")) == 1
    assert not any("comparison" in b.label for b in at.button)


@pytest.mark.parametrize("bad", [{"lr": "abc"}, {"d_k": "17"}, {"steps": "1e9"}, {"run": "2"}])
def test_bad_url_values_warn_and_fall_back(page, bad):
    at = page(PAGE, **{**SHORT, **bad})
    assert not at.exception
    assert at.warning


def test_largest_number_task_shows_a_causal_attention_matrix(page):
    at = page(PAGE, task="max", run="1", step=SCRUB, **SHORT)  # the end of the run
    assert not at.exception
    w = probe_weights(at, 0).reshape(8, 8)
    np.testing.assert_array_equal(w[np.triu_indices(8, 1)], 0.0)


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, run="1", at="30", **SHORT)
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 1  # the training curves; not the scrub chart
    assert not at.metric  # the scrub step's metrics are not sent
    assert not any(b.label == "Play" for b in at.button)
    slider = at.slider(key="at")  # the scrub step's slider, hidden, keeps its URL value
    assert slider.value == 30 and at.query_params["at"] in ("30", ["30"])
    go(at, SCRUB)
    assert len(at.get("vega_lite_chart")) == 1 and at.slider(key="at").value == 30
    assert "step 30" in texts(at)


def test_a_run_trained_on_the_first_step_is_scrubbed_on_the_last_snapshot_step(page):
    at = page(PAGE, **SHORT)
    train_button(at).click().run()
    assert at.query_params["run"] == "1"
    go(at, SCRUB)
    assert not at.exception
    assert not any("Press **Train**" in str(i.value) for i in at.info)
    assert at.slider(key="at").value == 60
    assert curve_steps(at) == 60  # the run trained on step 1, from the cache
    assert any(b.label == "Play" for b in at.button)


@pytest.mark.parametrize(
    ("unscaled", "scaled", "verdict"),
    [(None, 49, "slower"), (80, 49, "slower"), (40, 49, "not_slower"), (49, 49, "not_slower"),
     (49, None, "not_slower"), (None, None, "neither")],
)  # fmt: skip
def test_the_comparison_calls_the_unscaled_run_slower_only_when_it_is(unscaled, scaled, verdict):
    from ui.views.training import _learns_slower

    assert _learns_slower(unscaled, scaled) == verdict


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_comparison_notices_say_what_the_four_runs_measured(page, lang):
    from ui.i18n import Translator

    t = Translator(lang)
    at = page(PAGE, lang=lang, step=WHY, **SHORT)
    table = at.table[0].value
    grad = table.iloc[4, 1:].astype(float).to_numpy()  # median gradient of W_Q at step 0
    reached = table.iloc[0, 1:].tolist()  # steps to 95 %, or "not reached"
    shown = texts(at)
    less = t(
        "training.why_gradient",
        g_u=f"{grad[1]:.2f}",
        g_s=f"{grad[0]:.2f}",
        pct=f"{100 * grad[1] / grad[0]:.0f}",
    )
    assert (less in shown) == (grad[1] < grad[0])
    for cell in reached:
        phrase = (
            t("training.reach_never", steps=SHORT["steps"])
            if cell == t("training.never")
            else t("training.reach_at", step=cell)
        )
        assert phrase in shown
    assert "nearly coincide" not in shown and "almost no gradient" not in shown


def _bar(at: AppTest) -> list[str]:
    return [o.content for o in at.button_group(key="_step_choice").proto.options]


def test_students_and_a_slide_walk_the_same_steps(page):
    """One list of steps for both: the snapshot steps PageDown walks through on a slide are
    the student's steps too, the last one with the slider through every snapshot."""
    student, slide = page(PAGE, **SHORT), page(PAGE, present="1", **SHORT)
    assert _bar(student) == _bar(slide)
    assert _bar(student) == [
        "1 · Train",
        "2 · Step 0",
        "3 · Step 6",
        "4 · Step 20",
        "5 · Step 60",
        "6 · Why √d_k",
    ]


@pytest.mark.parametrize("step", SNAPSHOTS)
def test_a_snapshot_step_shows_its_chart_before_train_is_pressed(page, step):
    """A student who opens a snapshot step first sees it, trained there (with the default
    settings a run takes about a second, and it is cached for everyone after)."""
    at = page(PAGE, step=step, **SHORT)
    assert not at.exception
    assert len(visible_of(at, "vega_lite_chart")) == 1 and at.metric
    assert curve_steps(at) == 60
    shown = {"2": 0, "3": 6, "4": 20, "5": 60}[step]
    assert f"step {shown}" in texts(at)
    assert not any("Press" in str(i.value) for i in at.info)


@pytest.mark.parametrize("step", ["3", SCRUB, WHY])
def test_train_in_the_sidebar_trains_live_from_any_step(page, step):
    at = page(PAGE, step=step, **SHORT)
    button = at.sidebar.button(key="train")
    assert button.label == "Train"
    button.click().run()
    assert not at.exception
    assert at.query_params["run"] == "1" and at.query_params["step"] == step
    assert len(visible_of(at, "vega_lite_chart")) == 1  # the step's own chart, after the run
    go(at, "1")
    assert curve_steps(at) == 60 and not at.info  # the first step shows the run trained


SETTINGS = {  # widget kind -> keys of the page's settings, on every step
    "selectbox": {"_choice_lr"},
    "button_group": {"_choice_d_k"},
    "toggle": {"scaled", "twin"},
    "slider": {"steps"},
    "number_input": {"seed"},
}


def _keys(block, kind: str, keys: set[str]) -> set[str]:
    return {w.key for w in getattr(block, kind)} & keys


@pytest.mark.parametrize("present", ["0", "1"])
def test_students_have_the_controls_in_the_sidebar_a_slide_in_the_main_area(page, present):
    students = present == "0"
    at = page(PAGE, present=present, **SHORT)
    for kind, keys in SETTINGS.items():
        assert _keys(at.sidebar, kind, keys) == (keys if students else set()), kind
        assert _keys(at.main, kind, keys) == (set() if students else keys), kind
    task = at.sidebar.selectbox if students else at.main.button_group
    assert "_choice_task" in {w.key for w in task}
    train = {b.key for b in (at.sidebar if students else at.main).button}
    assert "train" in train  # a slide: on its first step, under the step's text
    at.query_params["step"] = SCRUB
    at.run()
    where, elsewhere = (at.sidebar, at.main) if students else (at.main, at.sidebar)
    assert "at" in {s.key for s in where.slider} and "at" not in {s.key for s in elsewhere.slider}
    assert "play" in {b.key for b in where.button}
    assert ("train" in {b.key for b in at.sidebar.button}) == students  # every step, for students


def test_a_slide_shows_title_then_step_bar_then_its_settings(page):
    """One page anatomy: the step bar right under the title, the settings below it (they
    name the snapshot steps, so they are read first and drawn after)."""
    at = page(PAGE, present="1", lang="zh", **SHORT)
    shown = visible(at.main)
    kinds = [getattr(e, "key", None) for e in shown]
    assert type(shown[0]).__name__ == "Title"
    assert kinds.index("_step_choice") < kinds.index("_choice_task") < kinds.index("train")
