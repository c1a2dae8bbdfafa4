"""Catalog integrity, and no English sentence left on any page in Chinese mode."""

import json
import re

import pytest

from tests.app.conftest import ROOT, open_page, texts
from ui.i18n import LANGUAGES, browser_language, catalog, placeholders
from ui.pages import available_pages

# Three or more Latin words in a row is an English sentence fragment.
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}\b")
# Formulas, code and the lesson's example sentence are not UI text.
NOT_UI = [
    re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S),  # LaTeX
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\\[a-zA-Z]+(\{[^}]*\})?"),  # LaTeX commands in st.latex
    re.compile(r"The cat sat on the mat"),  # lesson 002's sentence (user-editable input)
    re.compile(r"Attention Is All You Need"),  # a paper title
]


def test_catalogs_have_identical_keys() -> None:
    en, zh = catalog("en"), catalog("zh")
    assert set(en) == set(zh), {"only_en": set(en) - set(zh), "only_zh": set(zh) - set(en)}


def test_catalogs_have_identical_placeholders() -> None:
    en, zh = catalog("en"), catalog("zh")
    mismatched = [k for k in en if placeholders(en[k]) != placeholders(zh[k])]
    assert mismatched == []


def test_catalog_entries_are_not_empty() -> None:
    for lang in LANGUAGES:
        assert all(v.strip() for v in catalog(lang).values()), lang


def test_every_key_used_in_code_exists() -> None:
    used = set()
    for path in [ROOT / "dashboard.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/**/*.py")]:
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z0-9_.]+)["']""", path.read_text()))
    missing = sorted(used - set(catalog("en")))
    assert used and missing == []


def test_no_text_sends_the_student_to_a_lesson_the_app_does_not_contain() -> None:
    # A student alone has only the app: no "from-scratch lesson", no "derivation lesson", no
    # lesson 000 or 002 (the app's own worked example and its "Lesson example" button stay).
    elsewhere = re.compile(
        r"from-scratch lesson|derivation lesson|lesson 00\d|00\d's|"
        r"从零实现|推导的那一课|第 ?00\d ?课"
    )
    for lang in LANGUAGES:
        found = {k: v for k, v in catalog(lang).items() if elsewhere.search(v)}
        assert found == {}, lang


def test_chinese_calls_a_token_token_as_the_lessons_do() -> None:
    # The lessons say "token"; a second word for the same thing (词元) reads as a new idea.
    found = {k: v for k, v in catalog("zh").items() if "词元" in v}
    assert found == {}


@pytest.mark.parametrize(
    ("locale", "lang"),
    [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-US", "en"), (None, "en"), ("fr", "en")],
)
def test_browser_locale_picks_language(locale: str | None, lang: str) -> None:
    assert browser_language(locale) == lang


def _visible_strings(at) -> str:
    parts = [texts(at)]
    for kind in (
        "slider",
        "button",
        "selectbox",
        "radio",
        "toggle",
        "text_input",
        "number_input",
        "checkbox",
        "select_slider",
        "multiselect",
        "text_area",
        "expander",
        "tabs",
    ):
        for widget in getattr(at, kind, []):
            parts.append(str(getattr(widget, "label", "")))
            parts.append(str(getattr(widget, "help", "") or ""))
    return "\n".join(parts)


def _english_left(text: str) -> list[str]:
    for pattern in NOT_UI:
        text = pattern.sub(" ", text)
    return ENGLISH_RUN.findall(text)


def _every_step(info, lang: str) -> list:
    """The page run once per step (a page draws only the step on screen), or once if it
    stacks its steps."""
    file = None if info.file == "dashboard.py" else info.file
    first = open_page(file, lang=lang)
    if info.id == "homework":  # the checker stacks its steps for students
        return [first]
    count = len(first.button_group(key="_step_choice").options)
    assert count >= 2, info.id
    return [first] + [open_page(file, lang=lang, step=str(k)) for k in range(2, count + 1)]


@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_chinese_mode_leaves_no_english_sentence(info) -> None:
    for step, at in enumerate(_every_step(info, "zh"), start=1):
        assert not at.exception
        leftover = _english_left(_visible_strings(at))
        assert leftover == [], f"English left on {info.id}, step {step}: {leftover[:5]}"


@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_english_mode_is_english(info) -> None:
    for at in _every_step(info, "en"):
        assert not at.exception
        assert not re.search(r"[\u4e00-\u9fff]", _visible_strings(at).replace("简体中文", ""))


def _tooltips(node: object) -> list[dict]:
    """Every tooltip field definition anywhere in a Vega-Lite spec."""
    if isinstance(node, dict):
        own = node["tooltip"] if isinstance(node.get("tooltip"), list) else []
        return own + [tip for child in node.values() for tip in _tooltips(child)]
    if isinstance(node, list):
        return [tip for child in node for tip in _tooltips(child)]
    return []


@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_chart_tooltips_in_chinese_show_no_english_field_names(info) -> None:
    tips = [
        tip
        for at in _every_step(info, "zh")
        for c in at.get("vega_lite_chart")
        for tip in _tooltips(json.loads(c.proto.spec))
    ]
    assert tips, info.id
    for tip in tips:
        # an empty or missing title makes Vega-Lite show the field's own name ("entry")
        assert isinstance(tip.get("title"), str) and tip["title"].strip(), (info.id, tip)
        assert not re.fullmatch(r"[A-Za-z]{3,}([_ ][A-Za-z]+)*", tip["title"]), (info.id, tip)


def test_detector_catches_english() -> None:
    assert _english_left("这是 some English words here") == ["some English words here"]
    assert _english_left("公式 $QK^\\top / \\sqrt{d_k}$ 和 `x @ W_q`") == []
