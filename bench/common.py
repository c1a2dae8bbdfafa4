"""What several benchmarks share, defined once (import it from a script in bench/, whose
folder Python puts on the path: ``from common import TOOLS``). bench/ imports nothing from
tests/: a benchmark runs without pytest.

- ``TOOLS``: the external load tools a few benchmarks drive (``lab_bench.py``,
  ``st_load.py``), not part of this repository: the folder named by the ``LAB_TOOLS``
  environment variable (``LAB_TOOLS=/opt/lab/tools python bench/bench_ab.py …``); unset,
  ``../shared/tools`` beside this checkout. :func:`tool` says what to do when one is missing.
- The browser: :func:`chromium` (``$CHROMIUM``, or ``/usr/bin/chromium``, as the browser
  tests read it), ``CHROMIUM_ARGS``, and when the app is idle (``IDLE``, :func:`wait_idle`).
- lab_bench's slider-step timing with the one-heatmap reference page: :func:`lab_bench`,
  :func:`reference_server`, :func:`lab_bench_browser`, :func:`press_rounds`.
- :func:`rss_mb`, :func:`timed`, :func:`median_times`: memory and timers.

Importing it loads nothing else (no NumPy, no Playwright): a script may set its BLAS threads
before or after.
"""

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(os.environ.get("LAB_TOOLS", ROOT.parent / "shared" / "tools"))
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# The browser tests' flags (their own list is in their conftest), so that a benchmark's
# Chromium runs as theirs does: no sandbox or GPU, nothing in the background, and no
# internet (every host name but loopback fails to resolve, as in a hall without it).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]
# No script run in progress (the shell hides the status widget, so the app root's script
# state tells) and no element still a loading skeleton: for ``page.wait_for_function``.
IDLE = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stApp"][data-test-script-state="running"]')
    && !document.querySelector('[data-testid="stSkeleton"]')"""


def tool(name: str) -> Path:
    """``TOOLS/name``; if it is not there, stop with a message saying where it was looked for."""
    path = TOOLS / name
    if not path.exists():
        sys.exit(f"{path} not found: set LAB_TOOLS to the folder that holds {name}")
    return path


def chromium() -> str:
    """The browser to launch (``$CHROMIUM``, or Debian's ``/usr/bin/chromium``); stops with
    what to install if it is not there."""
    if not CHROMIUM.exists():
        sys.exit(f"Chromium not found at {CHROMIUM} (apt-get install chromium fonts-noto-cjk)")
    return str(CHROMIUM)


def wait_idle(page, settle: float = 0.6) -> None:
    """Wait until a Playwright page shows the app's title and is ``IDLE``, then ``settle``
    seconds for the charts drawn after the run, and until it is idle again."""
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    page.wait_for_timeout(settle * 1000)
    page.wait_for_function(IDLE, timeout=60_000)


def lab_bench() -> ModuleType:
    """``TOOLS/lab_bench.py``, imported (``TOOLS`` stays on the path)."""
    sys.path.insert(0, str(tool("lab_bench.py").parent))
    import lab_bench as lb

    return lb


def reference_server(lb: ModuleType):
    """lab_bench's server for its one-heatmap reference page (written to a temp folder)."""
    tmp = Path(tempfile.gettempdir()) / "lab_bench"
    tmp.mkdir(exist_ok=True)
    (tmp / "ref_app.py").write_text(lb.REF_SRC)
    return lb.Server(tmp, "ref_app.py", [])


@contextmanager
def lab_bench_browser(lb: ModuleType, servers: Iterable) -> Iterator:
    """lab_bench's Chromium with ``servers`` (``lb.Server``) started; all stopped after."""
    from playwright.sync_api import sync_playwright

    servers = list(servers)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lb.CHROMIUM, args=["--disable-dev-shm-usage"])
        for s in servers:
            s.__enter__()
        try:
            yield browser
        finally:
            for s in servers:
                s.__exit__()
            browser.close()


def press_rounds(runs: Iterable, presses: int) -> None:
    """Press each run's slider in turn (``run.step``), round-robin: two rounds to warm up,
    then ``presses`` recorded rounds, so the machine's other load falls on all alike."""
    runs = list(runs)
    for i in range(2 + presses):
        for run in runs:
            run.step(record=i >= 2)


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory (VmRSS) of process ``pid`` (default: this one) now, in MB (Linux /proc;
    nan without the line)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(fn: Callable[[], object], repeats: int, clock=time.perf_counter) -> list[float]:
    """ms per call of ``fn``. ``clock=time.process_time`` counts only this process's CPU
    time: on a loaded shared machine that is closer to what the call costs than wall time."""
    out = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        out.append((clock() - t0) * 1000)
    return out


def median_times(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median wall s, median CPU s of this process) of ``fn``: on a shared, overloaded
    machine the CPU time is what the call costs; the wall time also counts waiting for a core."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def client_state(
    tab: object,
    widgets: Iterable[object],
    fragment_id: str = "",
    auto: bool = False,
) -> object:
    """A rerun request as Streamlit 1.67's frontend sends it, for a browser-less ``tab``
    (its ``base`` URL, ``page`` name, ``query`` string and ``page_hash``, "" before the first
    run names the page): the ``widgets``' states, a ``fragment_id`` for a fragment's rerun,
    ``auto`` for one a ``run_every`` timer asked for."""
    from streamlit.proto.ClientState_pb2 import ClientState

    cs = ClientState()
    cs.query_string = tab.query
    cs.page_script_hash = tab.page_hash
    if not tab.page_hash:
        cs.page_name = tab.page
    cs.widget_states.SetInParent()
    cs.widget_states.widgets.extend(widgets)
    if fragment_id:
        cs.fragment_id = fragment_id
    cs.is_auto_rerun = auto
    ci = cs.context_info
    ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
    ci.url = f"{tab.base}/{tab.page}?{tab.query}"
    ci.is_embedded, ci.color_scheme = False, "light"
    return cs
