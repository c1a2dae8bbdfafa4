"""The shell in a real browser: what a student sees of Streamlit's own texts in Chinese."""

from urllib.parse import urlparse

from tests.e2e.conftest import IDLE, href, wait_idle
from tests.e2e.layout import LAPTOP
from ui.pages import lesson_pages

_SHOWN = """(e) => {
  const first = e.querySelector('span');
  return [getComputedStyle(first).fontSize, getComputedStyle(first, '::after').content];
}"""


def test_streamlits_own_hints_read_chinese_in_chinese_mode(server, open_app) -> None:
    page = open_app(server, "/weighted_sum?lang=zh", width=1366, height=768)
    box = page.locator('[data-testid="stSidebar"] input[type="text"]').first
    box.click()
    page.keyboard.type(" 的")
    hint = page.locator('[data-testid="InputInstructions"]')
    hint.wait_for()
    size, content = hint.evaluate(_SHOWN)
    assert size == "0px" and "按回车键确认" in content, "the English hint is replaced"
    skip = page.locator('[data-testid="stSkipToContent"]').evaluate(
        "e => [getComputedStyle(e).fontSize, getComputedStyle(e, '::after').content]"
    )
    assert skip[0] == "0px" and "跳到正文" in skip[1]
    page.keyboard.press("Escape")
    wait_idle(page)


def test_a_list_with_nothing_matching_says_so_in_chinese(server, open_app) -> None:
    """Typing into a select box or a multiselect what no option holds: Streamlit's own
    "No results" reads Chinese (the /decoder query list, /encoder's query tokens)."""
    for path, box in (
        ("/decoder?lang=zh", '[data-testid="stSidebar"] [data-testid="stSelectbox"] input'),
        ("/encoder?lang=zh", '[data-testid="stSidebar"] [data-testid="stMultiSelect"] input'),
    ):
        page = open_app(server, path, width=1366, height=768)
        page.locator(box).first.click()
        page.keyboard.type("zzzq")
        empty = page.get_by_text("No results", exact=True)
        empty.wait_for()
        size, content = empty.evaluate(
            "e => [getComputedStyle(e).fontSize, getComputedStyle(e, '::after').content]"
        )
        assert size == "0px" and "没有匹配的选项" in content, path
        page.keyboard.press("Escape")


def test_english_mode_keeps_streamlits_own_hints(server, open_app) -> None:
    page = open_app(server, "/weighted_sum?lang=en", width=1366, height=768)
    page.locator('[data-testid="stSidebar"] input[type="text"]').first.click()
    page.keyboard.type(" x")
    hint = page.locator('[data-testid="InputInstructions"]')
    hint.wait_for()
    assert "Press Enter" in hint.inner_text()
    assert hint.evaluate(_SHOWN)[0] != "0px"


# What a student sees of a page's first screen: the main area's text (every number the step
# states), the sidebar controls' text and values, and the address's query.
FIRST_SCREEN = """() => {
  const side = document.querySelector('.st-key-page_controls');
  const shown = (e) => e.offsetParent !== null;
  const value = (e) => (e.type === 'checkbox' ? e.checked : e.value);
  const values = [...side.querySelectorAll('input, textarea')].filter(shown)
    .map((e) => `${e.getAttribute('aria-label') || e.type}=${value(e)}`);
  const picked = [...side.querySelectorAll('[aria-checked="true"], [aria-pressed="true"]')]
    .filter(shown).map((e) => e.innerText);
  return {main: document.querySelector('[data-testid="stMain"]').innerText,
          controls: side.innerText, values, picked,
          query: [...new URLSearchParams(location.search)].sort().join('&')};
}"""


def _nudge(page) -> None:
    """Move the step's first sidebar slider one notch (as a student trying it would) and
    wait for the rerun; nothing on a step without one."""
    sliders = page.locator('.st-key-page_controls [data-testid="stSlider"] [role="slider"]')
    visible = [s for s in sliders.all() if s.is_visible()]
    if not visible:
        return
    thumb = visible[0]
    before = href(page)
    at_end = thumb.get_attribute("aria-valuenow") == thumb.get_attribute("aria-valuemax")
    thumb.focus()
    page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
    _rerun(page, before)


def _rerun(page, before: str) -> None:
    """Wait until the address is no longer ``before`` and the app's run has finished."""
    page.wait_for_function("a => location.href !== a", arg=before, timeout=30_000)
    page.wait_for_function(IDLE, timeout=60_000)


def test_walking_the_lecture_with_next_opens_every_page_as_a_fresh_visit(server, open_app):
    """A student walks every step of every page with Next on a 1366 x 768 laptop, moving a
    slider on each step: every page still opens on its own first screen, exactly as a fresh
    visit shows it (pages share control names: d_model, seed, n, temp…)."""
    pages = [p.url_path for p in lesson_pages()]
    fresh = {}
    for path in pages:
        tab = open_app(server, f"{path}?lang=en&step=1", *LAPTOP)  # as Next links it
        fresh[path] = tab.evaluate(FIRST_SCREEN)
        tab.close()
    page = open_app(server, f"{pages[0]}?lang=en", *LAPTOP)
    seen = []
    while True:
        path = urlparse(href(page)).path
        if path not in seen:
            seen.append(path)
            wait_idle(page)  # and its charts drawn
            assert page.evaluate(FIRST_SCREEN) == fresh[path], f"{path} opened as it was left"
        _nudge(page)
        forward = page.locator(".st-key-step_next a, .st-key-step_next button:enabled")
        if forward.count() == 0:
            break
        before = href(page)
        forward.first.click()
        _rerun(page, before)
    assert seen == pages, "Next walks every page, in the navigation's order"
