"""The sliding-window page in Chromium at 1366 x 768 in Chinese: the mask and its sidebar
controls on the first screen, a slider that redraws it, and Run on SmolLM2 filling the
perplexity chart in view."""

import re

import pytest

from tests.e2e.conftest import IDLE, no_error_on_screen, press, shot, wait_idle
from tests.e2e.layout import CHART_PRINT, LAPTOP, measure, open_drawn, wait_drawn, wait_redrawn
from ui.i18n import Translator

ZH = Translator("zh")
RUN_TIMEOUT = 900_000  # ms: the model loads, then three forward passes on a busy machine


@pytest.mark.parametrize("step", [1, 2, 3])
def test_each_step_shows_its_chart_and_sidebar_controls_on_the_first_screen(
    server, open_app, step
) -> None:
    page = open_app(server, f"/sinks?lang=zh&step={step}", *LAPTOP)
    page.wait_for_function(IDLE, timeout=RUN_TIMEOUT)  # steps 2, 3: the model loads
    wait_drawn(page)
    no_error_on_screen(page)
    layout = measure(page)
    assert layout.main is not None and layout.main.kind == "chart"
    assert not layout.problems(), layout.problems()
    assert {c.area for c in layout.controls} == {"sidebar"}


def test_the_window_slider_redraws_the_mask_in_view(server, open_app) -> None:
    page = open_drawn(server, open_app, "/sinks?lang=zh&step=1")
    before = page.evaluate(CHART_PRINT)
    thumb = page.locator('[data-testid="stSidebar"] .st-key-window').get_by_role("slider")
    press(page, thumb, "ArrowRight", "window=5")
    wait_redrawn(page, before)
    wait_idle(page)
    wait_drawn(page)
    assert measure(page).main.box.inside(*LAPTOP)
    assert "W = 5" in page.locator("body").inner_text()


def test_run_fills_the_perplexity_chart_in_view(server, open_app) -> None:
    page = open_app(server, "/sinks?lang=zh&step=2", *LAPTOP)
    page.wait_for_function(IDLE, timeout=RUN_TIMEOUT)
    wait_drawn(page)
    before = page.evaluate(CHART_PRINT)
    page.get_by_role("button", name=ZH("sinks.run"), exact=True).click()
    wait_redrawn(page, before, RUN_TIMEOUT)
    page.wait_for_function(IDLE, timeout=RUN_TIMEOUT)
    wait_drawn(page)
    no_error_on_screen(page)
    body = page.locator("body").inner_text()
    assert re.search(r"完整注意力：困惑度 \d+\.\d", body)
    layout = measure(page)
    assert not layout.problems(), layout.problems()
    shot(page, "sinks_zh_run")
