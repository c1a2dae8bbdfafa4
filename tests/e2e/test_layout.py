"""The student's screen, in Chromium: a step's chart and its controls on the first screen.

The rule (DESIGN.md "The student's screen", issue 29 item 1). On every step of every page,
in the student view (no ``?present``), in English and Chinese, at 1366 x 768 and 1280 x 720,
right after the step opens by its URL (``?step=k``) and with nothing scrolled (the window,
the main area ``stMain`` and the sidebar all at scrollTop 0):

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
- no exception box is on screen (it would hide the step's chart).

A 2 px slack absorbs rounding. Two more checks: on a phone (390 x 844) the page never
scrolls sideways (a chart may scroll inside its own box) and every control of the page is
reachable there (present, rendered, and within the screen's width; the sidebar's once it
is opened); and moving a page's first slider redraws the main chart, which is in view.

The measuring code here is shared with ``bench/layout_report.py``, which prints the same
measurements as a table for every step and saves screenshots (tests do not import bench/;
the report imports this module).
"""

from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import Server, shot, wait_idle
from ui.exports import KEY_PREFIX
from ui.pages import PageInfo, available_pages

PAGES = available_pages()
OpenApp = Callable[..., Page]  # conftest's open_app(server, path, width, height)
LANGS = ("en", "zh")
LAPTOP = (1366, 768)
SMALL_LAPTOP = (1280, 720)
PHONE = (390, 844)
SLACK = 2  # px of rounding
HALF = 0.5  # the share of a second chart's area that must be in view

# Widgets a student moves to change a step (Streamlit's data-testid of each widget).
CONTROLS = (
    "stSlider",
    "stTextInput",
    "stTextArea",
    "stNumberInput",
    "stSelectbox",
    "stMultiSelect",
    "stCheckbox",
    "stToggle",
    "stRadio",
    "stButtonGroup",
    "stButton",
    "stFormSubmitButton",
    "stFileUploader",
    "stDateInput",
    "stTimeInput",
    "stColorPicker",
    "stChatInput",
)
# Widget keys (``st-key-<key>`` classes on an element or an ancestor) whose elements are
# not a step's controls: the step bar, the presenter's hidden arrow keys, the sidebar's
# language and presenter switches.
SKIP_KEYS = (
    "_step_choice",
    "step_prev",
    "step_next",
    "arrow_keys",
    "_lang_choice",
    "_present_choice",
)
# Key prefixes of the same: the export boxes, and a step's container while it is off screen.
SKIP_PREFIXES = (KEY_PREFIX, "hidden_step_")

MEASURE = """(o) => {
  // The first screen: nothing scrolled (the window, the main area, the sidebar).
  window.scrollTo(0, 0);
  for (const sel of ['[data-testid="stMain"]', '[data-testid="stSidebar"]',
                     '[data-testid="stSidebarContent"]'])
    for (const e of document.querySelectorAll(sel)) e.scrollTop = 0;
  const keys = (e) => {
    const out = [];
    for (let n = e; n; n = n.parentElement)
      for (const c of n.classList || []) if (c.startsWith('st-key-')) out.push(c.slice(7));
    return out;
  };
  const skipped = (e) => keys(e).some((k) => o.skipKeys.includes(k)
    || o.skipPrefixes.some((p) => k.startsWith(p)));
  const closed = (e) => { const d = e.parentElement && e.parentElement.closest('details');
                          return d && !d.open && !e.closest('summary'); };
  const shown = (e) => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && !closed(e)
      && e.checkVisibility({visibilityProperty: true, opacityProperty: true}); };
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const text = (e) => (e.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 40);
  const area = (e) => e.closest('[data-testid="stSidebar"]') ? 'sidebar' : 'main';
  const found = (sel, root) => [...(root || document).querySelectorAll(sel)]
    .filter((e) => shown(e) && !skipped(e));
  const main = document.querySelector('[data-testid="stMain"]');
  const marks = (e) => { const m = e.querySelector('canvas.marks, svg.marks');
                         return m && m.getBoundingClientRect().width > 0 ? box(m) : null; };
  const charts = found('[data-testid="stVegaLiteChart"]', main).map((e) => ({
    kind: 'chart', name: '', area: 'main', box: box(e), drawn: marks(e)}));
  // A step without a chart: its first table (a dataframe, st.table or a Markdown table),
  // else its first metric (a number the controls change).
  const views = (sel, kind) => found(sel, main)
    .map((e) => ({kind, name: '', area: 'main', box: box(e), drawn: box(e)}));
  const tables = views('[data-testid="stDataFrame"], [data-testid="stTable"], '
                       + '[data-testid="stMarkdownContainer"] table', 'table');
  const metrics = views('[data-testid="stMetric"]', 'metric');
  const controls = found(o.controls.map((c) => `[data-testid="${c}"]`).join(', '))
    .filter((e) => !e.parentElement.closest(o.controls.map((c) => `[data-testid="${c}"]`)
                                               .join(', ')))  // the outer widget only
    .map((e) => { const label = e.querySelector('[data-testid="stWidgetLabel"]');
                  const own = e.closest('[data-testid="stElementContainer"]');
                  const key = own ? keys(own)[0] : '';  // the widget's own key, if any
                  const said = JSON.stringify(text(label && text(label) ? label : e));
                  return {kind: e.dataset.testid, area: area(e), box: box(e), drawn: box(e),
                          name: key && own.classList.contains(`st-key-${key}`)
                            ? `${key} ${said}` : said}; });
  const errors = found('[data-testid="stException"]').map(text);
  return {width: window.innerWidth, height: window.innerHeight, charts, tables, metrics,
          controls, errors,
          pageWide: document.documentElement.scrollWidth,
          mainWide: main ? main.scrollWidth : 0, mainWidth: main ? main.clientWidth : 0};
}"""

# Every visible chart of the main area has been drawn (vega-embed draws after the run ends).
CHARTS_DRAWN = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stVegaLiteChart"]')]
  .filter((e) => e.getBoundingClientRect().width > 0)
  .every((e) => { const m = e.querySelector('canvas.marks, svg.marks');
                  return m && m.getBoundingClientRect().width > 0; })"""

# A fingerprint of what the main chart shows: its pixels (canvas) or its SVG.
CHART_PRINT = """() => {
  const chart = [...document.querySelectorAll(
      '[data-testid="stMain"] [data-testid="stVegaLiteChart"]')]
    .find((e) => e.getBoundingClientRect().width > 0);
  const m = chart && chart.querySelector('canvas.marks, svg.marks');
  if (!m) return null;
  const s = m.tagName === 'CANVAS' ? m.toDataURL() : m.outerHTML;
  let h = 5381;
  for (let i = 0; i < s.length; i++) h = (h * 33 + s.charCodeAt(i)) | 0;
  return `${s.length}:${h}`;
}"""


@dataclass(frozen=True)
class Box:
    """An element's bounding box in CSS px of the window (the page not scrolled)."""

    top: float
    bottom: float
    left: float
    right: float

    def inside(self, width: float, height: float) -> bool:
        """Whether the box lies within a ``width`` x ``height`` viewport (2 px of slack)."""
        return (
            self.top >= -SLACK
            and self.left >= -SLACK
            and self.bottom <= height + SLACK
            and self.right <= width + SLACK
        )

    def share_in(self, width: float, height: float) -> float:
        """The share of the box's area that is inside the viewport (0 to 1)."""
        w = max(0.0, min(self.right, width) - max(self.left, 0.0))
        h = max(0.0, min(self.bottom, height) - max(self.top, 0.0))
        full = (self.right - self.left) * (self.bottom - self.top)
        return w * h / full if full > 0 else 0.0

    def __str__(self) -> str:
        x, y = f"{_px(self.left)}-{_px(self.right)}", f"{_px(self.top)}-{_px(self.bottom)}"
        return f"x {x}, y {y}"


def _px(value: float) -> str:
    """A coordinate to a tenth of a px, without a trailing .0 (770.05 is not 770)."""
    return f"{value:.1f}".removesuffix(".0")


@dataclass(frozen=True)
class Element:
    """A chart, a table, a metric or a control on screen."""

    kind: str  # "chart", "table", "metric", or a control's data-testid
    name: str  # a control's key and label, for a person reading a failure
    area: str  # "main" or "sidebar"
    box: Box
    drawing: Box | None  # a chart's canvas or SVG (None: never drawn); others: the box

    @classmethod
    def of(cls, raw: dict) -> "Element":
        """From the measuring script's record."""
        drawing = Box(**raw["drawn"]) if raw["drawn"] else None
        return cls(raw["kind"], raw["name"], raw["area"], Box(**raw["box"]), drawing)

    def __str__(self) -> str:
        name = f" {self.name}" if self.name else ""
        where = " in the sidebar" if self.area == "sidebar" else ""
        return f"{self.kind}{name}{where} at {self.box}"


# Steps without a chart, table or metric that still have controls, by design: (page id,
# step) -> what the controls change instead. Any other such step fails as "no chart".
CHARTLESS = {("home", 3): "its sliders change the shapes printed in the five step cards"}


@dataclass(frozen=True)
class Layout:
    """What one step shows on its first screen."""

    width: int
    height: int
    charts: tuple[Element, ...]
    tables: tuple[Element, ...]
    metrics: tuple[Element, ...]
    controls: tuple[Element, ...]
    errors: tuple[str, ...] = ()  # the text of each exception box on screen
    page_wide: int = 0  # document.documentElement.scrollWidth
    main_wide: int = 0  # the main area's scrollWidth
    main_width: int = 0  # the main area's clientWidth

    @property
    def main(self) -> Element | None:
        """The step's main view: its first chart, else its first table, else its first
        metric; None when it shows none of them."""
        return next(iter(self.charts + self.tables + self.metrics), None)

    @property
    def second(self) -> Element | None:
        """The step's second chart, if it has one."""
        return self.charts[1] if len(self.charts) > 1 else None

    @property
    def lowest_control(self) -> float | None:
        """The bottom y of the lowest control, if there is any."""
        return max((c.box.bottom for c in self.controls), default=None)

    def problems(self, chartless: bool = False) -> list[str]:
        """Every way this first screen breaks the rule (empty: the step passes).

        ``chartless``: the step is known to show its result without a chart (``CHARTLESS``).
        A step with no controls and nothing to chart (a text step) has nothing to place.
        """
        w, h = self.width, self.height
        found = [f"an exception is on screen: {e}" for e in self.errors]
        main = self.main
        if main is None and self.errors:
            pass  # the exception is the reason
        elif main is None:
            if self.controls and not chartless:
                found.append("no chart: the step shows no chart, table or metric")
        elif not main.box.inside(w, h):
            found.append(f"main {main} is not fully in the {w}x{h} viewport")
        elif main.drawing is None:
            found.append(f"main {main} was never drawn")
        elif main.drawing.right > main.box.right + SLACK:
            wide = main.drawing.right - main.drawing.left
            found.append(f"main {main} is drawn {wide:.0f} px wide and cut off at its box")
        second = self.second
        if second is not None and second.box.share_in(w, h) < HALF - 1e-9:
            share = second.box.share_in(w, h)
            found.append(f"second {second} is {share:.0%} in view (needs {HALF:.0%})")
        found += [
            f"control {c} is outside the {w}x{h} viewport"
            for c in self.controls
            if not c.box.inside(w, h)
        ]
        return found

    def sideways(self) -> list[str]:
        """Horizontal scrolling of the page or of the main area (a chart's own box may)."""
        found = []
        if self.page_wide > self.width + SLACK:
            found.append(f"the page is {self.page_wide} px wide in a {self.width} px window")
        if self.main_wide > self.main_width + SLACK:
            found.append(f"the main area is {self.main_wide} px wide in {self.main_width} px")
        return found


def measure(page: Page) -> Layout:
    """Scroll everything to the top and measure the step's charts, tables and controls."""
    raw = page.evaluate(
        MEASURE,
        {
            "controls": list(CONTROLS),
            "skipKeys": list(SKIP_KEYS),
            "skipPrefixes": list(SKIP_PREFIXES),
        },
    )
    views = (tuple(map(Element.of, raw[k])) for k in ("charts", "tables", "metrics", "controls"))
    widths = (raw["pageWide"], raw["mainWide"], raw["mainWidth"])
    return Layout(raw["width"], raw["height"], *views, tuple(raw["errors"]), *widths)


def step_path(info: PageInfo, lang: str, step: int) -> str:
    """The address of a page's step in the student view."""
    return f"{info.url_path}?lang={lang}&step={step}"


def step_count(page: Page) -> int:
    """The number of steps on the step bar (a page without one has one step)."""
    return max(page.locator(".st-key-_step_choice button").count(), 1)


def wait_drawn(page: Page) -> None:
    """Wait until every visible chart has been drawn (vega-embed draws after the run)."""
    with suppress(PlaywrightTimeout):  # measured anyway: reported as never drawn
        page.wait_for_function(CHARTS_DRAWN, timeout=20_000)


def open_step(page: Page, base_url: str, info: PageInfo, lang: str, step: int) -> None:
    """Open a step by its URL, as a bookmark or a shared link does, and let it render."""
    page.goto(base_url + step_path(info, lang, step))
    wait_idle(page)
    wait_drawn(page)


@dataclass(frozen=True)
class StepResult:
    """One step of one page, measured."""

    page: str
    step: int
    lang: str
    layout: Layout

    @property
    def problems(self) -> list[str]:
        """The step's violations of the rule, each naming the page, step and language."""
        w, h = self.layout.width, self.layout.height
        where = f"{self.page} step {self.step} ({self.lang}, {w}x{h})"
        chartless = (self.page, self.step) in CHARTLESS
        return [f"{where}: {p}" for p in self.layout.problems(chartless)]


def walk(
    page: Page,
    base_url: str,
    info: PageInfo,
    lang: str,
    opened: bool = False,
    on_step: Callable[[StepResult], None] | None = None,
) -> list[StepResult]:
    """Open every step of a page by its URL and measure each first screen.

    ``opened``: the page already shows step 1 (e.g. from ``open_app``). ``on_step`` is called
    after each measurement while the step is still on screen (for a screenshot).
    """
    results = []
    if opened:
        wait_drawn(page)
    else:
        open_step(page, base_url, info, lang, 1)
    count = step_count(page)
    for step in range(1, count + 1):
        if step > 1:
            open_step(page, base_url, info, lang, step)
        result = StepResult(info.id, step, lang, measure(page))
        results.append(result)
        if on_step is not None:
            on_step(result)
    return results


def _seen(kind: str, top: float, bottom: float, area: str = "main", right: float = 900) -> Element:
    box = Box(top, bottom, 400 if area == "main" else 30, right)
    return Element(kind, "", area, box, box)


_CHART, _SLIDER = _seen("chart", 300, 760), _seen("stSlider", 200, 260)
# Made-up first screens at 1366 x 768 and what the rule says of them: (id, layout, the
# problems' opening words; empty: the step passes).
RULE_CASES = [
    ("chart-and-control-in-view", Layout(1366, 768, (_CHART,), (), (), (_SLIDER,)), []),
    ("2-px-of-slack", Layout(1366, 768, (_seen("chart", -2, 770),), (), (), (_SLIDER,)), []),
    ("chart-3-px-below", Layout(1366, 768, (_seen("chart", 300, 771),), (), (), ()), ["main"]),
    ("drawn-wider-than-its-box",
     Layout(1366, 768, (Element("chart", "", "main", _CHART.box, Box(300, 760, 400, 1000)),),
            (), (), ()), ["main"]),
    ("second-chart-half-in-view",
     Layout(1366, 768, (_CHART, _seen("chart", 500, 1000)), (), (), ()), []),
    ("second-chart-mostly-below",
     Layout(1366, 768, (_CHART, _seen("chart", 600, 1000)), (), (), ()), ["second"]),
    ("sidebar-control-below",
     Layout(1366, 768, (_CHART,), (), (), (_seen("stSlider", 700, 790, "sidebar", 270),)),
     ["control"]),
    ("control-past-the-right-edge",
     Layout(1280, 720, (_seen("chart", 300, 700),), (), (),
            (_seen("stButton", 200, 240, right=1290),)),
     ["control"]),
    ("a-table-when-no-chart", Layout(1366, 768, (), (_seen("table", 300, 600),), (), ()), []),
    ("text-step", Layout(1366, 768, (), (), (), ()), []),
    ("controls-and-nothing-they-change", Layout(1366, 768, (), (), (), (_SLIDER,)), ["no chart"]),
    ("an-exception", Layout(1366, 768, (), (), (), (_SLIDER,), ("KeyError",)), ["an exception"]),
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
    assert Layout(1366, 768, (), (), (), (_SLIDER,)).problems(chartless=True) == []


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
OPEN_SIDEBAR = '[data-testid="stExpandSidebarButton"]'
SIDEBAR_OPEN = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  const r = s && s.getBoundingClientRect(); return !!r && r.left >= -1 && r.width > 0; }"""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_a_phone_never_scrolls_sideways_and_reaches_every_control(
    server: Server, browser, info: PageInfo, lang: str
) -> None:
    """At 390 x 844, step 1: no horizontal scroll of the page or the main area; every control
    the page has at 1366 px is also on the phone, rendered and within the screen's width
    (vertical scrolling is fine; the sidebar's controls once the sidebar is opened).

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
    main = [c for c in phone.controls if c.area == "main"]
    if page.locator(OPEN_SIDEBAR).count():  # open it, as a student taps the menu button
        page.locator(OPEN_SIDEBAR).click()
        page.wait_for_function(SIDEBAR_OPEN, timeout=10_000)
    side = [c for c in measure(page).controls if c.area == "sidebar"]
    width = PHONE[0] + SLACK
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
        page.wait_for_function(f"b => ({CHART_PRINT})() !== b", arg=before, timeout=30_000)
    except PlaywrightTimeout as error:
        raise AssertionError(f"{page_id} ({lang}): the slider moved, the chart did not") from error
    wait_idle(page)
    wait_drawn(page)
    main = measure(page).main
    assert main is not None and main.box.inside(*LAPTOP), (
        f"{page_id} ({lang}): the chart changed out of sight: {main}"
    )
