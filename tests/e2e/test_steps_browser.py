"""The step bar in a real browser: the clicker walks from one page into the next and back."""

from urllib.parse import parse_qs, urlparse

from tests.e2e.conftest import href, wait_for_url, wait_idle
from tests.e2e.layout import LAPTOP
from ui.pages import lesson_pages


def _press(page, key: str, fragment: str) -> None:
    """Press ``key`` (on the page, no widget focused) until the address holds ``fragment``."""
    page.locator("h1").first.click()  # the page has the focus, as after a clicker press
    page.keyboard.press(key)
    wait_for_url(page, fragment)


def test_the_clicker_goes_on_to_the_next_page_and_back(server, open_app) -> None:
    page = open_app(server, "/weighted_sum?lang=zh&present=1&step=4")
    next_link = page.locator(".st-key-step_next a")
    assert next_link.inner_text().split()[0] == "掩码", "a slide names the next page"
    _press(page, "PageDown", "/masking")
    assert "step=1" in href(page) and "present=1" in href(page) and "lang=zh" in href(page)
    wait_idle(page)
    _press(page, "PageUp", "/weighted_sum")
    wait_for_url(page, "step=4")
    assert "present=1" in href(page)


def test_a_student_at_the_end_of_a_page_sees_where_next_leads(server, open_app) -> None:
    page = open_app(server, "/?lang=en&step=3", width=1366, height=768)
    link = page.locator(".st-key-step_next a")
    assert link.inner_text().strip().startswith("Next: Database lookup")
    box = link.bounding_box()
    assert box and box["y"] + box["height"] <= 768, "in view without scrolling"
    link.click()
    wait_for_url(page, "/lookup")
    assert "step=1" in href(page)


def _where(page) -> tuple[str, int, int]:
    """The page's path, the step on screen and the page's number of steps."""
    address = urlparse(href(page))
    step = int(parse_qs(address.query).get("step", ["1"])[0])
    return address.path, step, max(page.locator(".st-key-_step_choice button").count(), 1)


def test_the_clicker_runs_the_whole_lecture_on_a_laptop(server, open_app) -> None:
    """PageDown alone, from the first slide of the first page to the last slide of the last,
    on a 1366 x 768 laptop driving the projector: each press shows the next step (every step
    fits the screen, so no press is spent scrolling), every step of every page comes once,
    the pages in the navigation's order."""
    pages = [p.url_path for p in lesson_pages()]
    page = open_app(server, f"{pages[0]}?lang=zh&present=1", *LAPTOP)
    shown = [_where(page)]
    while shown[-1][0] != pages[-1] or shown[-1][1] < shown[-1][2]:
        assert len(shown) < 300, "the lecture never ends"
        before = href(page)
        page.locator("h1").first.click()  # the page has the focus, as after a clicker press
        page.keyboard.press("PageDown")
        page.wait_for_function("a => location.href !== a", arg=before, timeout=30_000)
        wait_idle(page)
        shown.append(_where(page))
    expected = [(path, k) for path, _, count in _pages_seen(shown) for k in range(1, count + 1)]
    assert [(path, step) for path, step, _ in shown] == expected
    assert [path for path, _, _ in _pages_seen(shown)] == pages


def _pages_seen(shown: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Each page once, in the order it first came, with its number of steps."""
    first = {}
    for path, step, count in shown:
        first.setdefault(path, (path, step, count))
    return list(first.values())
