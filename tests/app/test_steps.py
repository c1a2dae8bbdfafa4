"""The page skeleton (ui/steps.py), through the pages that use each of its pieces: settings
drawn by ``words`` before the step bar (/training), a group whose range follows those
settings and whose off-screen part is only its slider (/training's snapshots), and steps
that read a group another step shows (/homework)."""

import io

import numpy as np

from core import homework as hw
from tests.app.conftest import keys, open_page, order, texts, visible
from ui.i18n import Translator

TRAINING, HOMEWORK = "pages/15_training.py", "pages/16_homework.py"
SETTINGS = {"_choice_task", "_choice_d_k", "scaled", "steps", "seed", "twin"}  # /training's


def test_settings_drawn_by_words_sit_below_the_title_and_the_step_bar():
    """On a slide the settings that name the steps come after the title and the step bar
    (run draws those first, then fills them in); students find them in the sidebar."""
    slide = open_page(TRAINING, lang="zh", present="1", steps="60")
    shown = visible(slide.main)
    names = [getattr(e, "key", None) for e in shown]
    assert type(shown[0]).__name__ == "Title"
    assert names.index("_step_choice") < min(names.index(k) for k in SETTINGS if k in names)
    assert keys(slide.main) >= SETTINGS and not SETTINGS & keys(slide.sidebar)
    student = open_page(TRAINING, lang="zh", steps="60")
    assert keys(student.sidebar) >= SETTINGS and not SETTINGS & keys(student.main)


def test_a_change_of_those_settings_renames_the_steps():
    at = open_page(TRAINING, lang="en", steps="60")
    at.slider(key="steps").set_value(120).run()
    bar = [o.content for o in at.button_group(key="_step_choice").proto.options]
    assert bar[4] == "5 · Step 120"


def test_a_group_reads_the_pages_words_and_off_screen_draws_only_its_hidden_part():
    """The snapshot slider's range follows the run's steps (drawn by words); off its step
    the slider alone is drawn, hidden, keeping its URL value, without Play."""
    at = open_page(TRAINING, lang="en", steps="60", at="30")
    slider = at.slider(key="at")
    assert slider.max == 60 and slider.value == 30
    assert "at" not in keys(at.sidebar) | keys(at.main), "hidden"
    assert not [b for b in at.button if b.key == "play"]
    at = open_page(TRAINING, lang="en", steps="90", at="30", step="5", run="1")
    assert at.slider(key="at").max == 90 and {"at", "play"} <= keys(at.sidebar)


def _upload(at, data: bytes):
    at.file_uploader[0].upload("mine.npz", data)
    return at.run()


def test_a_step_reads_a_group_that_stays_on_its_own_step():
    """/homework's verdict reads the settings and the upload: on a slide they stay on their
    own steps (kept hidden on the verdict's), and what was uploaded on step 2 is checked on
    step 3. Students, who see every step, have them all in the sidebar."""
    cfg = hw.Homework(1)
    answer = hw.homework_answer(cfg, hw.homework_inputs(cfg))["output"]
    buffer = io.BytesIO()
    np.savez(buffer, output=answer)
    own = {"n", "d_model", "_choice_exercise", "hw_upload", "hw_paste"}
    at = _upload(open_page(HOMEWORK, lang="en", present="1", step="2"), buffer.getvalue())
    assert {"hw_upload", "hw_paste"} <= keys(at.main) and not {"n", "d_model"} & keys(at.main)
    at.query_params["step"] = "3"
    at.run()
    assert not own & keys(at.main), "the verdict's slide shows no control"
    assert at.slider(key="n").value == 6 and at.file_uploader[0].value, "kept, hidden"
    assert at.success and Translator("en")("homework.waiting") not in texts(at), "checked"
    student = open_page(HOMEWORK, lang="en")
    assert own <= keys(student.sidebar) and not own & keys(student.main)


def test_a_step_may_put_its_text_above_its_chart_for_students():
    """/homework's verdict: its heading and the verdict come before the chart of the errors
    (every other step: the chart first)."""
    cfg = hw.Homework(1)
    inputs = hw.homework_inputs(cfg)
    wrong, _ = hw.no_scaling(*[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], None)
    buffer = io.BytesIO()
    np.savez(buffer, output=wrong)
    at = _upload(open_page(HOMEWORK, lang="en"), buffer.getvalue())
    shown = order(at)
    verdict = shown.index(Translator("en")("homework.s3_title"))
    assert verdict < shown.index("Error") < shown.index("chart")


def test_a_steps_settings_group_joins_the_settings_words_drew_on_a_slide():
    """/training's snapshot slider and Play sit at the end of the settings expander on a
    slide (the step keeps its room), in a box of their own in the sidebar for students."""
    t = Translator("en")
    slide = open_page(TRAINING, lang="en", present="1", steps="60", run="1", step="5")
    box = next(e for e in slide.main.expander if e.label == t("training.settings"))
    assert "at" in {s.key for s in box.slider} and "play" in {b.key for b in box.button}
    assert t("training.s_scrub") not in [e.label for e in slide.main.expander], "no box more"
    student = open_page(TRAINING, lang="en", steps="60", run="1", step="5")
    assert {"at", "play"} <= keys(student.sidebar)
    assert t("training.s_scrub") in [m.value.strip("*") for m in student.sidebar.markdown]
