"""ui/steps.py, the skeleton of a page of steps: what it adds beyond the pages' own tests."""

from streamlit.proto.Block_pb2 import Block

from tests.app.conftest import keys, open_page, visible_of
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
    first = open_page("pages/11_rope.py", lang="en", present="1", step="1")
    row = row_of(first.main, "_choice_base")
    assert row is not None and len(row.children) == 2 and holds(row, "seed")
    third = open_page("pages/11_rope.py", lang="en", present="1", step="3")
    alone = row_of(third.main, "_choice_base")
    assert alone is not None and len(alone.children) == 1 and not holds(alone, "seed")
    student = open_page("pages/11_rope.py", lang="en", step="1")
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
