"""The shell in a real browser: what a student sees of Streamlit's own texts in Chinese."""

from tests.e2e.conftest import wait_idle

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


def test_english_mode_keeps_streamlits_own_hints(server, open_app) -> None:
    page = open_app(server, "/weighted_sum?lang=en", width=1366, height=768)
    page.locator('[data-testid="stSidebar"] input[type="text"]').first.click()
    page.keyboard.type(" x")
    hint = page.locator('[data-testid="InputInstructions"]')
    hint.wait_for()
    assert "Press Enter" in hint.inner_text()
    assert hint.evaluate(_SHOWN)[0] != "0px"
