"""Ask the class in the app: the lecturer's *Ask* control and live panel on a slide, and the
student's join page (/join), on the store of :mod:`store` (SQLite or PostgreSQL).

- **Where the data lives.** ``streamlit run dashboard.py -- --data-dir D --store URL
  --public-url U``, or the same as the environment variables ``ATTENTION_LAB_DATA``,
  ``ATTENTION_LAB_STORE`` and ``ATTENTION_LAB_PUBLIC_URL`` (what ``deploy/serve`` sets for
  its replicas). Without a store URL: SQLite in the data directory (by default
  ``~/.local/share/attention-lab``). One store per process (``st.cache_resource``); every
  process and every host on the same store sees the same rounds.
- **The lecturer.** The lecturer key (kept in the data directory, printed by the first
  session of a server and by ``deploy/serve``) opened once as ``?key=…`` on any page makes
  this browser the lecturer's: the key leaves the address bar at once and a cookie keeps a
  token made from it (a reload, a new tab). Only the lecturer's slides have *Ask*.
- **The lecture.** One per day (its name is the date): the join code stays the same all
  day, on every replica and after a restart.
- **The student.** /join?code=… in their own language; an anonymous random id in a cookie
  (a reload keeps it); the question, their answer and, after the reveal, the class's
  answers follow the store with a fragment that looks every :data:`STUDENT_POLL` s. Nothing a
  student's session calls returns a count before the reveal (:mod:`store` refuses it).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import io
import ipaddress
import os
import re
import secrets
import socket
import sys
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import segno
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from store import (
    DATA_ENV,
    Confirmation,
    DataDirError,
    RefusedError,
    ResultRow,
    RoundInfo,
    SchemaTooNewError,
    Store,
    StoreError,
    StoreUnavailable,
    StoreUrlError,
    UnknownCodeError,
    default_data_dir,
    lecturer_key,
    normalise_code,
    open_store,
)
from ui import charts
from ui.charts.theme import ACCENT, KEY_COLOR
from ui.context import PageContext
from ui.i18n import Translator
from ui.questions import Option, Question, Truth, find
from ui.safe import plain

STORE_ENV = "ATTENTION_LAB_STORE"  # a postgresql:// URL (unset: SQLite in the data directory)
PUBLIC_ENV = "ATTENTION_LAB_PUBLIC_URL"  # the address students type (unset: guessed)
STUDENT_COOKIE = "attention_lab_student"  # the student's anonymous id
LECTURER_COOKIE = "attention_lab_lecturer"  # a token made from the lecturer key
LECTURER_POLL = 1.0  # s between the lecturer's count's looks at the store
# s between a student's screen's looks: every look reruns the screen's fragment, and at 1 s
# 300 students needed 300 reruns a second where two replicas on two cores managed 160-200
# (bench/load_votes.py: the count fell minutes behind). At 2 s the question reached the
# screens after p95 1.96-2.16 s; at 1.6 s 1.63-1.77 s, the count's budget still met.
STUDENT_POLL = 1.6
SHARED_LOOK = 0.25  # s a process shares one look at a round among its students
CODE_TRIES = 6  # wrong join codes a session may type ...
CODE_PAUSE = 60.0  # ... within this many seconds before it must wait
STUDENT_ID = re.compile(r"[0-9a-f]{32}")
HOST = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
RIGHT_COLOR = KEY_COLOR
OTHER_COLOR = "#9aa5b1"
MODEL_COLOR = ACCENT
# what a question's options or truth raise when the model they need cannot be loaded (its
# wheel missing, its file unreadable): the round cannot be asked, or shows no truth
MODEL_ERRORS = (ImportError, OSError, ValueError, RuntimeError)
MOST_NUMBERS = 12  # a number question's chart: its most given answers, the rest as "other"


@dataclass(frozen=True)
class Setup:
    """Where the class's answers live and the address students type."""

    data_dir: Path  # the data directory (the SQLite file, the lecturer key)
    url: str | None  # a PostgreSQL URL; None: SQLite in ``data_dir``
    public_url: str | None  # what students type, e.g. http://10.0.0.5:8080; None: guessed


def setup(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> Setup:
    """The setup from the script's arguments (``streamlit run dashboard.py -- --data-dir D
    --store URL --public-url U``), else the environment, else the defaults."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--data-dir")
    parser.add_argument("--store")
    parser.add_argument("--public-url")
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    data_dir = args.data_dir or env.get(DATA_ENV, "").strip()
    url = args.store or env.get(STORE_ENV, "").strip()
    public = args.public_url or env.get(PUBLIC_ENV, "").strip()
    return Setup(
        Path(data_dir).expanduser() if data_dir else default_data_dir(),
        url or None,
        public.rstrip("/") or None,
    )


@st.cache_resource(show_spinner=False)
def _open(url: str | None, data_dir: str) -> Store:
    """The process's one store (a failure is not kept: the next session tries again)."""
    return open_store(url, Path(data_dir))


@st.cache_resource(show_spinner=False)
def _key(data_dir: str) -> str:
    """The lecturer key, read (or made) once per process."""
    return lecturer_key(Path(data_dir))


def _token(key: str) -> str:
    """What the lecturer's cookie keeps: made from the key, not the key itself."""
    return hmac.new(key.encode(), b"attention-lab lecturer", hashlib.sha256).hexdigest()


def announce() -> None:
    """Print, once per server process (its first session), where the class's answers live
    and the lecturer's link, or why they cannot be kept (the server's console is where a
    lecturer starting the app looks)."""
    where = setup()
    _announce(where.url is not None, str(where.data_dir))


@st.cache_resource(show_spinner=False)
def _announce(postgres: bool, data_dir: str) -> bool:
    try:
        key = _key(data_dir)
    except DataDirError as error:
        print(f"Attention Lab · Ask the class is off: {error}", flush=True)
        return False
    store = "PostgreSQL" if postgres else f"SQLite in {data_dir}"
    print(f"Attention Lab · Ask the class: answers in {store}", flush=True)
    print(f"Attention Lab · lecturer link: /?present=1&key={key}", flush=True)
    return True


def claim(ctx: PageContext) -> None:
    """A ``?key=`` in the address: take it out of the address bar at once and, if it is the
    lecturer key, make this browser the lecturer's (a cookie keeps a token made from it)."""
    raw = st.query_params.get("key")
    if raw is None:
        return
    del st.query_params["key"]
    try:
        key = _key(str(setup().data_dir))
    except DataDirError:
        ctx.warn(ctx.t("ask.no_data_dir"))
        return
    if hmac.compare_digest(raw.encode(), key.encode()):
        st.session_state["_lecturer"] = True
        _set_cookie(LECTURER_COOKIE, _token(key), days=30)
        st.toast(ctx.t("ask.lecturer_on"), icon=":material/how_to_vote:")
    else:
        ctx.warn(ctx.t("ask.bad_key"))


def is_lecturer() -> bool:
    """Whether this browser is the lecturer's (this session claimed the key, or its cookie
    holds the token)."""
    if st.session_state.get("_lecturer"):
        return True
    token = _cookie(LECTURER_COOKIE)
    if not token:
        return False
    try:
        key = _key(str(setup().data_dir))
    except DataDirError:
        return False
    ok = hmac.compare_digest(token.encode(), _token(key).encode())
    st.session_state["_lecturer"] = ok
    return ok


def _cookie(name: str) -> str:
    """The browser's cookie ``name`` ("" without one, or outside a browser's session)."""
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) else ""


def _set_cookie(name: str, value: str, days: int) -> None:
    """Keep ``name=value`` (hex only) in this browser for ``days`` days (set by a script in
    the sidebar: it takes no room on the page)."""
    if not re.fullmatch(r"[0-9a-f]+", value):
        raise ValueError("a cookie value here is hex")
    age = days * 86400
    st.sidebar.html(
        f"<script>document.cookie = '{name}={value}; path=/; max-age={age}; SameSite=Lax';"
        "</script>",
        unsafe_allow_javascript=True,
    )


def student_id() -> str:
    """This browser's anonymous id: its cookie's, else a new random one (kept by a cookie)."""
    known = st.session_state.get("_student")
    if known:
        return known
    raw = _cookie(STUDENT_COOKIE)
    sid = raw if STUDENT_ID.fullmatch(raw) else secrets.token_hex(16)
    if sid != raw:
        _set_cookie(STUDENT_COOKIE, sid, days=365)
    st.session_state["_student"] = sid
    return sid


def lecture() -> str:
    """Today's lecture (its name: the date; one join code all day)."""
    return date.today().isoformat()


def the_store(ctx: PageContext) -> Store | None:
    """The store, or None after a translated message saying why there is none."""
    where = setup()
    try:
        return _open(where.url, str(where.data_dir))
    except DataDirError:
        st.error(ctx.t("ask.no_data_dir_at", where=plain(str(where.data_dir))))
    except StoreUrlError:
        st.error(ctx.t("ask.bad_store_url"))
    except SchemaTooNewError:
        st.error(ctx.t("ask.schema_too_new"))
    except StoreUnavailable:
        st.warning(ctx.t("ask.unavailable"), icon=":material/sync_problem:")
    return None


# the address students type


def join_address(ctx: PageContext) -> str:
    """The address students open: the public URL if set, else the host the lecturer's own
    browser used (unless it is this machine's loopback: then this machine's address on the
    local network, as a student's phone would reach it)."""
    public = setup().public_url
    if public:
        return f"{public}/join"
    headers = st.context.headers
    host = headers.get("Host", "") or ""
    if not HOST.fullmatch(host):  # shown as Markdown and put in the QR code: a name only
        host = ""
    forwarded = headers.get("X-Forwarded-Proto", "")
    scheme = forwarded if forwarded in ("http", "https") else "http"  # nginx says which
    split = urllib.parse.urlsplit(f"//{host}")
    if not _loopback(split.hostname or ""):
        return f"{scheme}://{host}/join"
    port = split.port or st.get_option("server.port")
    return f"{scheme}://{_lan_address() or '127.0.0.1'}:{port}/join"


def _loopback(name: str) -> bool:
    if name in ("", "localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


@st.cache_resource(show_spinner=False, ttl=60)
def _lan_address() -> str | None:
    """This machine's IPv4 address on its network (the route a datagram socket would take;
    connecting one sends nothing), or None without a network."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 9))  # no packet is sent
        found = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if ipaddress.ip_address(found).is_loopback else found


@st.cache_data(show_spinner=False, max_entries=16)
def qr_png(text: str) -> bytes:
    """A QR code of ``text``, drawn here (no service on the internet), as PNG."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=12, border=2)
    return out.getvalue()


# the lecturer's slide


def on_step(ctx: PageContext, question: Question, place: DeltaGenerator) -> bool:
    """On the lecturer's slide of a step with ``question``: the *Ask* control in ``place``,
    or, once asked, the round's panel there (returns True: it stands in for the step's chart
    until *Back to the chart*). Nothing for students and for slides not the lecturer's."""
    if not ctx.presenter or not is_lecturer():
        return False
    with place:
        # this session's choice; None before any: a round of this question that takes
        # answers comes back by itself (the lecturer's page reloaded, a new replica)
        shown = st.session_state.get("_ask_shown")
        info = _asked(question) if shown in (None, question.id) else None
        if info is not None and shown is None:
            if info[2].is_open:
                st.session_state["_ask_shown"] = question.id  # shown from now on
            else:
                info = None
        if info is None:
            st.button(
                ctx.t("ask.ask"),
                key=f"ask_open_{question.id}",
                icon=":material/how_to_vote:",
                on_click=_lecturer_act,
                args=("ask", question),
            )
            _failure(ctx)
            return False
        _panel(ctx, question, *info)
    return True


def _store_quietly() -> Store | None:
    """The store, or None (for callbacks, which draw nothing: the run after them says why)."""
    where = setup()
    try:
        return _open(where.url, str(where.data_dir))
    except StoreError:
        return None


def _asked(question: Question) -> tuple[Store, str, RoundInfo] | None:
    """The store, the join code and the lecture's current round, if it is a round of
    ``question`` (else None: not asked, or the lecture moved on in another tab)."""
    store = _store_quietly()
    if store is None:
        st.session_state["_ask_failed"] = "unavailable"
        return None
    try:
        code = store.join_code(lecture())
        info = store.current(code)
    except StoreError:
        st.session_state["_ask_failed"] = "unavailable"
        return None
    if info is None or info.question != question.id:
        return None
    return store, code, info


def _lecturer_act(action: str, question: Question) -> None:
    """A lecturer's button: *Ask* (open the question's last round, or round 1; its answers
    are kept), *Vote again*, *Reveal*, or *Back to the chart* (the round stays as it is)."""
    if action == "back":
        st.session_state["_ask_shown"] = ""  # chosen: the chart, until Ask again
        return
    store = _store_quietly()
    try:
        if store is None:
            raise StoreUnavailable("no store")
        name = lecture()
        code = store.join_code(name)
        if action == "ask":
            asked = [r.round_no for r in store.results(name) if r.question == question.id]
            ids = [o.id for o in question.labelled(Translator("en"))] or None
            store.open_round(name, question.id, ids, round_no=max(asked, default=1))
        elif action == "again":
            store.vote_again(code)
        elif action == "reveal":
            store.reveal(code)
    except (StoreError, RefusedError):
        st.session_state["_ask_failed"] = "unavailable"
        return
    except MODEL_ERRORS:  # the question's options need a model that cannot be loaded
        st.session_state["_ask_failed"] = "no_model"
        return
    st.session_state["_ask_shown"] = question.id  # the panel stays, whatever the round's state
    st.session_state.pop("_ask_failed", None)


def _failure(ctx: PageContext) -> None:
    """Why the lecturer's last button did nothing (said once)."""
    reason = st.session_state.pop("_ask_failed", None)
    if reason:
        st.warning(ctx.t(f"ask.{reason}"), icon=":material/sync_problem:")


def _panel(ctx: PageContext, question: Question, store: Store, code: str, info: RoundInfo) -> None:
    """The lecturer's panel of the round of ``question``: the question, the join code, a QR
    code and the address, the live count, and the lecturer's buttons; after the reveal the
    class's answers over the truth."""
    t = ctx.t
    st.html(PANEL_CSS)
    st.markdown(f"### :material/how_to_vote: {question.text(t)}")
    with st.container(horizontal=True, gap="medium", key="ask_buttons"):
        for action, icon, kind in (
            ("again", ":material/replay:", "secondary"),
            ("reveal", ":material/visibility:", "primary"),
            ("back", ":material/bar_chart:", "secondary"),
        ):
            st.button(
                t(f"ask.{action}"),
                key=f"ask_{action}",
                icon=icon,
                type=kind,
                disabled=info.revealed and action != "back",
                on_click=_lecturer_act,
                args=(action, question),
            )
        _csv_button(t, store)
    _failure(ctx)
    if info.revealed:
        _revealed(ctx, store, question, code, None)
        return
    address = join_address(ctx)
    left, right = st.columns([0.62, 0.38], vertical_alignment="center")
    with left:
        st.markdown(t("ask.join_at", address=address))
        st.html(f'<div class="lab-join-code">{code}</div>')
        _live_count(ctx, store, code)
    with right:
        st.image(qr_png(f"{address}?code={code}"), width=340)


@st.fragment(run_every=LECTURER_POLL)
def _live_count(ctx: PageContext, store: Store, code: str) -> None:
    """The count of answers in the current round, as they arrive (not the distribution)."""
    with st.container(key="ask_count"):
        try:
            info = store.current(code)
            count = store.answer_count(code)
        except StoreError:
            st.warning(ctx.t("ask.unavailable"), icon=":material/sync_problem:")
            return
        if info is None:
            return
        st.markdown(
            ctx.t("ask.count", n=count, round=info.round_no)
            + ("" if info.is_open else " · " + ctx.t("ask.closed_short"))
        )


def _csv_button(t: Translator, store: Store) -> None:
    """The lecture's results as CSV: question, round, answer, count."""
    try:
        rows = store.results(lecture())
    except StoreError:
        return
    st.download_button(
        t("ask.csv"),
        results_csv(rows).encode("utf-8"),
        file_name=f"attention-lab-{lecture()}.csv",
        mime="text/csv",
        key="ask_csv",
        icon=":material/download:",
        on_click="ignore",
    )


def results_csv(rows: Sequence[ResultRow]) -> str:
    """A lecture's results as CSV: a header, then question, round, answer, count per line."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "round", "answer", "count"])
    writer.writerows(rows)
    return out.getvalue()


# what the class answered


def _revealed(
    ctx: PageContext, store: Store, question: Question, code: str, mine: str | None
) -> None:
    """The class's answers, round by round, over the truth (and, for a student, their own)."""
    t = ctx.t
    try:
        rounds = store.revealed_counts(code)
    except (StoreError, RefusedError):
        st.warning(t("ask.unavailable"), icon=":material/sync_problem:")
        return
    try:
        truth, options = _truth(question.id), question.labelled(t)
    except MODEL_ERRORS:
        st.warning(t("ask.no_model"), icon=":material/error:")
        return
    spec = results_chart(t, question, options, rounds, truth, big=ctx.presenter)
    room = charts.Room(1500, 640) if ctx.presenter else charts.Room(360, 640)
    charts.show(ctx, spec, space=room)
    st.markdown(_truth_line(t, question, options, truth))
    if mine is not None:
        label = next((o.label for o in options if o.id == mine), mine)
        key = "ask.yours_right" if truth.is_right(mine) else "ask.yours_wrong"
        st.markdown(t(key, answer=plain(label)))


@st.cache_data(show_spinner=False, max_entries=64)
def _truth(question_id: str) -> Truth:
    """A question's truth, computed once per process (a fixed setting: the same for all)."""
    found = find(question_id)
    if found is None:
        raise KeyError(question_id)
    return found.truth()


def _truth_line(
    t: Translator, question: Question, options: tuple[Option, ...], truth: Truth
) -> str:
    if truth.number is not None:
        return t("ask.right_number", value=f"{truth.number:g}") + " " + question.why(t)
    labels = [o.label for o in options if o.id in truth.right]
    return t("ask.right", answer=plain(", ".join(labels))) + " " + question.why(t)


def results_chart(
    t: Translator,
    question: Question,
    options: tuple[Option, ...],
    rounds: Mapping[int, Mapping[str, int]],
    truth: Truth,
    big: bool = False,
) -> dict:
    """The class's answers: for every answer one bar per round (its share of that round's
    answers, the count written beside it), rounds side by side, and for a token question the
    model's attention row as one more bar; the right answers marked ✓. One narrow chart, so
    a phone shows it as large as a slide does (``big``: a slide's size)."""
    if question.kind == "number":
        given = _top_numbers(rounds)
        labels = {a: a for a in given}
    else:
        labels = {o.id: o.label for o in options}
    shown = {a: f"✓ {label}" if truth.is_right(a) else label for a, label in labels.items()}
    other = t("ask.other")
    rows: list[dict] = []
    series: list[str] = []
    for number, counts in sorted(rounds.items()):
        total = sum(counts.values())
        name = t("ask.round", round=number, n=total)
        series.append(name)
        rest = sum(n for a, n in counts.items() if a not in labels)
        for answer, label in shown.items():
            rows.append(_row(name, label, counts.get(answer, 0), total))
        if rest:
            rows.append(_row(name, other, rest, total))
    if truth.weights:
        name = t("ask.model")
        series.append(name)
        for o in options:
            weight = float(truth.weights.get(o.id, 0.0))
            text = f"{weight:.0%}" if weight >= 0.005 else ""  # no "0%" down the chart
            rows.append({"series": name, "label": shown[o.id], "share": weight, "text": text})
    order = [*shown.values(), *([other] if any(r["label"] == other for r in rows) else [])]
    colors = [OTHER_COLOR, RIGHT_COLOR, "#123c45"][: len(rounds)] + [MODEL_COLOR] * bool(
        truth.weights
    )
    y = {"field": "label", "type": "nominal", "sort": order, "title": None}
    offset = {"field": "series", "type": "nominal", "sort": series}
    x = {"field": "share", "type": "quantitative"}
    return {
        "datasets": {"answers": rows},
        "data": {"name": "answers"},
        "width": 640 if big else 300,
        "height": len(order) * ((20 if big else 13) * len(series) + 6),
        "layer": [
            {
                "mark": {"type": "bar", "cornerRadiusEnd": 2},
                "encoding": {
                    "y": y,
                    "yOffset": offset,
                    "x": {
                        **x,
                        "title": None,
                        "scale": {"domain": [0, 1]},
                        "axis": {"format": "%", "tickCount": 3},
                    },
                    "color": {
                        **offset,
                        "scale": {"domain": series, "range": colors},
                        "legend": {"orient": "top", "title": None, "direction": "vertical"},
                    },
                    "tooltip": [
                        {"field": "series", "title": t("ask.tip_round")},
                        {"field": "label", "title": t("ask.tip_answer")},
                        {"field": "text", "title": t("ask.tip_count")},
                    ],
                },
            },
            {
                "mark": {"type": "text", "align": "left", "dx": 3},
                "encoding": {"y": y, "yOffset": offset, "x": x, "text": {"field": "text"}},
            },
        ],
    }


def _row(series: str, label: str, n: int, total: int) -> dict:
    """One bar: ``n`` of a round's ``total`` answers gave the answer ``label``."""
    share = n / total if total else 0.0
    return {"series": series, "label": label, "share": share, "text": str(n) if n else ""}


def _top_numbers(rounds: Mapping[int, Mapping[str, int]]) -> list[str]:
    """A number question's most given answers (at most :data:`MOST_NUMBERS`), in numeric
    order."""
    total: dict[str, int] = {}
    for counts in rounds.values():
        for answer, n in counts.items():
            total[answer] = total.get(answer, 0) + n
    top = sorted(total, key=lambda a: -total[a])[:MOST_NUMBERS]
    return sorted(top, key=float)


# the student's screen


def join(ctx: PageContext) -> None:
    """The student's page: the join code (typed, or from the QR code's address), then the
    question the lecturer has open, live."""
    st.html(JOIN_CSS)
    st.title(ctx.t("join.title"))
    st.markdown(ctx.t("join.intro"))
    store = the_store(ctx)
    if store is None:
        return
    code = _joined_code(ctx, store)
    if code is None:
        return
    sid = student_id()
    _live(ctx, store, code, sid)


def _joined_code(ctx: PageContext, store: Store) -> str | None:
    """The lecture's code this student joined (the address's ``code``), or the box to type
    it in (None: not joined yet)."""
    t = ctx.t
    raw = st.query_params.get("code")
    if raw is not None:
        try:
            code = normalise_code(raw)
            _current(store, code)
            return code
        except UnknownCodeError:
            del st.query_params["code"]
            ctx.warn(t("ask.refused.unknown_code"))
        except StoreError:
            st.warning(t("ask.unavailable"), icon=":material/sync_problem:")
            return None
    with st.form("ask_join", border=False):
        typed = st.text_input(
            t("ask.code_label"), key="ask_code_box", max_chars=12, placeholder="ABC23"
        )
        go = st.form_submit_button(t("ask.join"), type="primary", icon=":material/login:")
    st.caption(t("ask.join_help"))
    if not go:
        return None
    tries = [s for s in st.session_state.get("_ask_tries", []) if time.time() - s < CODE_PAUSE]
    if len(tries) >= CODE_TRIES:
        st.warning(t("ask.refused.too_many_codes"), icon=":material/block:")
        return None
    try:
        code = normalise_code(typed)
        _current(store, code)
    except UnknownCodeError:
        st.session_state["_ask_tries"] = [*tries, time.time()]
        st.warning(t("ask.refused.unknown_code"), icon=":material/block:")
        return None
    except StoreError:
        st.warning(t("ask.unavailable"), icon=":material/sync_problem:")
        return None
    st.query_params["code"] = code
    st.rerun()


def _current(store: Store, code: str) -> RoundInfo | None:
    """The lecture's current round, one look shared by the process's students for
    :data:`SHARED_LOOK` s (300 students on two replicas: a few looks a second, not 300)."""
    return _shared_look(store, code, int(time.monotonic() / SHARED_LOOK))


@st.cache_data(show_spinner=False, max_entries=64)
def _shared_look(_store: Store, code: str, tick: int) -> RoundInfo | None:
    """``tick``: the look's time slot (in the cache key: a new slot, a new look)."""
    return _store.current(code)


@st.fragment(run_every=STUDENT_POLL)
def _live(ctx: PageContext, store: Store, code: str, sid: str) -> None:
    """The student's screen, following the store (a new question is on it within
    :data:`STUDENT_POLL` + :data:`SHARED_LOOK` s): waiting, the open question to answer,
    the closed round, or the revealed answers."""
    t = ctx.t
    try:
        info = _current(store, code)
    except UnknownCodeError:
        st.warning(t("ask.refused.unknown_code"), icon=":material/block:")
        return
    except StoreError:
        info = st.session_state.get("_ask_info")
        st.warning(t("ask.unavailable"), icon=":material/sync_problem:")
        if info is None:
            return
    st.session_state["_ask_info"] = info
    st.caption(t("ask.joined", code=code))
    if info is None:
        st.info(t("ask.waiting"), icon=":material/hourglass_empty:")
        return
    question = find(info.question)
    if question is None:
        st.info(t("ask.waiting"), icon=":material/hourglass_empty:")
        return
    here = (code, info.question, info.round_no)
    if st.session_state.get("_ask_here") != here:  # a new round: what this student gave in it
        st.session_state["_ask_here"] = here
        st.session_state.pop("_ask_note", None)
        st.session_state["_ask_mine"] = _own(store, code, sid)
        st.session_state["ask_pick"] = st.session_state["_ask_mine"]
    _retry(ctx, store, code, sid, info)
    title = t("ask.round_title", round=info.round_no) if info.round_no > 1 else t("ask.question")
    st.markdown(f"**{title}**")
    st.markdown(f"#### {question.text(t)}")
    mine = st.session_state.get("_ask_mine")
    if info.revealed:
        _revealed(ctx, store, question, code, mine)
        return
    try:
        options = question.labelled(t)
    except MODEL_ERRORS:
        st.warning(t("ask.no_model"), icon=":material/error:")
        return
    if info.is_open:
        _answer_box(ctx, store, question, options, code, sid)
    else:
        st.info(t("ask.closed"), icon=":material/forum:")
    _mine(ctx, options)


def _own(store: Store, code: str, sid: str) -> str | None:
    try:
        return store.own_answer(code, sid)
    except StoreError:
        return None


def _answer_box(
    ctx: PageContext,
    store: Store,
    question: Question,
    options: tuple[Option, ...],
    code: str,
    sid: str,
) -> None:
    t = ctx.t
    if question.kind == "number":
        with st.form("ask_number_form", border=False):
            typed = st.text_input(t("ask.number_label"), key="ask_number", max_chars=32)
            if st.form_submit_button(t("ask.send"), type="primary", icon=":material/send:"):
                _send(store, code, sid, typed)
        return
    labels = {o.id: o.label for o in options}
    st.pills(
        t("ask.pick"),
        [o.id for o in options],
        format_func=labels.__getitem__,
        key="ask_pick",
        on_change=_picked,
        args=(store, code, sid),
        label_visibility="collapsed",
    )


def _picked(store: Store, code: str, sid: str) -> None:
    choice = st.session_state.get("ask_pick")
    if choice is None:  # a second tap on the chosen option unselects it: keep the answer
        st.session_state["ask_pick"] = st.session_state.get("_ask_mine")
        return
    _send(store, code, sid, str(choice))


def _send(store: Store, code: str, sid: str, answer: str) -> None:
    """Send an answer: confirmed (kept as this student's), refused (why, translated), or
    the store unreachable (kept here and sent again on every look until it goes in)."""
    st.session_state.pop("_ask_pending", None)
    try:
        done: Confirmation = store.answer(code, sid, answer)
    except RefusedError as refusal:
        st.session_state["_ask_note"] = refusal.reason
        st.session_state["ask_pick"] = st.session_state.get("_ask_mine")
        return
    except StoreError:
        st.session_state["_ask_pending"] = (st.session_state.get("_ask_here"), answer)
        st.session_state["_ask_note"] = "retrying"
        return
    st.session_state["_ask_mine"] = done.answer
    st.session_state["_ask_note"] = None


def _retry(ctx: PageContext, store: Store, code: str, sid: str, info: RoundInfo) -> None:
    """An answer the store could not take yet: sent again while its round is the one on
    screen; a round that moved on meanwhile: a clear failure, never a silent loss."""
    pending = st.session_state.get("_ask_pending")
    if not pending:
        return
    here, answer = pending
    if here != st.session_state.get("_ask_here"):
        st.session_state.pop("_ask_pending", None)
        st.session_state["_ask_note"] = "lost_round"
        return
    _send(store, code, sid, answer)


def _mine(ctx: PageContext, options: tuple[Option, ...]) -> None:
    """What the student's screen says about their answer: recorded (which), retrying, or
    why it was refused."""
    t = ctx.t
    note = st.session_state.get("_ask_note")
    mine = st.session_state.get("_ask_mine")
    with st.container(key="ask_mine"):
        if note == "retrying":
            st.warning(t("ask.retrying"), icon=":material/sync_problem:")
        elif note == "lost_round":
            st.error(t("ask.lost_round"), icon=":material/error:")
        elif note:
            st.warning(t(f"ask.refused.{note}"), icon=":material/block:")
        if mine is not None:
            labels = {o.id: o.label for o in options}
            st.success(
                t("ask.recorded", answer=plain(labels.get(mine, mine))), icon=":material/check:"
            )


PANEL_CSS = """
<style>
.lab-join-code { font-size: 6rem; font-weight: 700; letter-spacing: 0.3em; line-height: 1.1;
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; color: rgb(197, 57, 72); }
.st-key-ask_count p { font-size: 2.2rem !important; font-weight: 600; }
</style>
"""
JOIN_CSS = """
<style>
.st-key-ask_code_box { max-width: 18rem; }
.st-key-ask_code_box input { font-size: 1.4rem; letter-spacing: 0.25em; text-transform: uppercase; }
.st-key-ask_pick [data-testid="stButtonGroup"] > div { flex-wrap: wrap; gap: 0.5rem; }
.st-key-ask_pick button { min-height: 3rem; min-width: 3.5rem; font-size: 1.1rem; }
</style>
"""
