"""Encoder benchmarks (not tests): all-MiniLM-L6-v2's NumPy forward pass and the page.

    python bench/bench_encoder.py          # load time, forward at 16 / 64 tokens, RSS
    python bench/bench_encoder.py --app    # also: server rerun after a head change (AppTest)

Runs with one BLAS thread (set before NumPy loads), like one server session on a shared
machine. Budgets (issue 10): forward ≤ 20 ms at 16 tokens and ≤ 60 ms at 64 tokens.
Prints the numbers; nothing is written.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import rss_mb, timed  # noqa: E402

from models import minilm  # noqa: E402

BUDGET_MS = {16: 20.0, 64: 60.0}
LONG = " ".join(["the animal didn't cross the street because it was too tired"] * 8)


def bench_model(repeats: int = 40) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    base = rss_mb()
    loads = timed(lambda: (minilm.load_weights(), minilm.load_tokenizer()), 3)
    weights, tokenizer = minilm.load_weights(), minilm.load_tokenizer()
    print(f"load weights + tokenizer: first {loads[0]:.0f} ms, best {min(loads):.0f} ms")
    print(f"RSS: {base:.0f} MB before loading, {rss_mb():.0f} MB with the model loaded")
    for n, budget in BUDGET_MS.items():
        encoded = minilm.encode(tokenizer, LONG, max_tokens=n)
        assert len(encoded.ids) == n
        minilm.run(weights, encoded)  # warm up
        times = timed(lambda e=encoded: minilm.run(weights, e), repeats)
        cpu = timed(lambda e=encoded: minilm.run(weights, e), repeats, time.process_time)
        median = statistics.median(times)
        verdict = "within" if min(median, statistics.median(cpu)) <= budget else "OVER"
        print(
            f"forward {n:3d} tokens: wall median {median:5.1f} ms, min {min(times):5.1f} ms; "
            f"CPU median {statistics.median(cpu):5.1f} ms, min {min(cpu):5.1f} ms "
            f"(budget {budget:.0f} ms: {verdict})"
        )
    print(f"RSS after the forward passes: {rss_mb():.0f} MB")


def bench_app(repeats: int = 12) -> None:
    """Server-side rerun after picking another head (new charts: no chart-cache hit)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
    at.query_params["lang"] = "en"
    at.switch_page("pages/9_encoder.py")
    t0 = time.perf_counter()
    at.run()
    print(
        f"page, first run on step 1 (model load + forward of the sentence): "
        f"{(time.perf_counter() - t0) * 1000:.0f} ms"
    )
    times = []
    for k in range(repeats):
        head = at.selectbox(key="_choice_head")
        t0 = time.perf_counter()
        head.set_value(str((k % 11) + 1 if k % 2 else 0)).run()
        times.append((time.perf_counter() - t0) * 1000)
    print(
        f"rerun after a head change: median {statistics.median(times):.0f} ms, "
        f"min {min(times):.0f} ms over {repeats}"
    )
    t0 = time.perf_counter()
    at.run()
    print(f"rerun with nothing changed: {(time.perf_counter() - t0) * 1000:.0f} ms")


if __name__ == "__main__":
    bench_model()
    if "--app" in sys.argv:
        bench_app()
