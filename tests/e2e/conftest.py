"""Browser tests: a real `streamlit run` on a loopback port, driven by Debian's Chromium.

No browser is downloaded: Playwright launches ``$CHROMIUM`` (default ``/usr/bin/chromium``;
bench scripts use this ``CHROMIUM`` too). Without it the tests are skipped locally with the
reason, and fail under CI (``CI`` set) so a missing install step cannot pass silently.
"""

import os
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
SHOTS = ROOT / "artifacts" / "screens"
LOGS = ROOT / "artifacts" / "logs"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # No internet, as in a lecture hall without it: every host name but loopback fails to
    # resolve (the offline test also records that no request goes anywhere else).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is marked ``browser`` (registered in pyproject.toml), so
    ``pytest -m "not browser"`` runs everything else: the quick loop. A hook, not a
    ``pytestmark``: a conftest's ``pytestmark`` marks no test. It sees the whole session's
    items, hence the folder check."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A headless Streamlit server for the app, on a free loopback port (or ``port``: a
    restart on the same address), with ``env`` added to its environment (e.g. the class's
    data directory, ``ATTENTION_LAB_DATA``)."""

    def __init__(self, env: Mapping[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # The server's log goes to a file: a pipe that nobody reads fills up (64 KB) and then
        # blocks the server on its next log line, and every later page load times out.
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = LOGS / f"streamlit-{self.port}.log"
        with self.log.open("ab" if port else "wb") as log:  # a restart adds to its log
            options = ["--server.port", str(self.port), "--server.address", "127.0.0.1"]
            options += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
            command = [sys.executable, "-m", "streamlit", "run", "dashboard.py", *options]
            environ = None if env is None else os.environ | dict(env)
            self.proc = subprocess.Popen(
                command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=environ
            )
        # Imported here: bench scripts import this file, and tests/conftest.py pins BLAS to
        # one thread on import (their servers would inherit it).
        from tests.conftest import wait_until

        try:
            wait_until(self.healthy, "streamlit becomes healthy", 60, poll=0.3)
        except pytest.fail.Exception as error:
            self.stop()
            tail = self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{error.msg}:\n{tail}") from None

    def healthy(self) -> bool:
        """The server answers its health check."""
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium fonts-noto-cjk)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="session")
def server(chromium_path: Path) -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.stop()


@pytest.fixture
def fresh_server(chromium_path: Path) -> Iterator[Server]:
    """A server started just for one test, so its first request is the test's."""
    srv = Server()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser(chromium_path: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium_path), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context for the pages of ``open_app``: its HTTP cache keeps Streamlit's
    immutable JS and CSS between tests, so each page load does not fetch and compile them
    again (about half a cold load's CPU). The app keeps no cookies or storage of its own;
    each test still gets its own page, hence its own session on the server."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, accept_downloads=True)
    yield context
    context.close()


@pytest.fixture
def open_app(shared_context) -> Iterator[Callable]:
    """``open_app(server, "/softmax?lang=zh")`` -> a Playwright page with the app rendered."""
    pages = []

    def _open(srv: Server, path: str, width: int = 1920, height: int = 1080):
        page = shared_context.new_page()
        pages.append(page)
        page.set_viewport_size({"width": width, "height": height})
        page.goto(srv.url + path)
        wait_idle(page)
        return page

    yield _open
    for page in pages:
        page.close()


# The shell hides the toolbar's status widget, so the script state on the app root is what
# tells a run in progress (e.g. a real model loading behind a spinner) from a finished page.
IDLE = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stApp"][data-test-script-state="running"]')
    && !document.querySelector('[data-testid="stSkeleton"]')"""


def no_error_on_screen(page) -> None:
    """No exception box, traceback or raw nan/inf anywhere on the page."""
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.locator("body").inner_text()
    assert "Traceback" not in body
    # Python's own spelling of a NaN/inf that slipped through formatting. (The softmax page
    # names "NaN" on purpose when it shows the naive formula overflowing.)
    assert not re.search(r"\b(nan|inf)\b", body), "no raw nan/inf reaches the screen"


# The time of the last change to the DOM, kept by a MutationObserver installed once per
# document; each wait starts its count afresh (``QUIET_START``), so it lasts at least its
# ``settle`` even on a page that has been still for long (a click's rerun may not have begun).
QUIET_START = """() => {
  if (!window.__labQuiet) {
    window.__labQuiet = {last: 0};
    new MutationObserver(() => { window.__labQuiet.last = performance.now(); }).observe(
      document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  }
  window.__labQuiet.last = performance.now();
}"""
QUIET = "(quiet) => performance.now() - window.__labQuiet.last > quiet"


def wait_idle(page, settle: float = 0.6) -> None:
    """Wait until the app has rendered its title, no script run is in progress, no element
    is still a loading skeleton, and then the page has not changed for ``settle`` seconds
    (a chart is drawn after the run that made it)."""
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    wait_quiet(page, settle)
    page.wait_for_function(IDLE, timeout=60_000)


def wait_quiet(page, settle: float = 0.4) -> None:
    """Wait until the page has not changed for ``settle`` seconds (a condition on the page,
    not a fixed sleep: a page that keeps changing keeps the test waiting, up to 60 s)."""
    page.evaluate(QUIET_START)
    page.wait_for_function(QUIET, arg=settle * 1000, timeout=60_000)


def wait_for_url(page, fragment: str) -> None:
    """Wait until the address bar contains ``fragment``, then until the app is idle."""
    page.wait_for_function("f => location.href.includes(f)", arg=fragment, timeout=30_000)
    wait_idle(page)


def sidebar_slider(page, label: str):
    """The range input of the sidebar slider whose label holds ``label``."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text=label)
    return box.get_by_role("slider").first


def press(page, control, key: str, fragment: str) -> None:
    """Focus ``control`` (a locator, e.g. a slider), press ``key``, and wait until the address
    bar contains ``fragment`` and the app is idle."""
    control.focus()
    page.keyboard.press(key)
    wait_for_url(page, fragment)


def shot(page, name: str) -> Path:
    """Save a screenshot under artifacts/screens/ for a person to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def href(page) -> str:
    """The address bar (``page.url`` misses history.replaceState updates)."""
    return page.evaluate("location.href")


def full_run_requests(sent: list[bytes | str]) -> int:
    """How many of the websocket messages a page sent ask for a full run of its script (a
    ``rerun_script`` without a fragment id: the page's load, the R key, a reconnect)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    messages = [BackMsg.FromString(p.encode() if isinstance(p, str) else p) for p in sent]
    return sum(
        m.WhichOneof("type") == "rerun_script" and not m.rerun_script.fragment_id for m in messages
    )


REDRAW_GUARD = "data-lab-redrawing"  # deploy/reconnect.js: the page takes no input meanwhile


def watch_redraw_guard(page) -> None:
    """Record, in the page, each change of deploy/reconnect.js's redraw guard (on or off,
    and when: ``performance.now()``); :func:`redraw_guard` reads them."""
    page.evaluate(
        """(name) => {
          window.__guard = [];
          new MutationObserver(() => window.__guard.push([
            document.documentElement.hasAttribute(name), performance.now()])
          ).observe(document.documentElement, {attributeFilter: [name]});
        }""",
        REDRAW_GUARD,
    )


def redraw_guard(page) -> list[list]:
    """The guard's changes since :func:`watch_redraw_guard`: [on, ms] each."""
    return page.evaluate("window.__guard")
