"""The training page in Chromium: press Train and watch the run grow (a student: from the
sidebar, on any step), then scrub it."""

import re

import pytest

from tests.e2e.conftest import shot, wait_for_url, wait_idle

PROGRESS = {"en": re.compile(r"step (\d+) of (\d+)"), "zh": re.compile(r"第 (\d+) 步，共 (\d+) 步")}
TRAIN = {"en": "Train", "zh": "训练"}
RECORD = """() => {
  window.__progress = [];
  const note = () => {
    const bar = document.querySelector('[data-testid="stProgress"]');
    const text = bar ? bar.innerText : "";
    if (text && window.__progress.at(-1) !== text) window.__progress.push(text);
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true,
                                                     characterData: true});
}"""


@pytest.mark.parametrize(
    "lang,present,step", [("en", "0", "1"), ("zh", "1", "1"), ("en", "0", "3")]
)
def test_pressing_train_grows_the_curve_live(server, open_app, lang, present, step) -> None:
    page = open_app(server, f"/training?lang={lang}&present={present}&step={step}")
    main = page.locator('[data-testid="stMain"]')
    page.evaluate(RECORD)  # note every progress text the browser shows, however briefly
    page.get_by_role("button", name=TRAIN[lang], exact=True).click()
    page.wait_for_function("() => location.href.includes('run=1')", timeout=180_000)
    wait_for_url(page, "run=1")
    shown = page.evaluate("() => window.__progress")
    seen = [int(m.group(1)) for text in shown if (m := PROGRESS[lang].search(text))]
    assert len(seen) >= 8, f"the class saw only {seen}"
    assert seen == sorted(seen) and seen[-1] > seen[0]
    wait_idle(page)  # the run has ended: the live chart gave way to the step's own
    assert page.locator('[data-testid="stVegaLiteChart"]:visible').count() == 1
    assert f"step={step}" in page.evaluate("location.href")  # trained where the student was
    body = main.inner_text()
    if step == "1":  # the summary of the run
        assert ("95 %" in body) if lang == "en" else ("95%" in body)
    assert not re.search(r"\b(nan|inf)\b", body)
    shot(page, f"training_trained_{lang}_step{step}")


def test_a_finished_link_opens_trained_and_the_slider_scrubs(server, open_app) -> None:
    page = open_app(server, "/training?lang=en&run=1&step=5", width=1366, height=768)
    assert page.locator('[data-testid="stException"]').count() == 0
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Snapshot at step")
    slider.get_by_role("slider").focus()
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    wait_for_url(page, "at=270")
    wait_idle(page)
    assert "step 270" in page.locator('[data-testid="stMain"]').inner_text()
    shot(page, "training_scrub_en")
