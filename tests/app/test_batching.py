"""The process's engine with real threads, as the sessions of a class use it: generations
started together are decoded in one batch with the tokens of one generation at a time; a
late one joins the running batch; prompts waiting together are read in one pass; a session
that stops leaves. On a small random model (tests/conftest.py) and on SmolLM2."""

import threading
from collections.abc import Callable

import core.llama as llama
from core import batching
from core.sampling import GREEDY, Sampling
from models import smollm
from tests.conftest import TINY_IDS as IDS
from tests.conftest import smollm2, wait_until
from tests.conftest import tiny_llama as tiny
from ui.batching import COST_SIZES, Engine
from ui.turns import Turns

TIMEOUT = 60.0
PROMPTS = [tuple(IDS), tuple(IDS[:3]), (7,), tuple(IDS[2:7])]


def in_threads(
    calls: list[Callable[[], object]],
) -> tuple[list[threading.Thread], list[object], list[BaseException]]:
    """Start every call in its own thread: the threads, their results (in order, once
    :func:`finish`) and their errors."""
    out: list[object] = [None] * len(calls)
    failed: list[BaseException] = []

    def work(i: int) -> None:
        try:
            out[i] = calls[i]()
        except BaseException as e:  # reported in the test's thread
            failed.append(e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(calls))]
    for th in threads:
        th.start()
    return threads, out, failed


def finish(threads: list[threading.Thread], failed: list[BaseException]) -> None:
    for th in threads:
        th.join(TIMEOUT)
        assert not th.is_alive(), "a session never finished"
    if failed:
        raise failed[0]


def test_generations_started_together_share_steps_and_equal_one_at_a_time():
    line = Turns()
    engine = Engine(tiny(), line)
    reads = batching.read(tiny(), PROMPTS)
    samplings = [GREEDY, Sampling(1.2, top_k=10, seed=3), GREEDY, Sampling(0.7, top_p=0.8, seed=9)]

    def session(i: int) -> Callable[[], list]:
        return lambda: list(engine.generate(reads[i], 6, samplings[i], None))

    with line.turn(first=True):  # the model is busy: everyone is under way when it is free
        threads, out, failed = in_threads([session(i) for i in range(4)])
        wait_until(lambda: engine.under_way() == 4, "all four wait for a step", TIMEOUT, 0.01)
    finish(threads, failed)
    for i, ids in enumerate(PROMPTS):
        shown = out[i]
        ref = [s.token for s in llama.generate_steps(tiny(), list(ids), 6, sampling=samplings[i])]
        assert list(shown[-1].tokens) == ref
        assert [len(p.tokens) for p in shown] == list(range(1, 7))  # one at a time, in order
        assert shown[0].batch == 0 and shown[1].batch == 4  # the first step: all four at once
        assert all(p.ms > 0 for p in shown[1:])
    assert engine.under_way() == 0


def test_a_generation_started_later_joins_the_running_batch():
    line = Turns()
    engine = Engine(tiny(), line)
    reads = batching.read(tiny(), PROMPTS)
    first = engine.generate(reads[0], 8, GREEDY, None)
    shown = [next(first), next(first)]  # under way, alone
    assert shown[1].batch == 1
    late = engine.generate(reads[1], 3, GREEDY, None)
    assert next(late).batch == 0  # the first token: from its read
    shown.append(next(first))  # this step takes the late one along
    assert shown[-1].batch == 2
    assert [p.batch for p in late] == [2, 2]  # its own tokens came from the shared steps
    rest = list(first)  # the late one's last step took this one along too, then alone
    assert [p.batch for p in rest] == [2] + [1] * (len(rest) - 1)
    expected = [s.token for s in llama.generate_steps(tiny(), IDS, 8)]
    assert list(rest[-1].tokens) == expected


def test_a_session_that_stops_leaves_the_batch():
    engine = Engine(tiny(), Turns())
    read = batching.read(tiny(), PROMPTS[:1])[0]
    gen = engine.generate(read, 20, GREEDY, None)
    next(gen), next(gen)
    assert engine.under_way() == 1
    gen.close()  # a new click: the session's run stops
    other = list(engine.generate(read, 3, GREEDY, None))
    assert [p.batch for p in other[1:]] == [1, 1]  # decoded alone: the stopped one left
    assert engine.under_way() == 0


def test_prompts_waiting_together_are_read_in_one_pass_exactly():
    line = Turns()
    engine = Engine(tiny(), line)
    calls = [lambda ids=ids: engine.read(ids) for ids in PROMPTS]
    with line.turn(first=False):  # the model is busy
        threads, out, failed = in_threads(calls)
        wait_until(lambda: line.waiting() == 1, "one reader waits for the turn", TIMEOUT, 0.01)
        wait_until(lambda: engine.waiting_reads() == 4, "every prompt waits", TIMEOUT, 0.01)
    finish(threads, failed)
    assert len({ms for _, ms in out}) == 1  # one pass read them all
    for ids, (read, _) in zip(PROMPTS, out, strict=True):
        alone = llama.forward(tiny(), list(ids), all_logits=False)
        assert abs(read.logits - alone.logits[-1]).max() < 1e-10
        assert abs(read.attention - alone.attention).max() < 1e-12


def test_measuring_the_cost_times_each_batch_size_on_smollm2():
    m = smollm2()
    engine = Engine(m.weights, Turns())
    read, _ = engine.read(tuple(smollm.encode(m, "The cat sat")))
    times = engine.cost(read)
    assert len(times) == len(COST_SIZES) and all(t > 0 for t in times)
    assert engine.under_way() == 0  # a batch of its own, not the process's
