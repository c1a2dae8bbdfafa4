"""The rotary-positions page in Chromium, as a student on a 1366 x 768 laptop in Chinese:
every step's chart and its sidebar controls on the first screen, and a slider that turns the
pair redraws the chart while a shift of both positions keeps the score."""

import re

from playwright.sync_api import Page

from tests.e2e.conftest import Server, href, no_error_on_screen, press, sidebar_slider, wait_idle
from tests.e2e.layout import (
    CHART_PRINT,
    LAPTOP,
    assert_steps_on_a_laptop,
    measure,
    open_drawn,
    wait_drawn,
    wait_redrawn,
)

# "(m, n) = (5, 2) 时分数为 −2.274；(105, 102) 时为 −2.274": the scores before and after the shift
SCORES = re.compile(r"\) 时(?:分数)?为 (−?[\d.]+)")


def _open(server: Server, open_app, query: str) -> Page:
    return open_drawn(server, open_app, f"/rope?lang=zh&{query}")


def _press(page: Page, label: str, key: str, fragment: str) -> None:
    press(page, sidebar_slider(page, label), key, fragment)
    wait_drawn(page)


def _notice(page: Page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_every_step_shows_its_chart_and_sidebar_controls_in_chinese_on_a_laptop(
    server, open_app
) -> None:
    assert_steps_on_a_laptop(server, open_app, "rope", 4)


def test_turning_the_pair_redraws_the_chart_and_a_shift_keeps_the_score(server, open_app) -> None:
    page = _open(server, open_app, "step=1")
    before = page.evaluate(CHART_PRINT)
    _press(page, "第 i 对", "ArrowRight", "pair=1")
    wait_redrawn(page, before)
    assert measure(page).main.box.inside(*LAPTOP)  # redrawn where the student looks
    scores = SCORES.findall(_notice(page))
    _press(page, "两者同时后移", "ArrowRight", "shift=101")
    assert "shift=101" in href(page)
    shifted = SCORES.findall(_notice(page))
    assert len(scores) == 2 and scores == shifted and scores[0] == scores[1]
    no_error_on_screen(page)


def test_the_real_model_step_follows_its_layer_slider(server, open_app) -> None:
    page = _open(server, open_app, "step=4")
    before = page.evaluate(CHART_PRINT)
    _press(page, "查询头", "ArrowRight", "head=1")
    wait_redrawn(page, before)
    wait_idle(page)
    assert "True" in _notice(page)  # core.llama.apply_rope is core.apply_rope
    no_error_on_screen(page)
