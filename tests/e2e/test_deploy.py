"""The class deployment: ``deploy/serve`` starts replicas behind nginx on loopback.

Chromium talks to nginx only. A slider step proves the websocket upgrade through the proxy.
nginx's access log (which logs each request's route cookie and the replica that answered)
proves that every request of a browser session, its websocket, a download and an upload
included, reached one replica, and that Streamlit's own JS came from nginx itself. A page
whose replica is SIGKILLed comes back, in Chromium, with its controls and answers them
again (the supervisor restarts the replica). Two "hosts" on loopback (127.0.0.2 and
127.0.0.3, replicas only) behind an nginx-only deploy/serve share a class and one takes
over when the other is lost. The class's store: one that cannot be used (a data directory
that cannot be written, a PostgreSQL that cannot be reached) stops the start with one line
before anything starts; the replicas get the data directory, the store URL and the public
address in their environment, the lecturer a link (a key on an app host), and a store
URL's password is in no output, file or command line. Every address is checked to be in
127.0.0.0/8 before any traffic goes to it. nginx is Debian's package; without it the tests
are skipped locally and fail under CI.
"""

import argparse
import importlib.util
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

from store import STORE_FILE, lecturer_key
from tests.conftest import wait_until
from tests.e2e.conftest import (
    REDRAW_GUARD,
    ROOT,
    full_run_requests,
    no_error_on_screen,
    redraw_guard,
    wait_idle,
    watch_redraw_guard,
)
from tests.store.conftest import start_pg_server
from ui.i18n import Translator

SERVE = ROOT / "deploy" / "serve"
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


def _load_serve():
    """deploy/serve.py as a module (deploy/ is no package)."""
    spec = importlib.util.spec_from_file_location("deploy_serve", ROOT / "deploy" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


serve = _load_serve()
# Under pytest-xdist, this module's tests share one deployment: they run on one worker.
pytestmark = pytest.mark.xdist_group("deploy")

LOG_LINE = re.compile(
    r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) \S+ '
    r"route=(?P<route>\S*) upstream=(?P<upstream>.*?) time="
)


@dataclass(frozen=True)
class Deployment:
    url: str
    run_dir: Path
    replica_ports: tuple[int, ...]

    def log(self) -> list[dict[str, str]]:
        """nginx's access log, one dict per request."""
        text = (self.run_dir / "access.log").read_text()
        return [m.groupdict() for m in map(LOG_LINE.search, text.splitlines()) if m]


def _loopback(address: str) -> str:
    """``address``, if it is on this machine's loopback network (127.0.0.0/8): these tests
    send nothing anywhere else."""
    if ipaddress.ip_address(address.strip("[]")) not in LOOPBACK:
        raise AssertionError(f"{address} is outside 127.0.0.0/8: no test traffic goes there")
    return address


def _free(port: int, address: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        try:
            s.bind((_loopback(address), port))
        except OSError:
            return False
    return True


def _listening(port: int, address: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        return s.connect_ex((_loopback(address), port)) == 0


def _free_ports(count: int, addresses: tuple[str, ...] = ("127.0.0.1",)) -> int:
    """A port p such that p .. p + count - 1 are all free on each loopback address."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(
            _free(base + i, a) for i in range(count) for a in addresses
        ):
            return base
    raise RuntimeError("no run of free loopback ports")


def _nginx() -> str:
    found = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(found, os.X_OK):
        message = "nginx not found (apt-get install nginx)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def _serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVE), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def deployment(chromium_path: Path, tmp_path_factory) -> Iterator[Deployment]:
    nginx = _nginx()
    port = _free_ports(3)
    run_dir = tmp_path_factory.mktemp("deploy")
    common = ["--port", str(port), "--run-dir", str(run_dir)]
    started = _serve("--replicas", "2", *common, "--nginx", nginx, "--python", sys.executable)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "ready: http://127.0.0.1:" in started.stdout
        yield Deployment(f"http://127.0.0.1:{port}", run_dir, (port + 1, port + 2))
    finally:
        stopped = _serve("stop", *common)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert not any(_listening(p) for p in (port, port + 1, port + 2)), "stop ends all"


def _get(url: str, cookie: str = "") -> tuple[str, str]:
    """(X-Upstream, the route nginx's Set-Cookie gives or "") of a GET through nginx."""
    _loopback(urllib.parse.urlsplit(url).hostname or "")
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(request, timeout=30) as r:
        routes = [
            m[1]
            for c in r.headers.get_all("Set-Cookie", [])
            if (m := re.match(r"attnlab_route=(r\d+);", c))
        ]
        assert len(routes) <= 1
        # X-Upstream lists every replica tried: the last one answered.
        return r.headers.get("X-Upstream", "").split(", ")[-1], "".join(routes)


def test_new_visitors_get_a_route_cookie_and_are_spread(deployment) -> None:
    answers = [_get(f"{deployment.url}/_stcore/health") for _ in range(6)]
    assert {upstream for upstream, _ in answers} == {
        f"127.0.0.1:{p}" for p in deployment.replica_ports
    }, "new visitors reach both replicas"
    for upstream, route in answers:
        assert route, "each new visitor gets a route"
        assert upstream == f"127.0.0.1:{deployment.replica_ports[int(route[1:]) - 1]}"
    for i, port in enumerate(deployment.replica_ports, 1):
        for _ in range(3):
            upstream, route = _get(f"{deployment.url}/_stcore/health", f"attnlab_route=r{i}")
            assert upstream == f"127.0.0.1:{port}", "a known route sticks"
            assert not route, "and is not set again"


def _open_softmax(browser, deployment: Deployment):
    context = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True)
    page = context.new_page()
    answers: list[tuple[str, str]] = []  # (path, X-Upstream) of every answer nginx gave

    def record(response) -> None:
        if response.url.startswith(deployment.url):
            path = response.url.removeprefix(deployment.url)
            answers.append((path, response.headers.get("x-upstream", "")))

    page.on("response", record)
    page.goto(f"{deployment.url}/softmax?lang=en")
    wait_idle(page)
    route = next(c["value"] for c in context.cookies() if c["name"] == "attnlab_route")
    return context, page, route, answers


def _step_slider(page) -> None:
    """Move the temperature slider one step with the keyboard; the page must follow."""
    slider = page.locator(
        f'input[type="range"][aria-label="{Translator("en")("softmax.temperature")}"]'
    ).first
    before = float(slider.input_value())
    slider.focus()
    page.keyboard.press("ArrowRight")
    after = float(slider.input_value())
    assert after > before
    page.wait_for_function(
        "t => document.body.innerText.includes(t)", arg=f"At T = {after:.2f}", timeout=60_000
    )
    wait_idle(page)


def _wait_for_streams(deployment: Deployment, routes: set[str]) -> list[dict[str, str]]:
    """nginx logs a websocket when it closes: wait until each route's stream is logged."""

    def logged() -> list[dict[str, str]] | None:
        log = deployment.log()
        streams = {
            e["route"] for e in log if e["path"] == "/_stcore/stream" and e["status"] == "101"
        }
        return log if routes <= streams else None

    return wait_until(logged, f"nginx logs the websockets of {sorted(routes)}", 30, poll=0.3)


def test_two_students_each_stick_to_their_replica_over_the_websocket(
    deployment, browser, tmp_path
) -> None:
    first, page_a, route_a, seen_a = _open_softmax(browser, deployment)
    second, page_b, route_b, seen_b = _open_softmax(browser, deployment)
    # least_conn: the first student's websocket is open, so the second gets the other one.
    assert {route_a, route_b} == {"r1", "r2"}
    for page in (page_a, page_b):
        _step_slider(page)
    page_a.get_by_text(Translator("en")("exports.title")).first.click()
    with page_a.expect_download() as info:
        page_a.locator('[data-testid="stDownloadButton"] button', has_text="NPZ").first.click()
    npz = tmp_path / "softmax.npz"
    info.value.save_as(npz)
    assert npz.read_bytes().startswith(b"PK"), "an .npz is a zip"
    download = info.value.url.removeprefix(deployment.url)
    assert download.startswith("/media/")
    # The second student uploads that file on the homework page (not the expected answer:
    # what matters here is where the upload goes).
    page_b.goto(f"{deployment.url}/homework?lang=en")
    wait_idle(page_b)
    page_b.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(npz))
    page_b.get_by_text(npz.name).first.wait_for(timeout=30_000)  # its chip: the upload arrived
    wait_idle(page_b)
    assert page_b.locator('[data-testid="stException"]').count() == 0
    first.close()
    second.close()

    log = _wait_for_streams(deployment, {route_a, route_b})
    for route, seen in ((route_a, seen_a), (route_b, seen_b)):
        own = f"127.0.0.1:{deployment.replica_ports[int(route[1:]) - 1]}"
        entries = [e for e in log if e["route"] == route and e["upstream"] != "-"]
        assert {e["upstream"] for e in entries} == {own}, "every request to one replica"
        assert any(e["path"] == "/_stcore/stream" and e["status"] == "101" for e in entries)
        app = {upstream for path, upstream in seen if not path.startswith(("/static/", "/_lab/"))}
        assert app == {own}, "the page, its health checks and its download too"
        assert any(p.startswith("/static/js/") and not u for p, u in seen), "nginx sends JS"
        assert ("/_lab/reconnect.js", "") in seen, "and the page's reconnect script"
    fetched = {e["route"] for e in log if e["path"] == download}
    assert fetched == {route_a}, "the download came from the first student's replica"
    uploads = [e for e in log if e["path"].startswith("/_stcore/upload_file/")]
    assert uploads, "the upload went through nginx"
    assert {(e["route"], e["status"][0]) for e in uploads} == {(route_b, "2")}, uploads


# -- a replica lost: the supervisor ----------------------------------------------------


def test_a_dead_process_restarts_at_once_then_ever_later_then_is_left_down() -> None:
    deaths: list[float] = []
    delays = []
    for k in range(serve.MAX_RESTARTS + 1):
        deaths.append(1000.0 + 10 * k)
        delays.append(serve.restart_delay(deaths, deaths[-1]))
    assert delays == [0.0, 1.0, 2.0, 4.0, 8.0, None]
    assert serve.restart_delay([0.0, 1.0, 2.0, 3.0, 4.0, 1000.0], 1000.0) == 0.0, (
        "deaths older than the window are forgotten"
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_supervisor_restarts_a_crashing_process_with_growing_delays(tmp_path) -> None:
    """A real process that exits at once, under a clock the test moves: restarted at once,
    then after 1, 2, 4, 8 s, then left down (and the state file says so)."""
    port = _closed_port()
    crash = [sys.executable, "-c", "raise SystemExit(3)"]
    log, health = tmp_path / "replica-1.log", f"http://127.0.0.1:{port}/_stcore/health"
    child = serve.Child("streamlit", "127.0.0.1", port, crash, log, health)
    args = argparse.Namespace(role="replicas", address="127.0.0.1")
    supervisor = serve.Supervisor(args, tmp_path, [child], dict(os.environ), "", [])
    supervisor.spawn(child)
    now, delays = 0.0, []
    try:
        while not child.left_down:
            assert child.popen.wait(timeout=30) == 3
            died = child.popen
            supervisor.tick(now)
            if child.left_down:
                break
            delay = child.restart_at - now if child.restart_at is not None else 0.0
            if delay:
                supervisor.tick(now + delay - 0.01)
                assert child.popen is died, "not restarted before its delay is over"
                supervisor.tick(now + delay)
            assert child.popen is not died, "restarted once its delay is over"
            delays.append(delay)
            now += delay + 5.0  # it ran (and crashed) 5 s later
    finally:
        if child.popen.poll() is None:
            child.popen.kill()
    assert delays == [0.0, 1.0, 2.0, 4.0, 8.0]
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["left_down"] == [f"127.0.0.1:{port}"]
    assert state["restarts"] == {f"127.0.0.1:{port}": serve.MAX_RESTARTS}
    assert (tmp_path / "replica-1.log").read_text().count("restarted at") == 5


def _wait(page, condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """``wait_until``, while Playwright delivers the page's events."""
    wait_until(condition, what, timeout, 0.1, pause=lambda s: page.wait_for_timeout(s * 1000))


def _replicas(run_dir: Path) -> list[dict]:
    state = json.loads((run_dir / "state.json").read_text())
    return [p for p in state["procs"] if p["name"] == "streamlit"]


def _slider(page, label: str):
    return page.locator(f'input[type="range"][aria-label="{label}"]').first


def test_a_page_whose_replica_dies_comes_back_to_it_restarted_and_answers(
    chromium_path: Path, browser, tmp_path
) -> None:
    nginx = _nginx()
    port = _free_ports(3)
    run_dir = tmp_path / "deploy"
    url = f"http://{_loopback('127.0.0.1')}:{port}"
    common = ["--port", str(port), "--run-dir", str(run_dir)]
    context = None
    try:
        started = _serve("--replicas", "2", *common, "--nginx", nginx, "--python", sys.executable)
        assert started.returncode == 0, started.stdout + started.stderr
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page = context.new_page()
        frames: dict[object, int] = {}  # websocket -> messages the server sent on it
        sent: dict[object, list] = {}  # websocket -> messages the page sent on it

        def watch(ws) -> None:
            frames[ws] = 0
            sent[ws] = []
            ws.on("framereceived", lambda _: frames.__setitem__(ws, frames[ws] + 1))
            ws.on("framesent", lambda payload: sent[ws].append(payload))

        page.on("websocket", watch)
        page.goto(f"{url}/scaling?d_model=16&d_k=9&lang=en")
        wait_idle(page)
        route = next(c["value"] for c in context.cookies() if c["name"] == "attnlab_route")
        victim = _replicas(run_dir)[int(route[1:]) - 1]
        view = page.locator('[data-testid="stMain"]').inner_text()
        shown = (_slider(page, "d_model").input_value(), _slider(page, "d_k").input_value())
        assert shown == ("16", "9")

        # While the redraw guard is on, a key moves nothing (and sends nothing).
        html = "document.documentElement"
        page.evaluate(f"{html}.setAttribute('{REDRAW_GUARD}', '')")
        before_keys = len(sent[list(frames)[-1]])
        _slider(page, "d_k").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(500)
        assert _slider(page, "d_k").input_value() == "9"
        assert len(sent[list(frames)[-1]]) == before_keys
        page.evaluate(f"{html}.removeAttribute('{REDRAW_GUARD}')")

        watch_redraw_guard(page)  # deploy/reconnect.js: on while the page is drawn anew
        os.kill(victim["pid"], signal.SIGKILL)
        what = "the page reconnects and the server it reached redraws it"
        _wait(page, lambda: len(frames) > 1 and list(frames.values())[-1] > 0, what)
        wait_idle(page)
        shown = (_slider(page, "d_model").input_value(), _slider(page, "d_k").input_value())
        assert shown == ("16", "9"), "the same controls"
        assert page.locator('[data-testid="stMain"]').inner_text() == view, "the same view"
        no_error_on_screen(page)
        # It waited for its own replica, restarted (the class stays spread): had its
        # websocket reached the other one, nginx would have re-pinned the cookie there.
        now = next(c["value"] for c in context.cookies() if c["name"] == "attnlab_route")
        assert now == route, "the page is back on its own replica"
        # /scaling has no fragment on a timer: Streamlit's frontend asks for no run after a
        # reconnect, deploy/reconnect.js asks for one.
        assert full_run_requests(sent[list(frames)[-1]]) == 1
        # It took no input from the reconnect until that run had drawn the page.
        (on, t_on), (off, t_off) = redraw_guard(page)
        assert on and not off and t_off - t_on < 10_000, "on, then off when the run ended"
        restarted = _replicas(run_dir)[int(route[1:]) - 1]
        assert restarted["port"] == victim["port"] and restarted["pid"] != victim["pid"]

        # It answers: a slider move reruns on the server the page reached.
        ws = list(frames)[-1]
        before = frames[ws]
        _slider(page, "d_k").focus()
        page.keyboard.press("ArrowRight")
        _wait(page, lambda: frames[ws] > before, "the new server answers a slider move")
        wait_idle(page)
        assert _slider(page, "d_k").input_value() == "10"
        assert page.locator('[data-testid="stMain"]').inner_text() != view, "the chart moved"
        no_error_on_screen(page)

        # The supervisor (detached: the default mode) restarted the replica on its port,
        # soon enough that no page was sent elsewhere.
        log = (run_dir / "serve.log").read_text()
        assert "healthy again" in log
        assert "reconnect to the others" not in log
    finally:
        if context is not None:
            context.close()
        stopped = _serve("stop", *common)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not any(_listening(p) for p in (port, port + 1, port + 2)), "stop ends all"


# -- beyond one machine: two hosts on loopback -------------------------------------------


def _handshake(url: str, cookie: str) -> str:
    """Open the app's websocket through nginx with ``cookie``; the replica that took it."""
    _loopback(urllib.parse.urlsplit(url).hostname or "")
    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    headers = {"subprotocols": ["streamlit"], "additional_headers": {"Cookie": cookie}}
    with ws_connect(stream, origin=url, **headers, proxy=None, open_timeout=10) as ws:
        return ws.response.headers["X-Upstream"].split(", ")[-1]


def test_two_hosts_share_a_class_and_one_takes_over_when_the_other_is_lost(tmp_path) -> None:
    nginx = _nginx()
    hosts = ("127.0.0.2", "127.0.0.3")
    replica_port = _free_ports(1, hosts)
    port = _free_ports(1)
    url = f"http://{_loopback('127.0.0.1')}:{port}"
    upstreams = [f"{_loopback(h)}:{replica_port}" for h in hosts]
    dirs = {name: tmp_path / name for name in ("host-a", "host-b", "front")}
    only = ["--role", "replicas", "--replicas", "1", "--replica-port", str(replica_port)]
    only += ["--python", sys.executable]
    host_b = None
    try:
        # Host A: the detached supervisor; host B: in the foreground, as in a terminal.
        a = _serve(*only, "--replica-address", hosts[0], "--run-dir", str(dirs["host-a"]))
        assert a.returncode == 0, a.stdout + a.stderr
        with (tmp_path / "host-b.log").open("wb") as log:
            where = ["--replica-address", hosts[1], "--run-dir", str(dirs["host-b"])]
            cmd = [str(SERVE), *only, *where, "--foreground"]
            host_b = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)

        def b_ready() -> bool:
            text = (tmp_path / "host-b.log").read_text()
            if "ready: " in text:
                return True
            assert host_b.poll() is None, text
            return False

        wait_until(b_ready, "host B is ready", 120)
        proxy = ["--role", "proxy", "--port", str(port), "--upstream", ",".join(upstreams)]
        tools = ["--nginx", nginx, "--python", sys.executable]
        front = _serve(*proxy, "--run-dir", str(dirs["front"]), *tools)
        assert front.returncode == 0, front.stdout + front.stderr
        assert _serve("status", "--run-dir", str(dirs["front"])).returncode == 0

        # nginx itself killed: its supervisor ends the workers it left and starts it again.
        def front_nginx() -> dict:
            state = json.loads((dirs["front"] / "state.json").read_text())
            return next(p for p in state["procs"] if p["name"] == "nginx")

        killed = front_nginx()
        os.kill(killed["pid"], signal.SIGKILL)

        def nginx_back() -> bool:
            return front_nginx()["pid"] != killed["pid"] and serve.healthy(f"{url}/_stcore/health")

        wait_until(nginx_back, "nginx is back", 30)
        assert serve.group_members(killed["pid"], "nginx") == [], "no orphaned worker serves"

        # Host B's supervisor, in the foreground, restarts its replica on the same port.
        lost = _replicas(dirs["host-b"])[0]
        os.kill(lost["pid"], signal.SIGKILL)
        health = f"http://{upstreams[1]}/_stcore/health"

        def replica_back() -> bool:
            return _replicas(dirs["host-b"])[0]["pid"] != lost["pid"] and serve.healthy(health, 1)

        wait_until(replica_back, "host B's replica is back", 60)

        # A class arrives: nginx spreads it over both hosts and each student sticks.
        students = []
        for _ in range(8):
            upstream, route = _get(f"{url}/_stcore/health")
            assert route and _loopback(upstream.split(":")[0]) and upstream in upstreams
            students.append((f"attnlab_route={route}", upstream))
        assert {u for _, u in students} == set(upstreams), "both hosts get students"
        for cookie, upstream in students:
            for path in ("/_stcore/health", "/scaling", "/_stcore/host-config"):
                assert _get(url + path, cookie) == (upstream, ""), "sticks, no new cookie"
            assert _handshake(url, cookie) == upstream, "the websocket too"

        # Host B is lost (its supervisor first, so nothing restarts its replica).
        host_b.kill()
        host_b.wait(timeout=30)
        os.kill(_replicas(dirs["host-b"])[0]["pid"], signal.SIGKILL)
        wait_until(
            lambda: not _listening(replica_port, hosts[1]),
            "host B's replica stops listening after SIGKILL",
            30,
            poll=0.1,
        )
        # A reconnect of host B's pages waits for it (it may be restarting), until the
        # front has seen it down for MOVE_AFTER s: then it goes to host A.
        on_b = next(cookie for cookie, upstream in students if upstream == upstreams[1])
        front_log = dirs["front"] / "serve.log"
        moved_line = f"r2 {upstreams[1]} down for"
        try:
            taken = _handshake(url, on_b)
        except InvalidStatus as refused:
            assert refused.response.status_code == 502
        else:
            assert moved_line in front_log.read_text(), f"taken by {taken} before the move"
        wait_until(lambda: moved_line in front_log.read_text(), "the front moves r2", 30)
        assert _handshake(url, on_b) == upstreams[0], "then host A takes the reconnect"
        for cookie, upstream in students:
            if upstream == upstreams[0]:
                assert _get(f"{url}/_stcore/health", cookie) == (upstream, ""), "undisturbed"
                assert _handshake(url, cookie) == upstream
                continue
            moved, route = _get(f"{url}/scaling", cookie)  # the page reloads or reconnects
            assert moved == upstreams[0] and route, "moved to host A, and told so"
            assert _get(f"{url}/_stcore/health", f"attnlab_route={route}") == (moved, "")
            assert _handshake(url, f"attnlab_route={route}") == moved, "its websocket too"
        assert _serve("status", "--run-dir", str(dirs["front"])).returncode == 1, (
            "status says a host is down"
        )
    finally:
        if host_b is not None and host_b.poll() is None:
            host_b.kill()
            host_b.wait(timeout=30)
        for run_dir in dirs.values():
            _serve("stop", "--run-dir", str(run_dir))
    assert not _listening(port), "stop ends nginx"
    assert not any(_listening(replica_port, h) for h in hosts), "and every replica"


# -- the class's store: checked before anything starts, handed to every replica ----------


def _environ(pid: int) -> dict[str, str]:
    """The environment process ``pid`` was started with."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(entry.decode().split("=", 1) for entry in raw if b"=" in entry)


def test_a_store_that_cannot_be_used_stops_the_start_with_one_line(tmp_path) -> None:
    (tmp_path / "file").write_text("not a folder")
    port = _free_ports(2)
    run_dir = tmp_path / "deploy"
    common = ["--replicas", "1", "--port", str(port), "--run-dir", str(run_dir)]
    common += ["--python", sys.executable]
    unwritable = str(tmp_path / "file" / "lab")  # under a regular file: not even root writes
    closed = _closed_port()
    for option, value, reason in (
        ("--data-dir", unwritable, unwritable),
        ("--store", f"postgresql://lab:hunter2@127.0.0.1:{closed}/lab", "PostgreSQL"),
    ):
        failed = _serve(*common, option, value)
        said = failed.stdout + failed.stderr
        assert failed.returncode == 1, said
        assert len(said.strip().splitlines()) == 1, said
        assert said.startswith("the store cannot be used: ") and reason in said
        assert "hunter2" not in said and "Traceback" not in said
        assert not run_dir.exists(), "nothing started, not even its run directory"
        assert not any(_listening(p) for p in (port, port + 1))


def test_the_replicas_get_the_data_directory_and_the_lecturer_a_link(tmp_path) -> None:
    nginx = _nginx()
    port = _free_ports(2)
    data = tmp_path / "data"
    common = ["--port", str(port), "--run-dir", str(tmp_path / "deploy")]
    public = "http://10.0.0.5:8080"  # only printed and handed over: nothing is sent there
    try:
        tools = ["--nginx", nginx, "--python", sys.executable]
        started = _serve(
            "--replicas", "1", *common, *tools, "--data-dir", str(data), "--public-url", public
        )
        assert started.returncode == 0, started.stdout + started.stderr
        lines = started.stdout.splitlines()
        assert lines[0].startswith(f"ready: http://127.0.0.1:{port}/")
        assert lines[1:4] == [
            f"data directory: {data}",
            f"store: SQLite {data / STORE_FILE} (schema version 1)",
            f"lecturer: {public}/?present=1&key={lecturer_key(data)}",
        ]
        assert (data / STORE_FILE).is_file(), "the store was made before the replicas started"
        env = _environ(_replicas(tmp_path / "deploy")[0]["pid"])
        assert env["ATTENTION_LAB_DATA"] == str(data)
        assert env["ATTENTION_LAB_PUBLIC_URL"] == public
        assert env["ATTENTION_LAB_STORE"] == "", "no URL: SQLite in the data directory"
        assert serve.healthy(f"http://{_loopback('127.0.0.1')}:{port}/_stcore/health")
    finally:
        stopped = _serve("stop", *common)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_a_store_url_reaches_the_replicas_but_its_password_is_never_shown(tmp_path) -> None:
    nginx = _nginx()
    pg = start_pg_server()  # trusts loopback: any password gets in
    host = "127.0.0.2"
    replica_port, port = _free_ports(1, (host,)), _free_ports(1)
    url = pg.new_database().replace("postgresql://lab@", "postgresql://lab:hunter2@")
    dirs = {name: tmp_path / name for name in ("host", "front")}
    data = tmp_path / "data"
    try:
        only = ["--role", "replicas", "--replicas", "1", "--replica-address", _loopback(host)]
        only += ["--replica-port", str(replica_port), "--run-dir", str(dirs["host"])]
        store = ["--data-dir", str(data), "--store", url]
        app_host = _serve(*only, "--python", sys.executable, *store)
        said = app_host.stdout + app_host.stderr
        assert app_host.returncode == 0, said
        assert "hunter2" not in said
        shown = url.replace(":hunter2@", ":***@")
        assert f"store: PostgreSQL {shown} (schema version 1)" in said
        assert f"lecturer key: {lecturer_key(data)}  (" in said, "the key, not a link"
        state = json.loads((dirs["host"] / "state.json").read_text())
        replica = _replicas(dirs["host"])[0]
        assert _environ(replica["pid"])["ATTENTION_LAB_STORE"] == url, "the replica has it all"
        for pid in (state["supervisor"], replica["pid"]):
            assert b"hunter2" not in Path(f"/proc/{pid}/cmdline").read_bytes(), "not in ps"
        for written in dirs["host"].iterdir():
            if written.is_file():
                assert "hunter2" not in written.read_text(errors="replace"), written

        proxy = ["--role", "proxy", "--port", str(port), "--upstream", f"{host}:{replica_port}"]
        tools = ["--nginx", nginx, "--python", sys.executable]
        front = _serve(*proxy, "--run-dir", str(dirs["front"]), *tools)
        assert front.returncode == 0, front.stdout + front.stderr
        link = f"lecturer: http://127.0.0.1:{port}/?present=1&key=<the key: python -m store key"
        assert link in front.stdout, "the front knows no key: the link's base"
        assert "data directory" not in front.stdout, "the front has no store"
        assert _get(f"http://{_loopback('127.0.0.1')}:{port}/_stcore/health")[0] == (
            f"{host}:{replica_port}"
        )
    finally:
        for run_dir in dirs.values():
            _serve("stop", "--run-dir", str(run_dir))
        pg.remove()
    assert not _listening(port), "stop ends nginx"
    assert not _listening(replica_port, host), "and the replica"
