"""The real-encoder page in Chromium: "it" → "animal" in L3H1 on screen, both languages,
presenter mode, and head search selecting a head."""

import re

import pytest
from playwright.sync_api import expect

from models import encoder_attention
from tests.e2e.conftest import href, shot, wait_for_url, wait_idle
from ui.views.encoder import LESSON


def _expected() -> str:
    tokens, attention = encoder_attention(LESSON)
    return f"{attention[3, 1, tokens.index('it'), tokens.index('animal')]:.3f}"


def _loaded(page) -> None:
    """Wait until the first run (model load and two forward passes) has drawn the metric."""
    metric = page.locator('[data-testid="stMetric"]').first
    expect(metric).to_contain_text("→", timeout=180_000)
    wait_idle(page)


def _clean(page) -> str:
    _loaded(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.locator("body").inner_text()
    assert "Traceback" not in body
    assert not re.search(r"\b(nan|inf)\b", body)
    return body


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_l3h1_it_to_animal_is_on_the_page(server, open_app, lang) -> None:
    page = open_app(server, f"/encoder?lang={lang}", width=1366, height=768)
    body = _clean(page)
    metric = page.locator('[data-testid="stMetric"]').first
    assert "L3H1: it → animal" in metric.inner_text()
    assert _expected() in metric.inner_text()
    assert "L5H11" in body  # head search lists the second head
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 4
    shot(page, f"encoder_{lang}")


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_presenter_steps_render_with_their_chart(server, open_app, step) -> None:
    page = open_app(server, f"/encoder?lang=zh&present=1&step={step}")
    _clean(page)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    visible = [charts.nth(i) for i in range(charts.count()) if charts.nth(i).is_visible()]
    assert len(visible) == 1
    box = visible[0].bounding_box()
    assert box and box["y"] < 1080 and box["x"] + min(box["width"], 400) <= 1920
    shot(page, f"encoder_zh_presenter_{step}")


def test_head_search_button_selects_a_head(server, open_app) -> None:
    page = open_app(server, "/encoder?lang=en")
    _loaded(page)
    page.get_by_role("button", name=re.compile(r"^2\. L5H11")).click()
    wait_for_url(page, "head=11")
    assert "layer=5" in href(page)
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("L5H11: it → animal")
