"""Presenter mode and screen sizes as a lecturer and a student meet them, in Chromium.

Every page of the registry is covered (new pages join automatically): each presenter step
must fit a 1920 x 1080 projector with its charts in view, no page may scroll sideways at
1366 x 768 or 1920 x 1080, the clicker keys must turn the step whatever has focus, and
every page must render with every request to another host blocked (a hall without
internet). Screenshots go to artifacts/screens/.
"""

import time
from urllib.parse import urlparse

import pytest

from tests.e2e.conftest import href, shot, wait_for_url, wait_idle
from ui.pages import available_pages

PAGES = available_pages()
LANGS = ["en", "zh"]
SLACK = 2  # px of rounding

LAYOUT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter((e) => e.offsetParent !== null)
    .map((e) => { const r = e.getBoundingClientRect();
                  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; });
  return {scrollWidth: main.scrollWidth, clientWidth: main.clientWidth,
          scrollHeight: main.scrollHeight, clientHeight: main.clientHeight,
          width: window.innerWidth, height: window.innerHeight, charts};
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


@pytest.mark.parametrize("lang", LANGS)
def test_pagedown_turns_the_step_while_a_slider_has_focus(server, open_app, lang) -> None:
    page = open_app(server, f"/?lang={lang}&present=1")
    slider = _slider(page)
    before = int(slider.input_value())
    slider.focus()
    page.keyboard.press("ArrowRight")  # arrow keys stay with the focused slider
    page.wait_for_function(
        "v => location.href.includes('distance=' + v)", arg=str(before + 1), timeout=30_000
    )
    wait_idle(page)
    page.keyboard.press("PageDown")
    wait_for_url(page, "step=2")
    assert f"distance={before + 1}" in href(page), "the slider did not move on PageDown"
    page.keyboard.press("PageUp")
    wait_for_url(page, "step=1")
    assert int(_slider(page).input_value()) == before + 1
    _slider(page).focus()
    page.keyboard.press("Escape")  # gives the focus back: arrows step again
    page.keyboard.press("ArrowRight")
    wait_for_url(page, "step=2")
    assert f"distance={before + 1}" in href(page)


# Presenter steps that were still taller than one 1080 px screen when this was written
# (issue 8 stays open for them; PageDown scrolls such a step to its end before it turns).
# They are expected failures, reported as xfailed; one that starts to fit shows as XPASS
# and its entry should go.
STILL_TALL = {
    "kv_cache": "step 1 ~1180-1220 px: four metrics, the cache heatmaps and the notes",
}


def _fit_cases() -> list:
    return [
        pytest.param(
            info,
            lang,
            id=f"{info.id}-{lang}",
            marks=[pytest.mark.xfail(reason=f"issue 8 open: {STILL_TALL[info.id]}")]
            if info.id in STILL_TALL
            else [],
        )
        for info in PAGES
        for lang in LANGS
    ]


@pytest.mark.parametrize(("info", "lang"), _fit_cases())
def test_every_presenter_step_fits_one_screen(server, open_app, info, lang) -> None:
    page = open_app(server, f"{info.url_path}?lang={lang}&present=1")
    count = max(_step_count(page), 1)
    problems = []
    for step in range(1, count + 1):
        if step > 1:
            page.locator(".st-key-step_next button").click()
            wait_for_url(page, f"step={step}")
        box = _layout(page)
        shot(page, f"{info.id}_{lang}_presenter_step{step}")
        if box["scrollHeight"] > box["clientHeight"] + SLACK:
            problems.append(f"step {step}: {box['scrollHeight']} px tall")
        for c in box["charts"]:
            if c["bottom"] > box["height"] + SLACK or c["right"] > box["width"] + SLACK:
                problems.append(
                    f"step {step}: a chart ends at ({c['right']:.0f}, {c['bottom']:.0f})"
                )
        if sideways := _sideways(box):
            problems.append(f"step {step}: {sideways}")
    assert not problems, f"{info.id} ({lang}) in {box['width']}x{box['height']}: {problems}"


def _local(url: str) -> bool:
    return urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith(
        ("data:", "blob:", "about:")
    )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.id)
def test_offline_at_laptop_and_full_hd_size_nothing_runs_sideways(
    server, browser, info, lang
) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    blocked, failed = [], []

    def route(r) -> None:
        if _local(r.request.url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    try:
        page = context.new_page()
        page.on("requestfailed", lambda req: failed.append(req.url))
        page.goto(f"{server.url}{info.url_path}?lang={lang}")
        wait_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator("h1").first.is_visible()
        problems = []
        for width, height in ((1366, 768), (1920, 1080)):
            page.set_viewport_size({"width": width, "height": height})
            time.sleep(0.5)
            if sideways := _sideways(_layout(page)):
                problems.append(f"{width}x{height}: {sideways}")
            shot(page, f"{info.id}_{lang}_{width}")
        assert not problems, f"{info.id} ({lang}) scrolls sideways: {problems}"
        assert not blocked, f"requests to other hosts: {sorted(set(blocked))}"
        assert not [u for u in failed if _local(u)], f"failed requests: {failed}"
    finally:
        context.close()
