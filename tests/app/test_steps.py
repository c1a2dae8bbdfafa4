"""The page skeleton (ui/steps.py), through the pages that use each of its pieces: groups in
a row on a slide (/qkv, /rope), titled and folded steps (/scaling, /masking), settings drawn by
``words`` before the step bar (/training), a group whose range follows those settings and
whose off-screen part is only its slider (/training's snapshots), and steps that read a group
another step shows (/homework)."""

import io

import numpy as np
from streamlit.proto.Block_pb2 import Block

from core import homework as hw
from tests.app.conftest import keys, open_page, order, texts, visible, visible_of
from ui.i18n import Translator

HORIZONTAL = Block.FlexContainer.Direction.HORIZONTAL
EN = Translator("en")


def row_of(node, key: str) -> object | None:
    """The horizontal block that holds the widget ``key`` directly, else None (not drawn, or
    not in a row)."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "key", None) == key:
            flex = node.proto.flex_container if hasattr(node.proto, "flex_container") else None
            return node if flex is not None and flex.direction == HORIZONTAL else None
        found = row_of(child, key)
        if found is not None:
            return found
    return None


def holds(node, key: str) -> bool:
    """Whether the widget ``key`` is drawn anywhere under ``node``."""
    children = getattr(node, "children", {}).values()
    return any(getattr(c, "key", None) == key or holds(c, key) for c in children)


def test_groups_marked_row_share_one_row_at_their_place_on_a_slide():
    """/qkv's step 1: the token picker (shared with step 2) and the projection picker (step
    1's own) are both ``row`` groups of the notes: one row on a slide, a column for students."""
    slide = open_page("pages/2_qkv.py", lang="en", present="1", step="1")
    assert not slide.exception
    token, product = row_of(slide.main, "_choice_token"), row_of(slide.main, "_choice_projection")
    assert token is not None and token is product, "side by side, in one row"
    assert len(token.children) == 2, "the row holds the two groups and nothing else"
    student = open_page("pages/2_qkv.py", lang="en", step="1")
    assert student.button_group(key="_choice_projection").value == "q"
    assert row_of(student.sidebar, "_choice_token") is None
    assert row_of(student.sidebar, "_choice_projection") is None


def test_row_groups_of_different_steps_meet_in_the_row_of_the_step_on_screen():
    """/rope: the base (steps 1-3) and the seed (steps 1-2) are two groups; on step 1's slide
    they share one row below the chart, on step 3's the base is alone in it."""
    first = open_page("pages/12_rope.py", lang="en", present="1", step="1")
    row = row_of(first.main, "_choice_base")
    assert row is not None and len(row.children) == 2 and holds(row, "seed")
    third = open_page("pages/12_rope.py", lang="en", present="1", step="3")
    alone = row_of(third.main, "_choice_base")
    assert alone is not None and len(alone.children) == 1 and not holds(alone, "seed")
    student = open_page("pages/12_rope.py", lang="en", step="1")
    assert row_of(student.sidebar, "_choice_base") is None
    assert row_of(student.sidebar, "seed") is None


def headings(page_file: str, **params: str) -> list[str]:
    """The subheaders on screen of ``page_file`` opened with ``params``."""
    return [s.value for s in visible_of(open_page(page_file, **params), "Subheader")]


def test_a_titled_step_heads_its_slide_with_its_full_title():
    """/scaling's step bar shows short labels: a slide names each step in full too."""
    slide = {"lang": "en", "step": "2", "present": "1"}
    assert headings("pages/3_scaling.py", **slide) == [EN("scaling.step2_title")]
    assert headings("pages/3_scaling.py", lang="en", step="2") == [EN("scaling.step2_title")]
    assert headings("pages/8_kv_cache.py", **slide) == []  # the step bar names the step


def test_a_step_folds_a_shared_group_in_the_sidebar_for_students():
    """/masking's mask switches: in the sidebar on step 1, folded there on step 3 (its own
    controls need the room), under the group's fold text."""
    switches = {"causal", "pad", "_choice_pad_side"}
    label = EN("masking.masks_fold")
    for step, folded in (("1", False), ("3", True)):
        at = open_page("pages/6_masking.py", lang="en", step=step)
        assert switches <= keys(at.sidebar), step
        folds = [e for e in at.sidebar.expander if e.label == label]
        assert len(folds) == folded, step
        if folded:
            assert switches <= keys(folds[0])
            assert not folds[0].proto.expanded  # closed


TRAINING, HOMEWORK = "pages/16_training.py", "pages/17_homework.py"
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
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    wrong, _ = hw.mistake("attention", "no_scaling").make(*args, None)
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


ENCODER, DECODER = "pages/9_encoder.py", "pages/10_decoder.py"
TIMEOUT = 600  # the first run of a page loads its model


def test_a_group_placed_in_the_step_for_students_stands_above_its_chart():
    """/encoder's sentence B (``student="above"``): in the step, above the comparison,
    not in the sidebar; off its step kept hidden with the URL's text; on a slide where the
    group's ``slide`` says (the settings, drawn by the page's group)."""
    at = open_page(ENCODER, timeout=TIMEOUT, step="4", compare="The cat sat on the mat.")
    assert not at.exception
    assert "compare" in keys(at.main) and "compare" not in keys(at.sidebar)
    seen = order(at)
    assert seen.index("TextInput") < seen.index("chart")
    assert at.text_input(key="compare").value == "The cat sat on the mat."
    off = open_page(ENCODER, timeout=TIMEOUT, step="2", compare="The cat sat on the mat.")
    assert "compare" not in keys(off.main) | keys(off.sidebar)  # hidden…
    assert off.text_input(key="compare").value == "The cat sat on the mat."  # …and kept
    assert off.query_params["compare"] in ("The cat sat on the mat.", ["The cat sat on the mat."])


def test_a_button_is_drawn_on_its_step_only():
    """/decoder's Generate (``keep=False``): in step 4's box of controls, below the settings
    it generates with; not drawn at all off screen, where those settings are kept hidden."""
    t = Translator("en")
    at = open_page(DECODER, timeout=TIMEOUT, step="4")
    side = [getattr(e, "key", None) or getattr(e, "label", None) for e in visible(at.sidebar)]
    assert side.index("n_gen") < side.index(t("decoder.generate"))
    for step in ("1", "5"):
        off = open_page(DECODER, timeout=TIMEOUT, step=step, n_gen="5")
        assert not any(b.label == t("decoder.generate") for b in off.button)  # not even hidden
        assert off.slider(key="n_gen").value == 5  # the step's settings: kept


def test_a_step_reads_a_group_of_another_step_without_showing_it():
    """/decoder's step 2 reads step 1's layer and head: they stay hidden, the step uses the
    URL's values."""
    at = open_page(DECODER, timeout=TIMEOUT, step="2", layer="20", head="3")
    assert not at.exception
    assert not {"layer", "head"} & (keys(at.main) | keys(at.sidebar))
    assert "Row of **it** in layer 20, head 3:" in " ".join(m.value for m in at.markdown)


def test_a_page_stopped_before_its_steps_keeps_the_controls_that_may_mend_it(no_e5):
    """/encoder without multilingual-e5 (:func:`ui.steps.stop`): its message, no title, no
    step bar, no step; the model switch in the settings' box (students: the sidebar under
    its heading; a slide: a closed expander), which leads back to a working page."""
    t = Translator("en")
    at = open_page(ENCODER, timeout=TIMEOUT, model="e5")
    assert not at.exception and at.error
    assert not at.title and not visible_of(at, "vega_lite_chart")
    assert "_step_choice" not in keys(at.main)
    side = [getattr(e, "value", None) for e in visible(at.sidebar)]
    assert f"**{t('encoder.settings')}**" in side
    assert "_choice_model" in keys(at.sidebar)
    slide = open_page(ENCODER, timeout=TIMEOUT, model="e5", present="1")
    assert t("encoder.settings") in [e.label for e in slide.expander]
    assert "_choice_model" in keys(slide.main)
    at = at.segmented_control(key="_choice_model").set_value("minilm").run()
    assert not at.exception and not at.error and at.title


def strip(at) -> list[str]:
    """The texts of the step's strip (``step_head_<k>``: what to try, the first notice)."""

    def find(node):
        for child in getattr(node, "children", {}).values():
            if "step_head_" in getattr(getattr(child, "proto", None), "id", ""):
                return child
            if isinstance(getattr(child, "children", None), dict) and (hit := find(child)):
                return hit
        return None

    head = find(at.main)
    assert head is not None, "no strip on the step"
    return [e.value for e in visible(head) if type(e).__name__ == "Markdown"]


FLASH = "pages/14_flash.py"


def test_a_students_step_opens_with_what_to_try_and_its_first_notice_above_its_chart():
    """/flash step 3 for students: the strip (what to try, then the first of its notices)
    comes before the chart; the notes box below keeps the other notices, not the first
    again. On a slide there is no strip: the notes stand beside the chart, all of them."""
    t = EN
    at = open_page(FLASH, lang="en", step="3", d="128", sram="50")
    try_line, first = strip(at)
    assert try_line.endswith(t("flash.s3_title_try"))
    assert first.startswith(":material/lightbulb:") and "ordinary attention moves" in first
    shown = order(at)
    assert shown.index(try_line) < shown.index(first) < shown.index("chart")
    rest = [v for v in shown[shown.index("chart") :] if isinstance(v, str)]
    assert first.split(" ", 1)[1] not in "\n".join(rest), "said once"
    assert any("levels off" in v for v in rest), "the other notices stay below"
    slide = open_page(FLASH, lang="en", step="3", present="1")
    assert "ordinary attention moves" in texts(slide)
    assert t("flash.s3_title_try") not in texts(slide)


def test_a_step_with_one_notice_has_no_box_below():
    """/weighted_sum step 1 notices one thing: the strip says it, no "What to notice" box
    repeats it below the chart."""
    at = open_page("pages/5_weighted_sum.py", lang="zh", step="1")
    _, first = strip(at)
    assert first.startswith(":material/lightbulb:")
    assert Translator("zh")("blocks.notice") not in texts(at)
