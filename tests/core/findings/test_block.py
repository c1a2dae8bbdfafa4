"""What /block's notes point out, on hand-made numbers."""

import math

import numpy as np

import core.findings.block as found


def test_stream_names_the_largest_addition_and_attentions_share():
    f = found.stream(np.array([1.0, 5.0, 9.0]), np.array([2.0, 6.0]), np.array([4.0, 3.0]))
    assert (f.start, f.end) == (1.0, 9.0)
    assert (f.top_layer, f.top_kind, f.top_norm) == (1, "attn", 6.0)
    assert f.attn_share == 8.0 / 15.0
    mlp = found.stream(np.ones(3), np.array([1.0, 1.0]), np.array([7.0, 1.0]))
    assert (mlp.top_layer, mlp.top_kind) == (0, "mlp")


def test_lens_finds_where_the_final_token_first_tops_and_where_it_stays():
    top = np.array([[5, 1], [7, 2], [7, 3], [4, 7], [7, 1], [7, 2]])  # rows: emb, L0, …
    probs = np.tile([0.6, 0.1], (6, 1))
    f = found.lens(top, probs)
    assert (f.final, f.first, f.settled, f.p_final) == (7, 1, 4, 0.6)
    always = found.lens(np.array([[3], [3]]), np.array([[0.9], [0.8]]))
    assert (always.first, always.settled) == (0, 0)


def test_heads_compares_what_matters_with_where_heads_look():
    f = found.heads(np.array([0.1, -2.0, 0.3]), np.array([0.7, 0.1, 0.2]))
    assert (f.matters, f.looks, f.agree) == (1, 0, False)
    assert f.effect == 2.0 and f.paid == 0.7
    assert math.isclose(f.rank_corr, -1.0)  # |effect| ranks 0.1 < 0.3 < 2 against 0.7 > 0.2 > 0.1
    same = found.heads(np.array([3.0, 1.0]), np.array([0.9, 0.1]))
    assert same.agree and math.isclose(same.rank_corr, 1.0)
    assert math.isnan(found.heads(np.ones(3), np.array([0.1, 0.2, 0.3])).rank_corr)


def test_scored_is_the_softmax_probability_and_the_logit_lead():
    s = found.scored(np.array([2.0, 0.0, 1.0]), 0, 2)
    e = np.exp([2.0, 0.0, 1.0])
    assert math.isclose(s.prob, e[0] / e.sum()) and s.diff == 1.0


def test_ranked_lists_the_most_likely_first_ties_by_id():
    assert found.ranked(np.array([0.5, 2.0, 0.5, 3.0]), 3).tolist() == [3, 1, 0]
