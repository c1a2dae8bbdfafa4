"""The grouped-query attention page in Chromium, as a student on a 1366 x 768 laptop in
Chinese: every step's chart and its sidebar controls on the first screen; the K/V heads, the
context length and the layer each redraw their chart; the PyTorch check opens on demand."""

from playwright.sync_api import Page

from tests.e2e.conftest import Server, no_error_on_screen, shot, wait_for_url, wait_idle
from tests.e2e.layout import CHART_PRINT, LAPTOP, measure, wait_drawn


def _open(server: Server, open_app, query: str) -> Page:
    page = open_app(server, f"/gqa?lang=zh&{query}", *LAPTOP)
    wait_drawn(page)
    return page


def _changed(page: Page, before: str) -> None:
    page.wait_for_function(f"b => ({CHART_PRINT})() !== b", arg=before, timeout=30_000)
    wait_drawn(page)
    assert measure(page).main.box.inside(*LAPTOP)  # redrawn where the student looks


def _press(page: Page, label: str, key: str, fragment: str) -> None:
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text=label)
    box.get_by_role("slider").first.focus()
    page.keyboard.press(key)
    wait_for_url(page, fragment)


def test_every_step_shows_its_chart_and_sidebar_controls_in_chinese_on_a_laptop(
    server, open_app
) -> None:
    for step in range(1, 5):
        page = _open(server, open_app, f"step={step}")
        layout = measure(page)
        assert layout.problems() == [], (step, layout.problems())
        assert any(c.area == "sidebar" for c in layout.controls), step  # beside the chart
        no_error_on_screen(page)
        shot(page, f"gqa_zh_step{step}_laptop")


def test_choosing_one_kv_head_redraws_the_sharing(server, open_app) -> None:
    page = _open(server, open_app, "step=1")
    before = page.evaluate(CHART_PRINT)
    choices = page.locator('[data-testid="stSidebar"] [data-testid="stButtonGroup"] button')
    choices.filter(has_text="MQA").click()
    wait_for_url(page, "kv=1")
    _changed(page, before)
    assert "多查询注意力" in page.locator('[data-testid="stMain"]').inner_text()
    no_error_on_screen(page)


def test_the_context_slider_and_the_layer_slider_redraw_their_charts(server, open_app) -> None:
    page = _open(server, open_app, "step=2")
    before = page.evaluate(CHART_PRINT)
    _press(page, "上下文长度", "ArrowLeft", "tokens=8191")
    _changed(page, before)
    page = _open(server, open_app, "step=3")
    before = page.evaluate(CHART_PRINT)
    _press(page, "层", "ArrowRight", "layer=14")
    _changed(page, before)
    no_error_on_screen(page)


def test_the_pytorch_check_opens_on_demand(server, open_app) -> None:
    page = _open(server, open_app, "step=3")
    main = page.locator('[data-testid="stMain"]')
    assert "enable_gqa=True" not in main.inner_text()
    main.get_by_text("和 PyTorch 对照").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('enable_gqa')",
        timeout=60_000,
    )
    wait_idle(page)
    assert "PyTorch" in main.inner_text()
    no_error_on_screen(page)
