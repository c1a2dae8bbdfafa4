"""store/store.py: a lecture's rounds and answers, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable

import pytest

from store import (
    JOIN_ALPHABET,
    JOIN_CODE_LENGTH,
    BadStudentError,
    NotAnOptionError,
    NotANumberError,
    NotRevealedError,
    RefusedError,
    ResultRow,
    RoundClosedError,
    RoundInfo,
    Store,
    StoreError,
    TooManyAnswersError,
    UnknownCodeError,
    normalise_code,
)

pytestmark = pytest.mark.xdist_group("store_pg")  # one PostgreSQL server per test run

ABC = ["a", "b", "c"]


class Clock:
    """A clock the test moves by hand (the flood window without sleeping)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_round_opens_with_a_short_join_code_without_look_alikes(store: Store) -> None:
    info = store.open_round("lecture", "lookup.best_key", ABC)
    assert len(info.code) == JOIN_CODE_LENGTH
    assert set(info.code) <= set(JOIN_ALPHABET)
    assert not set("0O1IL") & set(JOIN_ALPHABET)
    assert info == RoundInfo(info.code, "lookup.best_key", 1, ("a", "b", "c"), True, False)
    assert store.current(info.code) == info


def test_a_lecture_keeps_one_code_and_lectures_have_their_own(store: Store) -> None:
    first = store.open_round("monday", "q1", ABC).code
    assert store.open_round("monday", "q2", None).code == first
    assert store.join_code("monday") == first
    other = store.join_code("tuesday")
    assert other != first
    assert store.current(other) is None  # joined before the lecturer's first question


def test_a_code_is_accepted_as_a_student_types_it(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    typed = f" {code[:2].lower()}-{code[2:]} "
    assert normalise_code(typed) == code
    assert store.answer(typed, "s1", "a").code == code
    assert store.current(typed.upper()) == store.current(code)


def test_the_last_answer_counts_and_the_lecturer_sees_the_count(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    assert store.answer_count(code) == 0
    first = store.answer(code, "s1", "a")
    assert (first.answer, first.changed, first.round_no) == ("a", False, 1)
    store.answer(code, "s2", "a")
    changed = store.answer(code, "s1", "c")
    assert (changed.answer, changed.changed) == ("c", True)
    assert store.own_answer(code, "s1") == "c"
    assert store.own_answer(code, "nobody") is None
    assert store.answer_count(code) == 2  # two students, however often they changed
    assert store.counts(code) == {"a": 1, "b": 0, "c": 1}


def test_a_number_answer_is_kept_in_one_spelling(store: Store) -> None:
    code = store.open_round("lecture", "kv_cache.saving", None).code
    for student, typed in [
        ("s1", "2"),
        ("s2", " 2.0 "),
        ("s3", "2e0"),
        ("s4", "-0.5"),
        ("s5", "-0"),
    ]:
        store.answer(code, student, typed)
    assert store.counts(code) == {"-0.5": 1, "0": 1, "2": 3}
    assert store.own_answer(code, "s2") == "2"


def test_a_students_screen_never_carries_counts_before_the_reveal(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    for n in range(13):
        store.answer(code, f"s{n}", "b")
    seen = store.current(code)
    fields = dataclasses.asdict(seen)
    assert set(fields) == {"code", "question", "round_no", "options", "is_open", "revealed"}
    numbers = [v for k, v in fields.items() if isinstance(v, int) and not isinstance(v, bool)]
    assert numbers == [1]  # the round number only: no count, no 13
    assert "13" not in repr(dataclasses.replace(seen, code=""))
    with pytest.raises(NotRevealedError):
        store.revealed_counts(code)
    store.close(code)
    with pytest.raises(NotRevealedError):
        store.revealed_counts(code)
    assert store.reveal(code).revealed
    assert store.revealed_counts(code) == {1: {"a": 0, "b": 13, "c": 0}}


def test_vote_again_closes_round_one_and_opens_round_two(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    store.answer(code, "s1", "a")
    store.answer(code, "s2", "a")
    second = store.vote_again(code)
    assert (second.question, second.round_no, second.is_open) == ("q", 2, True)
    assert second.options == ("a", "b", "c")
    assert store.current(code) == second
    assert store.answer_count(code) == 0  # the live count starts again
    assert store.own_answer(code, "s1") is None
    store.answer(code, "s1", "b")
    assert store.counts(code, 1) == {"a": 2, "b": 0, "c": 0}
    assert store.counts(code, 2) == {"a": 0, "b": 1, "c": 0}
    assert store.counts(code) == store.counts(code, 2)


def test_reveal_closes_the_round_and_shows_every_round_of_the_question(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    store.answer(code, "s1", "a")
    store.vote_again(code)
    store.answer(code, "s1", "c")
    store.answer(code, "s2", "c")
    shown = store.reveal(code)
    assert (shown.round_no, shown.is_open, shown.revealed) == (2, False, True)
    assert store.revealed_counts(code) == {1: {"a": 1, "b": 0, "c": 0}, 2: {"a": 0, "b": 0, "c": 2}}
    with pytest.raises(RoundClosedError):
        store.answer(code, "s3", "a")
    assert store.counts(code) == {"a": 0, "b": 0, "c": 2}


def test_asking_a_round_again_reopens_it_with_its_answers(store: Store) -> None:
    code = store.open_round("lecture", "q1", ABC).code
    store.answer(code, "s1", "a")
    store.close(code)
    store.open_round("lecture", "q2", None)
    again = store.open_round("lecture", "q1", ABC)
    assert (again.question, again.round_no, again.is_open) == ("q1", 1, True)
    assert store.own_answer(code, "s1") == "a"
    assert store.answer_count(code) == 1
    with pytest.raises(ValueError):
        store.open_round("lecture", "q1", ["x", "y"])  # the same round with other options


def test_a_new_question_closes_the_round_before_it(store: Store) -> None:
    code = store.open_round("lecture", "q1", ABC).code
    store.answer(code, "s1", "a")
    store.open_round("lecture", "q2", ABC)
    store.answer(code, "s1", "b")  # goes to q2, the round on screen
    back = store.open_round("lecture", "q1", ABC)
    assert store.counts(code) == {"a": 1, "b": 0, "c": 0}  # q1 kept its answer only
    assert back.is_open
    assert store.results("lecture")[3:6] == [
        ResultRow("q2", 1, "a", 0),
        ResultRow("q2", 1, "b", 1),
        ResultRow("q2", 1, "c", 0),
    ]


def test_a_revealed_round_asked_again_stays_revealed_and_closed(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    store.reveal(code)
    again = store.open_round("lecture", "q", ABC)
    assert (again.is_open, again.revealed) == (False, True)


def test_results_list_every_round_and_answer_for_the_csv(store: Store) -> None:
    code = store.open_round("lecture", "q1", ["x", "y"]).code
    store.answer(code, "s1", "x")
    store.answer(code, "s2", "y")
    store.answer(code, "s3", "y")
    store.vote_again(code)
    store.answer(code, "s1", "y")
    store.open_round("lecture", "q0", None)  # asked second: listed second
    store.answer(code, "s1", "3.5")
    other = store.open_round("another lecture", "q1", ["x", "y"]).code
    store.answer(other, "s9", "x")
    assert store.results("lecture") == [
        ResultRow("q1", 1, "x", 1),
        ResultRow("q1", 1, "y", 2),
        ResultRow("q1", 2, "x", 0),
        ResultRow("q1", 2, "y", 1),
        ResultRow("q0", 1, "3.5", 1),
    ]
    assert store.results("never held") == []


@pytest.mark.parametrize(
    ("options", "typed", "refusal"),
    [
        (ABC, "d", NotAnOptionError),
        (ABC, "", NotAnOptionError),
        (["0", "1", "2"], "3", NotAnOptionError),
        (None, "abc", NotANumberError),
        (None, "nan", NotANumberError),
        (None, "inf", NotANumberError),
        (None, "1e999", NotANumberError),
        (None, "", NotANumberError),
        (None, "1" * 65, NotANumberError),
    ],
)  # fmt: skip
def test_an_answer_outside_the_round_is_refused_and_nothing_stored(
    store: Store, options: list[str] | None, typed: str, refusal: type[RefusedError]
) -> None:
    code = store.open_round("lecture", "q", options).code
    kept = options[0] if options else "1"
    store.answer(code, "s1", kept)
    before = store.counts(code)
    with pytest.raises(refusal) as refused:
        store.answer(code, "s1", typed)
    assert refused.value.reason == refusal.reason
    with pytest.raises(refusal):
        store.answer(code, "s2", typed)
    assert store.own_answer(code, "s1") == kept
    assert store.counts(code) == before
    assert store.answer_count(code) == 1


@pytest.mark.parametrize("code", ["", "ABCD", "ABCDEF", "AB0DE", "OOOOO", "ZZZZZ"])
def test_a_wrong_or_guessed_code_is_refused(store: Store, code: str) -> None:
    real = store.open_round("lecture", "q", ABC).code
    if code == "ZZZZZ" and real == code:
        code = "YYYYY"
    with pytest.raises(UnknownCodeError) as refused:
        store.answer(code, "s1", "a")
    assert refused.value.reason == "unknown_code"
    for asks in (store.current, store.answer_count, store.close, store.reveal, store.vote_again):
        with pytest.raises(UnknownCodeError):
            asks(code)
    assert store.answer_count(real) == 0
    assert store.current(real).is_open


def test_an_answer_to_a_closed_round_is_refused(store: Store) -> None:
    code = store.open_round("lecture", "q", ABC).code
    store.answer(code, "s1", "a")
    closed = store.close(code)
    assert (closed.is_open, closed.revealed) == (False, False)
    with pytest.raises(RoundClosedError) as refused:
        store.answer(code, "s1", "b")  # a change
    assert refused.value.reason == "round_closed"
    with pytest.raises(RoundClosedError):
        store.answer(code, "s2", "b")  # a late first answer
    assert store.counts(code) == {"a": 1, "b": 0, "c": 0}


def test_an_answer_before_the_first_round_is_refused(store: Store) -> None:
    code = store.join_code("lecture")
    with pytest.raises(RoundClosedError):
        store.answer(code, "s1", "a")
    with pytest.raises(RoundClosedError):
        store.close(code)


@pytest.mark.parametrize("student", ["", "x" * 65, "tab\there", "new\nline"])
def test_a_bad_student_id_is_refused(store: Store, student: str) -> None:
    code = store.open_round("lecture", "q", ABC).code
    with pytest.raises(BadStudentError) as refused:
        store.answer(code, student, "a")
    assert refused.value.reason == "bad_student"
    assert store.answer_count(code) == 0


def test_a_flood_from_one_student_is_refused_until_the_window_passes(
    opened: Callable[..., Store],
) -> None:
    clock = Clock()
    store = opened(flood_limit=3, flood_window=10.0, clock=clock)
    code = store.open_round("lecture", "q", ABC).code
    for typed in ("a", "b", "c"):
        store.answer(code, "flooder", typed)
        clock.now += 1
    with pytest.raises(TooManyAnswersError) as refused:
        store.answer(code, "flooder", "a")
    assert refused.value.reason == "too_many"
    assert store.own_answer(code, "flooder") == "c"  # the refused change is not stored
    store.answer(code, "neighbour", "b")  # nobody else is affected
    assert store.counts(code) == {"a": 0, "b": 1, "c": 1}
    clock.now += 10  # the window has passed since the flooder's first answer
    assert store.answer(code, "flooder", "a").changed
    assert store.counts(code) == {"a": 1, "b": 1, "c": 0}


def test_refusals_have_distinct_stable_reasons() -> None:
    refusals = [
        UnknownCodeError,
        RoundClosedError,
        NotAnOptionError,
        NotANumberError,
        TooManyAnswersError,
        BadStudentError,
        NotRevealedError,
    ]
    reasons = [r.reason for r in refusals]
    assert reasons == [
        "unknown_code",
        "round_closed",
        "not_an_option",
        "not_a_number",
        "too_many",
        "bad_student",
        "not_revealed",
    ]
    assert all(issubclass(r, RefusedError) and not issubclass(r, StoreError) for r in refusals)


def test_a_restart_keeps_every_round_and_answer(opened: Callable[..., Store]) -> None:
    first = opened()
    code = first.open_round("lecture", "q1", ABC).code
    first.answer(code, "s1", "a")
    first.vote_again(code)
    first.answer(code, "s1", "b")
    first.reveal(code)
    first.open_round("lecture", "q2", None)
    first.answer(code, "s2", "42")
    before = first.results("lecture")
    first.disconnect()
    second = opened()
    assert second.current(code) == RoundInfo(code, "q2", 1, None, True, False)
    assert second.results("lecture") == before
    assert second.own_answer(code, "s2") == "42"
    assert second.join_code("lecture") == code
    second.answer(code, "s2", "43")  # and it goes on
    assert second.counts(code) == {"43": 1}


def test_two_stores_on_one_database_see_each_others_writes(opened: Callable[..., Store]) -> None:
    lecturer, replica = opened(), opened()
    code = lecturer.open_round("lecture", "q", ABC).code
    assert replica.current(code).is_open
    replica.answer(code, "s1", "a")
    lecturer.answer(code, "s2", "b")
    replica.answer(code, "s2", "c")  # a student whose page moved to the other replica
    assert lecturer.counts(code) == replica.counts(code) == {"a": 1, "b": 0, "c": 1}
    lecturer.vote_again(code)
    assert replica.current(code).round_no == 2
    replica.reveal(code)
    assert lecturer.current(code).revealed


def test_many_threads_answering_at_once_are_each_counted_once(
    opened: Callable[..., Store],
) -> None:
    stores = [opened(), opened()]  # two replicas, each used by four threads
    code = stores[0].open_round("lecture", "q", ABC).code
    threads_n, students_n = 8, 50
    start = threading.Barrier(threads_n)
    failures: list[BaseException] = []

    def students(t: int) -> None:
        store = stores[t % 2]
        start.wait()
        try:
            for s in range(students_n):
                store.answer(code, f"t{t}s{s}", ABC[s % 3])  # a first answer
                if s % 2:
                    store.answer(code, f"t{t}s{s}", ABC[(s + t) % 3])  # changed
        except BaseException as error:  # reported below, not lost in the thread
            failures.append(error)

    threads = [threading.Thread(target=students, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    final = Counter(
        ABC[(s + t) % 3] if s % 2 else ABC[s % 3]
        for t in range(threads_n)
        for s in range(students_n)
    )
    assert stores[1].answer_count(code) == threads_n * students_n
    assert stores[0].counts(code) == {a: final[a] for a in ABC}


def test_answers_racing_the_close_are_either_confirmed_and_counted_or_refused(
    opened: Callable[..., Store],
) -> None:
    students, lecturer = opened(), opened()
    code = lecturer.open_round("lecture", "q", ABC).code
    threads_n = 6
    start = threading.Barrier(threads_n + 1)
    confirmed: list[str] = []
    refused: list[str] = []
    failures: list[BaseException] = []

    def answer(t: int) -> None:
        start.wait()
        for s in range(40):
            student = f"t{t}s{s}"
            try:
                students.answer(code, student, "a")
                confirmed.append(student)
            except RoundClosedError:
                refused.append(student)
            except BaseException as error:
                failures.append(error)

    threads = [threading.Thread(target=answer, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    start.wait()
    lecturer.close(code)  # while the students answer
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(confirmed) + len(refused) == threads_n * 40
    assert lecturer.answer_count(code) == len(confirmed)  # every confirmed one, nothing else
    assert lecturer.counts(code)["a"] == len(confirmed)
    assert all(students.own_answer(code, s) is None for s in refused)
