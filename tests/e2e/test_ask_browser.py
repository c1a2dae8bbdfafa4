"""Ask the class (ui/ask.py) in real Chromium: a lecturer and students, each in a browser
context of their own, on a real store.

- Through nginx (``deploy/serve --replicas 2``, SQLite in the test's own data directory):
  the lecturer (1920 × 1080) asks /lookup's question; three students (an English laptop, a
  Chinese laptop, a phone) answer, one changes their mind; the lecturer's count follows
  within 5 s; the store holds exactly their last answers; nothing the server sends a
  student before the reveal carries the class's counts; after *Vote again* and *Reveal*
  every student sees the class's chart (its numbers are the store's), the right answer and
  their own, the Chinese student all in Chinese; the lecturer's CSV has the same counts.
- A student's replica SIGKILLed mid-round: their page is back, drawn by a live replica,
  with their answer, within 15 s, and the store counts it once.
- PostgreSQL stopped mid-round: an answer tapped meanwhile says "not recorded yet,
  retrying" (translated) and goes in once the database is back.
- A server restarted (SIGTERM, then started again on the same data directory): the
  student's reloaded page shows the same question and their answer, and the lecturer's
  slide the same code and count.
- Behind nginx without ``--public-url`` the slide's join address (and QR code) names
  nginx's port, not a replica's.

Everything listens on 127.0.0.1. Each test starts its own servers (and stops them) and
waits on conditions, with a bound on each wait.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pyarrow as pa
import pytest
from playwright.sync_api import Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from store import Store, lecturer_key, open_store
from tests.conftest import wait_until
from tests.e2e.conftest import (
    ROOT,
    Server,
    full_run_requests,
    no_error_on_screen,
    redraw_guard,
    shot,
    wait_idle,
    watch_redraw_guard,
)
from tests.store.conftest import start_pg_server
from ui.i18n import Translator
from ui.safe import plain
from ui.views.lookup import ASK_BEST

# The tests of this file start 1-3 app processes and up to four browser contexts each: one
# at a time (on one xdist worker), so their time limits measure the app, not each other.
pytestmark = pytest.mark.xdist_group("ask")

SERVE = ROOT / "deploy" / "serve"
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
T = {"en": Translator("en"), "zh": Translator("zh")}
EN = T["en"]
RIGHT = next(iter(ASK_BEST.truth().right))  # russia
WRONG = [o.id for o in ASK_BEST.labelled(EN) if o.id != RIGHT]  # france, egypt, ...
LAPTOP = {"viewport": {"width": 1366, "height": 768}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
CHART = '[data-testid="stVegaLiteChart"]'
MINE = ".st-key-ask_mine"


def shown(markdown: str) -> str:
    """A catalog text as the screen shows it (markdown's bold marks gone)."""
    return markdown.replace("**", "")


def label(option: str, lang: str) -> str:
    return next(o.label for o in ASK_BEST.labelled(T[lang]) if o.id == option)


def template(key: str, lang: str, *fields: str) -> re.Pattern[bytes]:
    """A catalog text as a regex over UTF-8 bytes, any number in each of its ``fields``:
    ``template("ask.round", "en", "round", "n")`` is ``Round \\d+ · answers: \\d+``."""
    marks = {name: f"\x00{i}\x00" for i, name in enumerate(fields)}
    text = re.escape(T[lang](key, **marks))
    for mark in marks.values():
        text = text.replace(re.escape(mark), r"\d+")
    return re.compile(text.encode())


def _loopback(address: str) -> str:
    if ipaddress.ip_address(address.strip("[]")) not in LOOPBACK:
        raise AssertionError(f"{address} is outside 127.0.0.0/8: no test traffic goes there")
    return address


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((_loopback("127.0.0.1"), port)) == 0


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((_loopback("127.0.0.1"), port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> int:
    """A port p such that p .. p + count - 1 are all free on 127.0.0.1."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(_free(base + i) for i in range(count)):
            return base
    raise RuntimeError("no run of free loopback ports")


# -- what the server sent a page: Streamlit's messages, decoded -------------------------


@dataclass
class Frames:
    """Every websocket message the server sent one page (each socket in turn: a reconnect
    opens a new one), kept raw and decoded as Streamlit's ``ForwardMsg``."""

    sockets: list[list[tuple[bytes, ForwardMsg]]] = field(default_factory=list)
    sent: list[list[bytes | str]] = field(default_factory=list)  # what the page sent, per socket

    def watch(self, page: Page) -> None:
        page.on("websocket", self._opened)

    def _opened(self, ws) -> None:
        got: list[tuple[bytes, ForwardMsg]] = []
        self.sockets.append(got)
        mine: list[bytes | str] = []
        self.sent.append(mine)
        ws.on("framesent", lambda payload: mine.append(payload))

        def received(payload: bytes | str) -> None:
            raw = payload.encode() if isinstance(payload, str) else payload
            got.append((raw, ForwardMsg.FromString(raw)))

        ws.on("framereceived", received)

    def all(self) -> list[tuple[bytes, ForwardMsg]]:
        return [frame for frames in self.sockets for frame in frames]

    def mark(self) -> int:
        """A point in the page's messages: ``charts(since=...)`` looks only after it."""
        return len(self.all())

    def charts(self, since: int = 0) -> list[tuple[dict, dict[str, list[dict]]]]:
        """The Vega-Lite charts the server drew on the page after ``since``: (spec, its
        datasets' rows). A chart the page had already seen comes as a reference to that
        message's hash (Streamlit's message cache): resolved from the earlier messages."""
        frames = self.all()
        by_hash = {msg.hash: msg for _, msg in frames if msg.hash}
        found = []
        for _, msg in frames[since:]:
            if msg.WhichOneof("type") == "ref_hash":
                assert msg.ref_hash in by_hash, "a reference to a message the page never got"
                msg = by_hash[msg.ref_hash]
            if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
                continue
            element = msg.delta.new_element
            if element.WhichOneof("type") != "vega_lite_chart":
                continue
            chart = element.vega_lite_chart
            data = {
                d.name: pa.ipc.open_stream(d.data.data).read_all().to_pylist()
                for d in chart.datasets
            }
            found.append((json.loads(chart.spec), data))
        return found

    def matching(self, pattern: re.Pattern[bytes], since: int = 0) -> list[bytes]:
        """The raw messages (after ``since``) in which ``pattern`` occurs."""
        return [raw for raw, _ in self.all()[since:] if pattern.search(raw)]


# -- the people in the room -------------------------------------------------------------


@dataclass
class Person:
    name: str  # for the screenshots' names
    lang: str
    page: Page
    frames: Frames
    touch: bool  # a phone: taps

    @property
    def t(self) -> Translator:
        return T[self.lang]


@pytest.fixture
def people(browser) -> Iterator[Callable[..., Person]]:
    """``people(name, url, lang, route=None, **context)``: a new browser context (its own
    cookies: its own student id) with one page that opened ``url``; with ``route`` the
    context starts with nginx's route cookie naming that replica. All closed at the end."""
    contexts = []

    def come_in(name: str, url: str, lang: str, route: str | None = None, **options) -> Person:
        context = browser.new_context(**(LAPTOP | options))
        contexts.append(context)
        base = urllib.parse.urlsplit(url)
        _loopback(base.hostname or "")
        if route is not None:
            origin = f"{base.scheme}://{base.netloc}"
            context.add_cookies([{"name": "attnlab_route", "value": route, "url": origin}])
        page = context.new_page()
        frames = Frames()
        frames.watch(page)
        page.goto(url)
        return Person(name, lang, page, frames, bool(options.get("has_touch")))

    yield come_in
    for context in contexts:
        context.close()


def lecturer_asks(people, base: str, data: Path, route: str | None = None) -> tuple[Person, str]:
    """The lecturer opens /lookup's step 2 on a slide with the key, which leaves the
    address at once, and asks the class: (the lecturer, the join code on the slide)."""
    key = lecturer_key(data)
    lecturer = people(
        "lecturer",
        f"{base}/lookup?present=1&lang=en&step=2&key={key}",
        "en",
        route,
        viewport={"width": 1920, "height": 1080},
        accept_downloads=True,
    )
    page = lecturer.page
    ask = page.get_by_role("button", name=EN("ask.ask"))
    expect(ask).to_be_visible(timeout=60_000)
    assert key not in page.evaluate("location.href"), "the key leaves the address bar"
    ask.click()
    code_box = page.locator(".lab-join-code")
    expect(code_box).to_be_visible(timeout=30_000)
    code = "".join(code_box.inner_text().split())
    assert re.fullmatch(r"[0-9A-Z]{5}", code), code
    expect(page.locator(".st-key-ask_count")).to_have_text(
        shown(EN("ask.count", n=0, round=1)), timeout=10_000
    )
    return lecturer, code


def student_joins(people, base: str, code: str, name: str, lang: str, **options) -> Person:
    """A student opens the QR code's address in their language and sees the question."""
    student = people(name, f"{base}/join?code={code}&lang={lang}", lang, **options)
    expect(student.page.get_by_text(ASK_BEST.text(student.t))).to_be_visible(timeout=60_000)
    expect(student.page.locator(".st-key-ask_pick button")).to_have_count(
        len(ASK_BEST.labelled(student.t)), timeout=30_000
    )
    return student


def option_button(student: Person, option: str):
    """An option of the student's answer box (Streamlit's pills: a radio group)."""
    return student.page.locator(".st-key-ask_pick").get_by_role(
        "radio", name=label(option, student.lang), exact=True
    )


def tap(student: Person, option: str) -> None:
    """The student picks ``option``: a phone taps it, a laptop clicks it."""
    button = option_button(student, option)
    button.tap() if student.touch else button.click()


def answer(student: Person, option: str, timeout: float = 15) -> None:
    """The student picks ``option`` and the page confirms it."""
    tap(student, option)
    expect_recorded(student, option, timeout)


def expect_recorded(student: Person, option: str, timeout: float = 15) -> None:
    recorded = shown(student.t("ask.recorded", answer=label(option, student.lang)))
    expect(student.page.locator(MINE)).to_contain_text(recorded, timeout=timeout * 1000)


def expect_count(lecturer: Person, n: int, round_no: int, timeout: float) -> None:
    """The lecturer's live count says ``n`` answers in round ``round_no`` within
    ``timeout`` seconds."""
    expect(lecturer.page.locator(".st-key-ask_count")).to_have_text(
        shown(EN("ask.count", n=n, round=round_no)), timeout=timeout * 1000
    )


def counted(**answers: int) -> dict[str, int]:
    """A round's counts as the store gives them: every option, 0 unless given."""
    return {o.id: 0 for o in ASK_BEST.labelled(EN)} | answers


def tally(answers: dict[str, str]) -> dict[str, int]:
    """The counts of a round in which each student gave ``answers[student]``."""
    return counted(**Counter(answers.values()))


def todays_code(store: Store) -> str:
    """The join code of today's lecture (the app's lecture is the date)."""
    return store.join_code(date.today().isoformat())


# -- deploy/serve on loopback --------------------------------------------------------------


@dataclass(frozen=True)
class Deployment:
    url: str
    port: int
    run_dir: Path
    data: Path
    store_url: str | None = None  # PostgreSQL's; None: SQLite in ``data``

    def store(self) -> Store:
        """A store of the test's own on the replicas' database."""
        return open_store(self.store_url, self.data)

    def replicas(self) -> list[dict]:
        """deploy/serve's replicas now (state.json): name, pid, address, port, ..."""
        state = json.loads((self.run_dir / "state.json").read_text())
        return [p for p in state["procs"] if p["name"] == "streamlit"]


def _serve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVE), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def deployment(
    chromium_path: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Deployment]:
    """deploy/serve with two replicas behind nginx on 127.0.0.1, SQLite in the test's own
    data directory (``ATTENTION_LAB_DATA``, inherited by the replicas), or (indirect
    parameter ``"postgres"``) a PostgreSQL server of the test's own; stopped at the end."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail("nginx not found (apt-get install nginx)")
        pytest.skip("nginx not found (apt-get install nginx)")
    pg = start_pg_server() if getattr(request, "param", "sqlite") == "postgres" else None
    url = pg.new_database() if pg else None
    port = _free_ports(3)
    run_dir, data = tmp_path / "deploy", tmp_path / "data"
    env = os.environ | {"ATTENTION_LAB_DATA": str(data), "ATTENTION_LAB_STORE": url or ""}
    env.pop("ATTENTION_LAB_PUBLIC_URL", None)
    common = ["--port", str(port), "--run-dir", str(run_dir)]
    try:
        tools = ["--nginx", nginx, "--python", sys.executable]
        started = _serve(env, "--replicas", "2", *common, *tools)
        assert started.returncode == 0, started.stdout + started.stderr
        yield Deployment(f"http://{_loopback('127.0.0.1')}:{port}", port, run_dir, data, url)
    finally:
        stopped = _serve(env, "stop", *common)
        if pg:
            pg.remove()
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not any(_listening(p) for p in (port, port + 1, port + 2)), "stop ends all"


def _route(person: Person) -> str:
    cookies = person.page.context.cookies()
    return next(c["value"] for c in cookies if c["name"] == "attnlab_route")


# -- 1. a class through nginx ------------------------------------------------------------


def test_a_class_answers_votes_again_and_sees_the_revealed_answers_through_nginx(
    deployment: Deployment, people
) -> None:
    base = deployment.url
    # The lecturer and the students alternate between the two replicas (the route cookie
    # nginx would give them, set beforehand): the lecturer's count and the store must add
    # up answers that arrived through both.
    lecturer, code = lecturer_asks(people, base, deployment.data, route="r1")
    students = [
        student_joins(people, base, code, "en_laptop", "en", route="r2"),
        student_joins(people, base, code, "zh_laptop", "zh", route="r1"),
        student_joins(people, base, code, "en_phone", "en", route="r2", **PHONE),
    ]
    assert [_route(p) for p in (lecturer, *students)] == ["r1", "r2", "r1", "r2"]
    with deployment.store() as store:
        assert todays_code(store) == code, "the slide shows today's lecture's code"
    shot(lecturer.page, "ask_lecturer_en_asked")

    # Round 1: the phone first gives the Chinese student's answer, then changes it.
    round_1 = {"en_laptop": WRONG[0], "zh_laptop": WRONG[1], "en_phone": RIGHT}
    answer(students[2], WRONG[1])
    for s in students:
        answer(s, round_1[s.name])
    expect_count(lecturer, 3, 1, timeout=5)
    with deployment.store() as store:
        assert store.counts(code) == tally(round_1), "exactly the students' last answers"
        assert store.answer_count(code) == 3
    for s in students:
        shot(s.page, f"ask_student_{s.name}_round1")
    assert_no_counts_before_the_reveal(students)

    # Round 2: everyone changes their answer.
    lecturer.page.get_by_role("button", name=EN("ask.again")).click()
    expect_count(lecturer, 0, 2, timeout=10)
    round_2 = {"en_laptop": RIGHT, "zh_laptop": RIGHT, "en_phone": WRONG[0]}
    for s in students:
        title = s.t("ask.round_title", round=2)
        expect(s.page.get_by_text(title, exact=True)).to_be_visible(timeout=10_000)
        # A new round: nothing picked, nothing recorded yet.
        expect(s.page.locator(".st-key-ask_pick [aria-checked='true']")).to_have_count(0)
        expect(s.page.locator(f"{MINE} [data-testid='stAlert']")).to_have_count(0)
        answer(s, round_2[s.name])
    assert_chinese(students[1], code)  # the question, the options, the note on the answer
    expect_count(lecturer, 3, 2, timeout=5)
    with deployment.store() as store:
        assert store.counts(code) == tally(round_2)
        assert store.counts(code, round_no=1) == tally(round_1), "round 1 as it was"
    assert_no_counts_before_the_reveal(students)
    marks = {s.name: s.frames.mark() for s in students}
    lecturer_mark = lecturer.frames.mark()

    lecturer.page.get_by_role("button", name=EN("ask.reveal")).click()
    with deployment.store() as store:
        revealed = wait_until(
            lambda: _revealed_or_none(store, code), "the store says the round is revealed", 10
        )
    assert revealed == {1: tally(round_1), 2: tally(round_2)}
    right = {"en": label(RIGHT, "en"), "zh": label(RIGHT, "zh")}
    for s in students:
        page = s.page
        expect(page.locator(CHART)).to_be_visible(timeout=15_000)
        expect(page.get_by_text(shown(s.t("ask.right", answer=right[s.lang])))).to_be_visible()
        mine = round_2[s.name]
        yours = "ask.yours_right" if mine == RIGHT else "ask.yours_wrong"
        expect(page.get_by_text(shown(s.t(yours, answer=label(mine, s.lang))))).to_be_visible()
        expect(page.locator(".st-key-ask_pick")).to_have_count(0)  # no more answers
        wait_idle(page)
        no_error_on_screen(page)
        shot(page, f"ask_student_{s.name}_revealed")
        # The chart the server drew on this student's screen: the store's numbers, in the
        # student's language.
        charts = s.frames.charts(since=marks[s.name])
        assert charts, "the revealed chart came over this student's websocket"
        assert chart_counts(charts[-1], s.t) == revealed
        # What the check before the reveal searched for is here now: it would have been
        # found then, had the server sent it.
        assert s.frames.matching(template("ask.round", s.lang, "round", "n"), marks[s.name])
    expect(lecturer.page.locator(CHART)).to_be_visible(timeout=15_000)
    wait_idle(lecturer.page)
    shot(lecturer.page, "ask_lecturer_en_revealed")
    lecturer_charts = lecturer.frames.charts(since=lecturer_mark)
    assert lecturer_charts and chart_counts(lecturer_charts[-1], EN) == revealed
    # The lecturer's results, downloaded (from the lecturer's replica, through nginx).
    with lecturer.page.expect_download(timeout=30_000) as got:
        lecturer.page.get_by_role("button", name=EN("ask.csv")).click()
    rows = list(csv.reader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8"))))
    assert rows[0] == ["question", "round", "answer", "count"]
    assert rows[1:] == [
        [ASK_BEST.id, str(number), option, str(n)]
        for number, counts in revealed.items()
        for option, n in counts.items()
    ]

    # The Chinese student's revealed screen is Chinese, the chart's labels too (drawn on a
    # canvas, so read from its dataset).
    zh = students[1]
    assert_chinese(zh, code)
    spec, data = zh.frames.charts(since=marks["zh_laptop"])[-1]
    words = {row[k] for row in data[spec["data"]["name"]] for k in ("series", "label")}
    assert not [w for w in words if re.search(r"[A-Za-z]", w)], words


# Every text drawn on the page: text nodes at a size (not an icon's ligature name in the
# Material Symbols font, not a 0 px text our CSS replaced, not hidden), and the text our
# CSS draws in their place.
SEEN = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const e = n.parentElement;
    if (!e || !n.textContent.trim() || e.closest('[data-testid="stIconMaterial"]')) continue;
    if (e.closest('script, style') || getComputedStyle(e).fontFamily.includes('Material')) continue;
    const r = e.getBoundingClientRect();
    if (parseFloat(getComputedStyle(e).fontSize) === 0 || r.width <= 1 || r.height <= 1
        || !e.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    out.push(n.textContent.trim());
  }
  for (const e of document.body.querySelectorAll('*'))
    for (const pseudo of ['::before', '::after']) {
      const c = getComputedStyle(e, pseudo).content;
      if (c.startsWith('"') && c.length > 2 && e.checkVisibility()) out.push(JSON.parse(c));
    }
  return out;
}"""


def assert_chinese(student: Person, code: str) -> None:
    """No Latin letters in what is drawn on the student's screen but the join code and
    "English" (the language switcher's other language, named in itself on purpose)."""
    seen = [text.replace(code, " ") for text in student.page.evaluate(SEEN)]
    latin = [w for text in seen for w in re.findall(r"[A-Za-z]{2,}", text)]
    assert [w for w in latin if w != "English"] == [], seen


def _revealed_or_none(store: Store, code: str) -> dict[int, dict[str, int]] | None:
    info = store.current(code)
    return store.revealed_counts(code) if info is not None and info.revealed else None


def assert_no_counts_before_the_reveal(students: list[Person]) -> None:
    """No student's page shows a chart, and nothing the server sent any student's page
    carries the class's answers.

    Every frame a page received is checked, raw and decoded. The server could only send
    the distribution as the results chart (a Vega-Lite element whose dataset rows are
    labelled with the round label "Round 1 · answers: 3", ``ask.round``; Streamlit ships
    them as Arrow, whose strings are plain UTF-8 in the frame) or as the lecturer's count
    ("Answers: 3 · round 1", ``ask.count``, a markdown body, also plain UTF-8). So: no
    chart element in any decoded frame, and neither label (in either language, any
    numbers) in any raw frame. After the reveal the same search finds the round label in
    the same students' frames (the test asserts that too), so it would have found counts
    sent before. The question itself is in their frames: the capture sees the screen."""
    labels = [
        template(key, lang, "round", "n")
        for key in ("ask.round", "ask.count")
        for lang in ("en", "zh")
    ]
    for s in students:
        expect(s.page.locator(CHART)).to_have_count(0)
        question = ASK_BEST.text(s.t).encode()
        assert any(question in raw for raw, _ in s.frames.all()), "frames are captured"
        assert not s.frames.charts(), f"{s.name}: a chart before the reveal"
        for pattern in labels:
            assert not s.frames.matching(pattern), f"{s.name}: {pattern.pattern!r} was sent"


def chart_counts(chart: tuple[dict, dict[str, list[dict]]], t: Translator) -> dict:
    """The class's answers as the results chart on a screen says them: {round: {option:
    count}} from the chart's dataset (its series named by ``ask.round`` in order, its bars
    by the options' labels, ✓ on the right one, each bar's count written beside it)."""
    spec, data = chart
    rows = data[spec["data"]["name"]]
    labels = {
        (f"✓ {o.label}" if ASK_BEST.truth().is_right(o.id) else o.label): o.id
        for o in ASK_BEST.labelled(t)
    }
    series = list(dict.fromkeys(row["series"] for row in rows))
    found: dict[int, dict[str, int]] = {}
    for number, name in enumerate(series, 1):
        counts = {labels[r["label"]]: int(r["text"] or 0) for r in rows if r["series"] == name}
        assert name == t("ask.round", round=number, n=sum(counts.values())), name
        for row in rows:
            if row["series"] == name:
                total = sum(counts.values())
                assert row["share"] == pytest.approx(counts[labels[row["label"]]] / total)
        found[number] = counts
    return found


def test_behind_nginx_the_join_address_on_the_slide_is_nginx_s(
    deployment: Deployment, people
) -> None:
    """The address (and QR code) the slide gives students must reach nginx: its port, not
    a replica's (the replicas listen on loopback only; a student there would also skip
    nginx's sticky routing)."""
    lecturer, _ = lecturer_asks(people, deployment.url, deployment.data)
    link = lecturer.page.locator('[data-testid="stMain"] a[href$="/join"]').first
    address = urllib.parse.urlsplit(link.get_attribute("href"))
    replicas = {p["port"] for p in deployment.replicas()}
    assert address.port not in replicas, f"{address.geturl()}: a replica's port"
    assert address.port == deployment.port, address.geturl()


# -- 2. a student's replica lost mid-round ---------------------------------------------


@pytest.mark.parametrize("deployment", ["sqlite", "postgres"], indirect=True)
def test_a_student_whose_replica_is_killed_mid_round_is_back_with_their_answer(
    deployment: Deployment, people
) -> None:
    base = deployment.url
    lecturer, code = lecturer_asks(people, base, deployment.data, route="r1")
    student = student_joins(people, base, code, "en_laptop", "en", route="r2")
    answer(student, WRONG[2])
    # The replica serving the student: nginx's route cookie names it (r<i>: the i-th).
    route = _route(student)
    assert route == "r2" and _route(lecturer) == "r1"
    victim = deployment.replicas()[int(route[1:]) - 1]
    assert victim["port"] == deployment.port + int(route[1:])
    sockets = len(student.frames.sockets)
    assert sockets == 1
    recorded = student.t("ask.recorded", answer=plain(label(WRONG[2], "en"))).encode()

    watch_redraw_guard(student.page)  # deploy/reconnect.js: no input until redrawn
    killed = time.monotonic()
    os.kill(victim["pid"], signal.SIGKILL)

    def redrawn() -> bool:
        """A new websocket, and the server it reached drew the student's answer on it (not
        the old page still on screen: a new session found it in the store by the
        student's cookie)."""
        return any(recorded in raw for frames in student.frames.sockets[1:] for raw, _ in frames)

    def left() -> float:
        """Seconds left of the 15 s budget since the kill."""
        return max(0.1, killed + 15 - time.monotonic())

    what = "a live replica redraws the student's page with their answer"
    wait_until(redrawn, what, left(), 0.1, pause=lambda s: student.page.wait_for_timeout(s * 1e3))
    expect(student.page.get_by_text(ASK_BEST.text(student.t))).to_be_visible(timeout=left() * 1e3)
    expect_recorded(student, WRONG[2], timeout=left())
    assert time.monotonic() - killed < 15
    assert _route(student) == route, "back on its own replica, restarted: the class stays spread"
    # /join has a fragment on a timer, so Streamlit's frontend asks for the run itself:
    # deploy/reconnect.js adds none (a second would double a restarted replica's work).
    assert full_run_requests(student.frames.sent[1]) == 1
    # No tap was taken between the reconnect and that run's end (it would have been lost).
    (on, t_on), (off, t_off) = redraw_guard(student.page)
    assert on and not off and t_off - t_on < 10_000, "on, then off when the run ended"
    assert deployment.replicas()[int(route[1:]) - 1]["pid"] != victim["pid"]
    no_error_on_screen(student.page)
    shot(student.page, "ask_student_en_laptop_after_replica_loss")
    with deployment.store() as store:
        assert store.counts(code) == counted(**{WRONG[2]: 1}), "counted exactly once"
        assert store.answer_count(code) == 1

    # The page works on its new replica: a changed answer replaces the first one.
    answer(student, RIGHT)
    expect_count(lecturer, 1, 1, timeout=5)
    with deployment.store() as store:
        assert store.counts(code) == counted(**{RIGHT: 1})


# -- 3. PostgreSQL lost mid-round --------------------------------------------------------


@pytest.fixture
def pg():
    server = start_pg_server()
    yield server
    server.remove()


@pytest.fixture
def app_servers() -> Iterator[list[Server]]:
    """Servers a test starts (``app_servers.append(Server(...))``), all stopped at the end."""
    started: list[Server] = []
    yield started
    for server in started:
        if server.proc.poll() is None:
            server.stop()


def test_an_answer_tapped_while_postgresql_is_down_goes_in_once_it_is_back(
    chromium_path: Path, pg, app_servers: list[Server], people, tmp_path: Path
) -> None:
    url = pg.new_database()
    env = {"ATTENTION_LAB_DATA": str(tmp_path / "data"), "ATTENTION_LAB_STORE": url}
    server = Server(env)
    app_servers.append(server)
    lecturer, code = lecturer_asks(people, server.url, tmp_path / "data")
    students = [
        student_joins(people, server.url, code, "en_laptop", "en"),
        student_joins(people, server.url, code, "zh_phone", "zh", **PHONE),
    ]
    picks = {"en_laptop": RIGHT, "zh_phone": WRONG[0]}

    pg.stop()
    expect(lecturer.page.locator(".st-key-ask_count")).to_contain_text(
        shown(EN("ask.unavailable")), timeout=10_000
    )
    for s in students:
        tap(s, picks[s.name])
        expect(s.page.locator(MINE)).to_contain_text(shown(s.t("ask.retrying")), timeout=10_000)
        assert s.page.locator('[data-testid="stException"]').count() == 0
        shot(s.page, f"ask_student_{s.name}_retrying")

    pg.start()
    for s in students:
        expect_recorded(s, picks[s.name], timeout=10)
        expect(s.page.locator(MINE)).not_to_contain_text(shown(s.t("ask.retrying")))
        no_error_on_screen(s.page)
    with open_store(url) as store:
        assert store.counts(code) == counted(**{RIGHT: 1, WRONG[0]: 1})
    expect_count(lecturer, 2, 1, timeout=10)
    no_error_on_screen(lecturer.page)


# -- 4. a server restart ------------------------------------------------------------------


def test_a_restarted_server_keeps_the_round_and_the_students_answer(
    chromium_path: Path, app_servers: list[Server], people, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = {"ATTENTION_LAB_DATA": str(data), "ATTENTION_LAB_STORE": ""}
    server = Server(env)
    app_servers.append(server)
    lecturer, code = lecturer_asks(people, server.url, data)
    student = student_joins(people, server.url, code, "zh_phone", "zh", **PHONE)
    answer(student, WRONG[3])
    expect_count(lecturer, 1, 1, timeout=5)

    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)  # a clean stop, not the fixture's SIGKILL
    assert not _listening(server.port)
    again = Server(env, port=server.port)  # the same address: the pages reload it
    app_servers.append(again)

    student.page.reload()
    expect(student.page.get_by_text(ASK_BEST.text(student.t))).to_be_visible(timeout=60_000)
    expect_recorded(student, WRONG[3])
    expect(option_button(student, WRONG[3])).to_have_attribute(
        "aria-checked", "true", timeout=5_000
    )
    no_error_on_screen(student.page)
    shot(student.page, "ask_student_zh_phone_after_restart")
    # The lecturer's browser is still the lecturer's (its cookie); asking again reopens the
    # same round of the same lecture: the same code, the student's answer still counted.
    lecturer.page.reload()
    panel, ask = (
        lecturer.page.locator(".lab-join-code"),
        lecturer.page.get_by_role("button", name=EN("ask.ask")),
    )
    expect(panel.or_(ask)).to_be_visible(timeout=60_000)
    if ask.is_visible():  # the new process has no session: the panel is asked for again
        ask.click()
    expect(panel).to_be_visible(timeout=30_000)
    assert "".join(lecturer.page.locator(".lab-join-code").inner_text().split()) == code
    expect_count(lecturer, 1, 1, timeout=10)
    with open_store(None, data) as store:
        assert store.counts(code) == counted(**{WRONG[3]: 1})
