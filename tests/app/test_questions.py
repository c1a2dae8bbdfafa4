"""Ask the class's questions (ui/questions.py): the type, and every question the pages
declare, each on a step of its page, its options in both languages and its truth from core.

The truths of the real models' questions run the models once per test process (a
module-scoped fixture); each page's own test file checks its questions' truths against an
independent computation.
"""

import ast
import math
import re
from pathlib import Path

import pytest

from ui.i18n import LANGUAGES, Translator, catalog
from ui.pages import PAGES, ROOT
from ui.questions import Option, Question, Truth, choices, find, page_questions, tokens

OPTION_ID = re.compile(r"[a-z0-9_]+")
MOST_CHOICES = 8  # tap targets on a phone


def _truth() -> Truth:
    return Truth(right=frozenset({"a"}))


def _options(t: Translator) -> tuple[Option, ...]:
    return (Option("a", "A"), Option("b", "B"))


# ---- the type --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["lookup", "lookup.", ".best", "lookup.best.again", ""])
def test_a_question_id_is_page_dot_name(bad):
    with pytest.raises(ValueError, match=r"<page>\.<name>"):
        Question(bad, "choice", _truth, _options)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        Question("lookup.x", "slider", _truth, _options)  # type: ignore[arg-type]


def test_a_number_question_has_no_options_and_the_others_have_some():
    with pytest.raises(ValueError, match="no options"):
        Question("lookup.x", "number", _truth, _options)
    with pytest.raises(ValueError, match="no options"):
        Question("lookup.x", "choice", _truth)
    with pytest.raises(ValueError, match="no options"):
        Question("lookup.x", "token", _truth)
    number = Question("lookup.x", "number", _truth)
    assert number.labelled(Translator("en")) == ()
    assert (number.page, number.key) == ("lookup", "lookup.ask.x")


def test_token_options_are_positions_and_label_a_repeated_token_with_its_position():
    options = tokens(lambda: ["the", "cat", "sat", "on", "the", "mat"])(Translator("en"))
    assert [o.id for o in options] == ["0", "1", "2", "3", "4", "5"]
    assert [o.label for o in options] == ["the (0)", "cat", "sat", "on", "the (4)", "mat"]


def test_choice_options_are_labelled_by_the_catalog_in_each_language():
    ids = ("same", "flatter", "peakier")
    en = choices("scaling.ask.saturation", ids)(Translator("en"))
    zh = choices("scaling.ask.saturation", ids)(Translator("zh"))
    assert [o.id for o in en] == [o.id for o in zh] == list(ids)
    assert en[2].label == catalog("en")["scaling.ask.saturation.peakier"]
    assert zh[2].label == catalog("zh")["scaling.ask.saturation.peakier"]
    assert en[2].label != zh[2].label


def test_a_number_answer_is_right_within_the_tolerance_only():
    truth = Truth(number=5.0, tolerance=0.25)
    assert truth.is_right("5") and truth.is_right("5.25") and truth.is_right(" 4.8 ")
    assert not truth.is_right("5.3") and not truth.is_right("4.5")
    assert not truth.is_right("five") and not truth.is_right("")
    exact = Truth(number=3.0)
    assert exact.is_right("3") and exact.is_right("3.0") and not exact.is_right("3.01")


def test_an_option_answer_is_right_when_it_is_one_of_the_right_ids():
    truth = Truth(right=frozenset({"2", "5"}), weights={"2": 0.6, "5": 0.4})
    assert truth.is_right("2") and truth.is_right("5")
    assert not truth.is_right("3") and not truth.is_right("2.0") and not truth.is_right("")


def test_find_gives_a_declared_question_and_none_for_anything_else():
    from ui.views import lookup

    assert find("lookup.best") is lookup.ASK_BEST
    assert find("lookup.nothing") is None  # a round an older version left in the store
    assert find("home.best") is None  # a view without questions
    assert find("nowhere.best") is None  # no such view
    assert find("../ui.best") is None and find("lookup") is None


# ---- every page's questions ----------------------------------------------------------------

DECLARED = [(info, q) for info in PAGES for q in page_questions(info.id)]


@pytest.fixture(scope="module")
def truths() -> dict[str, Truth]:
    """Every declared question's truth (the real models' questions run them once here)."""
    return {q.id: q.truth() for _, q in DECLARED}


def test_the_pages_declare_at_least_ten_questions_with_unique_ids_of_their_page():
    ids = [q.id for _, q in DECLARED]
    assert len(ids) >= 10
    assert len(set(ids)) == len(ids)
    assert all(q.page == info.id for info, q in DECLARED)
    kinds = [q.kind for _, q in DECLARED]
    assert kinds.count("token") >= 3 and "number" in kinds and "choice" in kinds


def attached(page_file: Path) -> list[str]:
    """The names in ``question=view.<NAME>`` of every ``Step(...)`` in a page script (read,
    not run: a page runs its steps as it is imported). A ``question=`` written any other
    way is listed as its source text, which names no question."""
    tree = ast.parse(page_file.read_text())
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name != "Step":
            continue
        for kw in node.keywords:
            if kw.arg != "question":
                continue
            value = kw.value
            is_view = isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
            if is_view and value.value.id == "view":
                names.append(value.attr)
            else:
                names.append(ast.unparse(value))
    return names


def imports_its_view(page_file: Path, page: str) -> bool:
    """Whether the script imports its page's view as ``view`` (what ``view.<NAME>`` means)."""
    tree = ast.parse(page_file.read_text())
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "ui.views"
        and any(a.name == page and a.asname == "view" for a in node.names)
        for node in ast.walk(tree)
    )


@pytest.mark.parametrize("info", [i for i in PAGES if (ROOT / i.file).exists()], ids=lambda p: p.id)
def test_every_question_is_on_exactly_one_step_of_its_page(info):
    import importlib

    declared = page_questions(info.id)
    file = ROOT / info.file
    names = attached(file)
    if not declared:
        assert names == [], f"{info.id}: a step asks a question its view does not declare"
        return
    assert imports_its_view(file, info.id)
    view = importlib.import_module(f"ui.views.{info.id}")
    on_steps = [getattr(view, name, None) for name in names]
    assert all(isinstance(q, Question) for q in on_steps), names
    assert all(q in declared for q in on_steps), "a step asks a question QUESTIONS lacks"
    for q in declared:
        assert sum(s is q for s in on_steps) == 1, f"{q.id} is on {names}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_question_has_its_text_and_why_in_both_languages(lang):
    t = Translator(lang)
    for _, q in DECLARED:
        for key in (f"{q.key}.text", f"{q.key}.why"):
            assert t.has(key), (lang, key)
        assert q.text(t).strip() and q.why(t).strip()


def test_options_have_short_unique_ids_the_same_in_both_languages_and_labels_in_each():
    for _, q in DECLARED:
        if q.kind == "number":
            continue
        en, zh = q.labelled(Translator("en")), q.labelled(Translator("zh"))
        ids = [o.id for o in en]
        assert ids == [o.id for o in zh], q.id
        assert ids and len(set(ids)) == len(ids), q.id
        assert all(OPTION_ID.fullmatch(i) for i in ids), (q.id, ids)
        if q.kind == "choice":
            assert len(ids) <= MOST_CHOICES, q.id
        else:  # a token's id is its position
            assert ids == [str(i) for i in range(len(ids))], q.id
        assert all(o.label.strip() for o in (*en, *zh)), q.id


def test_a_token_or_choice_truth_names_options_and_a_number_truth_a_finite_number(truths):
    for _, q in DECLARED:
        truth = truths[q.id]
        if q.kind == "number":
            assert truth.number is not None and math.isfinite(truth.number), q.id
            assert truth.tolerance >= 0 and not truth.right, q.id
            continue
        ids = {o.id for o in q.labelled(Translator("en"))}
        assert truth.number is None, q.id
        assert truth.right and truth.right <= ids, (q.id, truth.right)


def test_a_token_truth_is_the_attention_row_over_the_tokens_and_its_largest_is_right(truths):
    for _, q in DECLARED:
        if q.kind != "token":
            continue
        truth = truths[q.id]
        ids = [o.id for o in q.labelled(Translator("en"))]
        assert set(truth.weights) == set(ids), q.id
        assert all(w >= 0 for w in truth.weights.values()), q.id
        assert sum(truth.weights[i] for i in ids) == pytest.approx(1.0, abs=1e-5), q.id
        assert max(ids, key=truth.weights.__getitem__) in truth.right, q.id


def test_attached_reads_the_questions_a_page_script_puts_on_its_steps(tmp_path):
    script = tmp_path / "9_page.py"
    script.write_text(
        "from ui.steps import Step, run\n"
        "from ui.views import page as view\n"
        "run('page', [Step('a', view.a, question=view.ASK_A), Step('b', view.b),\n"
        "    Step('c', view.c, question=other.ASK_C)])\n"
    )
    assert attached(script) == ["ASK_A", "other.ASK_C"]
    assert imports_its_view(script, "page") and not imports_its_view(script, "lookup")


def test_a_token_truth_is_the_model_row_and_its_largest_weight() -> None:
    truth = Truth.of_row([0.1, 0.6, 0.3])
    assert truth.right == frozenset({"1"})
    assert dict(truth.weights) == {"0": 0.1, "1": 0.6, "2": 0.3}
    assert Truth.of_row([0.5, 0.5]).right == frozenset({"0"}), "ties: the first, as argmax"
