"""Catalog integrity, and no English sentence left on any page in Chinese mode."""

import json
import re

import pytest

from tests.app.conftest import ROOT, open_page, texts
from ui.i18n import LANGUAGES, Translator, browser_language, catalog, placeholders
from ui.pages import available_pages, lesson_pages

# A Latin word on a Chinese screen: 2+ letters (digits and _ inside: d_k, float32, Q4_1).
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]")
# Formulas, code, icons and quoted text are not UI text.
NOT_UI = [
    re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S),  # LaTeX
    re.compile(r"```.*?```", re.S),  # a code block
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\\[a-zA-Z]+(\{[^}]*\})?"),  # LaTeX commands in st.latex
    re.compile(r":material/[a-z_]+:"),  # Streamlit's icon syntax
    re.compile(r":[a-z]+(-background)?\["),  # Streamlit's colour syntax
    re.compile(r"“[^”]*”|‘[^’]*’|「[^」]*」"),  # quoted: a token, an example sentence, a title
    re.compile(r"(?<![A-Za-z0-9])/[a-z_]+"),  # a page of the app (/encoder)
    re.compile(r"[A-Za-z_]*\.(npz|npy|py|csv|json|txt|tsv|pt|pth|pkl)\b"),  # a file (type)
    re.compile(r"\bL\d+(H\d+)?\b|\bh\d+\b"),  # a layer or a head (L8H8, h0)
    re.compile(r"\b\d*e\d+\b|\bfloat(16|32|64)\b|\b[QF]\d+(_\d)?\b"),  # 1e9, types
    re.compile(r"The cat sat on the mat"),  # lesson 002's sentence (user-editable input)
    re.compile(r"Attention Is All You Need"),  # a paper title
]
# What a Chinese screen may keep in Latin letters: symbols, the field's terms that Chinese
# courses and papers use as they are, names (models, libraries, authors, file formats,
# keys). Anything else is English left in the Chinese interface.
LATIN_OK = {
    # symbols of the formulas
    "QK", "d_k", "d_v", "d_model", "h_kv", "q_t", "W_Q", "W_K", "W_V", "W_O", "B_c", "B_r",
    "exp", "log", "ln", "max", "min", "argmax", "cos", "Var", "mod", "inf", "NaN", "kB", "MiB",
    # terms kept in Latin letters (each glossed in Chinese where it first appears)
    "token", "softmax", "Softmax", "logit", "logits", "Logits", "RoPE", "GQA", "MHA", "MQA",
    "KV", "MLP", "RNN", "Transformer", "FlashAttention", "attention", "sink", "one", "hot",
    "tile", "dropout", "Adam", "Xavier", "Frobenius", "PAD", "GPU", "HBM", "Top", "RMSNorm",
    "SwiGLU", "W_E",
    # models, libraries, formats, keys, authors
    "SmolLM2", "Instruct", "GPT", "Llama", "Mistral", "Qwen", "Gemma", "StreamingLLM",
    "SentencePiece", "MiniLM", "multilingual", "small", "NumPy", "np", "PyTorch", "torch",
    "Python", "cpu", "repeat", "repeat_interleave", "reshape", "transpose", "W_QKV", "CSV",
    "JSON", "NPZ", "pickle", "PageDown",
    "PageUp", "Dao", "Ainslie", "Shazeer", "Su", "Xiao", "vLLM", "llama", "cpp",
    "nostalgebraist", "Belrose", "Michel", "McGrath", "Jain", "Wallace", "Wiegreffe", "Pinter",
    "Wang", "Abnar", "Zuidema",
}  # fmt: skip


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


def test_questions_in_chinese_have_no_latin_word_outside_the_allow_list() -> None:
    # Ask the class shows a question's words on the students' phones (/join), not on the
    # page screens the tests below read: its text, why and choice labels are checked here
    # (a token question's labels are the model's tokens, the sentence's own words)
    from ui.pages import PAGES
    from ui.questions import page_questions

    t = Translator("zh")
    for q in (q for info in PAGES for q in page_questions(info.id)):
        labels = [o.label for o in q.labelled(t)] if q.kind == "choice" else []
        leftover = _english_left("\n".join([q.text(t), q.why(t), *labels]))
        assert leftover == [], (q.id, leftover)


def test_questions_in_english_have_no_chinese_outside_quotes() -> None:
    from ui.pages import PAGES
    from ui.questions import page_questions

    t = Translator("en")
    for q in (q for info in PAGES for q in page_questions(info.id)):
        labels = [o.label for o in q.labelled(t)] if q.kind == "choice" else []
        words = re.sub(r"“[^”]*”", " ", "\n".join([q.text(t), q.why(t), *labels]))
        assert not re.search(r"[\u4e00-\u9fff]", words), q.id


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


def _english_left(text: str, data: str = "") -> list[str]:
    """The Latin words of ``text`` outside the allow-list, formulas, code, quotes and the
    words of ``data`` (what the page's text boxes hold: the student's sentence)."""
    for pattern in NOT_UI:
        text = pattern.sub(" ", text)
    typed = set(LATIN_WORD.findall(data))
    return [w for w in LATIN_WORD.findall(text) if w not in LATIN_OK and w not in typed]


def _data(at) -> str:
    """What the page's text boxes hold (a sentence is the student's data, not the UI) and
    the code it shows."""
    kinds = ("text_input", "text_area", "code")
    return " ".join(str(w.value) for kind in kinds for w in at.get(kind))


def _every_step(info, lang: str) -> list:
    """The page run once per step (a page draws only the step on screen), or once if it
    stacks its steps."""
    file = None if info.file == "dashboard.py" else info.file
    first = open_page(file, lang=lang)
    if info.id == "homework" or not info.lesson:  # stacked steps; /join has none
        return [first]
    count = len(first.button_group(key="_step_choice").options)
    assert count >= 2, info.id
    return [first] + [open_page(file, lang=lang, step=str(k)) for k in range(2, count + 1)]


@pytest.mark.parametrize("info", available_pages(), ids=lambda p: p.id)
def test_chinese_screens_have_no_latin_word_outside_the_allow_list(info) -> None:
    for step, at in enumerate(_every_step(info, "zh"), start=1):
        assert not at.exception
        leftover = _english_left(_visible_strings(at), _data(at))
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


@pytest.mark.parametrize("info", lesson_pages(), ids=lambda p: p.id)
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
    assert _english_left("这是 some English words here") == ["some", "English", "words", "here"]
    assert _english_left("一个 Next 按钮") == ["Next"], "one word is enough"
    assert _english_left("公式 $QK^\\top / \\sqrt{d_k}$ 和 `x @ W_q`") == []
    assert _english_left("头 L8H8 把 “it” 连到 softmax 的 token 上，见 /encoder") == []
    assert _english_left("你的句子 my cat 里", data="my cat") == []
