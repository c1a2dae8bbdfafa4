"""ui.steps, the skeleton every page of steps is drawn by: what it promises pages beyond the
ones each page's own tests check (a group placed in the step for students, a button not
drawn off screen, a step reading another step's group, a page stopped before its steps)."""

from tests.app.conftest import keys, open_page, order, visible, visible_of
from ui.i18n import Translator

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
