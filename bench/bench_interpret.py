"""Benchmark: core/interpret.py on SmolLM2-135M, what the "block" page computes.

Run from the repository root, on one core with one BLAS thread (as deploy/serve runs):

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python bench/bench_interpret.py

Times, on the page's example (the indirect-object sentence): the page's default view (the
trace of every block, the logit lens at the last position and its top 5 tokens per layer),
ranking the 9 heads of one layer by ablation (:func:`core.interpret.head_effects`, layer 0:
the worst case, every layer runs packed), and every head of every layer one layer at a time
(what ranking all 270 would cost). Each figure is the least CPU time of this process over a
few runs: on a shared machine that is closest to what the call costs. Budget (issue 43):
the default view ≤ 1 s, one layer's heads ≤ 3 s.
"""

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import timed  # noqa: E402

from core import interpret  # noqa: E402
from models import smollm  # noqa: E402

EXAMPLE = "When Mary and John went to the store, John gave a drink to"  # /block's default
REPEATS = 3


def main() -> None:
    """Print one line per measurement: what, tokens, least CPU seconds."""
    model = smollm.load()
    w, ids = model.weights, smollm.encode(model, EXAMPLE)

    def default_view() -> None:
        t = interpret.trace(w, ids)
        interpret.lens_top(interpret.logit_lens(w, t.resid[:, -1]), 5)

    top = interpret.lens_top(interpret.trace(w, ids).logits[None], 2)[0][0]  # (2,)
    target, other = int(top[0]), int(top[1])
    runs = [
        ("trace + logit lens + top 5", default_view),
        (
            f"head_effects, layer 0, {model.config.n_heads} heads",
            lambda: interpret.head_effects(w, ids, 0, target, other, "zero"),
        ),
        (
            f"head_effects, all {model.config.n_layers} layers",
            lambda: [
                interpret.head_effects(w, ids, layer, target, other, "zero")
                for layer in range(model.config.n_layers)
            ],
        ),
    ]
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"{len(ids)} tokens, OPENBLAS_NUM_THREADS={threads}, least of {REPEATS} runs")
    for label, fn in runs:
        cpu = min(timed(fn, REPEATS, clock=time.process_time)) / 1000
        print(f"{label}: {cpu:.3f} s CPU")


if __name__ == "__main__":
    main()
