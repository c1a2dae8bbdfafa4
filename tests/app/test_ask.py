"""Ask the class in the app (ui/ask.py): the student's /join page and the lecturer's panel,
run with AppTest against a real SQLite store in a throwaway data directory."""

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from store import Store, lecturer_key, open_store
from tests.app.conftest import chart_tables, open_page, texts
from ui import ask
from ui.i18n import Translator
from ui.pages import PAGES
from ui.questions import find, page_questions
from ui.safe import plain

JOIN = "pages/18_join.py"
LOOKUP = "pages/1_lookup.py"
BEST = "lookup.best"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's data directory for this test (its own store and lecturer key)."""
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_STORE", raising=False)
    ask._shared_look.clear()
    return tmp_path


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    """The same database the app opens, through a store of the test's own."""
    with open_store(None, data_dir) as opened:
        yield opened


def _ask(store: Store, question: str = BEST) -> str:
    """Open round 1 of ``question`` as the lecturer would; its join code."""
    found = find(question)
    ids = [o.id for o in found.labelled(Translator("en"))] or None
    store.open_round(ask.lecture(), question, ids)
    return store.join_code(ask.lecture())


def _again(at: AppTest) -> AppTest:
    """Run the page again after the store changed (a new look, not the shared one)."""
    ask._shared_look.clear()
    return at.run()


def test_the_setup_comes_from_the_arguments_then_the_environment(tmp_path: Path) -> None:
    env = {"ATTENTION_LAB_DATA": str(tmp_path), "ATTENTION_LAB_STORE": "postgresql://h/db"}
    from_env = ask.setup([], env)
    assert (from_env.data_dir, from_env.url, from_env.public_url) == (
        tmp_path,
        "postgresql://h/db",
        None,
    )
    args = ["--data-dir", "/srv/lab", "--store", "postgresql://x/y", "--public-url", "http://a/"]
    from_args = ask.setup(args, env)
    assert (from_args.data_dir, from_args.url, from_args.public_url) == (
        Path("/srv/lab"),
        "postgresql://x/y",
        "http://a",
    )
    assert ask.setup([], {}).url is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_joins_by_typing_the_code_in_their_language(store: Store, lang: str) -> None:
    code = _ask(store)
    t = Translator(lang)
    at = open_page(JOIN, lang=lang)
    assert not at.exception
    assert at.title[0].value == t("join.title")
    at.text_input(key="ask_code_box").set_value(code.lower())
    at.button[0].click().run()
    assert not at.exception
    assert at.query_params["code"] == code
    assert find(BEST).text(t) in texts(at)
    labels = [o.label for o in find(BEST).labelled(t)]
    assert at.button_group(key="ask_pick").options == labels
    if lang == "zh":
        assert not re.search(r"\b(Join|Your|answer|code|Vote)\b", texts(at))


def test_a_wrong_code_is_refused_and_guessing_is_stopped(store: Store) -> None:
    _ask(store)
    t = Translator("en")
    at = open_page(JOIN, lang="en")
    for _ in range(ask.CODE_TRIES):
        at.text_input(key="ask_code_box").set_value("ZZZZZ")
        at.button[0].click().run()
        assert t("ask.refused.unknown_code") in [w.value for w in at.warning]
    at.text_input(key="ask_code_box").set_value("ZZZZ2")
    at.button[0].click().run()
    assert [w.value for w in at.warning] == [t("ask.refused.too_many_codes")]
    assert "code" not in at.query_params


def test_a_bad_code_in_the_address_warns_and_asks_for_one(store: Store) -> None:
    _ask(store)
    at = open_page(JOIN, lang="zh", code="<b>x</b>")
    assert not at.exception
    assert Translator("zh")("ask.refused.unknown_code") in texts(at)
    assert "code" not in at.query_params
    assert at.text_input(key="ask_code_box")


def test_the_last_answer_counts_and_the_screen_says_which(store: Store) -> None:
    code = _ask(store)
    t = Translator("en")
    at = open_page(JOIN, lang="en", code=code)
    assert not at.exception
    at.button_group(key="ask_pick").set_value("egypt").run()
    assert store.counts(code)["egypt"] == 1
    assert t("ask.recorded", answer="Egypt") in texts(at)
    at.button_group(key="ask_pick").set_value("russia").run()
    counted = store.counts(code)
    assert (counted["egypt"], counted["russia"], sum(counted.values())) == (0, 1, 1)
    assert t("ask.recorded", answer="Russia") in texts(at)


def test_a_student_never_gets_counts_before_the_reveal(store: Store) -> None:
    code = _ask(store)
    store.answer(code, "a" * 32, "egypt")
    at = open_page(JOIN, lang="en", code=code)
    at.button_group(key="ask_pick").set_value("russia").run()
    store.close(code)
    at = _again(at)
    assert not at.get("vega_lite_chart"), "no chart of the class before the reveal"
    assert Translator("en")("ask.closed") in texts(at)
    store.reveal(code)
    at = _again(at)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1
    rows = chart_tables(at, 0)[0].to_dict("records")
    shown = {r["label"].removeprefix("✓ "): r["text"] for r in rows}
    assert (shown["Russia"], shown["Egypt"], shown["France"]) == ("1", "1", "")
    assert store.revealed_counts(code) == {1: store.counts(code)}
    assert Translator("en")("ask.yours_right", answer="Russia") in texts(at)


def test_an_answer_to_a_closed_round_is_refused_and_not_stored(store: Store) -> None:
    code = _ask(store)
    at = open_page(JOIN, lang="zh", code=code)
    store.close(code)
    at.button_group(key="ask_pick").set_value("china").run()
    assert Translator("zh")("ask.refused.round_closed") in texts(at)
    assert sum(store.counts(code).values()) == 0


def test_a_flood_of_changes_is_refused_and_the_last_recorded_answer_stays(
    store: Store, data_dir: Path
) -> None:
    code = _ask(store)
    at = open_page(JOIN, lang="en", code=code)
    limit = ask._open(None, str(data_dir)).flood_limit
    picks = ["russia", "egypt"] * (limit // 2 + 1)
    for pick in picks[: limit + 1]:
        at.button_group(key="ask_pick").set_value(pick).run()
    assert Translator("en")("ask.refused.too_many") in texts(at)
    assert store.counts(code)[picks[limit - 1]] == 1


def test_a_number_question_refuses_what_is_not_a_number(store: Store) -> None:
    number = next(q for p in PAGES for q in page_questions(p.id) if q.kind == "number")
    code = _ask(store, number.id)
    t = Translator("zh")
    at = open_page(JOIN, lang="zh", code=code)
    at.text_input(key="ask_number").set_value("十二")
    at.button[0].click().run()
    assert t("ask.refused.not_a_number") in texts(at)
    assert store.counts(code) == {}
    at.text_input(key="ask_number").set_value("12.0")
    at.button[0].click().run()
    assert store.counts(code) == {"12": 1}
    assert t("ask.recorded", answer="12") in texts(at)


def test_a_wrong_lecturer_key_is_refused_and_leaves_the_address(data_dir: Path) -> None:
    at = open_page(LOOKUP, lang="en", present="1", step="2", key="guess")
    assert not at.exception
    assert "key" not in at.query_params
    assert Translator("en")("ask.bad_key") in texts(at)
    assert not [b for b in at.button if b.key and b.key.startswith("ask_open_")]


def test_only_the_lecturer_asks_and_the_panel_follows_the_store(
    store: Store, data_dir: Path
) -> None:
    t = Translator("en")
    key = lecturer_key(data_dir)
    at = open_page(LOOKUP, lang="en", present="1", step="2", key=key)
    assert "key" not in at.query_params, "the key leaves the address at once"
    at.button(key=f"ask_open_{BEST}").click().run()
    assert not at.exception
    code = store.join_code(ask.lecture())
    info = store.current(code)
    assert (info.question, info.round_no, info.is_open) == (BEST, 1, True)
    assert code in " ".join(h.proto.body for h in at.get("html"))
    assert at.get("imgs") or at.get("image"), "a QR code"
    store.answer(code, "b" * 32, "india")
    at.button(key="ask_again").click().run()
    assert store.current(code).round_no == 2
    store.answer(code, "b" * 32, "russia")
    at.button(key="ask_reveal").click().run()
    assert store.current(code).revealed
    rounds = set(chart_tables(at, 0)[0]["series"])
    assert rounds == {t("ask.round", round=1, n=1), t("ask.round", round=2, n=1)}
    download = at.get("download_button")[0]
    assert download.proto.label == t("ask.csv")
    results = list(csv.reader(io.StringIO(store_csv(store))))
    assert results[0] == ["question", "round", "answer", "count"]
    assert [BEST, "1", "india", "1"] in results and [BEST, "2", "russia", "1"] in results
    at.button(key="ask_back").click().run()
    assert at.button(key=f"ask_open_{BEST}")
    student = open_page(LOOKUP, lang="en", present="1", step="2")
    assert not [b for b in student.button if b.key and b.key.startswith("ask_open_")]


def store_csv(store: Store) -> str:
    """The CSV the lecturer downloads, as ui/ask.py writes it."""
    return ask.results_csv(store.results(ask.lecture()))


def test_a_data_directory_that_cannot_be_used_is_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(blocked / "data"))
    at = open_page(JOIN, lang="zh")
    assert not at.exception
    assert Translator("zh")("ask.no_data_dir_at", where=plain(str(blocked / "data"))) in texts(at)


def test_an_unreachable_postgresql_is_a_translated_retry_message(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTENTION_LAB_STORE", "postgresql://lab@127.0.0.1:9/lab?connect_timeout=1")
    at = open_page(JOIN, lang="zh", timeout=30)
    assert not at.exception
    assert Translator("zh")("ask.unavailable") in texts(at)


def test_the_join_address_is_the_public_one_or_this_machines() -> None:
    assert ask._loopback("127.0.0.1") and ask._loopback("localhost") and ask._loopback("[::1]")
    assert not ask._loopback("10.0.0.5") and not ask._loopback("lab.example.edu")
    for host in ("10.0.0.5:8080", "lab.example.edu", "[::1]:8501", "127.0.0.1"):
        assert ask.HOST.fullmatch(host), host
    for host in ("evil](javascript:alert(1))", "a b", "x.org/join?code=1", "<b>x</b>"):
        assert not ask.HOST.fullmatch(host), "a Host header that is no host name is not shown"


def test_the_revealed_chart_marks_the_truth_and_speaks_the_language() -> None:
    question = find(BEST)
    t = Translator("zh")
    truth = question.truth()
    spec = ask.results_chart(t, question, question.labelled(t), {1: {"egypt": 3}, 2: {}}, truth)
    rows = spec["datasets"]["answers"]
    right = [r["label"] for r in rows if r["label"].startswith("✓ ")]
    assert set(right) == {f"✓ {t('lookup.country.' + i)}" for i in truth.right}
    egypt = next(r for r in rows if r["label"] == t("lookup.country.egypt"))
    assert (egypt["share"], egypt["text"]) == (1.0, "3")
    assert {r["share"] for r in rows if r["series"] == t("ask.round", round=2, n=0)} == {0.0}
    tips = spec["layer"][0]["encoding"]["tooltip"]
    assert [tip["title"] for tip in tips] == [
        t("ask.tip_round"),
        t("ask.tip_answer"),
        t("ask.tip_count"),
    ]


def test_a_lecturer_page_opened_mid_round_shows_the_round_and_keeps_it_through_the_reveal(
    store: Store, data_dir: Path
) -> None:
    code = _ask(store)  # asked from another tab, or before a reload
    t = Translator("en")
    at = open_page(LOOKUP, lang="en", present="1", step="2", key=lecturer_key(data_dir))
    assert code in " ".join(h.proto.body for h in at.get("html")), "the open round's panel"
    assert not [b for b in at.button if b.key == f"ask_open_{BEST}"]
    at.button(key="ask_reveal").click().run()
    assert store.current(code).revealed
    assert set(chart_tables(at, 0)[0]["series"]) == {t("ask.round", round=1, n=0)}
    assert not [b for b in at.button if b.key == f"ask_open_{BEST}"], "the panel stays"
