"""SmolLM2's prompts and generations of every session of a server process, run together.

A class pressing Generate at once starts one generation per student in one process. Run
one at a time, each decoding step of each generation reads all the model's weights again;
:mod:`core.batching` decodes every generation under way in one step instead, and reads
prompts that wait at the same moment in one pass. This module is the meeting point of the
sessions' threads (one :class:`Engine` per process, :func:`engine`):

- **Reading a prompt** (:meth:`Engine.read`, the page's own pass, which Generate then goes
  on from): the prompts waiting when the model is free are read together, in arrival
  order, up to :data:`PACK_TOKENS` tokens; a reader that was not in the pack waits for the
  next one.
- **Generating** (:meth:`Engine.generate`): the first token comes from the prompt's read
  (no pass of the model); the generation then joins the batch at its next step. One
  thread at a time runs a step, for everyone: whichever session finds no step running and
  still needs a token runs the next one. A session that stops (another click, a closed tab)
  leaves the batch at the next step.

Both take their turn in the process's line (:mod:`ui.turns`) like every other model pass: a
read as a pass that reads a text (shortest first, before the generations' steps), a
batched step as one later step. So a student pressing Generate a moment after the class
joins the running batch after one step instead of waiting behind every generation.
"""

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import streamlit as st

from core import batching
from core.llama import LlamaWeights
from core.sampling import GREEDY, Sampling
from ui import loaded
from ui.turns import Turns, turns

PACK_TOKENS = 512  # prompt tokens read in one pass at most
COST_SIZES = (1, 4, 16)  # the batch sizes /decoder's step 6 times
COST_STEPS = 3  # timed steps per size (the fastest is shown), after one to warm up


@dataclass(eq=False)
class _Reading:
    """A prompt waiting to be read."""

    ids: tuple[int, ...]
    result: batching.Read | None = None
    ms: float = 0.0  # how long the pass that read it took (with the others in its pack)
    error: BaseException | None = None


@dataclass(frozen=True)
class Progress:
    """A generation after one more token."""

    tokens: tuple[int, ...]
    ms: float  # how long the pass that gave the newest token took (0: the prompt's read)
    batch: int  # how many generations that pass decoded (0: the prompt's read)


class Engine:
    """The prompts and generations of one model in one process (thread-safe)."""

    def __init__(self, weights: LlamaWeights, line: Turns) -> None:
        self._weights = weights
        self._line = line
        self._batcher = batching.Batcher(weights)
        self._changed = threading.Condition()
        self._reads: list[_Reading] = []
        self._reading = False
        self._stepping = False
        self._ms: dict[batching.Generation, list[float]] = {}  # the steps each one took part in

    def under_way(self) -> int:
        """Generations waiting for or taking part in the next step."""
        with self._changed:
            return self._batcher.pending()

    def waiting_reads(self) -> int:
        """Prompts waiting to be read."""
        with self._changed:
            return len(self._reads)

    # ---- reading prompts --------------------------------------------------------------

    def read(self, ids: tuple[int, ...]) -> tuple[batching.Read, float]:
        """The model's read of ``ids`` (its attention included), read together with the
        prompts that wait at the same moment, and how long that pass took (ms)."""
        me = _Reading(tuple(ids))
        with self._changed:
            self._reads.append(me)
        try:
            while True:
                with self._changed:
                    while self._reading and me.result is None and me.error is None:
                        self._changed.wait()
                    if me.error is not None:
                        raise me.error
                    if me.result is not None:
                        return me.result, me.ms
                    self._reading = True
                self._read_pack(len(me.ids))
        finally:
            with self._changed:
                if me in self._reads:
                    self._reads.remove(me)

    def _read_pack(self, tokens: int) -> None:
        """Take a turn and read the prompts waiting then, in arrival order, up to
        :data:`PACK_TOKENS` tokens (always at least one)."""
        try:
            with self._line.turn(first=True, prompt=tokens):
                with self._changed:
                    pack, total = [], 0
                    for r in self._reads:
                        if pack and total + len(r.ids) > PACK_TOKENS:
                            break
                        pack.append(r)
                        total += len(r.ids)
                    for r in pack:
                        self._reads.remove(r)
                start = time.perf_counter()
                try:
                    done = batching.read(self._weights, [r.ids for r in pack], attention=True)
                except BaseException as e:  # every waiting reader hears of it
                    for r in pack:
                        r.error = e
                    raise
                ms = (time.perf_counter() - start) * 1000
                for r, result in zip(pack, done, strict=True):
                    r.ms, r.result = ms, result  # result last: a waiter reads both
        finally:
            with self._changed:
                self._reading = False
                self._changed.notify_all()

    # ---- generating -------------------------------------------------------------------

    def generate(
        self, prompt: batching.Read, n_tokens: int, sampling: Sampling, stop: int | None
    ) -> Iterator[Progress]:
        """Generate after ``prompt`` (its read), one :class:`Progress` per token."""
        g = batching.Generation.start(prompt, n_tokens, sampling, stop)
        with self._changed:  # joins the batch at the next step
            self._batcher.add(g)
            self._ms[g] = []
        try:
            yield Progress(tuple(g.tokens), 0.0, 0)
            seen = 1
            while seen < len(g.tokens) or not g.done:
                with self._changed:  # a step under way may be adding to g: wait for its end
                    while self._stepping:
                        self._changed.wait()
                    tokens, ms, batch = tuple(g.tokens), list(self._ms[g]), list(g.batch)
                    if len(tokens) == seen:  # no step gave it a token yet: run the next one
                        self._stepping = True
                if len(tokens) == seen:
                    self._step()
                for k in range(seen, len(tokens)):  # every token, also of steps it slept through
                    yield Progress(tokens[: k + 1], ms[k - 1], batch[k])
                seen = len(tokens)
        finally:
            with self._changed:
                g.cancelled = not g.done  # leaves the batch at its next step
                self._ms.pop(g, None)

    def _step(self) -> None:
        """One batched step of every generation under way (this thread holds ``_stepping``)."""
        try:
            with self._line.turn(first=False):
                with self._changed:
                    batch = self._batcher.admit()
                start = time.perf_counter()
                self._batcher.step(batch)
                ms = (time.perf_counter() - start) * 1000
                with self._changed:
                    for g in batch:
                        if g in self._ms:
                            self._ms[g].append(ms)
        finally:
            with self._changed:
                self._stepping = False
                self._changed.notify_all()

    # ---- what batching costs -------------------------------------------------------------

    def cost(self, prompt: batching.Read, sizes: Sequence[int] = COST_SIZES) -> list[float]:
        """The time (ms, the fastest of :data:`COST_STEPS`) of one decoding step for a batch of
        ``b`` generations after ``prompt``, for each ``b`` in ``sizes``: a batch of its own,
        not this process's, each step in its own turn (the class's generations go on)."""
        times = []
        for b in sizes:
            batcher = batching.Batcher(self._weights, max_batch=max(b, 1))
            for _ in range(b):
                batcher.add(batching.Generation.start(prompt, COST_STEPS + 2, GREEDY))
            batch, taken = batcher.admit(), []
            for _ in range(COST_STEPS + 1):
                with self._line.turn(first=False):
                    start = time.perf_counter()
                    batcher.step(batch)
                    taken.append((time.perf_counter() - start) * 1000)
            times.append(min(taken[1:]))  # the least disturbed by other work
        return times


@st.cache_resource(show_spinner=False)
def engine() -> Engine:
    """This process's engine for SmolLM2 (load the model before: :func:`ui.loaded.smollm2`)."""
    return Engine(loaded.smollm2().weights, turns())
