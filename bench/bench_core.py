"""Benchmark: batched multi-head attention vs the per-head reference loop.

Run from the repository root:  python bench/bench_core.py

Times ``core.multi_head_attention`` (all heads in one batched matmul) against
``core.multi_head_attention_loop`` (one attention per head, then concatenate) for
d_model = 512, h = 8 and n in {8, 64, 256, 1024}, in float64 and float32. Each cell is the
median over several ``timeit.repeat`` runs of the time of one call. Prints a markdown table
and writes it, with a description of the machine, into ``bench/RESULTS.md`` under the
heading below (replacing only that section; other sections are kept).
"""

import os
import platform
import re
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import init_multihead, multi_head_attention, multi_head_attention_loop  # noqa: E402

HEADING = "## core: batched vs per-head loop"
RESULTS = ROOT / "bench" / "RESULTS.md"
NS = (8, 64, 256, 1024)
DTYPES = (np.float64, np.float32)
D_MODEL, H = 512, 8
REPEATS = 9
MIN_RUN_SECONDS = 0.1  # each repeat loops the call until it lasts at least this long


def time_pair(call_a, call_b) -> tuple[float, float]:
    """Median seconds per call of two callables over ``REPEATS`` ``timeit.repeat`` runs.

    The runs alternate a, b, a, b, ... so that load from other processes on a shared
    machine falls on both sides of the comparison rather than on one.
    """
    timers = [timeit.Timer(call_a), timeit.Timer(call_b)]
    numbers = []
    for timer in timers:
        number, elapsed = timer.autorange()
        numbers.append(max(1, round(number * MIN_RUN_SECONDS / max(elapsed, 1e-9))))
    runs: list[list[float]] = [[], []]
    for _ in range(REPEATS):
        for timer, number, out in zip(timers, numbers, runs, strict=True):
            out.extend(t / number for t in timer.repeat(repeat=1, number=number))
    return statistics.median(runs[0]), statistics.median(runs[1])


def bench_row(n: int, dtype: type) -> tuple[float, float]:
    """(batched seconds, loop seconds) for one size and dtype; checks both agree first."""
    x = np.random.default_rng(0).normal(size=(n, D_MODEL)).astype(dtype)  # (n, d_model)
    weights = [w.astype(dtype) for w in init_multihead(D_MODEL, H, seed=0)]
    out_b, w_b = multi_head_attention(x, *weights, H)
    out_l, w_l = multi_head_attention_loop(x, *weights, H)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out_b, out_l, rtol=tol, atol=tol)
    np.testing.assert_allclose(w_b, w_l, rtol=tol, atol=tol)
    assert out_b.dtype == out_l.dtype == dtype, f"{np.dtype(dtype)} in, {out_b.dtype} out"
    return time_pair(
        lambda: multi_head_attention(x, *weights, H),
        lambda: multi_head_attention_loop(x, *weights, H),
    )


def blas_description() -> str:
    """The BLAS numpy was built with and, if threadpoolctl is installed, what is loaded."""
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps.get("blas", {})
        text = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception as exc:  # numpy < 1.26 or an unusual build
        text = f"unknown ({exc.__class__.__name__})"
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return text + " (threadpoolctl not installed: runtime thread count not shown)"
    pools = [
        f"{p.get('internal_api')} {p.get('version')} {p.get('num_threads')} threads"
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    ]
    return text + (f"; loaded: {', '.join(pools)}" if pools else "")


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (Linux), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def machine_description(load_before: str) -> list[str]:
    u = platform.uname()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    env = {
        k: os.environ[k]
        for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        if k in os.environ
    }
    return [
        f"- CPU: {cpu_model()} ({u.machine}); nproc: {usable} (os.cpu_count: {os.cpu_count()})",
        f"- OS: {u.system} {u.release}",
        f"- Python {platform.python_version()}, NumPy {np.__version__}",
        f"- BLAS: {blas_description()}",
        f"- Environment: {', '.join(f'{k}={v}' for k, v in env.items()) or 'no BLAS thread vars'}",
        f"- Load average before / after the run: {load_before} / {load_average()} (shared machine)",
    ]


def markdown_table(rows: list[tuple[int, str, float, float]]) -> list[str]:
    lines = ["| n | dtype | batched ms | loop ms | loop/batched |", "|---:|---|---:|---:|---:|"]
    for n, dtype, t_b, t_l in rows:
        lines.append(f"| {n} | {dtype} | {t_b * 1e3:.3f} | {t_l * 1e3:.3f} | {t_l / t_b:.2f}× |")
    return lines


def write_section(section: str) -> None:
    """Replace (or append) this script's section in RESULTS.md, keeping every other one."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.M | re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    load_before = load_average()
    rows = []
    for n in NS:
        for dtype in DTYPES:
            t_b, t_l = bench_row(n, dtype)
            rows.append((n, np.dtype(dtype).name, t_b, t_l))
            name = np.dtype(dtype).name
            print(f"n={n:5d} {name}: batched {t_b * 1e3:.3f} ms, loop {t_l * 1e3:.3f} ms")
    table = markdown_table(rows)
    section = "\n".join(
        [
            HEADING,
            "",
            f"`python bench/bench_core.py`: self-attention on x `(n, {D_MODEL})` with h = {H} "
            f"heads (d_k = d_v = {D_MODEL // H}), W_O included. Time of one call, median of "
            f"{REPEATS} `timeit` repeats (batched and loop runs interleaved); both versions "
            "checked equal (and of the input dtype) before timing.",
            "",
            *table,
            "",
            "Machine:",
            "",
            *machine_description(load_before),
            "",
        ]
    )
    print()
    print("\n".join(table))
    write_section(section + "\n")
    print(f"\nwrote {RESULTS.relative_to(ROOT)} ({HEADING!r})")


if __name__ == "__main__":
    main()
