"""The home page (dashboard.py): why attention, the formula, the five steps with shapes."""

import json

from tests.app.conftest import open_page, texts, visible, visible_of
from ui import charts
from ui.i18n import Translator
from ui.pages import in_section


def test_pipeline_shapes_are_labelled_with_their_matrices():
    at = open_page(None, lang="en", step="3", n="6", d_model="8", d_k="4", d_v="3")
    project = next(m.value for m in at.markdown if "`X (6, 8)`" in m.value)
    assert "`Q, K (6, 4)`" in project and "`V (6, 3)`" in project
    assert any("`αV (6, 3)`" in m.value for m in at.markdown)


def test_home_says_the_pipeline_weights_are_random_in_both_languages():
    for lang in ("en", "zh"):
        shown = texts(open_page(None, lang=lang, step="3"))
        assert Translator(lang)("home.untrained") in shown
    assert "Three learned matrices" not in texts(open_page(None, lang="en", step="3"))


def test_presenter_pipeline_folds_its_sizes_but_keeps_them_in_the_url():
    at = open_page(None, lang="en", present="1", step="3", n="5", d_k="3")
    assert [e.label for e in at.main.expander] == [Translator("en")("home.settings")]
    assert not [s.value for s in at.subheader]  # the step bar names the step
    assert any("`QKᵀ (5, 5)`" in m.value for m in at.markdown)
    assert any("`Q, K (5, 3)`" in m.value for m in at.markdown)


def test_students_move_the_sizes_in_the_sidebar_and_find_where_to_start():
    t = Translator("zh")
    at = open_page(None, lang="zh", step="3")
    shown = {e.key for e in visible(at.sidebar) if type(e).__name__ == "Slider"}
    assert shown == {"n", "d_model", "d_k", "d_v"}
    hidden = {s.key for s in at.sidebar.slider} - shown  # step 1's, kept in the URL
    assert len(hidden) == 1 and not visible_of(at, "Slider"), "off screen, hidden"
    assert t("home.start_here") in texts(at)
    pages = [p.proto.page for p in at.main.get("page_link")]
    assert pages.count("lookup") == 2  # the link and Next
    today = {p.id for p in in_section("today")}
    assert len(today) >= 4 and today <= set(pages), "today's attention, one link each"


def test_the_first_steps_chart_fits_a_laptops_column():
    at = open_page(None, lang="en")
    view = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert view["width"] <= charts.PAGE_WIDTH and view["height"] <= charts.PAGE_HEIGHT
