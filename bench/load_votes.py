"""Ask the class in a lecture hall: N students vote through ``deploy/serve`` (issue 41).

    .venv/bin/python bench/load_votes.py                          # 300 students, SQLite
    .venv/bin/python bench/load_votes.py --kill-replica 3         # SIGKILL r1 3 s in
    .venv/bin/python bench/load_votes.py --store postgres --hosts 2

Starts ``deploy/serve --replicas 2`` on loopback with a data directory of its own (SQLite),
or, with ``--store postgres``, a throwaway PostgreSQL server first (``initdb``/``pg_ctl``
from PATH, /usr/local/bin or Debian's /usr/lib/postgresql/<ver>/bin; as the ``postgres``
user when run as root; 127.0.0.1 and a free port; stopped and deleted at the end).
``--hosts 2``: two app "hosts", ``deploy/serve --role replicas`` with one replica each on
127.0.0.2 and 127.0.0.3 (each its own data directory, the lecturer key copied from the
first), behind ``deploy/serve --role proxy`` on 127.0.0.1 (PostgreSQL required).

Every session is a browser-less tab that speaks Streamlit's websocket protocol through
nginx (the venv's streamlit protobuf classes), as the frontend does: it fetches the page
(nginx sets the route cookie), opens the websocket with its cookies, asks for the first
run, reruns every ``st.fragment(run_every=…)`` on the server's timer, keeps the widget
values it holds, runs the cookie assignments of the page's scripts (the only JavaScript of
the app it needs), and after a dropped websocket reconnects as Streamlit 1.67's frontend
does (250-500 ms, health polled with backoff, then one full rerun: the frontend asks for it
because both pages have a fragment on a timer, so ``deploy/reconnect.js`` adds none). nginx
sends a reconnect to the tab's own replica, waiting while it restarts. What it reads is
what a screen shows: the elements left after each run (stale ones pruned as the frontend
prunes them).

* The lecturer: ``/lookup?present=1&step=2&key=<KEY>`` (the lecturer key from
  ``python -m store key``), pinned to the second replica (route ``r2``), presses *Ask the
  class* on the slide: the app opens the round and shows the live count (``ask_count``).
* ``--students`` students (each an anonymous id of its own in the ``attention_lab_student``
  cookie) join ``/join?code=<CODE>`` within ``--join-within`` s before the round opens;
  each taps an option (``ask_pick``) at a random moment within 10 s of the round opening,
  and about 20 % tap another one 1-4 s after their first is confirmed. A student whose
  screen does not show the answer as recorded after a reconnect taps it again, as a person
  would. Confirmed: the screen's ``ask_mine`` says the answer is recorded.
* Three more push the limits: one answers, then taps 39 more times 0.1 s apart (the store
  refuses beyond 20 answers a minute; what its screen says at the end confirms its last
  tap of that answer), one sends raw widget values that are no option's label and then a
  list of two labels, one opens ``/join`` with a wrong code and then types 8 wrong codes.
  The lecturer's count includes the first two.
* ``--kill-replica S``: replica r1 (the first host's) gets SIGKILL S s after the round
  opens; deploy/serve restarts it.

At the end the bench closes the round through the store and reads its rows. Its last line:
``votes: sent S, confirmed C, counted K, lost L, duplicated D, p95 to the lecturer's count
T s``. sent: every tap sent (abusers' too); confirmed: the taps whose confirmation a screen
showed; counted: the store's answers in the round; lost: students whose last confirmed
answer is not the store's; duplicated: store rows beyond one per student. T: for each
session whose first answer was confirmed, ranked k-th by the time its screen confirmed it,
the time from its tap until the lecturer's screen first showed a count >= k; p95 over
them. Budget (300 students): lost 0, duplicated 0, counted = the confirmed students' last
answers, T <= 2 s. Only ever talks to 127.0.0.0/8; bounded in sessions and time; stops
every process it started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import os
import pwd
import random
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import common
import psycopg
import websockets
from load_class import SERVE, cpu_s, machine_busy_s
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect as ws_connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Store, open_store  # noqa: E402 (the repository's root is on the path now)

FRONT = "127.0.0.1"  # where nginx listens; every address is checked to be in 127.0.0.0/8
HOSTS = ("127.0.0.2", "127.0.0.3")  # --hosts 2: the app hosts
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
FINISHED_EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN
STUDENT_COOKIE = "attention_lab_student"  # ui/ask.py's cookies
ROUTE_COOKIE = "attnlab_route"  # deploy/nginx.conf.template's
QUESTION = "lookup.best"  # the question the lecturer asks (ui/views/lookup.py: ASK_BEST) …
QUESTION_STEP = 2  # … on /lookup's second step (pages/1_lookup.py)
ANSWER_WITHIN = 10.0  # s after the round opens: every student's first tap
CHANGERS = 0.2  # the share of students who change their answer
FLOOD_TAPS = 40  # the flooder's taps, FLOOD_GAP s apart
FLOOD_GAP = 0.1
WRONG_CODES = 8  # the wrong-code abuser's typed codes (the app lets 6 a minute through)
CONFIRM_WITHIN = 30.0  # s a student waits for a tap's confirmation (over retaps)
MAX_STUDENTS = 1000
JS_COOKIE = re.compile(r"document\.cookie\s*=\s*'([A-Za-z0-9_]+)=([^;']*)")
CATALOG = tomllib.loads((ROOT / "ui/locales/en/ask.toml").read_text(encoding="utf-8"))


def phrase(template: str) -> re.Pattern:
    """A catalog line as a pattern: its ``{name}`` placeholders match anything."""
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile("(.+?)".join(re.escape(p) for p in parts), re.S)


RECORDED = phrase(CATALOG["recorded"])  # "Your answer **{answer}** is recorded. …"
COUNT = phrase(CATALOG["count"])  # "{n} answers · round {round}"


def loopback(address: str) -> str:
    """``address``, if it is in 127.0.0.0/8: the bench sends nothing anywhere else."""
    if ipaddress.ip_address(address.strip("[]")) not in LOOPBACK:
        raise SystemExit(f"{address} is outside 127.0.0.0/8: the bench sends nothing there")
    return address


def unescape(text: str) -> str:
    """Markdown text as read (``ui.safe.plain`` escapes specials with a backslash)."""
    return re.sub(r"\\(.)", r"\1", text)


# --------------------------------------------------------------------------------------
# One browser tab
# --------------------------------------------------------------------------------------


@dataclass
class Node:
    """One element or block on the screen, as the last run that sent it drew it."""

    kind: str  # the element type ("markdown", "alert", "button_group", ...) or "block"
    body: object  # its proto
    fragment_id: str
    run: str  # the script run that sent it
    key_id: str = ""  # a block's or widget's id (keyed containers: "...-<key>")


class Tab:
    """A browser tab on one page of the app through nginx: its cookies, its websocket, what
    its screen shows, the widget values it holds, its fragments' rerun timers."""

    def __init__(
        self, port: int, page: str, query: str, cookies: dict[str, str], deadline: float
    ) -> None:
        self.port, self.page, self.query = port, page, query
        self.base = f"http://{loopback(FRONT)}:{port}"
        self.cookies = dict(cookies)
        self.deadline = deadline  # monotonic: nothing of this tab goes on after it
        self.ws = None
        self.upstreams: list[str] = []  # the replica each websocket reached (X-Upstream)
        self.page_hash = ""
        self.screen: dict[tuple[int, ...], Node] = {}
        self.run = ""
        self.run_fragments: frozenset[str] = frozenset()
        self.widgets: dict[str, WidgetState] = {}  # the values the browser holds
        self.timers: dict[str, tuple[float, float]] = {}  # fragment -> (interval, next)
        self.finished = 0  # script runs finished (a rerun chain counts once)
        self.changed = asyncio.Event()  # set when a run finishes or the connection changes
        self.connected = False
        self.drops: list[float] = []  # when the websocket closed (monotonic)
        self.reconnected: list[float] = []  # when the first run after a reconnect finished
        self.errors: list[str] = []
        self.mine: list[tuple[float, str]] = []  # what ask_mine said, each time it changed
        self._tasks: list[asyncio.Task] = []
        self._sending = asyncio.Lock()
        self._closing = False

    # -- HTTP and the websocket ----------------------------------------------------------

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _keep_cookies(self, headers: Sequence[str]) -> None:
        for header in headers:
            name, _, value = header.split(";", 1)[0].partition("=")
            if name.strip() == ROUTE_COOKIE:
                self.cookies[ROUTE_COOKIE] = value.strip()

    async def get(self, path: str) -> int:
        """GET ``path`` through nginx with this tab's cookies (keeping the route nginx
        sets); the status, 0 if nothing answered."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(FRONT, self.port), 5)
        except (OSError, TimeoutError):
            return 0
        try:
            request = (
                f"GET {path} HTTP/1.1\r\nHost: {FRONT}:{self.port}\r\n"
                f"Cookie: {self.cookie_header()}\r\nConnection: close\r\n\r\n"
            )
            writer.write(request.encode())
            await writer.drain()
            raw = await asyncio.wait_for(reader.read(), 15)
        except (OSError, TimeoutError):
            return 0
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        if not head or len(head[0].split()) < 2:
            return 0
        self._keep_cookies(
            [h.split(":", 1)[1] for h in head[1:] if h.lower().startswith("set-cookie:")]
        )
        return int(head[0].split()[1])

    async def _connect(self) -> None:
        self.ws = await ws_connect(
            self.base.replace("http://", "ws://") + "/_stcore/stream",
            subprotocols=["streamlit"],
            origin=self.base,
            additional_headers={"Cookie": self.cookie_header()},
            open_timeout=15,
            ping_interval=None,  # browsers never ping
            max_size=None,
            max_queue=None,
            proxy=None,
        )
        self._keep_cookies(self.ws.response.headers.get_all("Set-Cookie"))
        self.upstreams.append(self.ws.response.headers.get("X-Upstream", "").split(", ")[-1])
        self.connected = True

    async def open(self) -> None:
        """What a browser does to open the page: the page (nginx sets the route cookie),
        health and host config, the websocket, the first run; the tab then keeps reading
        and reruns its fragments on their timers."""
        path = f"/{self.page}?{self.query}"
        if await self.get(path) != 200:
            raise ConnectionError(f"GET {path} failed")
        await self.get("/_stcore/health")
        await self.get("/_stcore/host-config")
        await self._connect()
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._tick())]
        await self.rerun()

    async def close(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 3)

    # -- what the tab sends --------------------------------------------------------------

    def _state(
        self, fragment_id: str = "", extra: Sequence[WidgetState] = (), auto: bool = False
    ) -> ClientState:
        widgets = [*self.widgets.values(), *extra]
        return common.client_state(self, widgets, fragment_id, auto)

    async def send(self, cs: ClientState) -> bool:
        """Send one rerun request; False if the websocket is down (the browser drops it)."""
        if not self.connected:
            return False
        back = BackMsg()
        back.rerun_script.CopyFrom(cs)
        try:
            async with self._sending:
                await self.ws.send(back.SerializeToString())
        except (websockets.exceptions.WebSocketException, OSError):
            return False
        return True

    async def rerun(self) -> bool:
        """A full run with every widget value the tab holds (a load, the R key)."""
        return await self.send(self._state())

    async def set_widget(self, state: WidgetState, fragment_id: str) -> bool:
        """A widget's new value, as the browser sends it (with the others it holds)."""
        self.widgets[state.id] = state
        return await self.send(self._state(fragment_id))

    async def trigger(self, widget_id: str, fragment_id: str) -> bool:
        """A button press (a trigger: sent once, not kept)."""
        state = WidgetState(id=widget_id)
        state.trigger_value = True
        return await self.send(self._state(fragment_id, [state]))

    # -- what the tab receives -----------------------------------------------------------

    async def _read(self) -> None:
        while not self._closing:
            try:
                raw = await self.ws.recv()
            except (websockets.exceptions.WebSocketException, OSError):
                if self._closing:
                    return
                await self._reconnect()
                continue
            self._on(ForwardMsg.FromString(raw))

    def _on(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.run = msg.metadata.run.script_run_id or secrets.token_hex(4)
            self.run_fragments = frozenset(msg.metadata.run.fragment_ids)
            self.page_hash = self.page_hash or msg.new_session.page_script_hash
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {self.page}")
        elif kind == "delta":
            self._delta(msg)
        elif kind == "auto_rerun":
            fid, every = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
            if fid and self.timers.get(fid, (None,))[0] != every:
                self.timers[fid] = (every, time.monotonic() + every)
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                self.timers.pop(fid, None)
        elif kind == "script_finished" and msg.script_finished != FINISHED_EARLY:
            full = not self.run_fragments
            for path, node in list(self.screen.items()):
                if node.run != self.run and (full or node.fragment_id in self.run_fragments):
                    del self.screen[path]  # stale: the frontend drops it too
            self.finished += 1
            said = " | ".join(t for t in self.texts("ask_mine") if " " in t)
            if said and (not self.mine or self.mine[-1][1] != said):
                self.mine.append((time.monotonic(), said))
            if self.drops and len(self.reconnected) < len(self.drops) and self.connected:
                self.reconnected.append(time.monotonic())
            self.changed.set()

    def _delta(self, msg: ForwardMsg) -> None:
        delta, path = msg.delta, tuple(msg.metadata.delta_path)
        which = delta.WhichOneof("type")
        if which == "add_block":
            block = delta.add_block
            self.screen[path] = Node("block", block, delta.fragment_id, self.run, block.id)
            return
        if which != "new_element":
            return
        kind = delta.new_element.WhichOneof("type")
        if kind is None:
            return
        body = getattr(delta.new_element, kind)
        self.screen[path] = Node(kind, body, delta.fragment_id, self.run, getattr(body, "id", ""))
        if kind == "html":  # the page's scripts: only their cookie assignments matter here
            for name, value in JS_COOKIE.findall(body.body):
                self.cookies[name] = value
        elif kind == "button_group" and body.set_value:  # the app set the widget's value
            state = WidgetState(id=body.id)
            state.string_array_value.data.extend(body.raw_values)
            self.widgets[body.id] = state
        elif kind == "exception" and not body.is_warning:
            self.errors.append(f"{body.type}: {body.message}"[:200])

    async def _tick(self) -> None:
        """``st.fragment(run_every=…)``: the frontend reruns the fragment on a timer of its
        own (setInterval), with the widget values it holds, whether or not a run is going."""
        while not self._closing:
            now = time.monotonic()
            for fid, (every, due) in list(self.timers.items()):
                if now >= due:
                    self.timers[fid] = (every, due + every)
                    await self.send(self._state(fid, auto=True))
            soonest = min((due for _, due in self.timers.values()), default=now + 0.2)
            await asyncio.sleep(max(0.02, min(0.2, soonest - time.monotonic())))

    async def _reconnect(self) -> None:
        """What Streamlit 1.67's frontend does after the websocket closed: wait 250-500 ms,
        poll /_stcore/health (100 ms, doubling, at most 4 s), fetch the host config, open a
        new websocket; then a full run at once (the frontend asks for one when the page has
        fragments on a timer; deploy/reconnect.js then asks for none)."""
        self.connected = False
        self.drops.append(time.monotonic())
        self.changed.set()
        await asyncio.sleep(random.uniform(0.25, 0.5))
        wait = 0.1
        while True:
            if time.monotonic() > self.deadline:
                self.errors.append("no healthy server to reconnect to")
                self._closing = True
                return
            if await self.get("/_stcore/health") == 200:
                await self.get("/_stcore/host-config")
                try:
                    await self._connect()
                    break
                except (websockets.exceptions.WebSocketException, OSError, TimeoutError):
                    pass
            await asyncio.sleep(wait * random.uniform(0.7, 1.0))
            wait = min(4.0, wait * 2)
        await self.rerun()

    # -- reading the screen --------------------------------------------------------------

    def keyed(self, key: str) -> Node | None:
        """The block or widget whose key is ``key`` (its id ends with ``-<key>``)."""
        return next((n for n in self.screen.values() if n.key_id.endswith("-" + key)), None)

    def texts(self, key: str | None = None) -> list[str]:
        """The texts on screen (markdown, alerts, captions …), in screen order; inside the
        keyed container ``key`` only, if given."""
        inside: list[tuple[int, ...]] = []
        if key is not None:
            inside = [p for p, n in self.screen.items() if n.key_id.endswith("-" + key)]
            if not inside:
                return []
        out = []
        for path in sorted(self.screen):
            node = self.screen[path]
            if node.kind == "block" or (inside and not any(path[: len(p)] == p for p in inside)):
                continue
            for f, value in node.body.ListFields():
                if f.type == f.TYPE_STRING:
                    out += [value] if isinstance(value, str) else list(value)
        return out

    def recorded(self) -> str | None:
        """The answer the screen says is recorded (its label), or None."""
        for text in self.texts("ask_mine"):
            found = RECORDED.search(text)
            if found:
                return unescape(found.group(1))
        return None

    def says(self, line: str) -> bool:
        """Whether a text on screen contains ``line``."""
        return any(line in text for text in self.texts())

    async def until(self, condition: Callable[[], object], timeout: float) -> object:
        """Wait until ``condition()`` is true after a run (or a change of connection); its
        value, or None after ``timeout`` s."""
        end = min(time.monotonic() + timeout, self.deadline)
        while True:
            self.changed.clear()  # before the check: a run finishing meanwhile sets it again
            value = condition()
            left = end - time.monotonic()
            if value or left <= 0 or self._closing:
                return value or None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)


# --------------------------------------------------------------------------------------
# The class
# --------------------------------------------------------------------------------------


@dataclass
class Tap:
    """One answer a session sent: the option's label, when, and when its screen said it
    was recorded (None: never)."""

    label: str
    sent: float
    confirmed: float | None = None


@dataclass
class Student:
    """One session of the class and what happened to it."""

    index: int
    role: str  # student | flooder | outsider | wrong-code
    sid: str  # the anonymous id in its cookie ("": none)
    first: float = 0.0  # the option it means to give: its place on the pills, in [0, 1)
    second: float | None = None  # a changer's second answer: another option, in [0, 1)
    delay: float = 0.0  # s after the round opens for its first tap
    tab: Tab | None = None
    joined: float | None = None  # s to open the page
    saw: float | None = None  # s from the round's opening to the question on its screen
    taps: list[Tap] = field(default_factory=list)
    retaps: int = 0
    final: str | None = None  # what its screen says is recorded at the end
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def last_confirmed(self) -> str | None:
        done = [t for t in self.taps if t.confirmed is not None]
        return max(done, key=lambda t: t.confirmed).label if done else None


@dataclass
class Clock:
    """The lecture's shared moments (monotonic s)."""

    opened: asyncio.Event = field(default_factory=asyncio.Event)
    t_open: float = 0.0
    counts: list[tuple[float, int]] = field(default_factory=list)  # the lecturer's screen


def pills(tab: Tab) -> Node | None:
    return tab.keyed("ask_pick")


def labels(node: Node) -> list[str]:
    return [o.content for o in node.body.options]


async def tap(tab: Tab, label: str) -> bool:
    """Tap ``label`` on the answer pills (the widget's value: the label, as the browser
    sends a pills widget's)."""
    node = pills(tab)
    if node is None:
        return False
    state = WidgetState(id=node.body.id)
    state.string_array_value.data.extend([label])
    return await tab.set_widget(state, node.fragment_id)


async def answer(s: Student, label: str) -> None:
    """Tap ``label`` and wait until the screen says it is recorded, as a person would: not
    while the page is disconnected (the browser disables its widgets then) or, after a
    reconnect, before its first run has drawn it anew (deploy/reconnect.js takes no input
    until then), and again if the page, drawn anew after a reconnect, does not show it
    (the tap was lost with its replica)."""
    tab = s.tab
    end = time.monotonic() + CONFIRM_WITHIN
    record = None

    def redrawn() -> bool:
        return len(tab.reconnected) >= len(tab.drops)

    while time.monotonic() < end:
        ready = await tab.until(
            lambda: tab.connected and redrawn() and pills(tab), end - time.monotonic()
        )
        if not ready:
            break
        if record is None:  # times run from the person's first tap, over any retaps
            record = Tap(label, time.monotonic())
            s.taps.append(record)
        else:
            s.retaps += 1
        drops = len(tab.drops)
        await tap(tab, label)

        def settled(drops: int = drops) -> bool:
            """Recorded, or the page dropped."""
            return tab.recorded() == label or len(tab.drops) > drops

        if not await tab.until(settled, end - time.monotonic()):
            break
        await tab.until(redrawn, end - time.monotonic())  # a dropped page: back, drawn anew
        if tab.recorded() == label:
            record.confirmed = time.monotonic()
            return
    s.notes.append(f"{label!r} not confirmed within {CONFIRM_WITHIN:g} s")


async def join(s: Student, port: int, code: str, deadline: float, delay: float) -> None:
    """Open /join (with the student's cookie, if any) after ``delay`` s."""
    await asyncio.sleep(delay)
    cookies = {STUDENT_COOKIE: s.sid} if s.sid else {}
    query = urllib.parse.urlencode({"code": code, "lang": "en"})
    s.tab = Tab(port, "join", query, cookies, deadline)
    t0 = time.monotonic()
    await s.tab.open()
    if not await s.tab.until(lambda: s.tab.finished, 60):
        raise TimeoutError("the join page did not load within 60 s")
    s.joined = time.monotonic() - t0


async def student(
    s: Student, port: int, code: str, clock: Clock, deadline: float, delay: float
) -> None:
    """A student: join, wait for the question, answer within 10 s, maybe change it."""
    try:
        await join(s, port, code, deadline, delay)
        await clock.opened.wait()
        if not await s.tab.until(lambda: pills(s.tab), 30):
            raise TimeoutError("the question did not appear within 30 s")
        s.saw = time.monotonic() - clock.t_open
        await asyncio.sleep(max(0.0, clock.t_open + s.delay - time.monotonic()))
        if s.role == "flooder":
            await flood(s)
        elif s.role == "outsider":
            await outside(s)
        else:
            options = labels(pills(s.tab))
            first = int(s.first * len(options))
            await answer(s, options[first])
            if s.second is not None:
                await asyncio.sleep(random.uniform(1.0, 4.0))
                other = first + 1 + int(s.second * (len(options) - 1))
                await answer(s, options[other % len(options)])
    except Exception as error:  # a student's failure is a figure, not the bench's end
        s.error = f"{type(error).__name__}: {error}"[:300]


async def flood(s: Student) -> None:
    """One answer, confirmed; then FLOOD_TAPS - 1 more taps, the options in turn,
    FLOOD_GAP s apart without waiting for the screen: the store refuses those beyond its
    limit. What the screen says is recorded at the end confirms the last tap of it."""
    options = labels(pills(s.tab))
    await answer(s, options[0])
    for k in range(1, FLOOD_TAPS):
        label = options[k % len(options)]
        s.taps.append(Tap(label, time.monotonic()))
        await tap(s.tab, label)
        await asyncio.sleep(FLOOD_GAP)
    too_many = CATALOG["refused"]["too_many"]
    refused = await s.tab.until(lambda: any(too_many in t for t in s.tab.texts("ask_mine")), 15)
    s.notes.append("refused: too many changes" if refused else "never refused")
    tab, runs = s.tab, s.tab.finished
    await tab.until(lambda: tab.finished >= runs + 3, 30)  # the last taps' runs landed
    shown = tab.recorded()
    last = next((t for t in reversed(s.taps) if t.label == shown), None)
    if last is not None and last.confirmed is None:
        last.confirmed = time.monotonic()
    s.notes.append(f"{len(s.taps)} taps; recorded at the end: {shown!r}")


async def outside(s: Student) -> None:
    """Raw widget values that are no option's label (an unknown one, an empty one, markup):
    nothing may be recorded; then a list of two labels (the pills take the first)."""
    node = pills(s.tab)
    for values in (["Atlantis"], [""], ["<script>alert(1)</script>"]):
        state = WidgetState(id=node.body.id)
        state.string_array_value.data.extend(values)
        s.taps.append(Tap(values[0], time.monotonic()))
        await s.tab.set_widget(state, node.fragment_id)
        await asyncio.sleep(1.0)
        s.notes.append(f"{values} -> recorded {s.tab.recorded()!r}")
    two = labels(node)[1:3]
    state = WidgetState(id=node.body.id)
    state.string_array_value.data.extend(two)
    record = Tap(two[0], time.monotonic())
    s.taps.append(record)
    await s.tab.set_widget(state, node.fragment_id)
    if await s.tab.until(lambda: s.tab.recorded() == two[0], CONFIRM_WITHIN):
        record.confirmed = time.monotonic()
    s.notes.append(f"{two} -> recorded {s.tab.recorded()!r}")


async def wrong_code(s: Student, port: int, deadline: float) -> None:
    """A wrong code in the address, then WRONG_CODES codes typed in the box."""
    try:
        await join(s, port, "ZZZZZ", deadline, 0.0)
        tab = s.tab
        refusals = CATALOG["refused"]
        refused = tab.says(refusals["unknown_code"])
        s.notes.append("address: " + ("refused" if refused else "NOT refused"))
        answers = []
        for k in range(WRONG_CODES):
            box = tab.keyed("ask_code_box")
            buttons = (n for n in tab.screen.values() if n.kind == "button")
            go = next((n for n in buttons if n.body.is_form_submitter), None)
            if box is None or go is None:
                raise RuntimeError("no code box on the page")
            typed = WidgetState(id=box.body.id)
            typed.string_value = f"ZZZZ{'23456789'[k]}"
            tab.widgets[typed.id] = typed
            before = tab.finished
            await tab.trigger(go.body.id, go.fragment_id)
            await tab.until(lambda b=before: tab.finished > b, 15)
            said = [r for r in ("too_many_codes", "unknown_code") if tab.says(refusals[r])]
            answers.append(said[0] if said else "no refusal")
        s.notes.append("typed: " + ", ".join(answers))
    except Exception as error:
        s.error = f"{type(error).__name__}: {error}"[:300]


async def lecturer(tab: Tab, clock: Clock, done: asyncio.Event) -> None:
    """The lecturer's slide: press *Ask the class*, then read the live count on every run
    (its fragment reruns every second) until ``done``."""
    await tab.open()
    button = await tab.until(lambda: tab.keyed(f"ask_open_{QUESTION}"), 60)
    if button is None:
        raise RuntimeError(f"no Ask button on the lecturer's slide: {tab.texts()[:8]}")
    clock.t_open = time.monotonic()
    await tab.trigger(button.body.id, button.fragment_id)
    if not await tab.until(lambda: tab.keyed("ask_count"), 30):
        raise RuntimeError("the lecturer's slide shows no live count")
    clock.opened.set()
    seen = tab.finished

    def new_run(since: int) -> bool:
        return tab.finished > since or done.is_set()

    while not done.is_set():
        await tab.until(lambda s=seen: new_run(s), 5)
        seen = tab.finished
        for text in tab.texts("ask_count"):
            found = COUNT.search(unescape(text))
            if found:
                clock.counts.append((time.monotonic(), int(found.group(1))))


async def lecture(args: argparse.Namespace, deployment: Deployment, code: str, key: str) -> dict:
    """The class: the lecturer's tab, the students joining, the round, the kill."""
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.max_duration
    clock = Clock()
    done = asyncio.Event()
    front = {ROUTE_COOKIE: "r2"}  # the lecturer's replica is not the one killed
    query = urllib.parse.urlencode(
        {"present": "1", "step": QUESTION_STEP, "lang": "en", "key": key}
    )
    teacher = Tab(args.port, "lookup", query, front, deadline)
    students = []
    for i in range(args.students):
        first, second = rng.random(), rng.random() if rng.random() < CHANGERS else None
        delay = rng.uniform(0.0, ANSWER_WITHIN)
        students.append(Student(i, "student", secrets.token_hex(16), first, second, delay))
    n = len(students)
    students.append(Student(n, "flooder", secrets.token_hex(16), delay=rng.uniform(0, 5)))
    students.append(Student(n + 1, "outsider", secrets.token_hex(16), delay=rng.uniform(0, 5)))
    odd = Student(n + 2, "wrong-code", "")
    joins = [
        asyncio.create_task(
            student(s, args.port, code, clock, deadline, args.join_within * k / len(students))
        )
        for k, s in enumerate(students)
    ]
    teacher_task = killer = None
    try:
        joined = await wait_joined(students, args.join_within + 90)
        print(f"joined: {joined}/{len(students)} sessions", flush=True)
        teacher_task = asyncio.create_task(lecturer(teacher, clock, done))
        await asyncio.wait_for(clock.opened.wait(), 60)
        print("the round is open", flush=True)
        if args.kill_replica:
            killer = asyncio.create_task(kill_later(deployment, clock.t_open + args.kill_replica))
        await wrong_code(odd, args.port, deadline)
        left = max(1.0, deadline - time.monotonic())
        if (await asyncio.wait(joins, timeout=left))[1]:
            print(f"--max-duration reached: {sum(not t.done() for t in joins)} sessions cut short")
        await asyncio.sleep(3.0)  # the lecturer's screen catches up
        killed = await killer if killer is not None else None
        for s in students:
            s.final = s.tab.recorded() if s.tab is not None else None
    finally:
        done.set()
        for task in joins:
            task.cancel()
        await asyncio.gather(*joins, return_exceptions=True)
        if teacher_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(teacher_task, 10)
        tabs = [s.tab for s in [*students, odd] if s.tab is not None]
        await asyncio.gather(*(tab.close() for tab in [*tabs, teacher]))
    runs = sum(s.tab.finished for s in [*students, odd] if s.tab is not None) + teacher.finished
    return {"students": [*students, odd], "clock": clock, "killed": killed, "runs": runs}


async def wait_joined(students: Sequence[Student], timeout: float) -> int:
    """Wait until every student has opened the page (or failed); how many did."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(s.joined is not None or s.error for s in students):
            break
        await asyncio.sleep(0.2)
    return sum(s.joined is not None for s in students)


async def kill_later(deployment: Deployment, when: float) -> dict:
    """SIGKILL replica r1 (the first host's) at ``when`` (monotonic); which one it was."""
    await asyncio.sleep(max(0.0, when - time.monotonic()))
    victim = deployment.replicas()[0]
    os.kill(victim["pid"], signal.SIGKILL)
    print(f"SIGKILL replica {victim['address']}:{victim['port']} (pid {victim['pid']})", flush=True)
    return victim


# --------------------------------------------------------------------------------------
# PostgreSQL and the deployment
# --------------------------------------------------------------------------------------


def pg_bin_dir() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: PATH, /usr/local/bin, then the newest
    Debian ``/usr/lib/postgresql/<ver>/bin``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    if (Path("/usr/local/bin") / "initdb").exists():
        return Path("/usr/local/bin")
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not versions:
        raise SystemExit("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)")
    return versions[-1].parent


def free_port(address: str = FRONT, count: int = 1) -> int:
    """A port p with p .. p + count - 1 free on ``address`` (loopback)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((loopback(address), 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(port_free(address, base + i) for i in range(count)):
            return base
    raise SystemExit("no run of free loopback ports")


def port_free(address: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((loopback(address), port))
        except OSError:
            return False
    return True


class PgServer:
    """A throwaway PostgreSQL server: its own directory, 127.0.0.1 on a free port, its
    socket in its directory, trust for local connections, PostgreSQL's defaults otherwise
    (fsync on). As root it runs as the ``postgres`` user."""

    def __init__(self, work: Path) -> None:
        self.bin = pg_bin_dir()
        self.account = None
        if os.geteuid() == 0:
            try:
                self.account = pwd.getpwnam("postgres")
            except KeyError:
                add = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]
                subprocess.run([*add, "postgres"], check=True)
                self.account = pwd.getpwnam("postgres")
        self.dir = work / "pg"
        self.dir.mkdir()
        if self.account is not None:
            os.chown(self.dir, self.account.pw_uid, self.account.pw_gid)
        self.port = free_port()
        init = ["-D", str(self.dir / "data"), "-U", "lab", "--auth=trust", "-E", "UTF8"]
        self._pg("initdb", *init, "--locale=C", "--no-sync")
        self.started = False

    def _pg(self, program: str, *args: str) -> None:
        user = {}
        if self.account is not None:
            user = {"user": self.account.pw_uid, "group": self.account.pw_gid}
        done = subprocess.run(
            [str(self.bin / program), *args],
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=120,
            **user,
        )
        if done.returncode:
            raise SystemExit(f"{program} failed: {done.stderr}{done.stdout}")

    def start(self) -> str:
        """Start it; the URL of a new database ``lab`` on it."""
        options = (
            f"-p {self.port} -c listen_addresses={loopback(FRONT)} "
            f"-c unix_socket_directories={self.dir}"
        )
        log = str(self.dir / "log")
        self._pg("pg_ctl", "-D", str(self.dir / "data"), "-l", log, "-o", options, "-w", "start")
        self.started = True
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute('CREATE DATABASE "lab"')
        return self.url("lab")

    def url(self, database: str) -> str:
        return f"postgresql://lab@{FRONT}:{self.port}/{database}"

    def stop(self) -> None:
        if self.started:
            self._pg("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
            self.started = False


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVE), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=None if env is None else os.environ | env,
    )


@dataclass
class Deployment:
    """deploy/serve on loopback: one host (``--replicas 2``) or two app hosts and a front."""

    work: Path
    port: int
    hosts: int
    store_url: str | None
    run_dirs: list[Path] = field(default_factory=list)

    def data_dir(self, host: int = 0) -> Path:
        return self.work / f"data-{host}"

    def start(self) -> None:
        env = {"ATTENTION_LAB_STORE": self.store_url or ""}  # not on a command line
        if self.hosts == 1:
            run_dir = self.work / "deploy"
            self.run_dirs.append(run_dir)
            flags = ["--replicas", "2", "--port", str(self.port), "--run-dir", str(run_dir)]
            self._start([*flags, "--data-dir", str(self.data_dir())], env)
            return
        replica_port = free_port(HOSTS[0])
        while not port_free(HOSTS[1], replica_port):
            replica_port = free_port(HOSTS[0])
        for i, host in enumerate(HOSTS):
            run_dir = self.work / f"host-{i}"
            self.run_dirs.append(run_dir)
            if i:  # one lecturer key for the class: copied to every app host
                self.data_dir(i).mkdir()
                key = self.data_dir(i) / "lecturer.key"
                shutil.copy2(self.data_dir(0) / "lecturer.key", key)
            flags = ["--role", "replicas", "--replicas", "1", "--replica-address"]
            flags += [loopback(host), "--replica-port", str(replica_port)]
            flags += ["--run-dir", str(run_dir), "--data-dir", str(self.data_dir(i))]
            self._start(flags, env)
        run_dir = self.work / "front"
        self.run_dirs.append(run_dir)
        upstream = ",".join(f"{h}:{replica_port}" for h in HOSTS)
        flags = ["--role", "proxy", "--port", str(self.port), "--upstream", upstream]
        self._start([*flags, "--run-dir", str(run_dir)], env)

    def _start(self, flags: list[str], env: dict[str, str]) -> None:
        started = serve(*flags, env=env)
        print(started.stdout.strip() or started.stderr.strip(), flush=True)
        if started.returncode:
            raise SystemExit(f"deploy/serve failed:\n{started.stdout}{started.stderr}")

    def replicas(self) -> list[dict]:
        out = []
        for run_dir in self.run_dirs:
            with contextlib.suppress(OSError, ValueError):
                state = json.loads((run_dir / "state.json").read_text())
                out += [p for p in state["procs"] if p["name"] == "streamlit"]
        return out

    def serve_log(self) -> str:
        return "\n".join(
            (d / "serve.log").read_text(errors="replace")
            for d in self.run_dirs
            if (d / "serve.log").exists()
        )

    def stop(self) -> None:
        for run_dir in reversed(self.run_dirs):
            serve("stop", "--run-dir", str(run_dir))


def warm(port: int, routes: int) -> None:
    """One visit to /join on each replica (by its route), so each has loaded what the app
    loads in the background after its first page before the class arrives."""

    async def visit(route: int) -> None:
        tab = Tab(port, "join", "lang=en", {ROUTE_COOKIE: f"r{route}"}, time.monotonic() + 60)
        try:
            await tab.open()
            await tab.until(lambda: tab.finished, 60)
        finally:
            await tab.close()

    async def all_routes() -> None:
        for route in range(1, routes + 1):
            await visit(route)

    asyncio.run(all_routes())


def cpu_idle(pids: Sequence[int], quiet: float = 0.15, limit: float = 90.0) -> None:
    """Wait until ``pids`` use less than ``quiet`` of a core over a second, at most
    ``limit`` s (the replicas' background model loading is over)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        c0 = sum(cpu_s(p) for p in pids)
        time.sleep(1.0)
        if sum(cpu_s(p) for p in pids) - c0 < quiet:
            return


# --------------------------------------------------------------------------------------
# The figures
# --------------------------------------------------------------------------------------


def store_rows(url: str | None, data_dir: Path, code: str) -> list[tuple[str, str]]:
    """(student, answer) of every row of the lecture's current round, read with the driver
    itself (the store's own API could not show a duplicate)."""
    sql = (
        "SELECT a.student, a.answer FROM answers a JOIN lectures l"
        " ON a.round_id = l.current_round WHERE l.code = {}"
    )
    if url is None:
        with contextlib.closing(sqlite3.connect(data_dir / "attention-lab.sqlite3")) as conn:
            return conn.execute(sql.format("?"), (code,)).fetchall()
    with psycopg.connect(url) as conn:
        return conn.execute(sql.format("%s"), (code,)).fetchall()


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def to_count(sessions: Sequence[Student], counts: Sequence[tuple[float, int]]) -> list[float]:
    """Per session whose first answer was confirmed, ranked k-th by that confirmation:
    from its tap to the first time the lecturer's screen showed a count >= k."""
    firsts = []
    for s in sessions:
        done = [t for t in s.taps if t.confirmed is not None]
        if done:
            first = min(done, key=lambda t: t.confirmed)
            firsts.append((first.confirmed, first.sent))
    out = []
    for k, (_, sent) in enumerate(sorted(firsts), 1):
        shown = next((t for t, n in counts if n >= k and t >= sent), None)
        if shown is not None:
            out.append(shown - sent)
    return out


def figures(result: dict, rows: list[tuple[str, str]], options: dict[str, str]) -> dict:
    """Every figure of the run: the last line's and what explains them."""
    sessions: list[Student] = result["students"]
    clock: Clock = result["clock"]
    by_student: dict[str, list[str]] = {}
    for sid, stored in rows:
        by_student.setdefault(sid, []).append(stored)
    label_of = {i: label for label, i in options.items()}
    confirmed_students = [s for s in sessions if s.last_confirmed() is not None]
    lost = []
    for s in confirmed_students:
        sid = s.sid or (s.tab.cookies.get(STUDENT_COOKIE, "") if s.tab else "")
        stored = [label_of.get(a, a) for a in by_student.get(sid, [])]
        if stored[-1:] != [s.last_confirmed()]:
            t0 = clock.t_open
            taps = [
                (t.label, round(t.sent - t0, 2), t.confirmed and round(t.confirmed - t0, 2))
                for t in s.taps
            ]
            drops = [round(d - t0, 2) for d in s.tab.drops] if s.tab else []
            mine = [(round(t - t0, 2), said[:70]) for t, said in s.tab.mine] if s.tab else []
            lost.append((s.index, s.role, s.last_confirmed(), stored, s.final, taps, drops, mine))
    waits = to_count(sessions, clock.counts)
    honest = [s for s in sessions if s.role == "student"]
    drops = [s for s in sessions if s.tab is not None and s.tab.drops]
    wrong = [s for s in confirmed_students if s.final != s.last_confirmed()]
    return {
        "sent": sum(len(s.taps) for s in sessions),
        "confirmed": sum(t.confirmed is not None for s in sessions for t in s.taps),
        "counted": len(rows),
        "confirmed_students": len(confirmed_students),
        "lost": lost,
        "duplicated": len(rows) - len(by_student),
        "unknown_rows": sorted(set(by_student) - {s.sid for s in sessions if s.sid})[:5],
        "p95_count": percentile(waits, 95),
        "p50_count": percentile(waits, 50),
        "max_count": max(waits, default=None),
        "ranked": len(waits),
        "lecturer_last": clock.counts[-1][1] if clock.counts else None,
        "students": len(honest),
        "joined": sum(s.joined is not None for s in honest),
        "join_p95": percentile([s.joined for s in honest if s.joined is not None], 95),
        "saw_p95": percentile([s.saw for s in honest if s.saw is not None], 95),
        "confirm_p95": percentile(
            [t.confirmed - t.sent for s in honest for t in s.taps if t.confirmed is not None], 95
        ),
        "unconfirmed": sum(t.confirmed is None for s in honest for t in s.taps),
        "retaps": sum(s.retaps for s in sessions),
        "errors": [(s.index, s.role, s.error) for s in sessions if s.error][:10],
        "app_errors": sorted({e for s in sessions if s.tab for e in s.tab.errors})[:5],
        "dropped": len(drops),
        "dropped_back": sum(len(s.tab.reconnected) == len(s.tab.drops) for s in drops),
        "dropped_shown": sum(
            s.final == s.last_confirmed()
            for s in drops
            if s.last_confirmed() and len(s.tab.reconnected) == len(s.tab.drops)
        ),
        "dropped_answered": sum(
            bool(s.last_confirmed()) and len(s.tab.reconnected) == len(s.tab.drops) for s in drops
        ),
        "screens_wrong": [(s.index, s.role, s.final, s.last_confirmed()) for s in wrong][:5],
        "back_after": [
            b - d for s in drops for d, b in zip(s.tab.drops, s.tab.reconnected, strict=False)
        ],
        "abusers": {s.role: s.notes for s in sessions if s.role != "student"},
        "runs": result["runs"],
        "per_replica": _per_replica(sessions),
    }


def _per_replica(sessions: Sequence[Student]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in sessions:
        if s.tab is not None and s.tab.upstreams:
            out[s.tab.upstreams[0]] = out.get(s.tab.upstreams[0], 0) + 1
    return dict(sorted(out.items()))


def s_(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def report(f: dict, args: argparse.Namespace, extra: dict) -> list[str]:
    """The run as a person reads it; the budget's verdict; the last line."""
    lines = [
        f"students {f['joined']}/{f['students']} joined (page p95 {s_(f['join_p95'])} s) "
        f"+ 3 abusers; sessions per replica {f['per_replica']}; the question on their "
        f"screens p95 {s_(f['saw_p95'])} s after the lecturer pressed Ask",
        f"taps: sent {f['sent']}, confirmed {f['confirmed']} (students' confirmation p95 "
        f"{s_(f['confirm_p95'])} s; students' taps never confirmed {f['unconfirmed']}; "
        f"taps repeated after a reconnect {f['retaps']})",
        f"lecturer's count: last shown {f['lecturer_last']}, store {f['counted']}; "
        f"tap -> count p50 {s_(f['p50_count'])} / p95 {s_(f['p95_count'])} / max "
        f"{s_(f['max_count'])} s over {f['ranked']} first answers",
    ]
    if extra.get("killed"):
        back = f["back_after"]
        lines.append(
            f"replica killed: {extra['killed']}; {f['dropped']} sessions lost their "
            f"websocket; {f['dropped_back']} had a run finish after their reconnect, after "
            f"median {s_(percentile(back, 50))} / max {s_(max(back, default=None))} s, "
            f"{f['dropped_shown']} of the {f['dropped_answered']} of them with a confirmed "
            "answer showing their last one at the end; "
            f"{extra['restart']}"
        )
    for role, notes in f["abusers"].items():
        lines.append(f"  {role}: {'; '.join(notes)}")
    for item in f["lost"][:10]:
        lines.append(
            f"  LOST: session {item[0]} ({item[1]}): confirmed {item[2]!r}, store {item[3]}, "
            f"its screen at the end {item[4]!r}; taps (label, sent, confirmed; s after the "
            f"round opened) {item[5]}, websocket dropped at {item[6]}; its ask_mine over time "
            f"{item[7]}"
        )
    for item in f["screens_wrong"]:
        lines.append(
            f"  SCREEN: session {item[0]} ({item[1]}) shows {item[2]!r}, confirmed {item[3]!r}"
        )
    if f["unknown_rows"]:
        lines.append(f"  rows of ids no session had: {f['unknown_rows']}")
    lines += [f"  error: {e}" for e in f["errors"]] + [f"  app: {e}" for e in f["app_errors"]]
    lines.append(
        f"script runs the tabs saw: {f['runs']} in {extra['wall']:.0f} s "
        f"({f['runs'] / extra['wall']:.0f}/s, most of them the students' timed fragment reruns); "
        f"replica CPU {extra['replica_cpu']:.1f} s, {1000 * extra['replica_cpu'] / f['runs']:.1f}"
        " ms a run"
    )
    lines.append(
        f"machine: {os.cpu_count()} cores, load average {extra['load'][0]:.2f} -> "
        f"{extra['load'][1]:.2f}; busy {extra['busy_pct']:.0f}% of a core during the round "
        f"(replicas {extra['replica_pct']:.0f}%, this bench {extra['bench_pct']:.0f}%, "
        f"others incl. nginx and PostgreSQL {extra['other_pct']:.0f}%)"
    )
    met = {
        "lost 0": not f["lost"],
        "duplicated 0": f["duplicated"] == 0,
        "counted = confirmed students' last answers": f["counted"] == f["confirmed_students"],
        "T <= 2 s": f["p95_count"] is not None and f["p95_count"] <= 2.0,
    }
    lines.append(
        "budget: " + "; ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in met.items())
    )
    lines.append(
        f"votes: sent {f['sent']}, confirmed {f['confirmed']}, counted {f['counted']}, "
        f"lost {len(f['lost'])}, duplicated {f['duplicated']}, p95 to the lecturer's count "
        f"{s_(f['p95_count'])} s"
    )
    return lines


@contextlib.contextmanager
def measured(pids: Callable[[], list[int]]) -> Iterator[dict]:
    """CPU of the machine, the replicas (a killed one's up to its last sample, every 0.5 s)
    and this process, and the load average, around a block."""
    out: dict = {}
    busy0, t0, me0, load0 = machine_busy_s(), time.monotonic(), time.process_time(), os.getloadavg()
    before = {p: cpu_s(p) for p in pids()}
    used = dict.fromkeys(before, 0.0)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.5):
            for p in pids():
                used[p] = max(used.get(p, 0.0), cpu_s(p) - before.get(p, 0.0))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield out
    finally:
        stop.set()
        sampler.join()
    wall = time.monotonic() - t0
    for p in pids():
        used[p] = max(used.get(p, 0.0), cpu_s(p) - before.get(p, 0.0))
    replicas = sum(used.values())
    busy, me = machine_busy_s() - busy0, time.process_time() - me0
    out |= {
        "wall": wall,
        "replica_cpu": replicas,
        "load": (load0[0], os.getloadavg()[0]),
        "busy_pct": 100 * busy / wall,
        "replica_pct": 100 * replicas / wall,
        "bench_pct": 100 * me / wall,
        "other_pct": max(0.0, 100 * (busy - replicas - me) / wall),
    }


def run(args: argparse.Namespace) -> list[str]:
    """Start everything, hold the lecture, stop everything; the report's lines."""
    with tempfile.TemporaryDirectory(prefix="load_votes-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)  # PostgreSQL's account reaches its folder inside
        pg = PgServer(work) if args.store == "postgres" else None
        deployment = None
        store: Store | None = None
        try:
            url = pg.start() if pg else None
            deployment = Deployment(work, args.port, args.hosts, url)
            deployment.start()
            store = open_store(url, deployment.data_dir())
            code = store.join_code(date.today().isoformat())  # ui.ask.lecture()'s name
            key = (deployment.data_dir() / "lecturer.key").read_text().strip()
            warm(args.port, 2)
            cpu_idle([p["pid"] for p in deployment.replicas()])
            with measured(lambda: [p["pid"] for p in deployment.replicas()]) as extra:
                result = asyncio.run(lecture(args, deployment, code, key))
            store.close(code)  # the lecturer closes the round
            info = store.current(code)
            if info is None or info.question != QUESTION or info.options is None:
                raise SystemExit(f"the round in the store is not {QUESTION}'s: {info}")
            if result["killed"]:
                victim = result["killed"]
                healthy = [ln for ln in deployment.serve_log().splitlines() if "again" in ln]
                extra["killed"] = f"{victim['address']}:{victim['port']}"
                extra["restart"] = healthy[0].split(" ", 1)[1] if healthy else "not back"
            rows = store_rows(url, deployment.data_dir(), code)
            shown = labels_seen(result["students"])
            options = dict(zip(shown, info.options, strict=True))
            return report(figures(result, rows, options), args, extra)
        finally:
            if store is not None:
                store.disconnect()
            if deployment is not None:
                deployment.stop()
            if pg is not None:
                pg.stop()


def labels_seen(sessions: Sequence[Student]) -> list[str]:
    """The options' labels as the students' pills showed them (in the store's order of the
    options' ids, as the app lists them)."""
    for s in sessions:
        node = pills(s.tab) if s.tab is not None else None
        if node is not None:
            return labels(node)
    raise SystemExit("no student saw the question")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=300, help="students (%(default)s)")
    p.add_argument(
        "--kill-replica",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="SIGKILL replica r1 this long after the round opens (0: never)",
    )
    p.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--hosts", type=int, choices=(1, 2), default=1, help="app hosts (%(default)s)")
    p.add_argument(
        "--join-within", type=float, default=20.0, help="s the class takes to join (%(default)s)"
    )
    p.add_argument("--port", type=int, default=0, help="nginx's port (default: a free one)")
    p.add_argument("--seed", type=int, default=0, help="the students' choices (%(default)s)")
    p.add_argument(
        "--max-duration", type=float, default=300.0, help="bound of the lecture, s (%(default)s)"
    )
    args = p.parse_args(argv)
    if not 1 <= args.students <= MAX_STUDENTS:
        p.error(f"--students: 1 to {MAX_STUDENTS}")
    if args.hosts == 2 and args.store != "postgres":
        p.error("--hosts 2 needs --store postgres (the hosts share one store)")
    args.port = args.port or free_port(FRONT, 3)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"{os.cpu_count()} cores; load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.students} students, store "
        f"{args.store}, hosts {args.hosts}, kill {args.kill_replica or 'none'}",
        flush=True,
    )
    lines = run(args)
    print("\n".join(lines), flush=True)
    return 0 if all("NOT met" not in ln for ln in lines if ln.startswith("budget:")) else 1


if __name__ == "__main__":
    sys.exit(main())
