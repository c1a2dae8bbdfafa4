"""Greedy, temperature, top-k and top-p: which tokens each keeps, and the rules for values
out of range."""

import numpy as np
import pytest

from core.sampling import Sampling, distribution, generator, keep_mask, pick

LOGITS = np.log(np.array([0.05, 0.4, 0.1, 0.3, 0.15]))  # probabilities at temperature 1


def test_greedy_takes_the_most_likely_token_at_temperature_zero_or_below():
    for t in (0.0, -1.0, float("nan")):
        s = Sampling(temperature=t)
        assert s.greedy
        assert pick(LOGITS, s, generator(s)) == 1
        np.testing.assert_array_equal(distribution(LOGITS, s), [0, 1, 0, 0, 0])


def test_temperature_one_without_limits_is_the_softmax():
    np.testing.assert_allclose(distribution(LOGITS, Sampling(1.0)), np.exp(LOGITS), rtol=1e-12)


def test_top_k_keeps_the_k_most_likely_and_renormalises():
    p = distribution(LOGITS, Sampling(1.0, top_k=2))
    np.testing.assert_allclose(p, [0, 0.4 / 0.7, 0, 0.3 / 0.7, 0], rtol=1e-12)


def test_top_k_of_zero_or_beyond_the_vocabulary_keeps_every_token():
    for k in (0, 5, 10**9):
        np.testing.assert_allclose(distribution(LOGITS, Sampling(1.0, top_k=k)), np.exp(LOGITS))


def test_top_p_keeps_the_fewest_tokens_that_reach_p_the_crossing_one_included():
    p = np.exp(LOGITS)  # sorted: 0.4, 0.3, 0.15, 0.1, 0.05
    assert keep_mask(p, 0, 0.5).tolist() == [False, True, False, True, False]  # 0.4 < 0.5
    assert keep_mask(p, 0, 0.7).tolist() == [False, True, False, True, False]  # 0.7 reached
    assert keep_mask(p, 0, 0.71).sum() == 3
    assert keep_mask(p, 0, 1.0).all()


def test_top_p_at_or_below_zero_keeps_only_the_most_likely_token():
    for top_p in (0.0, -3.0):
        s = Sampling(1.0, top_p=top_p)
        np.testing.assert_array_equal(distribution(LOGITS, s), [0, 1, 0, 0, 0])


def test_top_p_applies_to_what_top_k_kept():
    p = np.exp(LOGITS)
    # top-2 renormalised: 0.571, 0.429; p = 0.5 keeps the first only
    assert keep_mask(p, 2, 0.5).tolist() == [False, True, False, False, False]


def test_a_huge_temperature_is_almost_uniform_and_never_nan():
    p = distribution(LOGITS, Sampling(1e6))
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p, 0.2, atol=1e-6)


def test_ties_keep_the_lower_token_id():
    p = np.array([0.25, 0.25, 0.25, 0.25])
    assert keep_mask(p, 2, 1.0).tolist() == [True, True, False, False]


def test_the_same_seed_draws_the_same_tokens_and_draws_only_kept_tokens():
    s = Sampling(1.5, top_k=3, top_p=0.9, seed=11)
    draws = lambda: [pick(LOGITS, s, rng) for rng in [generator(s)] for _ in range(200)]  # noqa: E731
    first = draws()
    assert first == draws()
    kept = set(np.flatnonzero(distribution(LOGITS, s)).tolist())
    assert set(first) <= kept and len(set(first)) > 1


@pytest.mark.parametrize("seed", [0, 1])
def test_draws_follow_the_kept_distribution(seed: int):
    s = Sampling(1.0, top_k=3, seed=seed)
    rng = generator(s)
    counts = np.bincount([pick(LOGITS, s, rng) for _ in range(4000)], minlength=5) / 4000
    np.testing.assert_allclose(counts, distribution(LOGITS, s), atol=0.03)
