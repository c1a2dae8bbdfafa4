"""Presenter mode and screen sizes as a lecturer and a student meet them, in Chromium.

Every page of the registry is covered (new pages join automatically): each presenter step
must fit a 1920 x 1080 projector with its charts in view, and a 1366 x 768 laptop driving
the projector (the slide zoomed as a whole), no student step may scroll sideways at
1920 x 1080 (at 1366 x 768: tests/e2e/test_layout.py, with the rule), the clicker keys must
turn the step whatever has focus, and every page must render with every request to another
host blocked (a hall without internet). Screenshots go to artifacts/screens/.
"""

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import (
    href,
    no_error_on_screen,
    press,
    shot,
    wait_for_url,
    wait_idle,
    wait_quiet,
)
from tests.e2e.layout import CHART_PRINT, LAPTOP, open_sidebar, wait_drawn, wait_redrawn
from ui.i18n import Translator
from ui.pages import available_pages
from ui.shell import SLIDE, SLIDE_BOX

PAGES = available_pages()
LANGS = ["en", "zh"]
SLACK = 2  # px of rounding
PX = 0.01  # a font size measured through the SVG's scale: 18 px reads as 17.9999

# The main area and its visible charts on screen; a chart's smallest text in px of the slide
# (through the SVG's scale, and the slide's zoom on a screen smaller than the projector).
LAYOUT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const zoom = parseFloat(getComputedStyle(document.documentElement)
    .getPropertyValue('--lab-slide-zoom')) || 1;
  const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter((e) => e.offsetParent !== null)
    .map((e) => { const r = e.getBoundingClientRect();
                  const svg = e.querySelector('svg.marks');
                  const k = svg && svg.getBoundingClientRect().width
                    / parseFloat(svg.getAttribute('width')) / zoom;
                  const px = svg ? [...svg.querySelectorAll('text')]
                    .filter((t) => t.textContent.trim())
                    .map((t) => parseFloat(t.getAttribute('font-size')) * k) : [];
                  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                          text: px.length ? Math.min(...px) : null}; });
  return {scrollWidth: main.scrollWidth, clientWidth: main.clientWidth,
          scrollHeight: main.scrollHeight, clientHeight: main.clientHeight,
          width: window.innerWidth, height: window.innerHeight, zoom, charts};
}"""


def _layout(page) -> dict:
    return page.evaluate(LAYOUT)


def _sideways(box: dict) -> str | None:
    if box["scrollWidth"] > box["clientWidth"] + SLACK:
        return f"main area {box['scrollWidth']} px wide in {box['clientWidth']} px"
    return None


def _step_count(page) -> int:
    return page.locator(".st-key-_step_choice button").count()


def _slider(page):
    return page.locator('input[type="range"]:visible').first


def _controls(page) -> dict[str, list[str]]:
    """The address bar's parameters except the step: the state of the page's controls."""
    query = parse_qs(urlparse(href(page)).query)
    return {k: v for k, v in query.items() if k != "step"}


# Where a lecturer drags a slider on the first step, then presses the clicker (/lookup's
# angle slider is the case the issue saw: PageDown moved the slider, not the step).
CLICKER_CASES = [("/", "en"), ("/", "zh"), ("/lookup", "en"), ("/lookup", "zh"),
                 ("/softmax", "en"), ("/kv_cache", "en")]  # fmt: skip


def _page_down_to(page, step: int, presses: int = 4) -> None:
    """PageDown until the step turns: a step taller than the screen scrolls to its end first."""
    for _ in range(presses):
        page.keyboard.press("PageDown")
        try:
            page.wait_for_function(
                "f => location.href.includes(f)", arg=f"step={step}", timeout=5_000
            )
            wait_idle(page)
            return
        except PlaywrightTimeout:
            assert _scrolled(page), "PageDown neither turned the step nor scrolled"
    raise AssertionError(f"step {step} not reached after {presses} PageDown presses")


def _scrolled(page) -> bool:
    return page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop > 0")


@pytest.mark.parametrize(("path", "lang"), CLICKER_CASES)
def test_pagedown_turns_the_step_while_a_slider_has_focus(server, open_app, path, lang) -> None:
    page = open_app(server, f"{path}?lang={lang}&present=1")
    before, address = _controls(page), href(page)
    if not _slider(page).count():  # the step's controls are folded: open them as he would
        page.locator(
            '[data-testid="stMain"] [data-testid="stExpander"] summary:visible'
        ).first.click()
    _slider(page).focus()
    page.keyboard.press("ArrowRight")  # arrow keys stay with the focused slider
    page.wait_for_function("a => location.href !== a", arg=address, timeout=30_000)
    wait_idle(page)
    moved = _controls(page)
    assert moved != before, "ArrowRight on the focused slider changed nothing"
    _page_down_to(page, 2)  # the open settings can make the step taller than the screen
    assert _controls(page) == moved, "PageDown moved a control instead of (or with) the step"
    page.keyboard.press("PageUp")
    wait_for_url(page, "step=1")
    assert _controls(page) == moved
    _slider(page).focus()
    page.keyboard.press("Escape")  # gives the focus back: arrows step again
    page.keyboard.press("ArrowRight")
    wait_for_url(page, "step=2")
    assert _controls(page) == moved


# What a chart looks like from the back of the hall: its width as a share of the column it
# stands in, and the rendered px of its axis labels, its cell numbers and its cells.
READABLE = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
  .filter((e) => e.offsetParent !== null)
  .map((e) => {
    const svg = e.querySelector('svg.marks');
    const box = svg.getBoundingClientRect();
    const k = box.width / parseFloat(svg.getAttribute('width'));
    const holder = e.closest('[data-testid="stColumn"]')
      || e.closest('[data-testid="stVerticalBlock"]');
    const px = (sel) => [...svg.querySelectorAll(sel)].filter((t) => t.textContent.trim())
      .map((t) => parseFloat(t.getAttribute('font-size')) * k);
    const cell = svg.querySelector('g.mark-rect.role-mark path');
    return {share: box.width / holder.getBoundingClientRect().width,
            axis: px('g.role-axis-label text'), numbers: px('g.mark-text.role-mark text'),
            text: px('text'), cell: cell ? cell.getBoundingClientRect().width : 0};
  })"""

# The one chart of these presenter steps: (case, least share of its column, least px of the
# cell numbers or None, least cell px), keyed by (page, step).
READABLE_CASES = {
    ("/encoder", 2): ("encoder-72-heads-facet", 0.9, None, 11),
    ("/softmax", 2): ("softmax-weights-heatmap", 0.8, 18, 40),
    ("/encoder", 1): ("encoder-one-head", 0.7, 18, 36),
    ("/scaling", 1): ("scaling-four-panels-in-a-row", 0.85, 18, 45),
    ("/kv_cache", 1): ("kv-cache-step", 0.9, 18, 45),
    ("/qkv", 1): ("qkv-x-to-q-k-v-strip", 0.9, 18, 36),
    ("/qkv", 3): ("qkv-fused-strip", 0.9, 18, 40),
    ("/multi_head", 2): ("multi-head-weights", 0.9, 18, 40),
    ("/multi_head", 3): ("multi-head-concat-w-o", 0.85, 18, 45),
}


def _unreadable(page, case: str, share: float, numbers: float | None, cell: float) -> list[str]:
    """What keeps the step's one chart from being read from the back of the hall."""
    charts = page.evaluate(READABLE)
    if len(charts) != 1:
        return [f"{len(charts)} charts on screen, expected one"]
    (chart,) = charts
    problems = []
    if chart["share"] < share:
        problems.append(f"the chart takes {chart['share']:.0%} of its column")
    if min(chart["axis"]) < 18 - PX:
        problems.append(f"axis labels {min(chart['axis']):.1f} px")
    if min(chart["text"]) < 18 - PX:
        problems.append(f"titles, legends or labels of {min(chart['text']):.1f} px")
    if chart["cell"] < cell:
        problems.append(f"cells {chart['cell']:.1f} px")
    if numbers is not None:
        if not chart["numbers"]:
            problems.append("the cells carry no numbers")
        elif min(chart["numbers"]) < numbers - PX:
            problems.append(f"cell numbers {min(chart['numbers']):.1f} px")
    return problems


# Every visible tick label of every axis, as a box on screen (the log axes' labels between
# the powers of ten are empty strings, drawn as nothing; labels Vega hides are transparent).
TICK_LABELS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks')]
  .filter((svg) => svg.getBoundingClientRect().width > 0)
  .flatMap((svg) => [...svg.querySelectorAll('g.role-axis-label')])
  .map((axis) => [...axis.querySelectorAll('text')]
    .filter((t) => t.textContent.trim() && getComputedStyle(t).opacity !== '0')
    .map((t) => { const r = t.getBoundingClientRect();
                  return {text: t.textContent, left: r.left, right: r.right,
                          top: r.top, bottom: r.bottom}; }))"""


GAP = 6  # px between two labels side by side: "1" and "2" 3 px apart read as "12"


def _overlaps(labels: list[dict]) -> list[str]:
    clash = []
    for k, a in enumerate(labels):
        for b in labels[k + 1 :]:
            apart = (
                a["right"] + GAP <= b["left"]
                or b["right"] + GAP <= a["left"]
                or a["bottom"] <= b["top"] + 1
                or b["bottom"] <= a["top"] + 1
            )
            if not apart:
                clash.append(f"{a['text']!r} / {b['text']!r}")
    return clash


# Presenter steps whose charts have log axes (page, step).
LOG_AXIS_STEPS = {("/kv_cache", 2), ("/scaling", 2), ("/scaling", 3)}


def _tick_label_clashes(page) -> list[str]:
    """Axes without labels, and tick labels drawn over each other."""
    axes = page.evaluate(TICK_LABELS)
    if not (axes and all(axes)):
        return ["an axis shows no labels"]
    clashes = [c for labels in axes for c in _overlaps(labels)]
    return [f"tick labels drawn over each other: {clashes}"] if clashes else []


# The step bar's buttons that end past its right edge (at 1920 px the bar does not wrap).
STEP_BAR_HIDES = """() => {
  const groups = document.querySelectorAll('[data-testid="stMain"] [data-testid="stButtonGroup"]');
  const steps = [...groups].find((g) => g.innerText.trim().startsWith('1 ·'));
  if (!steps) return [];  // a page without steps
  const edge = steps.getBoundingClientRect().right + 1;
  return [...steps.querySelectorAll('button')]
    .filter((b) => b.getBoundingClientRect().right > edge).map((b) => b.innerText);
}"""


# A chart wider than its column, a Back/Next label cut to "上…", a row of buttons (the step
# bar, a segmented control) that hides some, or a metric's label or delta cut with "…".
CUT_ON_A_LAPTOP = """() => {
  const cut = [];
  for (const c of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
    const svg = c.querySelector('svg.marks');
    if (!svg || c.offsetParent === null) continue;
    const box = c.getBoundingClientRect(), drawn = svg.getBoundingClientRect();
    if (drawn.right > box.right + 2 || drawn.right > window.innerWidth + 2)
      cut.push(`chart ${Math.round(drawn.width)} px wide in ${Math.round(box.width)} px`);
  }
  for (const p of document.querySelectorAll('.st-key-step_prev p, .st-key-step_next p'))
    if (p.scrollWidth > p.clientWidth + 1) cut.push(`button label "${p.textContent}" cut`);
  const rows = '[data-testid="stMain"] [data-testid="stButtonGroup"] > div';
  for (const row of document.querySelectorAll(rows))
    if (row.offsetParent !== null && row.scrollWidth > row.clientWidth + 1)
      cut.push(`a row of buttons hides some: "${row.textContent.slice(0, 40)}"`);
  const labels = ['stMetricLabel', 'stMetricDelta']
    .map((id) => `[data-testid="${id}"] [data-testid="stMarkdownContainer"]`).join(', ');
  for (const m of document.querySelectorAll(labels))
    if (m.scrollWidth > m.clientWidth + 1) cut.push(`metric text "${m.textContent}" cut`);
  return cut;
}"""


def _misfits(box: dict) -> list[str]:
    """What keeps a presenter step from fitting the screen ``box`` was measured on."""
    screen = f"{box['width']}x{box['height']}"
    problems = []
    if box["scrollHeight"] > box["clientHeight"] + SLACK:
        problems.append(f"{box['scrollHeight']} px tall in {screen}")
    for c in box["charts"]:
        if c["bottom"] > box["height"] + SLACK or c["right"] > box["width"] + SLACK:
            problems.append(f"a chart ends at ({c['right']:.0f}, {c['bottom']:.0f}) in {screen}")
        if c["text"] is not None and c["text"] < 18 - PX:  # read from the back of the hall
            problems.append(f"chart text of {c['text']:.1f} px of the slide")
    if sideways := _sideways(box):
        problems.append(f"{sideways} in {screen}")
    return problems


ZOOM = """() => parseFloat(getComputedStyle(document.documentElement)
  .getPropertyValue('--lab-slide-zoom'))"""


def _resize(page, size: tuple[int, int]) -> None:
    """Resize the window and wait until the slide has zoomed to it (below 1 on a screen
    smaller than the slide, 1 on the projector)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    smaller = size[0] < SLIDE[0] or size[1] < SLIDE[1]
    page.wait_for_function(f"s => s ? ({ZOOM})() < 1 : ({ZOOM})() === 1", arg=smaller)


def _on_the_laptop(page, name: str) -> tuple[dict, list[str]]:
    """The step's layout on a laptop driving the projector, and what is cut off there (the
    window resized on the same visit: the slide zooms, nothing reruns); then the window
    back at the projector's size."""
    _resize(page, LAPTOP)
    wait_quiet(page, settle=0.2)
    box, cut = _layout(page), page.evaluate(CUT_ON_A_LAPTOP)
    shot(page, name)
    _resize(page, SLIDE)
    return box, cut


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_every_presenter_step_fits_one_screen(server, open_app, info, lang) -> None:
    """Each step, reached with the Next button, fits 1920 x 1080 with its charts in view and
    their text >= 18 px, and fits a 1366 x 768 laptop the same way (the slide zoomed to the
    window); on the steps of READABLE_CASES and LOG_AXIS_STEPS the same visit also checks
    that the chart fills its column and that log-axis labels stay apart."""
    page = open_app(server, f"{info.url_path}?lang={lang}&present=1", *SLIDE)
    count = max(_step_count(page), 1)
    problems = []
    for step in range(1, count + 1):
        if step > 1:
            page.locator(".st-key-step_next button").click()
            wait_for_url(page, f"step={step}")
        no_error_on_screen(page)
        readable = READABLE_CASES.get((info.url_path, step))
        log_axis = (info.url_path, step) in LOG_AXIS_STEPS
        if readable or log_axis:
            page.wait_for_selector('[data-testid="stVegaLiteChart"]:visible svg', timeout=60_000)
        box = _layout(page)
        if step == 1 and (hidden := page.evaluate(STEP_BAR_HIDES)):
            problems.append(f"the step bar cuts off {hidden}")
        shot(page, f"{info.id}_{lang}_presenter_step{step}")
        problems += [f"step {step}: {p}" for p in _misfits(box)]
        if readable:
            problems += [f"step {step} ({readable[0]}): {p}" for p in _unreadable(page, *readable)]
        if log_axis:
            problems += [f"step {step}: {p}" for p in _tick_label_clashes(page)]
        laptop, cut = _on_the_laptop(page, f"{info.id}_{lang}_presenter_step{step}_laptop")
        problems += [f"step {step}: {p}" for p in _misfits(laptop) + cut]
    assert not problems, f"{info.id} ({lang}): {problems}"


@pytest.mark.parametrize("lang", LANGS)
def test_a_lecturer_leaves_presenter_mode_from_the_slide(server, browser, lang) -> None:
    """On a slide the sidebar is closed; the header's button opens it (on a laptop, where
    the slide is zoomed: smaller again beside the open sidebar, and still one screen), and
    its switch turns presenter mode off: the page is laid out for students, unzoomed.

    In a browser context of its own: the browser remembers a sidebar opened by hand."""
    context = browser.new_context(viewport={"width": LAPTOP[0], "height": LAPTOP[1]})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/softmax?lang={lang}&present=1")
        wait_idle(page)
        content = '[data-testid="stMainBlockContainer"]'
        zoom = f"() => parseFloat(getComputedStyle(document.querySelector('{content}')).zoom)"
        closed = page.evaluate(zoom)
        assert closed < 1, "the slide is zoomed to the laptop"
        open_sidebar(page)
        page.wait_for_function(f"z => ({zoom})() < z", arg=closed)
        assert _misfits(_layout(page)) == [], "the slide beside the sidebar"
        page.locator(".st-key-_present_choice label").click()
        page.wait_for_function("() => !location.href.includes('present=1')", timeout=30_000)
        wait_idle(page)
        assert page.evaluate(zoom) == 1
        assert not page.locator(".st-key-arrow_keys").count(), "the clicker keys are gone"
    finally:
        context.close()


def _local(url: str) -> bool:
    return urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith(
        ("data:", "blob:", "about:")
    )


@pytest.mark.parametrize(
    ("path", "lang"),
    [("/scaling?step=2", "zh"), ("/training?run=1&step=2", "en"), ("/kv_cache?step=1", "en")],
)
def test_presenter_mode_on_a_laptop_screen_scales_charts_into_their_column(
    server, open_app, path, lang
) -> None:
    """Slides are laid out for a 1920 px projector; a 1366 x 768 laptop driving the projector
    gets the whole slide, smaller: no chart, label or row of buttons cut off (here also
    after a training run, which the walk over every step does not start)."""
    sep = "&" if "?" in path else "?"
    page = open_app(server, f"{path}{sep}lang={lang}&present=1", *LAPTOP)
    page.wait_for_selector('[data-testid="stVegaLiteChart"]:visible svg', timeout=60_000)
    assert page.evaluate(CUT_ON_A_LAPTOP) == []
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('svg.marks')].some((s) =>"
        " s.getBoundingClientRect().width < parseFloat(s.getAttribute('width')) - 2)"
    )
    assert drawn, "a chart laid out for 1920 px is drawn smaller on this screen"
    shot(page, f"presenter_laptop{path.split('?')[0].replace('/', '_')}_{lang}")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_every_page_renders_offline_and_nothing_runs_sideways(
    server, shared_context, info, lang
) -> None:
    """Every student step, reached with Next at 1920 x 1080: no sideways scroll, no error.
    The test browsers resolve no host name but loopback (``CHROMIUM_ARGS``), as in a hall
    without internet; here every request the page makes is recorded (no interception: a
    routed context has no HTTP cache, and each load cost ~20 s) and none may go elsewhere."""
    page = shared_context.new_page()
    requested, failed = [], []
    page.on("request", lambda req: requested.append(req.url))
    page.on("requestfailed", lambda req: failed.append(req.url))
    try:
        page.set_viewport_size({"width": SLIDE[0], "height": SLIDE[1]})
        page.goto(f"{server.url}{info.url_path}?lang={lang}")
        wait_idle(page)
        no_error_on_screen(page)
        t = Translator(lang)
        assert page.title().startswith(t(f"nav.{info.id}"))
        assert page.locator("h1").first.inner_text().strip() == t(f"{info.id}.title")
        problems = []
        steps = _step_count(page)
        stacked = info.id == "homework" or not info.lesson  # /join has no steps
        assert steps >= 2 or stacked, "one step at a time, picked on the bar"
        steps = max(steps, 1)  # the homework checker stacks its steps for students
        for step in range(1, steps + 1):  # a student's page shows one step at a time
            if step > 1:
                page.locator(".st-key-step_next button").click()
                wait_for_url(page, f"step={step}")  # and idle
                no_error_on_screen(page)
            wait_drawn(page)  # every chart drawn
            if sideways := _sideways(_layout(page)):
                problems.append(f"step {step}: {sideways}")
            shot(page, f"{info.id}_{lang}_step{step}_1920")
        assert not problems, f"{info.id} ({lang}) scrolls sideways at 1920 px: {problems}"
        assert requested, "the page's own requests are seen"
        others = sorted({u for u in requested if not _local(u)})
        assert not others, f"requests to other hosts: {others}"
        assert not failed, f"failed requests: {failed}"
    finally:
        page.close()


@pytest.mark.parametrize("step", ["2", "5"])  # 5: the slider's expander above the chart
def test_training_twin_max_snapshot_fits_one_screen(server, open_app, step) -> None:
    page = open_app(server, f"/training?present=1&task=max&twin=true&run=1&step={step}")
    page.wait_for_selector('[data-testid="stVegaLiteChart"]:visible svg', timeout=120_000)
    box = _layout(page)
    assert box["scrollHeight"] <= box["clientHeight"] + SLACK, f"{box['scrollHeight']} px tall"
    assert all(c["bottom"] <= box["height"] + SLACK for c in box["charts"])


# Open (or close) every box of controls on the slide, as a lecturer does for a live demo;
# returns how many there were.
TOGGLE_BOXES = f"""(open) => {{
  const boxes = [...document.querySelectorAll('[data-testid="stMain"] details')]
    .filter((d) => d.querySelector('.{SLIDE_BOX}') && d.offsetParent !== null);
  boxes.filter((d) => d.open !== open).forEach((d) => d.querySelector('summary').click());
  return boxes.length;
}}"""
# The steps whose opened settings pushed the chart off the slide (issue 40 measured chart
# bottoms at 1273, 1387 and 1582 px on a 1920 x 1080 slide).
OPEN_BOX_CASES = [("/scaling", "en"), ("/masking", "zh"), ("/encoder", "en"), ("/encoder", "zh")]


@pytest.mark.parametrize(("path", "lang"), OPEN_BOX_CASES)
def test_an_opened_settings_box_keeps_the_chart_on_the_slide(server, open_app, path, lang) -> None:
    """Step 1 on the projector with its boxes of controls opened: the controls stand side by
    side and the slide shrinks as much as it must, so the whole chart stays on the slide; a
    slider moved there redraws it, still whole; closed again, the slide is full size."""
    page = open_app(server, f"{path}?lang={lang}&present=1&step=1")
    wait_drawn(page)
    assert page.evaluate(TOGGLE_BOXES, True) >= 1
    page.wait_for_function(f"() => ({ZOOM})() < 1", timeout=10_000)  # taller than the slide
    wait_quiet(page, settle=0.3)
    slider = page.locator('[data-testid="stMain"] details[open] input[type="range"]:visible')
    if slider.count():
        before = page.evaluate(CHART_PRINT)
        press(page, slider.first, "ArrowRight", "=")
        wait_redrawn(page, before)
        wait_quiet(page, settle=0.3)
    shot(page, f"presenter_open_box_{path.strip('/')}_{lang}")
    box = _layout(page)
    chart = box["charts"][0]
    assert chart["top"] >= -SLACK and chart["bottom"] <= box["height"] + SLACK, chart
    assert chart["right"] <= box["width"] + SLACK, chart
    page.evaluate(TOGGLE_BOXES, False)
    page.wait_for_function(f"() => ({ZOOM})() === 1", timeout=10_000)
