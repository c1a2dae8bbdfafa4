"""One line for the model's forward passes of a server process (:class:`Turns`)."""

import bisect
import itertools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import streamlit as st


class Turns:
    """Whose turn it is to run a forward pass of the model in this process: one step of a
    generation, or the page's own pass over a prompt (:func:`run`, read like a first step).

    A class that presses Generate together starts one generation per student in one server
    process (a replica has one core). Left to the operating system, all of them would run
    their forward passes at once, each at a thirtieth of the speed: everyone would wait for
    every prompt to be read before seeing a first token. Here a step waits for its turn:
    a generation's first step (it reads the prompt and gives the first token) before the
    later steps of generations already under way; first steps shortest prompt first (a
    long prompt takes longest to read, and the others' first tokens need not wait behind
    it), later steps first come, first served. So every student sees a first token once
    the prompts ahead of theirs are read, and then the tokens arrive in turn for everyone.
    A session runs one generation at a time (Streamlit queues at most one more run per
    session), so one student who presses Generate again and again holds one place in the
    line, like everyone else."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # waiting steps as (prompt tokens, arrival): first steps, then later steps (0, arrival)
        self._lines: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
        self._arrivals = itertools.count()
        self._busy = False

    def waiting(self) -> int:
        """How many steps wait for their turn."""
        with self._changed:
            return sum(len(line) for line in self._lines)

    @contextmanager
    def turn(self, first: bool, prompt: int = 0) -> Iterator[None]:
        """Wait for this step's turn (``first``: a generation's first step, which reads a
        prompt of ``prompt`` tokens), hold it for the ``with`` block, then pass it on."""
        with self._changed:
            me = (prompt if first else 0, next(self._arrivals))
            bisect.insort(self._lines[0 if first else 1], me)
            self._changed.notify_all()  # waiting() changed
            while self._busy or (self._lines[0] or self._lines[1])[0] != me:
                self._changed.wait()
            (self._lines[0] or self._lines[1]).pop(0)
            self._busy = True
        try:
            yield
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()


@st.cache_resource(show_spinner=False)
def turns() -> Turns:
    """The one line of generation steps of this server process (shared by every session)."""
    return Turns()


def model_turn(tokens: int) -> AbstractContextManager[None]:
    """This process's turn for one forward pass over ``tokens`` tokens, read like a
    generation's first step: ``with model_turn(len(ids)): out = forward(...)``."""
    return turns().turn(first=True, prompt=tokens)
