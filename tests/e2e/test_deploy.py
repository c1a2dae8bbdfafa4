"""The class deployment: ``deploy/serve`` starts two replicas behind nginx on loopback.

Chromium talks to nginx only. A slider step proves the websocket upgrade through the proxy.
nginx's access log (which logs each request's route cookie and the replica that answered)
proves that every request of a browser session, its websocket, a download and an upload
included, reached one replica, and that Streamlit's own JS came from nginx itself. nginx
is Debian's package; without it the tests are skipped locally and fail under CI.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, wait_idle
from ui.i18n import Translator

SERVE = ROOT / "deploy" / "serve"
# Under pytest-xdist, this module's tests share one deployment: they run on one worker.
pytestmark = pytest.mark.xdist_group("deploy")

LOG_LINE = re.compile(r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) \S+ '
                      r"route=(?P<route>\S*) upstream=(?P<upstream>.*?) time=")  # fmt: skip


@dataclass(frozen=True)
class Deployment:
    url: str
    run_dir: Path
    replica_ports: tuple[int, ...]

    def log(self) -> list[dict[str, str]]:
        """nginx's access log, one dict per request."""
        text = (self.run_dir / "access.log").read_text()
        return [m.groupdict() for m in map(LOG_LINE.search, text.splitlines()) if m]


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _free_ports(count: int) -> int:
    """A port p such that p .. p + count - 1 are all free on loopback."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(_free(base + i) for i in range(count)):
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
    return subprocess.run([str(SERVE), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


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
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(request, timeout=30) as r:
        routes = [m[1] for c in r.headers.get_all("Set-Cookie", [])
                  if (m := re.match(r"attnlab_route=(r\d+);", c))]  # fmt: skip
        assert len(routes) <= 1
        return r.headers.get("X-Upstream", ""), "".join(routes)


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
    deadline = time.monotonic() + 30
    while True:
        log = deployment.log()
        logged = {
            e["route"] for e in log if e["path"] == "/_stcore/stream" and e["status"] == "101"
        }
        if routes <= logged or time.monotonic() > deadline:
            return log
        time.sleep(0.3)


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
    page_b.wait_for_timeout(800)
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
        app = {upstream for path, upstream in seen if not path.startswith("/static/")}
        assert app == {own}, "the page, its health checks and its download too"
        assert any(p.startswith("/static/js/") and not u for p, u in seen), "nginx sends JS"
    fetched = {e["route"] for e in log if e["path"] == download}
    assert fetched == {route_a}, "the download came from the first student's replica"
    uploads = [e for e in log if e["path"].startswith("/_stcore/upload_file/")]
    assert uploads, "the upload went through nginx"
    assert {(e["route"], e["status"][0]) for e in uploads} == {(route_b, "2")}, uploads
