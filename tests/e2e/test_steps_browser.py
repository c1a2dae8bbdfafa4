"""The step bar in a real browser: the clicker walks from one page into the next and back."""

from tests.e2e.conftest import href, wait_for_url, wait_idle


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
