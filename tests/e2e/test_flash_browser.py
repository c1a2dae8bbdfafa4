"""The FlashAttention page in Chromium at 1366 x 768 in Chinese: each step's chart and its
sidebar controls on the first screen; stepping the tile slider redraws the chart; the NaN of
a softmax without the max is a word on screen, never a raw nan."""

import pytest

from core.flash import traffic_curves
from tests.e2e.conftest import no_error_on_screen, press, shot, wait_for_url, wait_idle
from tests.e2e.layout import CHART_PRINT, LAPTOP, measure, open_drawn, wait_drawn, wait_redrawn
from ui.i18n import Translator

ZH = Translator("zh")


@pytest.mark.parametrize("step", [1, 2, 3])
def test_each_step_shows_its_chart_and_sidebar_controls_on_the_first_screen(
    server, open_app, step
) -> None:
    page = open_drawn(server, open_app, f"/flash?lang=zh&step={step}")
    no_error_on_screen(page)
    layout = measure(page)
    assert layout.main is not None and layout.main.kind == "chart"
    assert not layout.problems(), layout.problems()
    assert {c.area for c in layout.controls} == {"sidebar"}  # students: all in the sidebar
    shot(page, f"flash_zh_step{step}")


def test_stepping_through_the_tiles_redraws_the_chart_in_view(server, open_app) -> None:
    page = open_drawn(server, open_app, "/flash?lang=zh&step=1")
    before = page.evaluate(CHART_PRINT)
    thumb = page.locator('[data-testid="stSidebar"] .st-key-tile').get_by_role("slider")
    press(page, thumb, "ArrowRight", "tile=2")
    wait_redrawn(page, before)
    wait_idle(page)
    wait_drawn(page)
    main = measure(page).main
    assert main is not None and main.box.inside(*LAPTOP)
    assert "第 2 块" in page.locator("body").inner_text()
    no_error_on_screen(page)


def test_large_logits_show_nan_as_a_word_and_the_traffic_ratios(server, open_app) -> None:
    page = open_drawn(server, open_app, "/flash?lang=zh&step=2&factor=30")
    no_error_on_screen(page)  # no raw nan anywhere
    assert ZH("flash.nan") in page.locator("body").inner_text()
    page.locator(".st-key-_step_choice button").nth(2).click()
    wait_for_url(page, "step=3")
    wait_drawn(page)
    body = page.locator("body").inner_text()
    for r in traffic_curves([1024, 4096, 16384], 64, 100_000).ratio:
        assert f"{r:.1f}×" in body
    shot(page, "flash_zh_traffic")
