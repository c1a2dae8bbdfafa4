"""models/sinks_probe.py: one masked forward pass of SmolLM2 gives window_run's perplexity
and first-token shares, and the predictions at every scored position."""

from functools import cache

import numpy as np
import pytest

import core.llama as llama
from core.softmax_numerics import softmax
from models import smollm
from models.sinks_probe import TOP_K, sink_run
from tests.conftest import smollm2

SHORT = 40  # tokens scored at the end of the first paragraph of the sinks text (~100 tokens)


def model() -> smollm.SmolLM:
    return smollm2()  # one per test process (tests/conftest.py)


@cache
def paragraph_ids() -> tuple[int, ...]:
    return tuple(smollm.encode(model(), smollm.sinks_text().split("\n\n")[0]))


@pytest.mark.parametrize(("window", "sinks"), [(None, 0), (8, 0), (8, 1)])
def test_the_perplexity_and_shares_are_window_runs(window, sinks):
    ids = paragraph_ids()
    ours = sink_run(model(), ids, window, sinks, SHORT)
    theirs = smollm.window_run(model(), list(ids), window, sinks, SHORT)
    assert ours.perplexity == theirs.perplexity and ours.nll == theirs.nll
    np.testing.assert_array_equal(ours.first_share, theirs.first_share)
    assert ours.token_nll.shape == (SHORT,) and np.mean(ours.token_nll) == ours.nll
    # the last row is window_run's prediction after the text
    assert ours.top_ids[-1, 0] == int(np.argmax(theirs.last_logits))


def test_the_predictions_are_the_softmax_top_tokens_of_each_scored_position():
    ids = paragraph_ids()
    run = sink_run(model(), ids, None, 0, SHORT)
    assert run.top_ids.shape == run.top_probs.shape == (SHORT + 1, TOP_K)
    assert np.all(np.diff(run.top_probs, axis=-1) <= 0)  # most likely first
    full = llama.forward(model().weights, list(ids))  # (n, vocab) logits, causal
    for position in (len(ids) - SHORT, len(ids) - 1, len(ids)):
        row = full.logits[position - 1]  # the logits that predict token `position`
        p = softmax(row.astype(np.float64))  # (vocab,)
        want = np.argsort(-p, kind="stable")[:TOP_K]
        p = p[want]
        np.testing.assert_array_equal(run.top_ids[run.row(position)], want)
        np.testing.assert_allclose(run.top_probs[run.row(position)], p, rtol=1e-4)
    first = len(ids) - SHORT
    np.testing.assert_allclose(run.target_prob, np.exp(-run.token_nll), rtol=1e-6)
    assert run.row(first) == 0
    with pytest.raises(ValueError, match="scored"):
        run.row(first - 1)


def test_refuses_to_score_more_tokens_than_can_be_predicted():
    with pytest.raises(ValueError, match="score"):
        sink_run(model(), paragraph_ids()[:5], None, 0, 5)
