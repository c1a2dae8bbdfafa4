"""The app as a person sees it in Chromium: deep links, the language switch, presenter type,
the clicker and downloads. Every page in both languages, plain and presenter, is opened by
tests/e2e/test_presenter.py (which checks each for errors on screen)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import href, no_error_on_screen, shot, wait_for_url, wait_idle
from ui.i18n import Translator
from ui.pages import SECTIONS, available_pages

PAGES = available_pages()


def test_cold_deep_link_restores_view_and_app_navigation(fresh_server, open_app) -> None:
    target = next((p for p in PAGES if p.id != "home"), PAGES[0])
    page = open_app(fresh_server, f"{target.url_path}?lang=zh&present=1")
    nav = page.locator('[data-testid="stSidebar"] .lab-nav-link > span:last-child')
    by_section = sorted(PAGES, key=lambda p: SECTIONS.index(p.section))  # /join under "start"
    expected = [Translator("zh")(f"nav.{p.id}") for p in by_section]
    assert [nav.nth(i).inner_text().strip() for i in range(nav.count())] == expected
    assert (
        page.locator('[data-testid="stSidebarNav"]').count() == 0
        or not page.locator('[data-testid="stSidebarNav"]').is_visible()
    )
    assert "present=1" in href(page) and "lang=zh" in href(page)


def test_sidebar_links_navigate_inside_the_app_carrying_language_and_presenter(
    server, open_app
) -> None:
    page = open_app(server, "/softmax?lang=zh&present=1&temp=2.0")
    page.evaluate("window.__sameDocument = true")  # gone if the browser loaded a new page
    for target in ("qkv", "home"):
        info = next(p for p in PAGES if p.id == target)
        link = page.locator(f'[data-testid="stSidebar"] a.lab-nav-link[href^="{info.url_path}?"]')
        link.dispatch_event("click")  # the sidebar is folded away on the projector
        page.wait_for_function("p => location.pathname === p", arg=info.url_path)
        wait_idle(page)
        assert page.locator("h1").first.inner_text().strip() == Translator("zh")(f"{target}.title")
        assert page.evaluate("window.__sameDocument") is True, "navigated without a reload"
        assert "lang=zh" in href(page) and "present=1" in href(page)
        assert "temp=" not in href(page), "the previous page's settings stay behind"
    page.go_back()
    page.wait_for_function("() => location.pathname === '/qkv'")
    expect(page.locator("h1").first).to_have_text(Translator("zh")("qkv.title"), timeout=30_000)
    wait_idle(page)


def _slider(page, label: str) -> str:
    return page.locator(f'input[type="range"][aria-label="{label}"]').input_value()


def test_cold_deep_link_restores_controls(fresh_server, open_app) -> None:
    page = open_app(fresh_server, "/?lang=zh&n=12&d_model=16&distance=120&step=3")
    t = Translator("zh")
    assert _slider(page, t("home.distance")) == "120", "step 1's slider, hidden, is restored"
    assert _slider(page, t("home.n")) == "12"
    assert _slider(page, "d_model") == "16"
    assert "(12, 4)" in page.locator("body").inner_text(), "shapes follow the restored n"
    assert page.locator("h1").first.inner_text().strip() == "注意力实验室"
    page.locator(".st-key-_step_choice button").first.click()
    wait_for_url(page, "step=1")
    assert "distance=120" in href(page) and "n=12" in href(page)
    assert page.locator(f'input[type="range"][aria-label="{t("home.distance")}"]').is_visible()


def test_cold_deep_link_restores_a_concept_page(fresh_server, open_app) -> None:
    page = open_app(fresh_server, "/qkv?lang=zh&embedding=stable&d_k=8&text=我爱注意力")
    assert _slider(page, "d_k") == "8"
    t = Translator("zh")  # the embedding choice is folded in the sidebar with the seed
    page.locator('[data-testid="stSidebar"] summary', has_text=t("sentence.more")).click()
    stable = page.get_by_role("radio", name=t("sentence.mode_stable"))
    assert stable.get_attribute("aria-checked") == "true"
    assert page.locator('input[type="text"]').first.input_value() == "我爱注意力"
    no_error_on_screen(page)


def test_a_lesson_example_button_writes_the_url(server, open_app) -> None:
    page = open_app(server, "/qkv?lang=en&d_k=8&seed=7")
    # for students the lesson button is an icon in the sidebar
    page.locator('[data-testid="stSidebar"] .st-key-lesson_example button').first.click()
    page.wait_for_function("() => !location.href.includes('seed=7')", timeout=30_000)
    wait_idle(page)
    assert _slider(page, "d_k") == "4"
    assert "d_k=" not in href(page), "defaults are dropped from the URL"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_text_typed_into_a_page_warns_once(server, open_app, lang) -> None:
    """A page's content reruns alone (a fragment): bad logits typed into its box still get
    their translated warning, one however often it reruns, gone after good input."""
    t = Translator(lang)
    page = open_app(server, f"/softmax?lang={lang}")
    box = page.locator(f'input[aria-label="{t("softmax.logits_a")}"]')
    warnings = page.locator('[data-testid="stAlertContentWarning"]')
    fallback = t("softmax.fallback", default="2.0, 1.0, 0.1").split("2.0")[0].strip()
    for bad in ("abc", "nan", "1,,2"):
        box.fill(bad)
        box.press("Enter")
        wait_idle(page)
        assert warnings.count() == 1, bad
        assert fallback in warnings.first.inner_text()
        no_error_on_screen(page)
    box.fill("3, 1")
    box.press("Enter")
    wait_for_url(page, "logits_a=3")
    wait_idle(page)
    assert warnings.count() == 0


def test_language_switch_in_the_sidebar(server, open_app) -> None:
    page = open_app(server, "/?lang=en")
    assert page.locator("h1").first.inner_text().strip() == "Attention Lab"
    page.get_by_role("radio", name="简体中文").click()
    wait_for_url(page, "lang=zh")
    assert page.locator("h1").first.inner_text().strip() == "注意力实验室"
    assert "lang=zh" in href(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_laptop_screen_gives_the_top_of_the_page_to_the_content(server, open_app, lang) -> None:
    """At 1366 x 768 less room above the title and a smaller title than at 1920 x 1080, so
    a student's first chart comes closer; the title stays clear of the header above it."""
    tops, sizes = {}, {}
    for width, height in ((1920, 1080), (1366, 768)):
        page = open_app(server, f"/kv_cache?lang={lang}", width=width, height=height)
        title = page.locator('[data-testid="stMain"] h1').first.bounding_box()
        header = page.locator('header[data-testid="stHeader"]').bounding_box()
        tops[width] = title["y"]
        sizes[width] = title["height"]
        assert title["y"] >= header["y"] + header["height"]
        shot(page, f"laptop_top_kv_cache_{lang}_{width}")
    assert tops[1366] <= tops[1920] - 40
    assert sizes[1366] < sizes[1920]


def test_presenter_mode_type_is_large_and_clicker_keys_step_through_the_home_page(
    server, open_app
) -> None:
    page = open_app(server, "/?lang=en&present=1")
    size = page.evaluate(
        """() => parseFloat(getComputedStyle(
            document.querySelector('[data-testid="stMarkdownContainer"] p')).fontSize)"""
    )
    assert size >= 22
    shot(page, "home_en_presenter_1920")
    assert "step=1" in href(page)
    for key, step in [
        ("PageDown", 2),
        ("PageDown", 3),
        ("PageUp", 2),
        ("ArrowRight", 3),
        ("ArrowLeft", 2),
    ]:
        page.keyboard.press(key)
        wait_for_url(page, f"step={step}")
    assert page.locator(".katex").count() > 0, "step 2 shows the formula"
    shot(page, "home_en_presenter_step2")
    normal = open_app(server, "/?lang=en")
    normal_size = normal.evaluate(
        """() => parseFloat(getComputedStyle(
            document.querySelector('[data-testid="stMarkdownContainer"] p')).fontSize)"""
    )
    assert normal_size < size


def test_chart_downloads_for_slides(server, open_app) -> None:
    page = open_app(server, "/?lang=en")
    page.get_by_text("Export for slides").first.click()
    for fmt, magic in [("PNG", b"\x89PNG"), ("SVG", b"<svg")]:
        with page.expect_download() as info:
            page.locator('[data-testid="stDownloadButton"] button', has_text=fmt).first.click()
        data = Path(info.value.path()).read_bytes()
        assert data.startswith(magic), fmt
        assert len(data) > 1000, fmt
