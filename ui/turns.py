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
- never ask for a turn while holding one: the thread would wait for itself, so
  :meth:`Turns.turn` raises :class:`NestedTurnError` instead (a cached wrapper whose body
  calls another wrapper that takes a turn must call it before its own ``with`` block, as
  :func:`ui.views.gqa.torch_check` calls :func:`ui.views.gqa.qkv`).

Leaving the ``with`` block passes the turn on, an exception included.
"""

import itertools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import streamlit as st

# A waiting pass lets at most this many passes that came after it go first. Above a
# replica's share of a class (about 15 students), so when a class presses Generate
# together every prompt is still read before the generations' later steps.
OVERTAKEN_AT_MOST = 16


class NestedTurnError(RuntimeError):
    """A thread asked for a turn while holding one: it would wait for itself forever."""


@dataclass(eq=False)
class _Waiting:
    """A pass waiting in the line."""

    key: tuple[int, int, int]  # (0 reads a prompt / 1 a later step, tokens read, arrival)
    overtaken: int = 0  # passes that came later and were placed ahead of it


class Turns:
    """Whose turn it is to run a forward pass of a model in this process: a pass that reads
    a text (a page's pass over a prompt or a sentence, or a generation's first step, which
    reads the prompt and gives the first token) or a later step of a generation.

    A class that presses Generate together starts one generation per student in one server
    process (a replica has one core). Left to the operating system, all of them would run
    their forward passes at once, each at a thirtieth of the speed: everyone would wait for
    every prompt to be read before seeing a first token. Here a pass waits for its turn:
    the passes that read a text before the later steps of generations already under way;
    those shortest text first (a long prompt takes longest to read, and the others' first
    tokens and pages need not wait behind it), later steps first come, first served. So
    every student sees a first token once the prompts ahead of theirs are read, and then
    the tokens arrive in turn for everyone.

    Nobody waits for ever: a waiting pass lets at most :data:`OVERTAKEN_AT_MOST` passes
    that came after it go first (a generation's next token is not held up by a class
    typing sentences on /encoder, a 530-token /sinks run not by shorter prompts). A session
    runs one pass at a time (Streamlit queues at most one more run per session), so one
    student who presses Generate again and again holds one place in the line, like
    everyone else."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._line: list[_Waiting] = []  # the next pass first
        self._arrivals = itertools.count()
        self._holder: int | None = None  # the thread running a pass

    def waiting(self) -> int:
        """How many passes wait for their turn."""
        with self._changed:
            return len(self._line)

    def held_here(self) -> bool:
        """Whether this thread holds the turn."""
        with self._changed:
            return self._holder == threading.get_ident()

    @contextmanager
    def turn(self, first: bool, prompt: int = 0) -> Iterator[None]:
        """Wait for this pass's turn (``first``: a pass that reads a text of ``prompt``
        tokens, as a generation's first step; else a generation's later step), hold it for
        the ``with`` block, then pass it on."""
        thread = threading.get_ident()
        with self._changed:
            if self._holder == thread:
                raise NestedTurnError("a forward pass asked for a turn inside its own turn")
            me = _Waiting((0 if first else 1, prompt if first else 0, next(self._arrivals)))
            self._queue(me)
            self._changed.notify_all()  # waiting() changed
            try:
                while self._holder is not None or self._line[0] is not me:
                    self._changed.wait()
            except BaseException:  # never left in the line, holding everyone up
                self._line.remove(me)
                self._changed.notify_all()
                raise
            self._line.pop(0)
            self._holder = thread
        try:
            yield
        finally:
            with self._changed:
                self._holder = None
                self._changed.notify_all()

    def _queue(self, me: _Waiting) -> None:
        """Place ``me`` after the passes that go before it, but never ahead of one that
        has been overtaken :data:`OVERTAKEN_AT_MOST` times."""
        place = len(self._line)
        while place:
            ahead = self._line[place - 1]
            if ahead.key < me.key or ahead.overtaken >= OVERTAKEN_AT_MOST:
                break
            place -= 1
        for behind in self._line[place:]:
            behind.overtaken += 1
        self._line.insert(place, me)


@st.cache_resource(show_spinner=False)
def turns() -> Turns:
    """The one line of this server process (shared by every session and every model)."""
    return Turns()


def model_turn(tokens: int) -> AbstractContextManager[None]:
    """This process's turn for one pass of a model over a text of ``tokens`` tokens:
    ``with model_turn(len(ids)): out = forward(...)`` (see the module's docstring)."""
    return turns().turn(first=True, prompt=tokens)
