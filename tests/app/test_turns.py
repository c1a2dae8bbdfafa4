"""The one line of a process's model passes (ui/turns.py): its order, its bound on waiting,
a failed or stopped pass, a turn asked inside a turn."""

import threading

import pytest

from tests.conftest import wait_until
from ui.turns import OVERTAKEN_AT_MOST, NestedTurnError, Turns

TIMEOUT = 60


def order_of(line: Turns, arrivals: list[tuple[str, bool, int]]) -> list[str]:
    """The order in which ``arrivals`` (name, reads a text?, its tokens), arriving one after
    the other while a step holds the turn, get theirs."""
    order = []

    def step(name: str, first: bool, prompt: int) -> None:
        with line.turn(first, prompt):
            order.append(name)

    threads = []
    with line.turn(first=False):  # a step under way: everyone else waits
        for args in arrivals:
            threads.append(threading.Thread(target=step, args=args))
            threads[-1].start()
            wait_until(
                lambda: line.waiting() == len(threads), "every arrival waits", TIMEOUT, 0.001
            )
    for thread in threads:
        thread.join(timeout=TIMEOUT)
    assert line.waiting() == 0
    return order


def test_passes_that_read_a_text_go_first_shortest_first_then_later_steps_in_arrival_order():
    arrivals = [
        ("a later", False, 0),
        ("b later", False, 0),
        ("c first, 12 tokens", True, 12),
        ("d later", False, 0),
        ("e first, 64 tokens", True, 64),
        ("f first, 9 tokens", True, 9),
        ("g first, 12 tokens", True, 12),
    ]
    assert order_of(Turns(), arrivals) == [
        "f first, 9 tokens",
        "c first, 12 tokens",
        "g first, 12 tokens",
        "e first, 64 tokens",
        "a later",
        "b later",
        "d later",
    ]


@pytest.mark.parametrize(
    "waiting",
    [("a generation's next step", False, 0), ("a /sinks run of 530 tokens", True, 530)],
)
def test_a_waiting_pass_lets_at_most_a_bounded_number_of_later_passes_go_first(waiting):
    """A class typing short sentences (each a pass that reads a text) holds up a
    generation's next token, or a long text, for at most OVERTAKEN_AT_MOST passes."""
    typed = [(f"sentence {k}", True, 10) for k in range(OVERTAKEN_AT_MOST + 3)]
    order = order_of(Turns(), [waiting, *typed])
    assert order.index(waiting[0]) == OVERTAKEN_AT_MOST
    assert order[:OVERTAKEN_AT_MOST] == [name for name, _, _ in typed[:OVERTAKEN_AT_MOST]]


def test_a_step_that_fails_passes_the_turn_on():
    line = Turns()
    with pytest.raises(ValueError), line.turn(first=True):
        raise ValueError("a failed forward pass")
    with line.turn(first=False):  # not blocked
        assert line.waiting() == 0


def test_a_pass_stopped_while_it_waits_leaves_the_line():
    line, stopped = Turns(), []

    def wait_then_stop(*_args: object) -> None:  # an exception while waiting, as an interrupt
        raise KeyboardInterrupt

    def arrive() -> None:
        try:
            with line.turn(first=True, prompt=5):
                pass
        except KeyboardInterrupt:
            stopped.append(line.waiting())

    with line.turn(first=False):  # a step under way: the arrival waits
        line._changed.wait = wait_then_stop  # the line's own wait, while this one arrives
        arrival = threading.Thread(target=arrive)
        arrival.start()
        arrival.join(TIMEOUT)
        del line._changed.wait
    assert stopped == [0]  # out of the line
    with line.turn(first=True, prompt=5):  # and nobody is held up behind it
        assert line.waiting() == 0


def test_a_turn_asked_inside_a_turn_raises_instead_of_waiting_for_itself():
    line = Turns()
    with line.turn(first=True, prompt=8):
        assert line.held_here()
        with pytest.raises(NestedTurnError), line.turn(first=True, prompt=8):
            pass
        assert line.waiting() == 0 and line.held_here()  # still this pass's turn
    assert not line.held_here()
    with line.turn(first=False):  # passed on as usual
        assert line.waiting() == 0


def test_another_thread_does_not_hold_this_thread_s_turn():
    line, seen = Turns(), []
    with line.turn(first=False):
        other = threading.Thread(target=lambda: seen.append(line.held_here()))
        other.start()
        other.join(TIMEOUT)
    assert seen == [False]
