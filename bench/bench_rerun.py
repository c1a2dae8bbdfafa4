"""Worst-case server rerun per page and control, with new values (a benchmark, not a test).

    python bench/bench_rerun.py                 # every page, every control
    python bench/bench_rerun.py softmax qkv     # some pages
    python bench/bench_rerun.py --profile qkv   # also cProfile the slowest rerun of each step
    python bench/bench_rerun.py --write         # each page's slowest control into bench/RESULTS.md

Each page opens at its default settings on each of its steps in turn (English, caches
emptied, then warm for the defaults; a page computes only the step on screen). Then every
control of the main area (those of other steps too, which stay drawn) is moved, one at a
time, to values the process has not seen yet (its ends, points across its range, other
options, another sentence), so the computations that depend on it miss their caches; the
control goes back to its default (untimed) before the next one. A rerun's cost is the CPU
time of the script thread (``time.thread_time``): wall time on a shared machine is mostly
waiting for a core. It prints a table of every control, then each page's slowest control
and the step it was on (the table ``--write`` puts in RESULTS.md).
"""

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_app import write_section  # noqa: E402

from ui.pages import available_pages  # noqa: E402

BUDGET_MS = 100
SHELL_KEYS = ("_lang_choice", "_present_choice", "_step_choice")
SENTENCES = ("A dog ran in the park today", "我们今天学习注意力机制", "one two three four five six")


def _slider_values(w) -> list:
    lo, hi, step = w.min, w.max, w.step or 1
    if isinstance(lo, int) and isinstance(step, int):
        points = {lo, hi, lo + step, hi - step, (lo + hi) // 2, lo + (hi - lo) // 3}
        points |= {w.value + step, w.value - step}
    else:
        points = {lo, hi, lo + step, hi - step, round((lo + hi) / 2 / step) * step}
        points |= {w.value + step, w.value - step}
    return sorted(p for p in points if lo <= p <= hi and p != w.value)


def _controls(at) -> list[tuple[str, str, list]]:
    """(kind, key, values to try) of every main-area control."""
    found = []
    for w in at.slider:
        found.append(("slider", w.key, _slider_values(w)))
    for w in at.number_input:
        top = w.max if w.max is not None else w.value + 1000
        found.append(
            ("number_input", w.key, [v for v in (w.value + 1, w.value + 7, top) if v != w.value])
        )
    for w in at.toggle:
        found.append(("toggle", w.key, [not w.value]))
    for w in at.selectbox:
        found.append(("selectbox", w.key, [v for v in _raw_options(w) if v != w.value]))
    for kind in ("segmented_control", "radio"):
        for w in getattr(at, kind):
            found.append((kind, w.key, [o for o in w.options if o != w.value]))
    for w in at.text_input:
        if w.key == "text":
            found.append(("text_input", w.key, list(SENTENCES)))
        elif w.key.startswith("logits"):
            found.append(("text_input", w.key, ["3, 1, 0.5, -1", "0.7, 0.1, 2.5, 1.5, 0.0, -0.3"]))
    kinds = ("slider", "number_input", "toggle", "selectbox", "radio", "segmented_control")
    kinds += ("text_input",)
    disabled = {w.key for kind in kinds for w in getattr(at, kind) if w.proto.disabled}
    return [c for c in found if c[1] and c[1] not in SHELL_KEYS and c[1] not in disabled]


def _raw_options(w) -> list:
    """A selectbox's option values. AppTest lists only their labels (after ``format_func``)
    and sets a value by label as if it were a value, so labels like "H0" would be formatted
    again ("HH0"); recover the values from integers and labels that format to a label."""
    pool = [*range(4 * len(w.options)), *map(str, range(4 * len(w.options))), *w.options]
    labels = {}
    for v in reversed(pool):
        if type(v) is type(w.value):
            with contextlib.suppress(ValueError, KeyError, IndexError, TypeError):  # not a value
                labels[str(w.format_func(v))] = v
    return [labels[o] for o in w.options if o in labels]


def _widget(at, kind: str, key: str):
    return next(w for w in getattr(at, kind) if w.key == key)


def _set(at, kind: str, key: str, value) -> None:
    w = _widget(at, kind, key)
    if kind == "text_input":
        w.input(value)
    else:
        w.set_value(value)


def _timed_run(at, profile: cProfile.Profile | None = None) -> tuple[float, float]:
    """``at.run()``: (wall ms, CPU ms of the script thread). On a shared, overloaded machine
    the wall time is mostly waiting for a core; the script thread's CPU time is the rerun's
    own cost (what it takes on an idle core). With ``profile``, the script's calls are
    recorded in it."""
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script
    cpu: list[float] = []

    def measured(self, rerun_data):  # the script runs in its own thread
        c0 = time.thread_time()
        if profile:
            profile.enable()
        try:
            return original(self, rerun_data)
        finally:
            if profile:
                profile.disable()
            cpu.append(time.thread_time() - c0)

    script_runner.ScriptRunner._run_script = measured
    t0 = time.perf_counter()
    try:
        at.run()
    finally:
        script_runner.ScriptRunner._run_script = original
    return (time.perf_counter() - t0) * 1e3, sum(cpu) * 1e3


def _share_script_cache() -> None:
    """AppTest compiles the scripts afresh on every run (a new ``ScriptCache`` each time:
    ~10–30 ms here); a server compiles them once. Share one cache, as a server does."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared


def _open(info, step: int):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
    at.query_params["lang"] = "en"
    at.query_params["step"] = str(step)
    if info.file != "dashboard.py":
        at.switch_page(info.file)
    at.run()
    at.run()
    return at


def _step_count(at) -> int:
    """How many steps the page shows one at a time (1 if it stacks them)."""
    bars = [w for w in at.button_group if w.key == "_step_choice"]
    return len(bars[0].options) if bars else 1


def bench_page(info, profile: bool) -> list[tuple[str, float, float, int]]:
    """Every control timed on every step (a page computes only the step on screen, so a
    control's cost depends on the step it is moved on); rows are named ``step·key``."""
    _share_script_cache()
    from streamlit.runtime.caching import cache_data_api

    rows = []
    step, count = 1, 1
    while step <= count:
        cache_data_api.CacheDataAPI.clear(None)  # this step's values are new to the process
        at = _open(info, step)
        count = _step_count(at)
        rows += _bench_step(at, info, step, profile)
        step += 1
    return rows


def _bench_step(at, info, step: int, profile: bool) -> list[tuple[str, float, float, int]]:
    rows = []
    worst: tuple[float, str, object] = (0.0, "", None)
    for kind, key, values in _controls(at):
        default = _widget(at, kind, key).value
        times, walls = [], []
        for value in values:
            _set(at, kind, key, value)
            wall, ms = _timed_run(at)
            assert not at.exception, (info.id, key, value, at.exception)
            times.append(ms)
            walls.append(wall)
            if ms > worst[0]:
                worst = (ms, key, value)
            _set(at, kind, key, default)
            at.run()
        if not times:  # a control with nothing else to move to (one option)
            continue
        rows.append((f"{step}·{key}", max(times), statistics.median(times), len(times)))
        print(
            f"  {info.id:13s} {step}·{key:15s} CPU max {max(times):7.1f} median "
            f"{statistics.median(times):7.1f} ms | wall max {max(walls):7.1f} ms "
            f"({len(times)} values)",
            flush=True,
        )
    if profile and worst[1]:
        prof = cProfile.Profile()
        ms, key, value = worst
        kind = next(k for k, kk, _ in _controls(at) if kk == key)
        default = _widget(at, kind, key).value
        from streamlit.runtime.caching import cache_data_api

        cache_data_api.CacheDataAPI.clear(None)  # new values again: profile the miss
        _set(at, kind, key, value)
        _, ms2 = _timed_run(at, prof)
        _set(at, kind, key, default)
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(45)
        print(
            f"--- profile {info.id} step {step} {key}={value!r}: {ms2:.1f} ms (caches cleared)\n"
            + out.getvalue()
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pages", nargs="*")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()
    table = [
        "| page | slowest step·control | max CPU ms | median CPU ms | values | ≤ 100 ms |",
        "|---|---|---:|---:|---:|---|",
    ]
    detail = ["| page | control | max ms | median ms |", "|---|---|---:|---:|"]
    for info in available_pages():
        if args.pages and info.id not in args.pages:
            continue
        rows = bench_page(info, args.profile)
        key, top, med, n = max(rows, key=lambda r: r[1])
        table.append(
            f"| {info.id} | {key} | {top:.0f} | {med:.0f} | {n} | "
            f"{'yes' if top <= BUDGET_MS else 'NO'} |"
        )
        detail += [f"| {info.id} | {k} | {m:.0f} | {d:.0f} |" for k, m, d, _ in rows]
    load1 = os.getloadavg()
    print("\n".join(detail), "", "\n".join(table), sep="\n")
    if args.write:
        head = (
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; load "
            f"average {load0[0]:.1f} before, {load1[0]:.1f} after (shared machine).\n\n"
            "`python bench/bench_rerun.py`: on every step of every page, every main-area "
            "control moved to values the process has not seen (ends, points across the "
            "range, other options, other sentences), other controls at their defaults, "
            "caches emptied before each step. Time: CPU time of the script thread per "
            "rerun (`time.thread_time`): on a shared machine the wall time is mostly "
            "waiting for a core, the CPU time is the rerun's own cost."
        )
        body = "\n".join(table) + "\n\nEvery control's figures: the script's output."
        write_section("app: worst-case rerun per control (new values)", head + "\n\n" + body)


if __name__ == "__main__":
    main()
