"""The step skeleton (ui/steps.py), through pages drawn by it."""

from tests.app.conftest import keys, open_page, visible_of
from ui.i18n import Translator

EN = Translator("en")


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
