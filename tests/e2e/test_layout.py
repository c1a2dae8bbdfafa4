"""The student's screen, in Chromium: a step's point, chart and controls on the first screen.

The rule (DESIGN.md "The student's screen", issue 29 item 1). On every step of every page,
in the student view (no ``?present``), in English and Chinese, at 1366 x 768 and 1280 x 720,
right after the step opens by its URL (``?step=k``) and with nothing scrolled (the window,
the main area ``stMain`` and the sidebar all at scrollTop 0):

- the step's **strip** -- what to try on it and the first thing to notice, above its chart
  (``st-key-step_head_<k>``; on /homework, whose steps stand one below the other, the
  first one's) -- lies fully inside the window's viewport;
- the step's **main chart** -- the first visible ``stVegaLiteChart`` of the main area; on
  a step without a chart its first table (``stDataFrame``, ``stTable`` or a Markdown
  table), else its first ``stMetric`` -- lies fully inside the window's viewport, and is
  not drawn wider than its own box (cut off). A step with controls and none of these
  fails as "no chart" (e.g. /training before Train is pressed), unless ``CHARTLESS`` names
  it; a step with neither controls nor a chart (a page of text) has nothing to place;
- a **second chart**, if the step has one, has at least half of its area in the viewport;
- every visible **control** lies fully inside the viewport, in the sidebar or the main
  area. A control is a widget a student moves to change the step: slider, text input or
  area, number input, selectbox, multiselect, toggle or checkbox, radio, segmented control
  or pills (``stButtonGroup``), a plain or form-submit button (e.g. "Train", "Lesson
  example") and the file uploader. Not controls: the step bar and its Back / Next buttons,
  the sidebar's language switch and presenter toggle, navigation links, download buttons,
  popovers, the export boxes (``ui.exports.KEY_PREFIX``) and everything in them, and
  anything not rendered: the content of a closed expander, the hidden off-screen step
  containers (``hidden_step_<k>``, display: none), elements of zero size;
- no exception box is on screen (it would hide the step's chart);
- neither the page nor the main area scrolls sideways (a chart may, inside its own box).

A 2 px slack absorbs rounding. Two more checks: on a phone (390 x 844) the page never
scrolls sideways (a chart may scroll inside its own box) and every control of the page is
reachable there (present, rendered, and within the screen's width; the sidebar's once it
is opened); and moving a page's first slider redraws the main chart, which is in view.

The measuring code is in ``tests/e2e/layout.py``, shared with the new pages' browser tests
and ``bench/layout_report.py``, which prints the same measurements as a table for every step
and saves screenshots.
"""

from collections import Counter

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import Server, press, shot, sidebar_slider, wait_idle
from tests.e2e.layout import (
    CHART_PRINT,
    LANGS,
    LAPTOP,
    PAGES,
    PHONE,
    SLACK,
    SMALL_LAPTOP,
    Box,
    Element,
    Layout,
    OpenApp,
    StepResult,
    measure,
    open_sidebar,
    step_path,
    wait_drawn,
    wait_redrawn,
    walk,
)
from ui.i18n import Translator
from ui.pages import PageInfo


def _seen(kind: str, top: float, bottom: float, area: str = "main", right: float = 900) -> Element:
    box = Box(top, bottom, 400 if area == "main" else 30, right)
    return Element(kind, "", area, box, box)


_CHART, _SLIDER = _seen("chart", 300, 760), _seen("stSlider", 200, 260)
_HEAD = _seen("strip", 190, 290)  # what to try and the first thing to notice


def _screen(
    *charts: Element,
    tables: tuple[Element, ...] = (),
    controls: tuple[Element, ...] = (),
    errors: tuple[str, ...] = (),
    heads: tuple[Element, ...] = (_HEAD,),
    size: tuple[int, int] = (1366, 768),
) -> Layout:
    """A made-up first screen (the step's strip in view unless ``heads`` says otherwise)."""
    return Layout(*size, charts, tables, (), controls, errors, heads=heads)


# Made-up first screens and what the rule says of them: (id, layout, the problems' opening
# words; empty: the step passes).
RULE_CASES = [
    ("chart-and-control-in-view", _screen(_CHART, controls=(_SLIDER,)), []),
    ("2-px-of-slack", _screen(_seen("chart", -2, 770), controls=(_SLIDER,)), []),
    ("chart-3-px-below", _screen(_seen("chart", 300, 771)), ["main"]),
    ("drawn-wider-than-its-box",
     _screen(Element("chart", "", "main", _CHART.box, Box(300, 760, 400, 1000))), ["main"]),
    ("second-chart-half-in-view", _screen(_CHART, _seen("chart", 500, 1000)), []),
    ("second-chart-mostly-below", _screen(_CHART, _seen("chart", 600, 1000)), ["second"]),
    ("sidebar-control-below",
     _screen(_CHART, controls=(_seen("stSlider", 700, 790, "sidebar", 270),)), ["control"]),
    ("control-past-the-right-edge",
     _screen(_seen("chart", 300, 700), controls=(_seen("stButton", 200, 240, right=1290),),
             size=(1280, 720)),
     ["control"]),
    ("a-table-when-no-chart", _screen(tables=(_seen("table", 300, 600),)), []),
    ("text-step", _screen(), []),
    ("controls-and-nothing-they-change", _screen(controls=(_SLIDER,)), ["no chart"]),
    ("strip-below-the-fold",
     _screen(_CHART, controls=(_SLIDER,), heads=(_seen("strip", 700, 800),)), ["strip"]),
    ("no-strip", _screen(_CHART, controls=(_SLIDER,), heads=()), ["no strip"]),
    ("an-exception", _screen(controls=(_SLIDER,), errors=("KeyError",)), ["an exception"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("layout", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES]
)
def test_the_rule_on_made_up_screens(layout: Layout, expected: list[str]) -> None:
    """The rule's arithmetic without a browser: what passes, what fails and with which words."""
    problems = layout.problems()
    assert len(problems) == len(expected), problems
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), problem
    assert _screen(controls=(_SLIDER,)).problems(chartless=True) == []


def test_a_step_that_scrolls_sideways_breaks_the_walk() -> None:
    """A step whose main area is wider than itself fails the walk over the steps, even with
    its chart and controls in view."""
    fits = Layout(1366, 768, (_CHART,), (), (), (_SLIDER,), (), 1366, 1066, 1066, (_HEAD,))
    assert StepResult("demo", 2, "en", fits).problems == []
    wide = Layout(1366, 768, (_CHART,), (), (), (_SLIDER,), (), 1366, 1500, 1066, (_HEAD,))
    (problem,) = StepResult("demo", 2, "en", wide).problems
    assert problem == "demo step 2 (en, 1366x768): the main area is 1500 px wide in 1066 px"


def _check_pages(
    server: Server, open_app: OpenApp, info: PageInfo, lang: str, size: tuple[int, int]
) -> None:
    page = open_app(server, step_path(info, lang, 1), *size)

    def keep_failures(result: StepResult) -> None:  # the screen of each failing step
        if result.problems:
            shot(page, f"layout_{info.id}_{lang}_step{result.step}_{size[0]}x{size[1]}")

    problems = [
        p
        for r in walk(page, server.url, info, lang, opened=True, on_step=keep_failures)
        for p in r.problems
    ]
    assert not problems, f"{len(problems)} violations of the rule:\n" + "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_every_step_shows_its_chart_and_controls_on_a_laptop_screen(
    server: Server, open_app: OpenApp, info: PageInfo, lang: str
) -> None:
    """At 1366 x 768, every step of the page: main chart fully in view, a second chart at
    least half, every control in view (see the module's docstring)."""
    _check_pages(server, open_app, info, lang, LAPTOP)


# 1280 x 720 (48 px shorter, 86 px narrower) on the pages with the most to fit, not all
# (the 1366 run covers every step; this one costs a page load a step): /qkv has the most
# controls (sentence, three sizes, seed, embeddings, token, projection) and the tallest
# charts; /multi_head a sentence, sizes and a heads choice over per-head panels; /encoder a
# real model's sentence box, target and layer choices and 5 steps; /training the most
# settings (task, d_k, scaling, learning rate, steps, seed, twin) and a Train button. Both
# languages between them: English labels wrap sooner, Chinese ones are taller.
SMALL_CASES = [("qkv", "en"), ("multi_head", "zh"), ("encoder", "zh"), ("training", "en")]


@pytest.mark.parametrize(("page_id", "lang"), SMALL_CASES)
def test_the_fullest_pages_fit_a_smaller_laptop(
    server: Server, open_app: OpenApp, page_id: str, lang: str
) -> None:
    """The same rule at 1280 x 720 (every step of each page)."""
    _check_pages(server, open_app, _info(page_id), lang, SMALL_LAPTOP)


def _info(page_id: str) -> PageInfo:
    return next(p for p in PAGES if p.id == page_id)


NEXT_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_a_phone_never_scrolls_sideways_and_reaches_every_control(
    server: Server, browser, info: PageInfo, lang: str
) -> None:
    """At 390 x 844, step 1: no horizontal scroll of the page or the main area; every control
    the page has at 1366 px is also on the phone, rendered and within the screen's width
    (vertical scrolling is fine; the sidebar's controls once the sidebar is opened), and so
    is every tab of the step bar (a long label wraps inside its tab).

    In a browser context of its own: the browser remembers a sidebar opened by hand, and
    the shared context's later pages (slides, whose sidebar starts closed) must not inherit
    it."""
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    try:
        _phone(server, context.new_page(), info, lang)
    finally:
        context.close()


def _phone(server: Server, page: Page, info: PageInfo, lang: str) -> None:
    page.goto(server.url + step_path(info, lang, 1))
    wait_idle(page)
    wait_drawn(page)
    phone = measure(page)
    problems = phone.sideways()
    width = PHONE[0] + SLACK
    tabs = page.evaluate(
        "() => [...document.querySelectorAll('.st-key-_step_choice button')]"
        ".map((b) => [b.innerText, b.getBoundingClientRect().right])"
    )
    problems += [
        f"step tab {text!r} ends at {right:.0f} px" for text, right in tabs if right > width
    ]
    problems += [
        f"chart drawn at {c.drawing} does not fit the {PHONE[0]} px screen"
        for c in phone.charts
        if c.drawing is None or c.drawing.left < -SLACK or c.drawing.right > width
    ]
    main = [c for c in phone.controls if c.area == "main"]
    open_sidebar(page)  # as a student taps the menu button
    side = [c for c in measure(page).controls if c.area == "sidebar"]
    problems += [
        f"control {c} sticks out of the {PHONE[0]} px screen"
        for c in main + side
        if c.box.left < -SLACK or c.box.right > width
    ]
    page.set_viewport_size({"width": LAPTOP[0], "height": LAPTOP[1]})  # the same page, wide
    page.evaluate(NEXT_FRAMES)  # laid out again (no rerun: the same elements)
    laptop = Counter((c.kind, c.name) for c in measure(page).controls)
    missing = laptop - Counter((c.kind, c.name) for c in main + side)
    problems += [f"control {kind} {name} is not on the phone" for kind, name in missing]
    if problems:
        shot(page, f"layout_{info.id}_{lang}_phone")
    assert not problems, f"{info.id} ({lang}) at {PHONE[0]}x{PHONE[1]}:\n" + "\n".join(problems)


SHEET = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  return {open: s.dataset.collapsed === 'false', top: s.getBoundingClientRect().top}; }"""


@pytest.mark.parametrize("lang", LANGS)
def test_on_a_phone_a_control_moves_the_chart_in_sight(server: Server, browser, lang: str) -> None:
    """At 390 x 844 the opened sidebar is a sheet over the lower part of the screen: with
    /softmax step 2's strip scrolled to the top, the strip and the chart (both panels,
    scaled to the width) stand above the sheet; moving the temperature in the sheet redraws
    it there, and the sheet stays open."""
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/softmax?lang={lang}&step=2")
        wait_idle(page)
        wait_drawn(page)
        open_sidebar(page)
        chart = page.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"]').first
        strip = page.locator('[data-testid="stMain"] [class*="st-key-step_head_"]').first
        page.evaluate("(e) => e.scrollIntoView({block: 'start'})", strip.element_handle())
        before = page.evaluate(CHART_PRINT)
        temperature = sidebar_slider(page, Translator(lang)("softmax.temperature"))
        press(page, temperature, "ArrowRight", "temp=")
        wait_redrawn(page, before)
        sheet, box = page.evaluate(SHEET), chart.bounding_box()
        shot(page, f"layout_softmax_{lang}_phone_sheet")
        assert sheet["open"], "the sheet closed when the control moved"
        assert box["y"] >= 0 and box["y"] + box["height"] <= sheet["top"] + SLACK, (box, sheet)
        assert box["x"] >= -SLACK and box["x"] + box["width"] <= PHONE[0] + SLACK
    finally:
        context.close()


# Pages whose first slider on step 1 changes the step's first chart, one of each kind: a
# single heatmap (/softmax, the temperature), side-by-side panels (/scaling, d_model), a
# toy-model page with shared settings (/masking) and a step-by-step decoding chart
# (/kv_cache); both languages between them.
SLIDER_CASES = [("softmax", "en"), ("scaling", "zh"), ("masking", "zh"), ("kv_cache", "en")]


@pytest.mark.parametrize(("page_id", "lang"), SLIDER_CASES)
def test_moving_the_first_slider_redraws_the_chart_in_view(
    server: Server, open_app: OpenApp, page_id: str, lang: str
) -> None:
    """ArrowRight on the first visible slider of step 1 (at 1366 x 768) changes what the
    main chart shows, and that chart is fully in view, where the student looks."""
    page = open_app(server, step_path(_info(page_id), lang, 1), *LAPTOP)
    wait_drawn(page)
    before = page.evaluate(CHART_PRINT)
    assert before is not None, "step 1 draws no chart"
    slider = page.locator('[data-testid="stSlider"]:visible')
    assert slider.count(), "step 1 shows no slider"
    thumb = slider.first.get_by_role("slider").first  # the range input under the thumb
    thumb.focus()
    page.keyboard.press("ArrowRight")
    try:
        wait_redrawn(page, before)
    except PlaywrightTimeout as error:
        raise AssertionError(f"{page_id} ({lang}): the slider moved, the chart did not") from error
    wait_idle(page)
    wait_drawn(page)
    main = measure(page).main
    assert main is not None and main.box.inside(*LAPTOP), (
        f"{page_id} ({lang}): the chart changed out of sight: {main}"
    )
