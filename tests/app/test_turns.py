"""The one line of a process's model passes (ui/turns.py): its order, its bound on waiting,
a failed or stopped pass, a turn asked inside a turn, and every model page's passes in it."""

import importlib.util
import threading

import pytest
from streamlit.testing.v1 import AppTest

import core.bert as bert
import core.llama as llama
from tests.app.conftest import open_page
from tests.conftest import wait_until
from ui.i18n import Translator
from ui.pages import in_section
from ui.turns import OVERTAKEN_AT_MOST, NestedTurnError, Turns, turns

TIMEOUT = 60
MODEL_TIMEOUT = 900  # s: a page run that loads a model and runs it on a busy 2-core machine


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


# --- every model pass a page runs ------------------------------------------------------------

EN = Translator("en")
# Texts no other test reads, so that every pass runs (a cached result takes no turn).
FRESH = {
    "prompt": "Every pass in this sweep takes its turn.",
    "sink_prompt": "Another sweep prompt, read in turn.",
    "text": "The sweep reads this sentence in its turn.",
    "compare": "The sweep compares this sentence in turn.",
    "n_gen": "2",
    "keep": "32",
    "sink": "2",
}


def press(at: AppTest, page: str, step: int) -> AppTest | None:
    """What a student does on ``page``'s ``step`` that runs a model beyond drawing it: the
    page after it, or None."""
    if page == "decoder" and step in (4, 5):
        label = EN("decoder.generate" if step == 4 else "decoder.compare")
        return next(b for b in at.button if b.label == label).click().run()
    if page == "sinks" and step == 2:
        return at.button(key="sinks_run").click().run()
    if page == "gqa" and step == 3 and importlib.util.find_spec("torch"):
        at.session_state["fold_gqa_torch"] = True  # the PyTorch check, opened
        return at.run()
    return None


def test_every_layer_of_every_model_a_page_runs_runs_inside_a_turn(monkeypatch):
    """Every step of every page of the models and today sections, on texts no test has read,
    with both encoders, the buttons and box that run a model pressed: each layer of each
    model (SmolLM2's passes, generation steps and probes; both encoders' passes) runs while
    its thread holds the process's turn."""
    line, layers = turns(), []  # (model, whether its thread held the turn) per layer run

    def watch(module: object, name: str, model: str) -> None:
        original = getattr(module, name)

        def watched(*args: object, **kwargs: object) -> object:
            layers.append((model, line.held_here()))
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, watched)

    watch(llama, "rotated_qkv", "SmolLM2")  # every layer: forward, decode, the probes
    watch(bert, "encoder_layer", "encoders")
    ran, outside = set(), set()
    for page in (*in_section("models"), *in_section("today")):
        first = open_page(page.file, timeout=MODEL_TIMEOUT, lang="en")
        n_steps = len(first.button_group(key="_step_choice").options)
        for model in ("minilm", "e5") if page.id == "encoder" else ("",):
            for step in range(1, n_steps + 1):
                params = FRESH | {"step": str(step)} | ({"model": model} if model else {})
                layers.clear()
                at = open_page(page.file, timeout=MODEL_TIMEOUT, lang="en", **params)
                assert not at.exception, (page.id, step)
                after = press(at, page.id, step)
                assert after is None or not after.exception, (page.id, step)
                ran |= {(page.id, m) for m, _ in layers}
                outside |= {(page.id, step, m) for m, held in layers if not held}
    assert ran >= {
        ("encoder", "encoders"),
        ("decoder", "SmolLM2"),
        ("rope", "SmolLM2"),
        ("gqa", "SmolLM2"),
        ("sinks", "SmolLM2"),
    }
    assert not outside, f"layers run outside a turn (page, step, model): {sorted(outside)}"
