"""A replica lost mid-lecture: a class of 30 through ``deploy/serve --replicas 2``, one
replica SIGKILLed, every student timed until their page works again (issue 33 item 5).

    .venv/bin/python bench/replica_loss.py                 # 30 students, kill r1 after 10 s
    .venv/bin/python bench/replica_loss.py --students 30 --out artifacts/deploy/replica_loss.md

It starts ``deploy/serve --replicas 2`` (the detached supervisor, as a lecturer runs it) on
loopback, warms both replicas, and connects ``--students`` simulated browsers through nginx,
each with its own route cookie, on ``/scaling`` with controls of its own in the URL
(``?d_model=16&d_k=<k>``). Each moves its d_k slider every ``--think`` s. Then it SIGKILLs
one replica and goes on for ``--after`` s.

A simulated student speaks Streamlit's websocket protocol (the protobuf classes of the
venv's streamlit) and reconnects as Streamlit 1.67's frontend does: after its websocket
drops it waits 250-500 ms (the frontend's first reconnect delay), polls
``/_stcore/health`` through nginx (100 ms, doubling, at most 4 s; nginx sends it to the
student's own replica, which it waits for while it restarts), opens a new websocket and at
once (deploy/reconnect.js, which nginx adds to every page) asks for a full rerun with its
URL and widget values. It is working again when that run finishes without
an exception and shows the slider values it had before the kill; the time from the kill
to that moment is its recovery time. Afterwards it keeps moving its slider, so a page that
looks right but no longer answers counts as an error.

Reported: per affected student the recovery time (and whether every later step worked),
for every student errors and step latencies before, during (the first 15 s after the kill)
and after; the supervisor's restart time (its log); where the sessions ended up. Only ever
talks to 127.0.0.1; bounded in students, steps and time; stops everything it started.
"""

import argparse
import asyncio
import contextlib
import hashlib
import ipaddress
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import common
import websockets
from common import chromium
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect as ws_connect

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "deploy" / "serve"
HOST = "127.0.0.1"  # the only address this script talks to
FINISHED_EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN
OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
BUDGET = 15.0  # s: every affected student working again within this (issue 33 item 5)
MAX_MSGS = 20_000  # bound on one run's messages
D_KS = tuple(range(2, 17))  # each student opens /scaling?d_model=16&d_k=<one of these>
MOVES = (3, 5, 7, 11, 13)  # and moves d_k between its own value and one of these


@dataclass
class Slider:
    id: str
    label: str
    value: list[float]
    fragment_id: str
    query_key: str | None


@dataclass
class Run:
    """What one script run sent back."""

    status: int | None = None
    exceptions: list[str] = field(default_factory=list)
    sliders: dict[str, Slider] = field(default_factory=dict)  # label -> slider
    main_elements: int = 0
    main: dict[tuple[int, ...], bytes] = field(default_factory=dict)  # path -> element

    def digest(self) -> str:
        """The main area's content, as a hash (a full run: the whole page)."""
        h = hashlib.sha1()
        for path in sorted(self.main):
            h.update(repr(path).encode() + self.main[path])
        return h.hexdigest()


@dataclass
class Step:
    t: float  # when it was sent, s after the kill (negative: before)
    latency: float | None  # None: failed
    error: str = ""


@dataclass
class Student:
    """One simulated browser tab: a cookie jar, a websocket, the page's URL and sliders."""

    index: int
    base: str
    page: str
    query: str
    cookie: str = ""  # attnlab_route=rN, as nginx set it
    upstream: str = ""  # the replica the current websocket reached (nginx's X-Upstream)
    first_upstream: str = ""
    ws: object = None
    page_hash: str = ""
    sliders: dict[str, Slider] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    drops: list[float] = field(default_factory=list)  # websocket closed (s after the kill)
    recovered: float | None = None  # working again (s after the kill)
    restored: bool | None = None  # the same slider values after the reconnect
    main_elements: int = 0
    errors: list[str] = field(default_factory=list)

    # -- HTTP and websocket ------------------------------------------------------------

    def _get(self, path: str) -> int:
        """GET through nginx with this student's cookie; keep the route nginx sets."""
        request = urllib.request.Request(self.base + path)
        if self.cookie:
            request.add_header("Cookie", self.cookie)
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with direct.open(request, timeout=5) as r:
                self._keep_route(r.headers.get_all("Set-Cookie") or [])
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    def _keep_route(self, cookies: Sequence[str]) -> None:
        for c in cookies:
            if c.startswith("attnlab_route="):
                self.cookie = c.split(";", 1)[0]

    async def connect(self) -> None:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        self.ws = await ws_connect(
            self.base.replace("http://", "ws://") + "/_stcore/stream",
            subprotocols=["streamlit"],
            origin=self.base,
            additional_headers=headers,
            open_timeout=10,
            ping_interval=None,  # browsers never ping
            max_size=None,
            max_queue=None,
            proxy=None,
        )
        response = self.ws.response
        self._keep_route(response.headers.get_all("Set-Cookie"))
        self.upstream = response.headers.get("X-Upstream", "").split(", ")[-1]
        self.first_upstream = self.first_upstream or self.upstream

    async def reconnect(self, deadline: float) -> None:
        """What Streamlit's frontend does after its websocket dropped."""
        await asyncio.sleep(random.uniform(0.25, 0.5))  # its first reconnect delay
        wait = 0.1
        while await asyncio.to_thread(self._get, "/_stcore/health") != 200:
            if time.monotonic() > deadline:
                raise TimeoutError("no healthy server")
            await asyncio.sleep(wait * random.uniform(0.7, 1.0))
            wait = min(4.0, wait * 2)
        await asyncio.to_thread(self._get, "/_stcore/host-config")
        await self.connect()

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 3)

    # -- script runs ---------------------------------------------------------------------

    def _state(self, widgets: Sequence[WidgetState], fragment_id: str = "") -> ClientState:
        return common.client_state(self, widgets, fragment_id)

    def _widgets(self) -> list[WidgetState]:
        out = []
        for s in self.sliders.values():
            w = WidgetState(id=s.id)
            w.double_array_value.data.extend(s.value)
            out.append(w)
        return out

    async def run(self, cs: ClientState, timeout: float) -> Run:
        """Send one rerun_script; read until its run (chain) finishes."""
        back = BackMsg()
        back.rerun_script.CopyFrom(cs)
        out = Run()
        started = False
        deadline = time.monotonic() + timeout
        await self.ws.send(back.SerializeToString())
        for _ in range(MAX_MSGS):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("run did not finish")
            msg = ForwardMsg.FromString(await asyncio.wait_for(self.ws.recv(), remaining))
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                started = True
                out = Run()
                self.page_hash = self.page_hash or msg.new_session.page_script_hash
            elif kind == "navigation" and msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg, out)
            elif kind == "script_finished" and started:
                if msg.script_finished == FINISHED_EARLY:
                    started = False
                    continue
                out.status = msg.script_finished
                for label, s in out.sliders.items():
                    self.sliders[label] = s
                return out
        raise RuntimeError(f"more than {MAX_MSGS} messages in one run")

    def _element(self, msg: ForwardMsg, out: Run) -> None:
        el = msg.delta.new_element
        kind = el.WhichOneof("type")
        path = tuple(msg.metadata.delta_path)
        if path and path[0] == 0:
            out.main_elements += 1
            stable = ForwardMsg()
            stable.CopyFrom(msg)
            if kind == "download_button":  # a fresh file id on every run
                stable.delta.new_element.download_button.ClearField("deferred_file_id")
            out.main[path] = stable.delta.SerializeToString(deterministic=True)
        if kind == "exception" and not el.exception.is_warning:
            out.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:200])
        elif kind == "slider":
            s = el.slider
            # Without set_value the browser keeps the value it has (it sent it).
            known = self.sliders[s.label].value if s.label in self.sliders else list(s.default)
            value = list(s.value) if s.set_value else known
            key = s.query_param_key if s.HasField("query_param_key") else None
            out.sliders[s.label] = Slider(s.id, s.label, value, msg.delta.fragment_id, key)

    async def load(self) -> Run:
        """The first run after a (re)connect: the whole page, with the URL and the widget
        values the tab holds (none on a first visit)."""
        return await self.run(self._state(self._widgets()), 30)

    async def move(self, label: str, value: float) -> Run:
        """Move one slider (a fragment rerun, as the browser sends it)."""
        s = self.sliders[label]
        s.value = [value]
        if s.query_key:  # the URL follows the widget; the server sends the new query back
            pairs = urllib.parse.parse_qsl(self.query, keep_blank_values=True)
            self.query = urllib.parse.urlencode([(k, v) for k, v in pairs if k != s.query_key])
        return await self.run(self._state(self._widgets(), s.fragment_id), 15)


def check_loopback(url: str) -> None:
    host = urllib.parse.urlsplit(url).hostname or ""
    if not ipaddress.ip_address(host).is_loopback:
        raise SystemExit(f"refusing to send traffic to {host}: loopback only")


async def student_main(s: Student, args: argparse.Namespace, clock: dict, stop_at: float) -> None:
    """Connect, load, then move d_k every ``--think`` s until ``stop_at``; reconnect as the
    frontend does whenever the websocket drops."""
    rng = random.Random(s.index)
    await asyncio.to_thread(s._get, "/_stcore/health")  # the page load sets the route
    await s.connect()
    first = await s.load()
    if first.status not in OK or first.exceptions or "d_k" not in s.sliders:
        s.errors.append(f"first load: {first.status} {first.exceptions}")
        return
    s.main_elements = first.main_elements
    values = [float(s.sliders["d_k"].value[0]), float(rng.choice(MOVES))]
    clock["loaded"] += 1
    k = 0
    while time.monotonic() < stop_at:
        # Think, but notice a dropped websocket at once, as the browser's onclose does.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(s.ws.wait_closed(), args.think * rng.uniform(0.7, 1.3))
        since = time.monotonic() - (clock["kill"] or float("inf"))
        t0 = time.monotonic()
        try:
            k += 1
            out = await s.move("d_k", values[k % 2])
            if out.status not in OK or out.exceptions:
                s.steps.append(Step(since, None, f"status {out.status} {out.exceptions}"))
            else:
                s.steps.append(Step(since, time.monotonic() - t0))
                if s.drops and s.recovered is None and clock["kill"]:  # --stock
                    s.recovered = time.monotonic() - clock["kill"]
            continue
        except TimeoutError:  # (an OSError too: first)
            lost = "no answer within 15 s"
        except (websockets.exceptions.WebSocketException, OSError) as e:
            lost = f"websocket closed ({type(e).__name__})"
        s.steps.append(Step(since, None, lost))
        if args.stock and s.drops:
            s.errors.append(f"after the reconnect: a slider move got {lost}; the page is dead")
            return
        s.drops.append(time.monotonic() - (clock["kill"] or float("inf")))
        before = {label: list(sl.value) for label, sl in s.sliders.items()}
        await s.close()
        try:
            await s.reconnect(time.monotonic() + 60)
            if args.stock:  # Streamlit's frontend alone: no rerun after a reconnect
                continue
            out = await s.load()  # deploy/reconnect.js's R key, as the connection is back
        except (websockets.exceptions.WebSocketException, OSError, TimeoutError) as e:
            s.errors.append(f"reconnect failed: {type(e).__name__} {e}")
            return
        # The same view: the page the new replica drew is the one a fresh visit with the
        # student's controls gives (the reference drawn before the class), and the sliders
        # hold the values they had.
        same = out.digest() == clock["refs"].get(before["d_k"][0])
        s.restored = same and all(s.sliders[label].value == v for label, v in before.items())
        if out.status in OK and not out.exceptions and out.main_elements == s.main_elements:
            if s.recovered is None and clock["kill"]:
                s.recovered = time.monotonic() - clock["kill"]
        else:
            s.errors.append(
                f"after the reconnect: {out.status} {out.exceptions[:1]} "
                f"{out.main_elements}/{s.main_elements} elements"
            )


def serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVE), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def warm(base: str, route: str) -> dict[float, str]:
    """Full page runs on replica ``route`` before the class arrives (each replica then
    loads the real models in the background): the page's digest for every d_k a student
    will have, the reference a reconnected page must equal."""

    async def once() -> dict[float, str]:
        refs = {}
        for d_k in D_KS:
            query, cookie = f"d_model=16&d_k={d_k}&lang=en", f"attnlab_route={route}"
            s = Student(-1, base, "scaling", query, cookie=cookie)
            await s.connect()
            refs[float(d_k)] = (await s.load()).digest()
            await s.close()
        return refs

    return asyncio.run(once())


def cpu_idle(pids: Sequence[int], quiet: float = 0.15, limit: float = 90.0) -> None:
    """Wait until ``pids`` use less than ``quiet`` of a core over a second (the background
    model loading is over), at most ``limit`` s."""
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        total = 0
        for pid in pids:
            with contextlib.suppress(OSError):
                f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(f[11]) + int(f[12])
        return total / tick

    end = time.monotonic() + limit
    while time.monotonic() < end:
        c0 = cpu()
        time.sleep(1.0)
        if cpu() - c0 < quiet:
            return


def pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.0f}"


def measure(args: argparse.Namespace, run_dir: Path) -> dict:
    base = f"http://{HOST}:{args.port}"
    check_loopback(base)
    common = ["--port", str(args.port), "--run-dir", str(run_dir)]
    started = serve("--replicas", "2", *common)
    print(started.stdout.strip() or started.stderr.strip(), flush=True)
    if started.returncode:
        raise SystemExit(f"deploy/serve failed:\n{started.stdout}{started.stderr}")
    try:
        state = json.loads((run_dir / "state.json").read_text())
        replicas = [p for p in state["procs"] if p["name"] == "streamlit"]
        refs = [warm(base, f"r{i}") for i in range(1, len(replicas) + 1)]
        if refs[0] != refs[1]:
            raise SystemExit("the two replicas draw different pages for the same URL")
        cpu_idle([p["pid"] for p in replicas])
        load0 = os.getloadavg()
        victim = replicas[args.kill - 1]
        result = asyncio.run(lecture(args, base, victim, refs[0]))
        # The restarted replica takes new students again: a new visitor lands on it.
        log = (run_dir / "serve.log").read_text(errors="replace")
        result |= {
            "serve_log": [ln for ln in log.splitlines() if "exited" in ln or "again" in ln],
            "loadavg": (load0, os.getloadavg()),
            "state_after": json.loads((run_dir / "state.json").read_text()),
        }
        return result
    finally:
        stopped = serve("stop", *common)
        print(stopped.stdout.strip(), flush=True)


# The app has rendered its title and is idle (common.IDLE).
IDLE = f"() => !!document.querySelector('h1') && ({common.IDLE})()"
DK = 'input[type="range"][aria-label="d_k"]'


@dataclass
class Tab:
    """A real Chromium tab among the class (``--browsers``): Streamlit's own frontend and
    deploy/reconnect.js, not a simulation of them."""

    page: object
    d_k: str
    route: str = ""
    frames: dict = field(default_factory=dict)  # websocket -> messages received on it
    recovered: float | None = None  # s from the kill to a redrawn, idle page
    same: bool | None = None  # the same slider value and main-area text
    answers: bool | None = None  # a slider move afterwards is answered
    error: str = ""


async def open_tabs(browser, base: str, n: int) -> list[Tab]:
    tabs = []
    for i in range(n):
        context = await browser.new_context(viewport={"width": 1366, "height": 900})
        tab = Tab(await context.new_page(), str(D_KS[(7 * i + 3) % len(D_KS)]))

        def watch(ws, tab: Tab = tab) -> None:
            tab.frames[ws] = 0
            ws.on("framereceived", lambda _: tab.frames.__setitem__(ws, tab.frames[ws] + 1))

        tab.page.on("websocket", watch)
        await tab.page.goto(f"{base}/scaling?d_model=16&d_k={tab.d_k}&lang=en")
        await tab.page.wait_for_function(IDLE, timeout=60_000)
        cookies = await context.cookies()
        tab.route = next(c["value"] for c in cookies if c["name"] == "attnlab_route")
        tabs.append(tab)
    return tabs


async def follow_tab(tab: Tab, clock: dict, limit: float) -> None:
    """Time a tab whose replica died until its page is redrawn by a live one and idle;
    then check it shows what it showed and answers a slider move."""
    view = await tab.page.locator('[data-testid="stMain"]').inner_text()
    deadline = clock["kill"] + limit
    while True:
        fresh = len(tab.frames) > 1 and list(tab.frames.values())[-1] > 0
        if fresh and await tab.page.evaluate(IDLE):
            tab.recovered = time.monotonic() - clock["kill"]
            break
        if time.monotonic() > deadline:
            tab.error = f"not redrawn within {limit:.0f} s"
            return
        await asyncio.sleep(0.05)
    main = await tab.page.locator('[data-testid="stMain"]').inner_text()
    value = await tab.page.locator(DK).first.input_value()
    errors = await tab.page.locator('[data-testid="stException"]').count()
    tab.same = value == tab.d_k and main == view and not errors
    ws = list(tab.frames)[-1]
    before = tab.frames[ws]
    await tab.page.locator(DK).first.focus()
    await tab.page.keyboard.press("ArrowRight")
    end = time.monotonic() + 15
    while tab.frames[ws] == before and time.monotonic() < end:
        await asyncio.sleep(0.05)
    tab.answers = tab.frames[ws] > before


async def lecture(args: argparse.Namespace, base: str, victim: dict, refs: dict) -> dict:
    clock: dict = {"kill": None, "loaded": 0, "refs": refs}
    t_start = time.monotonic()
    stop_at = t_start + args.before + args.after + 30  # bounded whatever happens
    students = [
        Student(i, base, "scaling", f"d_model=16&d_k={D_KS[i % 15]}&lang=en")
        for i in range(args.students)
    ]

    async def staggered(s: Student) -> None:
        await asyncio.sleep(args.stagger * s.index / max(1, args.students))
        try:
            await student_main(s, args, clock, stop_at)
        except Exception as e:  # a failure of the simulation itself is reported, not hidden
            s.errors.append(f"{type(e).__name__}: {e}")
        finally:
            await s.close()

    tabs: list[Tab] = []
    playwright = browser = None
    if args.browsers:
        from playwright.async_api import async_playwright

        playwright = await async_playwright().start()
        browser = await playwright.chromium.launch(
            executable_path=chromium(), args=["--no-sandbox"]
        )
        tabs = await open_tabs(browser, base, args.browsers)
    tasks = [asyncio.create_task(staggered(s)) for s in students]
    while clock["loaded"] < len(students) and time.monotonic() < t_start + 60:
        await asyncio.sleep(0.2)
    await asyncio.sleep(args.before)
    victim_addr = f"{HOST}:{victim['port']}"
    on_victim = sum(s.upstream == victim_addr for s in students)
    clock["kill"] = time.monotonic()
    os.kill(victim["pid"], signal.SIGKILL)
    print(
        f"SIGKILL replica r{args.kill} ({victim_addr}, pid {victim['pid']}); "
        f"{on_victim} of {len(students)} students on it",
        flush=True,
    )
    victim_route = f"r{args.kill}"
    following = [follow_tab(t, clock, args.after) for t in tabs if t.route == victim_route]
    await asyncio.gather(*following)
    stop_at_after = clock["kill"] + args.after
    while time.monotonic() < stop_at_after:
        await asyncio.sleep(0.5)
    for t in tabs:
        if t.route != victim_route:  # the other replica's tabs: never disturbed
            reconnected = len(t.frames) > 1
            errors = await t.page.locator('[data-testid="stException"]').count()
            t.error = "reconnected" if reconnected else "an exception" if errors else ""
    if browser is not None:
        await browser.close()
        await playwright.stop()
    arrivals = []  # latecomers: where nginx sends new students once the replica is back
    for i in range(4):
        late = Student(-2 - i, base, "scaling", "lang=en")
        await asyncio.to_thread(late._get, "/_stcore/health")
        await late.connect()
        arrivals.append(late.upstream)
        await late.close()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "students": students,
        "victim": victim_addr,
        "on_victim": on_victim,
        "arrivals": arrivals,
        "tabs": tabs,
        "victim_route": victim_route,
    }


HOW = (
    "A student reconnects as Streamlit's frontend does (first retry after 250–500 ms, "
    "health polled through nginx, which sends it to its own replica once that is back; "
    "new websocket, a full rerun as deploy/reconnect.js asks) and is working again when "
    "that run finishes without an exception and draws the same page as a fresh visit "
    "with its controls (and its sliders hold the values they had)."
)
STOCK = (
    "`--stock`: a student reconnects as Streamlit's frontend does on its own, without "
    "deploy/reconnect.js (no rerun after the reconnect), and is working again when its "
    "next slider move is answered."
)


def tab_lines(res: dict, args: argparse.Namespace) -> list[str]:
    """The real Chromium tabs' line of the report (none without ``--browsers``)."""
    tabs: list[Tab] = res["tabs"]
    if not tabs:
        return []
    hit = [t for t in tabs if t.route == res["victim_route"]]
    rest = [t for t in tabs if t.route != res["victim_route"]]
    times = ", ".join(f"{t.recovered:.2f}" for t in hit if t.recovered is not None)
    return [
        f"- Real Chromium tabs among the class (`--browsers {args.browsers}`): {len(hit)} on "
        f"the killed replica, redrawn by a live one and idle after {times or '-'} s; the same "
        f"d_k and main-area text: {sum(t.same is True for t in hit)}/{len(hit)}; a slider "
        f"move answered afterwards: {sum(t.answers is True for t in hit)}/{len(hit)}. "
        f"{len(rest)} on the other replica: disturbed {sum(bool(t.error) for t in rest)}."
        + "".join(f" Tab error: {t.error}." for t in hit if t.error)
    ]


def report(res: dict, args: argparse.Namespace) -> tuple[str, bool]:
    students: list[Student] = res["students"]
    affected = [s for s in students if s.first_upstream == res["victim"]]
    others = [s for s in students if s.first_upstream != res["victim"]]
    rec = [s.recovered for s in affected if s.recovered is not None]
    not_back = [s.index for s in affected if s.recovered is None]
    not_restored = [s.index for s in affected if not args.stock and s.restored is not True]
    late_fail = sum(
        1
        for s in affected
        for st in s.steps
        if st.latency is None and st.t > 0 and s.recovered is not None and st.t > s.recovered
    )
    other_errors = [(s.index, st.error) for s in others for st in s.steps if st.latency is None]
    other_errors += [(s.index, e) for s in others for e in s.errors]
    other_drops = sum(len(s.drops) for s in others)

    def lat(group: Sequence[Student], lo: float, hi: float) -> list[float]:
        return [
            st.latency
            for s in group
            for st in s.steps
            if st.latency is not None and lo <= st.t < hi
        ]

    inf = float("inf")
    windows = [
        ("before the kill", -inf, 0.0),
        (f"first {BUDGET:.0f} s after", 0.0, BUDGET),
        ("after that", BUDGET, inf),
    ]
    ok = bool(affected) and not not_back and max(rec, default=inf) <= BUDGET
    ok = ok and not not_restored and not other_errors and not late_fail
    ok = ok and not any(s.errors for s in affected)
    ok = ok and all(
        t.recovered is not None and t.recovered <= BUDGET and t.same and t.answers
        for t in res["tabs"]
        if t.route == res["victim_route"]
    )
    ok = ok and not any(t.error for t in res["tabs"])
    la0, la1 = res["loadavg"]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "## Replica lost mid-lecture" + (" (`--stock`)" if args.stock else ""),
        "",
        f"`.venv/bin/python bench/replica_loss.py` ({stamp}; load average {la0[0]:.2f} → "
        f"{la1[0]:.2f}): `deploy/serve --replicas 2` on loopback (the detached supervisor), "
        f"both replicas warmed; {len(students)} simulated browsers open "
        f"`/scaling?d_model=16&d_k=<own>` through nginx within {args.stagger:.0f} s and move "
        f"their d_k slider every ~{args.think:.0f} s; {args.before:.0f} s later replica "
        f"r{args.kill} ({res['victim']}) gets SIGKILL; the class goes on for "
        f"{args.after:.0f} s. " + (STOCK if args.stock else HOW),
        "",
        f"- On the killed replica: {len(affected)} students. Working again after (s, from the "
        f"kill): median {statistics.median(rec) if rec else float('nan'):.2f}, max "
        f"{max(rec, default=float('nan')):.2f} (budget {BUDGET:.0f} s); not back: "
        f"{len(not_back)}; "
        + (
            ""
            if args.stock
            else f"the same view after the reconnect: "
            f"{sum(s.restored is True for s in affected)}/{len(affected)}; "
        )
        + f"failed slider moves after recovery: {late_fail}.",
        f"- On the other replica: {len(others)} students; errors: {len(other_errors)}; "
        f"websockets dropped: {other_drops}.",
        "- The supervisor: " + "; ".join(ln.split(" ", 1)[1] for ln in res["serve_log"]) + ".",
        f"- Four new students arriving {args.after:.0f} s after the kill: "
        f"{sum(a == res['victim'] for a in res['arrivals'])} went to the restarted replica "
        f"({', '.join(res['arrivals'])}).",
        *tab_lines(res, args),
        "",
        "| slider move (ms) | students | moves | p50 | p95 | max |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, group in (("killed replica's", affected), ("other replica's", others)):
        for label, lo, hi in windows:
            xs = lat(group, lo, hi)
            lines.append(
                f"| {label} | {name} | {len(xs)} | {ms(pct(xs, 0.5))} "
                f"| {ms(pct(xs, 0.95))} | {ms(max(xs, default=None))} |"
            )
    if rec:
        lines += [
            "",
            "Per affected student, s from the kill to a working page: "
            + ", ".join(f"{x:.2f}" for x in sorted(rec))
            + ".",
        ]
    problems = [f"student {s.index}: {e}" for s in students for e in s.errors]
    problems += [f"student {i} (other replica): {e}" for i, e in other_errors]
    if problems:
        lines += ["", "Errors:", *[f"- {p}" for p in problems[:20]]]
    verdict = "met" if ok else "NOT met"
    lines += [
        "",
        f"Budget (every affected student working again within {BUDGET:.0f} s with "
        f"the same view, no error on the other replica): {verdict}.",
    ]
    return "\n".join(lines) + "\n", ok


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=30, help="simulated browsers (%(default)s)")
    p.add_argument("--think", type=float, default=1.0, help="s between moves (%(default)s)")
    p.add_argument("--stagger", type=float, default=5.0, help="s to open the page (%(default)s)")
    p.add_argument("--before", type=float, default=10.0, help="s before the kill (%(default)s)")
    p.add_argument("--after", type=float, default=30.0, help="s after the kill (%(default)s)")
    p.add_argument("--kill", type=int, default=1, choices=(1, 2), help="replica (%(default)s)")
    p.add_argument("--port", type=int, default=8795, help="nginx port (%(default)s)")
    browsers_help = "also open this many real Chromium tabs (%(default)s)"
    p.add_argument("--browsers", type=int, default=0, help=browsers_help)
    stock_help = (
        "reconnect as Streamlit's frontend does without deploy/reconnect.js "
        "(no full rerun after a reconnect): what the script is for"
    )
    p.add_argument("--stock", action="store_true", help=stock_help)
    p.add_argument("--out", type=Path, default=None, help="also write the markdown here")
    args = p.parse_args(argv)
    if not 1 <= args.students <= 60 or args.after > 120 or args.before > 60:
        p.error("bounded: at most 60 students, 60 s before and 120 s after the kill")
    if not 0 <= args.browsers <= 8:
        p.error("bounded: at most 8 Chromium tabs")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="replica_loss-") as tmp:
        res = measure(args, Path(tmp) / "deploy")
    text, ok = report(res, args)
    print("\n" + text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
