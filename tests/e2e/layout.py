"""The student's-screen rule, measured in Chromium: what a step shows on its first screen
(:func:`measure`), the rule's verdict (:class:`Layout`), and a walk over every step of a page
(:func:`walk`). Shared by ``tests/e2e/test_layout.py`` (the rule, every page), the new pages'
browser tests and ``bench/layout_report.py`` (the same measurements as a table); the rule is
described in ``test_layout.py``'s docstring. For the pages' browser tests also: a page opened
on a laptop and drawn (:func:`open_drawn`), a chart redrawn (:func:`wait_redrawn`), every
step checked on a laptop (:func:`assert_steps_on_a_laptop`).
"""

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import Server, no_error_on_screen, shot, wait_idle
from ui.exports import KEY_PREFIX
from ui.pages import PageInfo, lesson_pages

PAGES = lesson_pages()  # the pages of steps (/join has none: tests/e2e/test_ask_browser.py)
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
  const heads = views('[class*="st-key-step_head_"]', 'strip');
  return {width: window.innerWidth, height: window.innerHeight, charts, tables, metrics,
          controls, errors, heads,
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

    kind: str  # "chart", "table", "metric", "strip", or a control's data-testid
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
    # the strip above each step's chart: what to try and the first thing to notice
    heads: tuple[Element, ...] = ()

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
        if not self.heads:
            found.append("no strip: the step does not say what to try")
        elif not self.heads[0].box.inside(w, h):
            found.append(f"strip {self.heads[0]} is not fully in the {w}x{h} viewport")
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
    heads = tuple(map(Element.of, raw["heads"]))
    return Layout(raw["width"], raw["height"], *views, tuple(raw["errors"]), *widths, heads)


OPEN_SIDEBAR = '[data-testid="stExpandSidebarButton"]'
SIDEBAR_OPEN = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  const r = s && s.getBoundingClientRect(); return !!r && r.left >= -1 && r.width > 0; }"""


def open_sidebar(page: Page) -> None:
    """Open the sidebar with the header's button, if it is closed (a phone, a slide)."""
    if page.locator(OPEN_SIDEBAR).count():
        page.locator(OPEN_SIDEBAR).click()
        page.wait_for_function(SIDEBAR_OPEN, timeout=10_000)


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


def wait_redrawn(page: Page, before: str | None, timeout: float = 30_000) -> None:
    """Wait until the main chart shows something else than ``before`` (its
    ``page.evaluate(CHART_PRINT)`` taken before the change); ``timeout`` in ms."""
    page.wait_for_function(f"b => ({CHART_PRINT})() !== b", arg=before, timeout=timeout)


def open_drawn(server: Server, open_app: OpenApp, path: str) -> Page:
    """``open_app`` on a student's laptop (1366 x 768), every chart on screen drawn."""
    page = open_app(server, path, *LAPTOP)
    wait_drawn(page)
    return page


def assert_steps_on_a_laptop(server: Server, open_app: OpenApp, page_id: str, steps: int) -> None:
    """Each step of ``/<page_id>`` in Chinese on a laptop keeps the student's-screen rule, has
    a control in the sidebar beside its chart and no error; a screenshot of each for a person
    (``<page_id>_zh_step<N>_laptop``)."""
    for step in range(1, steps + 1):
        page = open_drawn(server, open_app, f"/{page_id}?lang=zh&step={step}")
        layout = measure(page)
        assert layout.problems() == [], (step, layout.problems())
        assert any(c.area == "sidebar" for c in layout.controls), step  # beside the chart
        no_error_on_screen(page)
        shot(page, f"{page_id}_zh_step{step}_laptop")


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
        """The step's violations of the rule, and any sideways scrolling of the page, each
        naming the page, step and language."""
        w, h = self.layout.width, self.layout.height
        where = f"{self.page} step {self.step} ({self.lang}, {w}x{h})"
        chartless = (self.page, self.step) in CHARTLESS
        found = self.layout.problems(chartless) + self.layout.sideways()
        return [f"{where}: {p}" for p in found]


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
