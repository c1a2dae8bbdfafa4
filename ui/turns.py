"""One line for every model of a server process: its forward passes run one at a time, in turn.

Every pass of a real model over a text takes a turn (:func:`model_turn`, or
:meth:`Turns.turn` for a generation's steps): /decoder's pass over a prompt and each step
of a generation, /rope's and /gqa's passes over a prompt (and /gqa's PyTorch check of
every layer), each /sinks configuration, /encoder's pass of either encoder over a
sentence. The turn is taken inside the page's ``st.cache_data`` wrapper, so a cached
result costs no turn. A computation on one layer for a chart (a head's weights, one
weight taken apart) takes a millisecond or less and no turn.

How to take one, so that no turn waits for another (a deadlock):

- hold it around the model's own computation only. Load the model, tokenise, and call
  any other cached function *before* the ``with`` block: a cached function another
  session is computing holds Streamlit's lock for its key, and that session may be
  waiting in this line for the turn this thread holds;
- never ask for a turn while holding one: the thread would wait for itself (a cached
  wrapper whose body calls another wrapper that takes a turn must call it before its own
  ``with`` block, as :func:`ui.views.gqa.torch_check` calls :func:`ui.views.gqa.qkv`).

Leaving the ``with`` block passes the turn on, an exception included.
"""

import bisect
import itertools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import streamlit as st


class Turns:
    """Whose turn it is to run a forward pass of a model in this process: one step of a
    generation, or a page's own pass over a text (:func:`model_turn`, read like a first
    step).

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
    """The one line of this server process (shared by every session and every model)."""
    return Turns()


def model_turn(tokens: int) -> AbstractContextManager[None]:
    """This process's turn for one pass of a model over a text of ``tokens`` tokens, read
    like a generation's first step: ``with model_turn(len(ids)): out = forward(...)`` (see
    the module's docstring)."""
    return turns().turn(first=True, prompt=tokens)
