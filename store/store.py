"""Ask the class: a lecture's rounds of questions and its students' answers, in a database.

A lecture (named by the lecturer, e.g. ``"2027-03-04 attention"``) has one short join code
that its students type. The lecturer opens a round of a question; while it is open each
student has one answer (the last one counts); *vote again* closes it and opens the
question's next round; *reveal* closes it and lets students see every round's counts of
the question. Before the reveal nothing a student may call returns a count.

Answers are short strings: one of the round's options (a token index, a choice id), or,
for a round without options, a finite number (kept in one spelling, so "2" and "2.0" are
one answer). A refused request raises a ``RefusedError`` subclass, whose ``reason`` the UI
translates, and stores nothing.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from store.db import Database, Tx

JOIN_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L look-alikes
JOIN_CODE_LENGTH = 5  # 31^5: 28.6 million codes
MAX_ANSWER_CHARS = 64  # an option id, a token index or a number: short
MAX_STUDENT_CHARS = 64  # the browser's random id
MAX_OPTIONS = 64  # a sentence's tokens at most

# Round columns as every query reads them: id, question, round_no, options, is_open, revealed.
_ROUND = "r.id, r.question, r.round_no, r.options, r.is_open, r.revealed"


class RefusedError(Exception):
    """A request refused: nothing stored, nothing else affected. ``reason`` is a stable key
    the UI translates."""

    reason = "refused"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.reason)


class UnknownCodeError(RefusedError):
    """No lecture has this join code (mistyped or guessed)."""

    reason = "unknown_code"


class RoundClosedError(RefusedError):
    """The round is closed (or none is open yet): it takes no more answers."""

    reason = "round_closed"


class NotAnOptionError(RefusedError):
    """The answer is not one of the round's options."""

    reason = "not_an_option"


class NotANumberError(RefusedError):
    """The round asks for a number and the answer is not a finite one."""

    reason = "not_a_number"


class TooManyAnswersError(RefusedError):
    """This student changed their answer too often within the flood window."""

    reason = "too_many"


class BadStudentError(RefusedError):
    """The student id is empty, too long or not printable."""

    reason = "bad_student"


class NotRevealedError(RefusedError):
    """The round's counts are asked for before the lecturer revealed them."""

    reason = "not_revealed"


@dataclass(frozen=True)
class RoundInfo:
    """A round as anyone may see it: the question and its state, never answers or counts."""

    code: str  # the lecture's join code
    question: str  # the question's id (the UI knows its words)
    round_no: int  # 1 for the first vote, 2 after "vote again", ...
    options: tuple[str, ...] | None  # the allowed answers; None: a number
    is_open: bool  # takes answers now
    revealed: bool  # the lecturer revealed the class's answers


@dataclass(frozen=True)
class Confirmation:
    """An answer that is in the store: the student's screen may say so."""

    code: str
    question: str
    round_no: int
    answer: str  # as stored (a number in its one spelling)
    changed: bool  # it replaced the student's earlier answer in this round


class ResultRow(NamedTuple):
    """One line of a lecture's results: how many students gave ``answer`` in a round."""

    question: str
    round_no: int
    answer: str
    count: int


class Store:
    """A lecture's rounds and answers in one database (``open_store`` makes one). Any number
    of ``Store`` objects, in one process or several, may share the database; each is safe
    to use from many threads."""

    def __init__(
        self,
        db: Database,
        flood_limit: int = 20,
        flood_window: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``flood_limit``: the answers (first one and changes) one student may send to a
        round within ``flood_window`` seconds; ``clock``: the time in seconds."""
        if flood_limit < 1 or flood_window <= 0:
            raise ValueError("flood_limit must be >= 1 and flood_window > 0")
        self._db = db
        self.flood_limit = flood_limit
        self.flood_window = flood_window
        self._clock = clock

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._db.kind

    def disconnect(self) -> None:
        """Close the store's connections (the data stays); the store is not used afterwards."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disconnect()

    # the lecturer

    def join_code(self, lecture: str) -> str:
        """The lecture's join code, made on the first call and the same afterwards."""
        _check_text(lecture, "lecture")
        return self._db.run(lambda tx: self._lecture_code(tx, lecture), write=True)

    def open_round(
        self,
        lecture: str,
        question: str,
        options: Sequence[str] | None = None,
        round_no: int = 1,
    ) -> RoundInfo:
        """Open round ``round_no`` of ``question`` (``options``: the allowed answers; None: a
        number) as the lecture's current round; its join code is made on the lecture's
        first round; the round it replaces is closed. Asking an existing round again
        reopens it with its answers kept (its options must be the same); a revealed round
        stays revealed and closed."""
        _check_text(lecture, "lecture")
        _check_text(question, "question")
        if round_no < 1:
            raise ValueError("round_no starts at 1")
        stored = _options_json(options)

        def work(tx: Tx) -> RoundInfo:
            code = self._lecture_code(tx, lecture)
            (previous,) = tx.one(
                "SELECT current_round FROM lectures WHERE lecture = ?" + tx.lock("UPDATE"),
                (lecture,),
            )
            found = tx.one(
                "SELECT id, options, revealed FROM rounds"
                " WHERE lecture = ? AND question = ? AND round_no = ?",
                (lecture, question, round_no),
            )
            now = self._clock()
            if found is None:
                (round_id,) = tx.one(
                    "INSERT INTO rounds (lecture, question, round_no, options, is_open, revealed,"
                    " opened_at) VALUES (?, ?, ?, ?, 1, 0, ?) RETURNING id",
                    (lecture, question, round_no, stored, now),
                )
            else:
                round_id, had, revealed = found
                if had != stored:
                    raise ValueError(f"{question} round {round_no} was asked with other options")
                if not revealed:
                    tx.execute(
                        "UPDATE rounds SET is_open = 1, closed_at = NULL WHERE id = ?", (round_id,)
                    )
            if previous is not None and previous != round_id:  # the class moves on with it
                tx.execute(
                    "UPDATE rounds SET is_open = 0, closed_at = coalesce(closed_at, ?)"
                    " WHERE id = ?",
                    (now, previous),
                )
            tx.execute(
                "UPDATE lectures SET current_round = ? WHERE lecture = ?", (round_id, lecture)
            )
            return self._round(tx, code)

        return self._db.run(work, write=True)

    def close(self, code: str) -> RoundInfo:
        """Close the lecture's current round: it takes no more answers."""
        return self._change(
            code, "UPDATE rounds SET is_open = 0, closed_at = coalesce(closed_at, ?) WHERE id = ?"
        )

    def reveal(self, code: str) -> RoundInfo:
        """Close the current round and reveal every round of its question: students may now
        see their counts (``revealed_counts``)."""

        def work(tx: Tx, round_id: int, info: RoundInfo) -> None:
            tx.execute(
                "UPDATE rounds SET is_open = 0, closed_at = coalesce(closed_at, ?) WHERE id = ?",
                (self._clock(), round_id),
            )
            tx.execute(
                "UPDATE rounds SET revealed = 1 WHERE question = ? AND lecture ="
                " (SELECT lecture FROM lectures WHERE code = ?)",
                (info.question, info.code),
            )

        return self._lecturer(code, work)

    def vote_again(self, code: str) -> RoundInfo:
        """Close the current round and open the next round of the same question (same
        options), which becomes the current round."""

        def work(tx: Tx, round_id: int, info: RoundInfo) -> None:
            now = self._clock()
            tx.execute(
                "UPDATE rounds SET is_open = 0, closed_at = coalesce(closed_at, ?) WHERE id = ?",
                (now, round_id),
            )
            lecture, options = tx.one(
                "SELECT lecture, options FROM rounds WHERE id = ?", (round_id,)
            )
            (last,) = tx.one(
                "SELECT max(round_no) FROM rounds WHERE lecture = ? AND question = ?",
                (lecture, info.question),
            )
            (new_id,) = tx.one(
                "INSERT INTO rounds (lecture, question, round_no, options, is_open, revealed,"
                " opened_at) VALUES (?, ?, ?, ?, 1, 0, ?) RETURNING id",
                (lecture, info.question, last + 1, options, now),
            )
            tx.execute("UPDATE lectures SET current_round = ? WHERE lecture = ?", (new_id, lecture))

        return self._lecturer(code, work)

    def counts(self, code: str, round_no: int | None = None) -> dict[str, int]:
        """The lecturer's distribution: how many students gave each answer in round
        ``round_no`` of the current question (None: the current round); every option is
        listed, with 0 if nobody chose it. Never for a student before the reveal."""
        code = normalise_code(code)

        def work(tx: Tx) -> dict[str, int]:
            info = self._round(tx, code)
            if info is None:
                return {}
            wanted = info.round_no if round_no is None else round_no
            return self._counts(tx, code, info, wanted)

        return self._db.run(work)

    def answer_count(self, code: str) -> int:
        """How many students have an answer in the current round (the lecturer's live count)."""

        code = normalise_code(code)

        def work(tx: Tx) -> int:
            row = tx.one(
                "SELECT (SELECT count(*) FROM answers a WHERE a.round_id = l.current_round)"
                " FROM lectures l WHERE l.code = ?",
                (code,),
            )
            if row is None:
                raise UnknownCodeError()
            return int(row[0])

        return self._db.run(work)

    def results(self, lecture: str) -> list[ResultRow]:
        """Every round of the lecture (in the order asked) and its counts, for a CSV export;
        a round's options nobody chose appear with 0."""

        def work(tx: Tx) -> list[ResultRow]:
            rounds = tx.execute(
                "SELECT id, question, round_no, options FROM rounds WHERE lecture = ? ORDER BY id",
                (lecture,),
            )
            first: dict[str, int] = {}
            for round_id, question, _, _ in rounds:
                first.setdefault(question, round_id)
            rows = []
            for round_id, question, number, options in sorted(
                rounds, key=lambda r: (first[r[1]], r[2])
            ):
                counted = dict.fromkeys(json.loads(options) if options else (), 0)
                counted.update(_grouped(tx, round_id))
                rows.extend(ResultRow(question, number, a, n) for a, n in counted.items())
            return rows

        return self._db.run(work)

    # the student

    def current(self, code: str) -> RoundInfo | None:
        """What a student's screen shows: the lecture's current round (open, closed or
        revealed), or None before its first round. Never any count."""
        code = normalise_code(code)
        return self._db.run(lambda tx: self._round(tx, code))

    def answer(self, code: str, student: str, answer: str) -> Confirmation:
        """Record ``student``'s answer to the current round: their last answer counts, and
        they may change it while the round is open. RefusedError (``RefusedError`` subclasses): an
        unknown code, a closed round, an answer outside the options or not a finite number,
        a bad student id, or more than ``flood_limit`` answers within ``flood_window``."""
        code = normalise_code(code)
        _check_student(student)

        def work(tx: Tx) -> Confirmation:
            row = tx.one("SELECT current_round FROM lectures WHERE code = ?", (code,))
            if row is None:
                raise UnknownCodeError()
            if row[0] is None:
                raise RoundClosedError("no round is open yet")
            found = tx.one(
                f"SELECT {_ROUND} FROM rounds r WHERE r.id = ?" + tx.lock("SHARE"), (row[0],)
            )
            round_id, info = found[0], _info(code, found)
            if not info.is_open:
                raise RoundClosedError()
            stored = _valid_answer(answer, info.options)
            now = self._clock()
            fresh = "excluded.window_start - answers.window_start >= ?"
            done = tx.one(
                "INSERT INTO answers (round_id, student, answer, changes, window_start,"
                " window_count, answered_at) VALUES (?, ?, ?, 0, ?, 1, ?)"
                " ON CONFLICT (round_id, student) DO UPDATE SET"
                " answer = excluded.answer, changes = answers.changes + 1,"
                f" window_count = CASE WHEN {fresh} THEN 1 ELSE answers.window_count + 1 END,"
                f" window_start = CASE WHEN {fresh} THEN excluded.window_start"
                " ELSE answers.window_start END,"
                " answered_at = excluded.answered_at"
                f" WHERE {fresh} OR answers.window_count < ?"
                " RETURNING changes",
                (
                    *(round_id, student, stored, now, now),
                    *(self.flood_window, self.flood_window, self.flood_window),
                    self.flood_limit,
                ),
            )
            if done is None:
                raise TooManyAnswersError(
                    f"more than {self.flood_limit} answers in {self.flood_window:g} s"
                )
            return Confirmation(code, info.question, info.round_no, stored, done[0] > 0)

        return self._db.run(work, write=True)

    def own_answer(self, code: str, student: str) -> str | None:
        """The student's answer in the current round (None: none yet), e.g. after a reload."""
        code = normalise_code(code)
        row = self._db.run(
            lambda tx: tx.one(
                "SELECT a.answer FROM lectures l JOIN answers a ON a.round_id = l.current_round"
                " WHERE l.code = ? AND a.student = ?",
                (code, student),
            )
        )
        return row[0] if row else None

    def revealed_counts(self, code: str) -> dict[int, dict[str, int]]:
        """What a student sees after the reveal: each round of the current question and its
        counts (as ``counts``). Raises ``NotRevealedError`` before the reveal."""
        code = normalise_code(code)

        def work(tx: Tx) -> dict[int, dict[str, int]]:
            info = self._round(tx, code)
            if info is None or not info.revealed:
                raise NotRevealedError()
            numbers = tx.execute(
                "SELECT r.round_no FROM rounds r JOIN lectures l ON l.lecture = r.lecture"
                " WHERE l.code = ? AND r.question = ? AND r.revealed = 1 ORDER BY r.round_no",
                (code, info.question),
            )
            return {n: self._counts(tx, code, info, n) for (n,) in numbers}

        return self._db.run(work)

    # inside a transaction

    def _lecture_code(self, tx: Tx, lecture: str) -> str:
        """The lecture's join code, made (and the lecture with it) if it has none."""
        while True:
            row = tx.one("SELECT code FROM lectures WHERE lecture = ?", (lecture,))
            if row is not None:
                return row[0]
            code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(JOIN_CODE_LENGTH))
            tx.execute(
                "INSERT INTO lectures (lecture, code, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (lecture, code, self._clock()),
            )  # a taken code inserts nothing and the loop draws another

    def _round(self, tx: Tx, code: str) -> RoundInfo | None:
        """The lecture's current round; raises ``UnknownCodeError``."""
        row = tx.one(
            f"SELECT l.current_round, {_ROUND} FROM lectures l"
            " LEFT JOIN rounds r ON r.id = l.current_round WHERE l.code = ?",
            (code,),
        )
        if row is None:
            raise UnknownCodeError()
        return None if row[0] is None else _info(code, row[1:])

    def _counts(self, tx: Tx, code: str, info: RoundInfo, round_no: int) -> dict[str, int]:
        row = tx.one(
            "SELECT r.id, r.options FROM rounds r JOIN lectures l ON l.lecture = r.lecture"
            " WHERE l.code = ? AND r.question = ? AND r.round_no = ?",
            (code, info.question, round_no),
        )
        if row is None:
            return {}
        counted = dict.fromkeys(json.loads(row[1]) if row[1] else (), 0)
        counted.update(_grouped(tx, row[0]))
        return counted

    def _lecturer(self, code: str, change: Callable[[Tx, int, RoundInfo], None]) -> RoundInfo:
        """Run a lecturer's ``change`` on the current round (the lecture locked meanwhile)
        and return the current round after it; raises ``UnknownCodeError``, or ``RoundClosedError``
        before the lecture's first round."""
        code = normalise_code(code)

        def work(tx: Tx) -> RoundInfo:
            row = tx.one(
                "SELECT current_round FROM lectures WHERE code = ?" + tx.lock("UPDATE"), (code,)
            )
            if row is None:
                raise UnknownCodeError()
            if row[0] is None:
                raise RoundClosedError("the lecture has no round yet")
            change(tx, row[0], self._round(tx, code))
            return self._round(tx, code)

        return self._db.run(work, write=True)

    def _change(self, code: str, sql: str) -> RoundInfo:
        return self._lecturer(code, lambda tx, rid, _: tx.execute(sql, (self._clock(), rid)))


def open_store(
    url: str | None = None,
    data_dir: Path | None = None,
    *,
    timeout: float = 5.0,
    flood_limit: int = 20,
    flood_window: float = 60.0,
    clock: Callable[[], float] = time.time,
) -> Store:
    """A store on ``url``: None or ``sqlite:///<file>`` for SQLite (WAL; None: the file
    ``attention-lab.sqlite3`` in ``data_dir``, by default ``$ATTENTION_LAB_DATA`` or
    ``~/.local/share/attention-lab``, made on first use), ``postgresql://…`` for PostgreSQL.
    The schema is made or checked on opening. ``timeout``: seconds to wait for a locked
    SQLite file or a PostgreSQL connection before ``StoreUnavailable``. Raises
    ``DataDirError``, ``SchemaTooNewError``, ``StoreUrlError`` or ``StoreUnavailable``."""
    db = Database(url, data_dir, timeout=timeout)
    return Store(db, flood_limit=flood_limit, flood_window=flood_window, clock=clock)


def normalise_code(code: str) -> str:
    """A join code as typed (any case, spaces or dashes) in its stored form; raises
    ``UnknownCodeError`` for one that cannot be a code."""
    cleaned = "".join(str(code).split()).replace("-", "").upper()
    if len(cleaned) != JOIN_CODE_LENGTH or any(c not in JOIN_ALPHABET for c in cleaned):
        raise UnknownCodeError()
    return cleaned


def _info(code: str, row: Sequence) -> RoundInfo:
    _, question, number, options, is_open, revealed = row
    listed = tuple(json.loads(options)) if options is not None else None
    return RoundInfo(code, question, int(number), listed, bool(is_open), bool(revealed))


def _grouped(tx: Tx, round_id: int) -> dict[str, int]:
    rows = tx.execute(
        "SELECT answer, count(*) FROM answers WHERE round_id = ? GROUP BY answer ORDER BY answer",
        (round_id,),
    )
    return {answer: int(n) for answer, n in rows}


def _options_json(options: Sequence[str] | None) -> str | None:
    if options is None:
        return None
    listed = [str(option) for option in options]
    if not 1 <= len(listed) <= MAX_OPTIONS or len(set(listed)) != len(listed):
        raise ValueError(f"a round has 1 to {MAX_OPTIONS} different options")
    for option in listed:
        _check_text(option, "option", MAX_ANSWER_CHARS)
    return json.dumps(listed, ensure_ascii=False)


def _valid_answer(answer: str, options: tuple[str, ...] | None) -> str:
    """The answer as stored; raises ``NotAnOptionError`` or ``NotANumberError``."""
    text = str(answer).strip()
    if options is not None:
        if text not in options:
            raise NotAnOptionError()
        return text
    if len(text) > MAX_ANSWER_CHARS:
        raise NotANumberError("too long for a number")
    try:
        value = float(text)
    except ValueError:
        raise NotANumberError() from None
    if not math.isfinite(value):
        raise NotANumberError("not finite")
    if value == 0:
        return "0"  # -0 and 0 are one answer
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _check_student(student: str) -> None:
    if (
        not isinstance(student, str)
        or not 1 <= len(student) <= MAX_STUDENT_CHARS
        or not student.isprintable()
    ):
        raise BadStudentError()


def _check_text(text: str, what: str, most: int = 200) -> None:
    if not isinstance(text, str) or not 1 <= len(text) <= most or not text.isprintable():
        raise ValueError(f"a {what} is 1 to {most} printable characters")
