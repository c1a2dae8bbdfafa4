"""The frame every page lives in: language, presenter mode, steps, navigation, URL state."""

import json
import re
import threading
import time
from html import escape

import pytest

from tests.app.conftest import open_page, texts, visible_types
from ui.i18n import Translator
from ui.loaded import process_busy, warm
from ui.pages import PAGES, SECTIONS, available_pages


def _page_file(info):
    return None if info.file == "dashboard.py" else info.file


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_every_page_runs_in_both_languages_and_modes(info, lang, present) -> None:
    at = open_page(_page_file(info), lang=lang, present=present)
    assert not at.exception
    assert at.title, "every page has a title"
    assert at.query_params["lang"] == lang


def test_language_switch_changes_visible_text() -> None:
    at = open_page(None, lang="en")
    assert at.title[0].value == "Attention Lab"
    at.button_group(key="_lang_choice").set_value("zh").run()
    assert at.title[0].value == "注意力实验室"
    assert at.query_params["lang"] == "zh"
    assert "Why attention?" not in texts(at)


def test_bad_language_in_url_warns_and_falls_back_to_english() -> None:
    at = open_page(None, lang="xx")
    assert not at.exception
    assert at.title[0].value == "Attention Lab"
    assert any("lang=xx" in w.value for w in at.warning)
    assert at.query_params["lang"] == "en"


def test_url_params_restore_controls() -> None:
    at = open_page(None, step="3", n="12", d_model="16", d_k="8", d_v="2", distance="120")
    assert [at.slider(key=k).value for k in ("n", "d_model", "d_k", "d_v", "distance")] == [
        12,
        16,
        8,
        2,
        120,
    ]
    assert "(12, 2)" in texts(at), "the output shape follows n and d_v"


@pytest.mark.parametrize(
    ("key", "raw", "default"),
    [
        ("n", "-3", 6),
        ("d_model", "abc", 8),
        ("d_k", "1e99", 4),
        ("distance", "nan", 50),
        ("d_v", "", 4),
        ("n", "<b>x</b>", 6),
    ],
)
def test_bad_url_values_warn_and_fall_back(key, raw, default) -> None:
    at = open_page(None, **{key: raw})
    assert not at.exception
    assert at.slider(key=key).value == default
    assert any(f"`{key}`" in w.value for w in at.warning)
    assert not any("<b>" in w.value for w in at.warning), "user text is escaped"


def test_presenter_mode_shows_one_step_at_a_time() -> None:
    at = open_page(None, present="1")
    assert [b.label for b in at.button][:2] == ["Back", "Next"]
    assert {"Slider"} <= visible_types(at)  # step 1: why attention
    assert "Latex" not in visible_types(at)
    at = open_page(None, present="1", step="2")
    assert "Latex" in visible_types(at) and "Slider" not in visible_types(at)
    assert at.slider(key="n").value == 6, "hidden steps keep their controls (and URL)"
    at.button[1].click().run()  # Next
    assert at.query_params["step"] == "3"
    assert at.slider(key="n").value == 6


def test_students_see_one_step_at_a_time_and_off_screen_steps_draw_only_controls() -> None:
    at = open_page(None, distance="120", d_v="2")
    assert [b.label for b in at.button][:2] == ["Back", "Next"]
    assert at.button_group(key="_step_choice").value == "1"
    assert len(at.get("vega_lite_chart")) == 1, "step 1's chart only"
    assert "Latex" not in visible_types(at) and not at.latex, "step 2 is not drawn"
    assert at.slider(key="d_v").value == 2, "step 3's sizes stay in the URL"
    assert at.query_params["d_v"] == "2"
    at.button[1].click().run()  # Next
    assert at.query_params["step"] == "2"
    assert "Latex" in visible_types(at) and not at.get("vega_lite_chart")
    assert at.slider(key="distance").value == 120, "step 1's slider keeps its value off screen"
    assert "→" not in [b.label for b in at.button], "arrow keys turn steps only when presenting"


def test_presenter_toggle_goes_to_url() -> None:
    at = open_page(None)
    at.toggle(key="_present_choice").set_value(True).run()
    assert at.query_params["present"] == "1"
    assert at.query_params["step"] == "1"


@pytest.mark.parametrize("raw", ["0", "9", "two"])
def test_bad_step_warns_and_starts_at_step_one(raw) -> None:
    at = open_page(None, present="1", step=raw)
    assert not at.exception
    assert any("`step`" in w.value for w in at.warning)
    assert at.query_params["step"] == "1"


def _navigation(at) -> str:
    return next(e.proto.body for e in at.sidebar.get("html") if 'class="lab-nav"' in e.proto.body)


@pytest.mark.parametrize(("params", "query"), [
    ({"lang": "zh", "present": "1"}, "?lang=zh&amp;present=1"),
    ({"lang": "en"}, "?lang=en"),
])  # fmt: skip
def test_navigation_links_every_existing_page_and_carries_language(params, query) -> None:
    at = open_page("pages/4_softmax.py", **params)
    nav = _navigation(at)
    t = Translator(params["lang"])
    # by section (/join, last in the registry, is listed under "start"), in order within one
    by_section = sorted(available_pages(), key=lambda p: SECTIONS.index(p.section))
    others = [p for p in by_section if p.id != "softmax"]
    links = re.findall(r'<a class="lab-nav-link" href="([^"]+)">', nav)
    assert links == [p.url_path + query for p in others]  # in reading order, current left out
    assert re.search(rf'aria-current="page">.*?{re.escape(t("nav.softmax"))}<', nav)
    for p in available_pages():  # escaped as HTML text (FlashAttention&#x27;s)
        assert f"<span>{escape(t(f'nav.{p.id}'))}</span>" in nav
    for section in {p.section for p in available_pages()}:
        assert f">{escape(t(f'nav.section.{section}'))}</p>" in nav
    assert {p.id for p in PAGES} >= {p.id for p in available_pages()}


def _facet_orders(node: object) -> list[list | None]:
    """The panel order of every facet in a chart spec (None where the spec sets none)."""
    found = []
    if isinstance(node, dict):
        facet = node.get("facet")
        if isinstance(facet, dict) and "spec" in node:
            defs = [facet] if "field" in facet else [facet.get(k) for k in ("row", "column")]
            found += [d.get("sort") for d in defs if isinstance(d, dict)]
        for child in node.values():
            found += _facet_orders(child)
    elif isinstance(node, list):
        for child in node:
            found += _facet_orders(child)
    return found


@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_facet_panels_have_a_fixed_order_in_both_languages(info) -> None:
    """Panels keep their place when the language changes: every facet on every page has
    an explicit order (Vega-Lite's default sorts the translated labels)."""
    per_lang = {}
    for lang in ("en", "zh"):
        at = open_page(_page_file(info), lang=lang)
        specs = [json.loads(e.proto.spec) for e in at.get("vega_lite_chart")]
        per_lang[lang] = [order for spec in specs for order in _facet_orders(spec)]
    assert all(isinstance(order, list) for order in per_lang["en"] + per_lang["zh"])
    assert [len(o) for o in per_lang["en"]] == [len(o) for o in per_lang["zh"]]


def test_objects_alive_after_start_up_are_frozen_once_per_process() -> None:
    import gc

    open_page("pages/4_softmax.py")
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the imported modules at least
    open_page("pages/2_qkv.py")
    assert gc.get_freeze_count() <= frozen  # not again (frozen objects may still be freed)


def test_warm_calls_every_loader_in_the_background_and_skips_a_failing_one() -> None:
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("model not installed")

    thread = warm([broken, lambda: calls.append("second")], delay=0.5, busy=lambda: False)
    assert thread.daemon and calls == []  # not yet: the first page is drawn first
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert calls == ["broken", "second"]


def test_warm_waits_while_the_process_is_busy_then_loads_at_the_latest_after_at_most() -> None:
    calls: list[float] = []
    looks: list[float] = []
    start = time.monotonic()

    def busy() -> bool:
        looks.append(time.monotonic() - start)
        time.sleep(0.05)
        return len(looks) < 4  # busy for the first three looks

    thread = warm([lambda: calls.append(time.monotonic() - start)], 0.1, busy, at_most=10)
    thread.join(timeout=10)
    assert len(looks) == 4 and calls and calls[0] >= looks[-1], "loaded after the quiet look"

    looks.clear()
    start = time.monotonic()
    calls.clear()
    thread = warm([lambda: calls.append(time.monotonic() - start)], 0.1, lambda: True, 0.5)
    thread.join(timeout=10)
    assert calls and 0.5 <= calls[0] < 2, "always busy: loaded once at_most has passed"


def test_process_busy_tells_a_spinning_thread_from_an_idle_process() -> None:
    assert not process_busy(0.3, 0.25)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        assert process_busy(0.3, 0.25)
    finally:
        stop.set()
        spinner.join()


def test_pages_under_apptest_start_no_model_warm_up() -> None:
    open_page()
    names = [thread.name for thread in threading.enumerate()]
    assert "attention-lab-warm-models" not in names


def _page_links(at) -> list:
    return [e.proto for e in at.main.get("page_link")]


def test_students_move_the_page_controls_in_the_sidebar_and_slides_keep_them_above() -> None:
    at = open_page("pages/5_weighted_sum.py", lang="en")
    assert {s.key for s in at.sidebar.slider} == {"d_model", "d_k", "d_v"}
    assert not at.main.slider, "no control between the step bar and the chart"
    assert at.sidebar.text_input(key="text").value == "The cat sat on the mat"
    at = open_page("pages/5_weighted_sum.py", lang="en", present="1")
    assert not at.sidebar.slider and {s.key for s in at.main.slider} == {"d_model", "d_k", "d_v"}


def test_navigation_is_one_folded_list_naming_the_page_on_screen() -> None:
    at = open_page("pages/4_softmax.py", lang="zh")
    box = at.sidebar.expander[0]
    assert Translator("zh")("nav.softmax") in box.label
    assert 'class="lab-nav"' in box.get("html")[0].proto.body


def test_the_last_step_leads_to_the_next_page_and_the_first_back_to_the_previous() -> None:
    t = Translator("zh")
    at = open_page(None, lang="zh", step="3")
    ahead = [p for p in _page_links(at) if p.label == t("steps.next_page", page=t("nav.lookup"))]
    assert len(ahead) == 1 and ahead[0].page == "lookup"
    assert ahead[0].query_string == "lang=zh&step=1"
    assert "下一步" not in [b.label for b in at.button], "no dead Next button on the last step"
    at = open_page("pages/1_lookup.py", lang="zh", present="1")
    back = [p for p in _page_links(at) if "step=last" in p.query_string]
    assert len(back) == 1 and back[0].query_string == "lang=zh&present=1&step=last"
    assert back[0].label == t("nav.home"), "a slide names just the page: one line"
    at = open_page(None, lang="en", step="1")
    assert not [p for p in _page_links(at) if "step=last" in p.query_string], "home is first"


def test_step_last_opens_a_pages_last_step_without_a_warning() -> None:
    at = open_page("pages/5_weighted_sum.py", lang="en", step="last")
    assert at.query_params["step"] == "4"
    assert not at.warning


def _moved_on_qkv():
    """/qkv with d_model, the sentence, the seed, positions and the embedding changed."""
    at = open_page("pages/2_qkv.py", lang="en")
    at.slider(key="d_model").set_value(20)
    at.text_input(key="text").input("a b c")
    at.number_input(key="seed").set_value(7)
    at.toggle(key="pos").set_value(True)
    at.run()
    assert at.slider(key="d_model").value == 20 and at.number_input(key="seed").value == 7
    return at


@pytest.mark.parametrize("target", ["pages/3_scaling.py", "pages/5_weighted_sum.py"])
def test_a_value_moved_on_one_page_does_not_open_the_next(target) -> None:
    """Pages share control names (d_model, seed, text…): a page opened from another (Next,
    the clicker, the navigation) starts on its own lesson, not on the last page's values."""
    at = _moved_on_qkv()
    at.switch_page(target)
    at.query_params.clear()
    at.query_params.update({"lang": "en", "step": "1"})
    at.run()
    assert not at.exception
    assert at.slider(key="d_model").value == 8
    assert at.text_input(key="text").value == "The cat sat on the mat"
    assert at.number_input(key="seed").value == 42
    assert at.toggle(key="pos").value is False


def test_a_value_moved_on_a_page_stays_while_the_page_reruns() -> None:
    at = _moved_on_qkv()
    at.button(key="step_next").click().run()  # the next step of the same page
    assert at.slider(key="d_model").value == 20
    assert at.number_input(key="seed").value == 7
