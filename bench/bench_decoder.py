"""Benchmark: the real decoder (SmolLM2-135M in NumPy) against the page's budgets.

Run from the repository root:  python bench/bench_decoder.py [--write]

Measures, in this one process: loading the GGUF file into float32 weights (wall and CPU
seconds), the full forward with every attention map for 16 and 64 tokens, one cached
decode step (a 16-token prompt in the cache), 12 greedy tokens with and without the
cache, the same 12 as /decoder now runs them for a lone student (in a batch of one, after
the page's own read of the prompt), and the process's peak RSS (also after loading the
MiniLM encoder, the app's other real model). Each timing is the median of several runs;
wall time is what a user waits, CPU time shows how much of it this process really computed
on a shared machine.
With ``--write`` the table goes into ``bench/RESULTS.md`` under the heading below
(replacing only that section).

Budgets (issue 11): forward 16 tokens <= 150 ms, cached decode step <= 50 ms, load <= 1.5 s,
server RSS with both real models <= 1.2 GB.
"""

import argparse
import os
import platform
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from common import median_times  # noqa: E402

import core.llama as llama  # noqa: E402
from core import batching  # noqa: E402
from core.sampling import GREEDY  # noqa: E402
from models import smollm  # noqa: E402

HEADING = "## decoder: SmolLM2-135M in NumPy"
RESULTS = ROOT / "bench" / "RESULTS.md"
PROMPT = "The animal didn't cross the street because it was too tired. " * 8
REPEATS = 5


def rss_mb() -> float:
    """Peak resident memory of this process so far, MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_floor(weights: llama.LlamaWeights) -> list[tuple[str, str, str, str]]:
    """A decode step reads every weight once (one token: matrix-vector products). How fast
    this machine streams float32 weights, measured on the output layer's product with the
    tied embedding, bounds the step from below."""
    step_bytes = weights.embed.nbytes + weights.out_norm.nbytes
    step_bytes += sum(a.nbytes for layer in weights.layers for a in vars(layer).values())
    x = np.ones((1, weights.config.d_model), np.float32)
    wall, _ = median_times(lambda: x @ weights.embed.T, 9)
    speed = weights.embed.nbytes / wall  # bytes per second
    return [
        ("weights read per decode step", f"{step_bytes / 1e6:.0f} MB", "", ""),
        ("streaming speed (x @ embedding.T)", f"{speed / 1e9:.1f} GB/s", "", ""),
        ("so a decode step takes at least", f"{step_bytes / speed * 1e3:.0f} ms", "", ""),
    ]


def lone(weights: llama.LlamaWeights, read: batching.Read, n: int) -> list[int]:
    """A lone student's generation as /decoder runs it: from the page's ``read`` of the
    prompt (made before, by the page), in a batch of one (core.batching)."""
    batcher, g = batching.Batcher(weights), batching.Generation.start(read, n, GREEDY)
    batcher.add(g)
    while not g.done:
        batcher.step(batcher.admit())
    return g.tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    write = parser.parse_args().write
    rows: list[tuple[str, str, str, str]] = []

    w, c = time.perf_counter(), time.process_time()
    model = smollm.load()
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    rows.append(("load GGUF -> float32", f"{wall:.2f} s", f"{cpu:.2f} s", "<= 1.5 s"))
    ids = smollm.encode(model, PROMPT)
    weights = model.weights
    for n, budget in ((16, "<= 150 ms"), (64, "")):
        wall, cpu = median_times(
            lambda n=n: llama.forward(weights, ids[:n], all_logits=False), REPEATS
        )
        rows.append(
            (f"full forward, {n} tokens", f"{wall * 1e3:.0f} ms", f"{cpu * 1e3:.0f} ms", budget)
        )
    _, _, caches = llama.decode(weights, ids[:16], llama.empty_caches(model.config))
    wall, cpu = median_times(lambda: llama.decode(weights, [ids[16]], caches), 15)
    rows.append(("cached decode step", f"{wall * 1e3:.0f} ms", f"{cpu * 1e3:.0f} ms", "<= 50 ms"))
    rows += memory_floor(weights)
    for use_cache in (True, False):
        wall, cpu = median_times(
            lambda u=use_cache: list(llama.generate_steps(weights, ids[:13], 12, use_cache=u)),
            3,
        )
        label = "12 greedy tokens, " + ("with cache" if use_cache else "without cache")
        rows.append((label, f"{wall:.2f} s", f"{cpu:.2f} s", ""))
    read = batching.read(weights, [ids[:13]])[0]  # the page's own pass, not timed
    wall, cpu = median_times(lambda: lone(weights, read, 12), 3)
    label = "12 greedy tokens, batched alone, after the page's read (issue 42: a lone student)"
    rows.append((label, f"{wall:.2f} s", f"{cpu:.2f} s", "<= with cache"))
    rows.append(("peak RSS, decoder loaded", f"{rss_mb():.0f} MB", "", ""))
    from models import minilm

    minilm.load_weights()
    rows.append(("peak RSS, + MiniLM encoder", f"{rss_mb():.0f} MB", "", "<= 1200 MB (server)"))

    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    load = os.getloadavg()[0]
    table = "\n".join(
        [
            "| what | wall | CPU | budget |",
            "|---|---|---|---|",
            *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
        ]
    )
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"1-min load average {load:.1f} when written, OPENBLAS_NUM_THREADS={threads}"
    )
    print(table)
    print(machine)
    if write:
        section = f"{HEADING}\n\n{machine}\n\n{table}\n"
        text = RESULTS.read_text() if RESULTS.exists() else ""
        pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
        text = pattern.sub(section + "\n", text) if pattern.search(text) else text + "\n" + section
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
