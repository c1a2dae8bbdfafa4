"""The one line of a process's model passes (ui/turns.py): order, failures, nesting."""

import threading

import pytest

from tests.conftest import wait_until
from ui.turns import Turns

TIMEOUT = 60


def test_generation_steps_take_turns_first_steps_shortest_prompt_first_then_in_arrival_order():
    line, order = Turns(), []

    def step(name: str, first: bool, prompt: int) -> None:
        with line.turn(first, prompt):
            order.append(name)

    arrivals = [
        ("a later", False, 0),
        ("b later", False, 0),
        ("c first, 12 tokens", True, 12),
        ("d later", False, 0),
        ("e first, 64 tokens", True, 64),
        ("f first, 9 tokens", True, 9),
        ("g first, 12 tokens", True, 12),
    ]
    threads = []
    with line.turn(first=False):  # a step under way: everyone else waits
        for args in arrivals:
            threads.append(threading.Thread(target=step, args=args))
            threads[-1].start()
            wait_until(
                lambda: line.waiting() == len(threads), "every arrival waits", TIMEOUT, 0.001
            )
    for thread in threads:
        thread.join(timeout=60)
    assert order == [
        "f first, 9 tokens",
        "c first, 12 tokens",
        "g first, 12 tokens",
        "e first, 64 tokens",
        "a later",
        "b later",
        "d later",
    ]
    assert line.waiting() == 0


def test_a_step_that_fails_passes_the_turn_on():
    line = Turns()
    with pytest.raises(ValueError), line.turn(first=True):
        raise ValueError("a failed forward pass")
    with line.turn(first=False):  # not blocked
        assert line.waiting() == 0
