"""The real-decoder page in Chromium: the next-token chart in both languages, tokens that
appear one by one after "Generate", and presenter mode."""

import re

import pytest

from tests.e2e.conftest import IDLE, shot
from ui.i18n import Translator

WATCH_STREAM = """() => {
    window.__partial = [];
    new MutationObserver(() => {
        const text = document.body.innerText;
        const i = text.indexOf("▌");
        if (i >= 0) {
            const seen = text.slice(Math.max(0, i - 200), i);
            if (!window.__partial.includes(seen)) window.__partial.push(seen);
        }
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
LOAD_TIMEOUT = 300_000  # ms: the first request loads the model (seconds on a busy machine)


def ready(page) -> None:
    """Wait until the page has drawn its charts and no script run is in progress."""
    page.wait_for_selector("h1", timeout=LOAD_TIMEOUT)
    page.wait_for_selector('[data-testid="stVegaLiteChart"]:visible', timeout=LOAD_TIMEOUT)
    page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT)


def open_decoder(shared_context, server, query: str, width: int = 1366, height: int = 900):
    page = shared_context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{server.url}/decoder?{query}", timeout=LOAD_TIMEOUT)
    ready(page)
    return page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_next_token_chart_and_streamed_generation(shared_context, server, lang) -> None:
    t = Translator(lang)
    page = open_decoder(shared_context, server, f"lang={lang}&n_gen=6&step=4")
    try:
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator("h1").first.inner_text().strip() == t("decoder.title")
        button = page.get_by_role("button", name=t("decoder.generate"), exact=True)
        button.wait_for(timeout=LOAD_TIMEOUT)
        page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT)
        button.scroll_into_view_if_needed()
        assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1  # next token only
        page.evaluate(WATCH_STREAM)
        button.click()
        mode, how = t("decoder.mode_cache"), t("decoder.greedy")
        notice = t("decoder.notice_gen", n=6, mode=mode, how=how, ms="", per="")
        done = re.split("[:：]", notice)[0]  # the text before the timings (zh: full-width colon)
        page.get_by_text(done).wait_for(timeout=LOAD_TIMEOUT)
        body = page.locator("body").inner_text()
        assert "▌" not in body and "Traceback" not in body
        partial = page.evaluate("window.__partial")  # text seen while tokens were arriving
        assert len(partial) >= 2  # more than one intermediate state: token by token
        shot(page, f"decoder_generated_{lang}")
    finally:
        page.close()


def test_presenter_mode_renders_a_step_with_its_chart(shared_context, server) -> None:
    page = open_decoder(shared_context, server, "lang=zh&present=1&step=3", 1920, 1080)
    try:
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.get_by_text(Translator("zh")("decoder.s3_title"), exact=True).is_visible()
        chart = page.locator('[data-testid="stVegaLiteChart"]:visible').first
        box = chart.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 1080  # on the slide
        shot(page, "decoder_zh_presenter_sink")
    finally:
        page.close()


ANATOMY = """() => {
  const top = (sel) => { const e = [...document.querySelectorAll(sel)]
    .find((x) => x.getBoundingClientRect().height > 0);
    return e ? e.getBoundingClientRect().top : null; };
  const main = '[data-testid="stMain"] ';
  return {title: top(main + 'h1'), steps: top(main + '.st-key-_step_choice'),
          chart: top(main + '[data-testid="stVegaLiteChart"]'), heading: top(main + 'h3')};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_title_step_bar_chart_then_text_like_every_other_page(shared_context, server, lang) -> None:
    """Issue 29 item 6: /decoder had its step bar above the intro; now, as on every page, the
    title, the step bar, the chart, then the step's heading and text."""
    page = open_decoder(shared_context, server, f"lang={lang}", 1366, 768)
    try:
        y = page.evaluate(ANATOMY)
        assert y["title"] < y["steps"] < y["chart"] < y["heading"], y
        intro = Translator(lang)("decoder.intro").split("{")[0].strip()
        assert page.get_by_text(intro).first.bounding_box()["y"] > y["chart"]
        shot(page, f"decoder_{lang}_anatomy")
    finally:
        page.close()


def test_two_students_generating_at_once_share_the_servers_steps(shared_context, server) -> None:
    """Two students press Generate together: the server decodes their generations in one
    batch, and the notice under each says so (or, for one that ran alone, that too)."""
    t = Translator("en")
    pages = [open_decoder(shared_context, server, "lang=en&n_gen=20&step=4") for _ in range(2)]
    try:
        buttons = [p.get_by_role("button", name=t("decoder.generate"), exact=True) for p in pages]
        for b in buttons:
            b.scroll_into_view_if_needed()
        for b in buttons:  # one right after the other: the second joins the running batch
            b.click()
        shared = t("decoder.notice_batch", most=2)
        alone = t("decoder.notice_alone")
        seen = []
        for p in pages:
            p.get_by_text(re.compile("20 tokens with KV cache")).wait_for(timeout=LOAD_TIMEOUT)
            seen.append(p.locator('[data-testid="stMain"]').inner_text())
        assert any(shared in body for body in seen), seen
        assert all(shared in body or alone in body for body in seen)
        shot(pages[0], "decoder_generated_together")
    finally:
        for p in pages:
            p.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_measuring_batching_on_the_server_draws_the_bars(shared_context, server, lang) -> None:
    t = Translator(lang)
    page = open_decoder(shared_context, server, f"lang={lang}&step=6")
    try:
        assert page.get_by_text(t("decoder.cost_hint")).is_visible()
        page.get_by_role("button", name=t("decoder.measure"), exact=True).click()
        first = t("decoder.notice_weights", params="", mb="", b=16, share="").split("{")[0][:12]
        page.get_by_text(re.compile(re.escape(first))).first.wait_for(timeout=LOAD_TIMEOUT)
        page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT)
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "Traceback" not in body and not re.search(r"\b(nan|inf)\b", body)
        assert page.locator('[data-testid="stVegaLiteChart"]:visible').count() == 1
        shot(page, f"decoder_batching_{lang}")
    finally:
        page.close()
