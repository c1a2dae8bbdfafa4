"""The grouped-query attention page in Chromium, as a student on a 1366 x 768 laptop in
Chinese: every step's chart and its sidebar controls on the first screen; the K/V heads, the
context length and the layer each redraw their chart; the PyTorch check opens on demand."""

from playwright.sync_api import Page

from tests.e2e.conftest import (
    Server,
    no_error_on_screen,
    press,
    sidebar_slider,
    wait_for_url,
    wait_idle,
)
from tests.e2e.layout import (
    CHART_PRINT,
    LAPTOP,
    assert_steps_on_a_laptop,
    measure,
    open_drawn,
    wait_drawn,
    wait_redrawn,
)


def _open(server: Server, open_app, query: str) -> Page:
    return open_drawn(server, open_app, f"/gqa?lang=zh&{query}")


def _changed(page: Page, before: str) -> None:
    wait_redrawn(page, before)
    wait_drawn(page)
    assert measure(page).main.box.inside(*LAPTOP)  # redrawn where the student looks


def test_every_step_shows_its_chart_and_sidebar_controls_in_chinese_on_a_laptop(
    server, open_app
) -> None:
    assert_steps_on_a_laptop(server, open_app, "gqa", 4)


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
    press(page, sidebar_slider(page, "上下文长度"), "ArrowLeft", "tokens=8191")
    _changed(page, before)
    page = _open(server, open_app, "step=3")
    before = page.evaluate(CHART_PRINT)
    press(page, sidebar_slider(page, "层"), "ArrowRight", "layer=14")
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
