"""The real-encoder page in Chromium: "it" → "animal" in L3H1 on screen and head search
selecting a head, both languages; presenter mode; a Chinese sentence typed on the Chinese
page's multilingual model finds 它 → 动物; attention rollout's residual share moved by a
student redraws its chart."""

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from models import E5, encoder_attention
from tests.e2e.conftest import href, press, shot, wait_for_url, wait_idle
from tests.e2e.layout import CHART_PRINT, measure, wait_redrawn
from ui.i18n import Translator
from ui.views.encoder import LESSON


def _expected() -> str:
    tokens, attention = encoder_attention(LESSON)
    return f"{attention[3, 1, tokens.index('it'), tokens.index('animal')]:.3f}"


def _loaded(page) -> None:
    """Wait until the run (the first one loads the model) has drawn the step's chart."""
    expect(page.locator('[data-testid="stVegaLiteChart"]:visible').first).to_be_visible(
        timeout=180_000
    )
    wait_idle(page)


def _clean(page) -> str:
    _loaded(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.locator("body").inner_text()
    assert "Traceback" not in body
    assert not re.search(r"\b(nan|inf)\b", body)
    return body


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_l3h1_it_to_animal_is_on_the_page_and_head_search_selects_a_head(
    server, open_app, lang
) -> None:
    page = open_app(server, f"/encoder?lang={lang}&model=minilm", width=1366, height=768)
    _clean(page)
    metric = page.locator('[data-testid="stMetric"]').first
    assert "L3H1: it → animal" in metric.inner_text()
    assert _expected() in metric.inner_text()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1, "one step on screen"
    shot(page, f"encoder_{lang}")
    page.locator(".st-key-_step_choice button").nth(2).click()  # step 3: head search
    wait_for_url(page, "step=3")
    wait_idle(page)
    assert "L5H11" in page.locator("body").inner_text()  # head search lists the second head
    shot(page, f"encoder_{lang}_search")
    page.get_by_role("button", name=re.compile(r"^2\. L5H11")).click()
    wait_for_url(page, "head=11")
    assert "layer=5" in href(page)
    sidebar = page.locator('[data-testid="stSidebar"]')  # the head shown in the settings
    expect(sidebar.locator(".st-key-_choice_head input")).to_have_value("H11")
    expect(sidebar.locator(".st-key-_choice_layer input")).to_have_value("L5")
    page.locator(".st-key-_step_choice button").nth(0).click()  # back to step 1
    wait_for_url(page, "step=1")
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("L5H11: it → animal")


def test_presenter_steps_render_with_their_chart(server, open_app) -> None:
    """Each of the six steps (the first one deep-linked, then Next) shows one chart, on the
    slide, without errors."""
    page = open_app(server, "/encoder?lang=zh&present=1&step=1")
    for step in [1, 2, 3, 4, 5, 6]:
        if step > 1:
            page.locator(".st-key-step_next button").click()
            wait_for_url(page, f"step={step}")
        _clean(page)
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        visible = [charts.nth(i) for i in range(charts.count()) if charts.nth(i).is_visible()]
        assert len(visible) == 1, f"step {step}"
        box = visible[0].bounding_box()
        assert box and box["y"] < 1080 and box["x"] + min(box["width"], 400) <= 1920, step
        shot(page, f"encoder_zh_presenter_{step}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_changes_the_head_in_the_sidebar_beside_its_chart(server, open_app, lang) -> None:
    """At 1366 x 768 the settings are in the sidebar and the head's chart in view: picking
    another head there redraws the chart and its readout without scrolling."""
    page = open_app(server, f"/encoder?lang={lang}&model=minilm", width=1366, height=768)
    _clean(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    head = sidebar.locator(".st-key-_choice_head")
    assert head.bounding_box()["y"] + head.bounding_box()["height"] <= 768
    chart = page.locator('[data-testid="stVegaLiteChart"]:visible').first.bounding_box()
    assert chart["y"] + chart["height"] <= 768
    head.locator("input").click()
    page.get_by_role("option", name="H11", exact=True).click()
    wait_for_url(page, "head=11")
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("L3H11: it → animal")
    shot(page, f"encoder_{lang}_sidebar_head")


def test_switching_the_model_renames_the_step_bar(server, open_app) -> None:
    """The model switch sits in the settings, which rerun without the title and the step
    bar; picking the other model reruns the whole page all the same: the step bar names the
    new model's head count, and the readout is the new model's."""
    page = open_app(server, "/encoder?lang=en", width=1366, height=768)
    _clean(page)
    bar = page.locator(".st-key-_step_choice")
    expect(bar).to_contain_text("72 heads")  # all-MiniLM-L6-v2: 6 layers × 12 heads
    switch = page.locator('[data-testid="stSidebar"] .st-key-_choice_model')
    switch.locator("button").filter(has_text="e5").click()
    wait_for_url(page, "model=e5")
    expect(bar).to_contain_text("144 heads", timeout=180_000)  # e5-small: 12 × 12
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("▁it → ▁animal")
    _clean(page)


TYPED = "这只动物没有跳过小河，它太累了。"  # not the page's default sentence


def _best(text: str, query: str, target: str) -> tuple[str, str]:
    """The head that puts most of ``query``'s weight on ``target`` and that weight, from the
    model package (what head search must find)."""
    tokens, attention = encoder_attention(text, model=E5)
    pieces = [tok.removeprefix("▁") for tok in tokens]
    i, j = pieces.index(query), pieces.index(target)
    layer, head = divmod(int(attention[:, :, i, j].argmax()), attention.shape[1])
    return f"L{layer}H{head}", f"{attention[layer, head, i, j]:.3f}"


def test_a_student_types_a_chinese_sentence_and_finds_ta_to_dongwu(server, open_app) -> None:
    """The Chinese page opens on multilingual-e5-small; a sentence typed into the sidebar is
    read by it, and the page's head (the one head search ranks first) links 它 to 动物."""
    page = open_app(server, "/encoder?lang=zh", width=1366, height=768)
    _clean(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("e5 · 多语言")).to_be_visible()
    box = sidebar.locator(".st-key-text input")
    box.fill(TYPED)
    box.press("Enter")
    wait_for_url(page, "text=")
    head, weight = _best(TYPED, "它", "动物")
    metric = page.locator('[data-testid="stMetric"]').first
    expect(metric).to_contain_text(f"{head}: 它 → 动物", timeout=60_000)
    expect(metric).to_contain_text(weight)
    body = _clean(page)
    assert "读不懂" not in body and "cannot read" not in body
    shot(page, "encoder_zh_typed")


CAT = "猫坐在垫子上，因为它很累。"  # the model reads 因为它 as one piece
ZH_SHOWN = Translator("zh")("encoder.merged_shown")  # the piece's row stands in for 它


def test_a_student_s_own_sentence_asks_for_the_target_then_finds_the_head(server, open_app) -> None:
    """A typed Chinese sentence whose 它 sits inside the piece 因为它: the page says the piece
    stands in for 它, shows no readout and asks for the target beside its box; picking 猫
    there shows the head that links 因为它 to 猫 most (from the model package)."""
    page = open_app(server, "/encoder?lang=zh", width=1366, height=768)
    _clean(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    box = sidebar.locator(".st-key-text input")
    box.fill(CAT)
    box.press("Enter")
    wait_for_url(page, "text=")
    expect(page.get_by_text(ZH_SHOWN).first).to_be_visible(timeout=60_000)
    body = _clean(page)
    assert page.locator('[data-testid="stMetric"]').count() == 0, "no readout before a target"
    assert "请选一个目标 token" in sidebar.inner_text()  # beside the target box
    assert "请选一个目标 token" in body
    shot(page, "encoder_zh_typed_asks")
    sidebar.locator(".st-key-_choice_target input").click()
    page.get_by_role("option", name="猫", exact=True).click()
    wait_for_url(page, "target=")
    head, weight = _best(CAT, "因为它", "猫")
    metric = page.locator('[data-testid="stMetric"]').first
    expect(metric).to_contain_text(f"{head}: 因为它 → 猫", timeout=60_000)
    expect(metric).to_contain_text(weight)
    _clean(page)
    shot(page, "encoder_zh_typed_picked")


def test_a_slide_of_a_typed_sentence_asks_for_the_target_in_its_notes(server, open_app) -> None:
    """Presenter mode on the same sentence: the slide's notes ask for the target and state
    no finding; with the target in the link, the readout is the head found."""
    page = open_app(server, f"/encoder?lang=zh&present=1&text={quote(CAT)}")
    body = _clean(page)
    assert page.locator('[data-testid="stMetric"]').count() == 0
    assert "还没有目标 token" in body and ZH_SHOWN in body
    shot(page, "encoder_zh_typed_presenter_asks")
    tokens, _ = encoder_attention(CAT, model=E5)
    page = open_app(
        server, f"/encoder?lang=zh&present=1&text={quote(CAT)}&target={tokens.index('猫')}"
    )
    _clean(page)
    head, weight = _best(CAT, "因为它", "猫")
    metric = page.locator('[data-testid="stMetric"]').first
    expect(metric).to_contain_text(f"{head}: 因为它 → 猫")
    expect(metric).to_contain_text(weight)
    shot(page, "encoder_zh_typed_presenter_picked")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_moves_rollout_s_residual_share_and_its_row_is_redrawn(
    server, open_app, lang
) -> None:
    """Step 6 at 1366 x 768: the residual share's slider stands above the chart, both on the
    first screen; a step of the slider puts it in the link and redraws the chart."""
    page = open_app(server, f"/encoder?lang={lang}&step=6", width=1366, height=768)
    _clean(page)
    assert measure(page).problems() == []
    label = Translator(lang)("encoder.residual")
    main = page.locator('[data-testid="stMain"] [data-testid="stSlider"]').filter(has_text=label)
    slider = main.get_by_role("slider").first
    chart = page.locator('[data-testid="stVegaLiteChart"]:visible').first.bounding_box()
    assert slider.bounding_box()["y"] < chart["y"], "the slider above the chart it moves"
    shot(page, f"encoder_{lang}_rollout_laptop")
    before = page.evaluate(CHART_PRINT)
    press(page, slider, "ArrowRight", "residual=0.6")
    wait_redrawn(page, before)
    _clean(page)
    shot(page, f"encoder_{lang}_rollout_moved_laptop")
