"""What several benchmarks share, defined once (import it from a script in bench/, whose
folder Python puts on the path: ``from common import TOOLS``).

- ``TOOLS``: the project's shared tools (``lab_bench.py``, ``st_load.py``), not part of this
  repository: ``../shared/tools`` beside this checkout, or the folder named by the
  ``LAB_TOOLS`` environment variable (``LAB_TOOLS=/opt/lab/tools python bench/bench_ab.py …``).
- :func:`chromium`: the browser a benchmark launches, tests/e2e/conftest.py's ``CHROMIUM``
  (``$CHROMIUM``, or ``/usr/bin/chromium``).
- lab_bench's slider-step timing with the one-heatmap reference page: :func:`lab_bench`,
  :func:`reference_server`, :func:`lab_bench_browser`, :func:`press_rounds`.
- :func:`rss_mb`, :func:`timed`, :func:`median_times`: memory and timers.

Importing it loads nothing else (no NumPy, no pytest): a script may set its BLAS threads
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


def chromium() -> str:
    """The browser to launch: tests/e2e/conftest.py's ``CHROMIUM`` (imported only when a
    benchmark opens a browser: that file brings pytest)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.e2e.conftest import CHROMIUM

    return str(CHROMIUM)


def lab_bench() -> ModuleType:
    """``TOOLS/lab_bench.py``, imported (``TOOLS`` stays on the path)."""
    sys.path.insert(0, str(TOOLS))
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
