"""Continuous batching equals one generation at a time: on a small random model in float64
(tight bounds; tests/models/test_smollm.py checks SmolLM2 in float32)."""

import numpy as np

import core.llama as llama
from core import batching
from core.sampling import Sampling
from tests.conftest import TINY_IDS as IDS
from tests.conftest import tiny_llama as tiny

CFG = tiny().config
PROMPTS = [IDS, IDS[:3], [7], IDS[2:7]]  # different lengths, one of a single token


def reference(ids: list[int], n: int, s: Sampling, stop: int | None = None) -> list[llama.GenStep]:
    return list(llama.generate_steps(tiny(), ids, n, sampling=s, stop=stop))


def run_mixed(samplings: list[Sampling], n: int, joins: list[int], stop: int | None = None):
    """Generation i starts at step joins[i]; every step decodes whoever is under way."""
    reads = batching.read(tiny(), PROMPTS)
    b, gens, logits = batching.Batcher(tiny()), {}, {}
    for step in range(max(joins) + n + 1):
        for i, at in enumerate(joins):
            if at == step:
                gens[i] = batching.Generation.start(reads[i], n, samplings[i], stop)
                logits[i] = [gens[i].logits]
                b.add(gens[i])
        batch = b.admit()
        b.step(batch)
        for i, g in gens.items():
            if g in batch:
                logits[i].append(g.logits)
    return gens, logits


def test_reading_prompts_together_equals_reading_each_alone():
    together = batching.read(tiny(), PROMPTS, attention=True)
    for ids, r in zip(PROMPTS, together, strict=True):
        alone = llama.forward(tiny(), ids, all_logits=False)
        np.testing.assert_allclose(r.logits, alone.logits[-1], atol=1e-10)
        np.testing.assert_allclose(r.attention, alone.attention, atol=1e-12)
        for got, want in zip(r.caches, alone.caches, strict=True):
            assert got.k.shape == (CFG.n_kv_heads, len(ids), CFG.d_head)
            np.testing.assert_allclose(got.k, want.k, atol=1e-12)
            np.testing.assert_allclose(got.v, want.v, atol=1e-12)
    assert batching.read(tiny(), PROMPTS)[0].attention is None


def test_one_decoding_step_of_a_batch_equals_each_generation_alone():
    reads = batching.read(tiny(), PROMPTS)
    tokens = [5, 9, 1, 33]
    logits, caches = batching.decode_batch(tiny(), tokens, [r.caches for r in reads])
    for ids, tok, row, grown in zip(PROMPTS, tokens, logits, caches, strict=True):
        alone = llama.forward(tiny(), [*ids, tok], all_logits=False)
        np.testing.assert_allclose(row, alone.logits[-1], atol=1e-10)
        assert len(grown[0]) == len(ids) + 1


def test_greedy_generations_joining_at_different_steps_equal_the_reference():
    n, greedy = 6, [Sampling()] * 4
    gens, logits = run_mixed(greedy, n, joins=[0, 0, 2, 5])
    for i, ids in enumerate(PROMPTS):
        ref = reference(ids, n, greedy[i])
        assert gens[i].tokens == [s.token for s in ref]
        for got, want in zip(logits[i], ref, strict=True):
            np.testing.assert_allclose(got, want.logits, atol=1e-10)
    assert gens[0].batch[:3] == [1, 2, 2]  # the first token comes from the prompt's read
    assert max(gens[0].batch) == 3 and gens[3].batch[1] == 2  # 3 at once, then 2 left


def test_sampled_generations_with_their_seeds_equal_the_reference():
    hot = [Sampling(1.3, top_k=20, top_p=0.9, seed=i) for i in range(4)]
    gens, _ = run_mixed(hot, 8, joins=[0, 1, 1, 3])
    for i, ids in enumerate(PROMPTS):
        assert gens[i].tokens == [s.token for s in reference(ids, 8, hot[i])]
    assert len({tuple(g.tokens) for g in gens.values()}) > 1


def test_a_generation_leaves_at_its_stop_token_and_the_rest_go_on():
    s = [Sampling()] * 4
    first, _ = run_mixed(s, 6, joins=[0, 0, 0, 0])
    stop = first[1].tokens[2]
    gens, _ = run_mixed(s, 6, joins=[0, 0, 0, 0], stop=stop)
    for i, ids in enumerate(PROMPTS):
        assert gens[i].tokens == [t.token for t in reference(ids, 6, s[i], stop=stop)]
    assert gens[1].tokens[-1] == stop and len(gens[1].tokens) <= 3


def test_the_batch_is_capped_and_the_waiting_join_as_places_free_up():
    reads = batching.read(tiny(), PROMPTS)
    b = batching.Batcher(tiny(), max_batch=2)
    gens = [batching.Generation.start(reads[i % 4], 3, Sampling()) for i in range(3)]
    for g in gens:
        b.add(g)
    batch = b.admit()
    assert batch == gens[:2] and b.waiting == gens[2:]
    b.step(batch)
    gens[0].cancelled = True
    assert b.admit() == [gens[1], gens[2]]  # the cancelled one left, the waiting one joined
    b.step(b.admit())
    assert b.admit() == [gens[2]] and gens[1].done and not gens[2].done
    assert b.pending() == 1


def test_a_one_token_generation_needs_no_step():
    read = batching.read(tiny(), [IDS])[0]
    g = batching.Generation.start(read, 1, Sampling())
    assert g.done and g.tokens == [int(np.argmax(read.logits))]
    b = batching.Batcher(tiny())
    b.add(g)
    assert b.admit() == []
