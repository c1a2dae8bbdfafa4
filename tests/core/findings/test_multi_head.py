"""core/findings/multi_head.py: each head's favourite key from the query the heads dispute
most, against their average."""

import numpy as np

from core.findings.multi_head import head_agreement, head_focus, head_picks, most_disputed_query


def test_head_focus_reports_each_heads_top_key_and_weight():
    w = np.array([[[0.7, 0.3], [0.4, 0.6]], [[0.1, 0.9], [0.8, 0.2]]])  # (h=2, n=2, n=2)
    top, best = head_focus(w)
    np.testing.assert_array_equal(top, [[0, 1], [1, 0]])
    np.testing.assert_allclose(best, [[0.7, 0.6], [0.9, 0.8]])


def test_most_disputed_query_prefers_disagreement_then_spread_then_first():
    agree = [[0.6, 0.4], [0.6, 0.4]]
    w = np.array(
        [
            [agree[0], [0.9, 0.1], [0.55, 0.45]],  # head 1
            [agree[1], [0.2, 0.8], [0.45, 0.55]],  # head 2: disagrees on queries 1 and 2
        ]
    )
    assert most_disputed_query(w) == 1  # both disagree; query 1 has the larger spread
    same = np.full((3, 4, 4), 0.25)
    assert most_disputed_query(same) == 0


def test_head_picks_name_each_heads_favourite_from_the_disputed_query():
    w = np.array(
        [
            [[0.6, 0.4], [0.9, 0.1]],  # head 0: query 1 looks at key 0
            [[0.6, 0.4], [0.2, 0.8]],  # head 1: query 1 looks at key 1
        ]
    )  # (h=2, n=2, n=2)
    found = head_picks(w)
    assert found.query == 1 and found.keys.tolist() == [0, 1] and not found.agree
    np.testing.assert_allclose(found.weights, [0.9, 0.8])
    assert found.best == 0.9 and found.average_key == 0 and found.average_weight == 0.55
    assert found.flat  # 0.9 < 2 × 1/2: with two keys, no head is much sharper than even
    assert not head_picks(w, flat=1.5).flat  # 0.9 ≥ 1.5 × 1/2


def test_head_picks_of_even_heads_agree_and_are_flat():
    found = head_picks(np.full((3, 4, 4), 0.25))
    assert found.query == 0 and found.agree and found.flat
    assert found.best == 0.25 and found.average_key == 0


def rows_on(keys: list[list[int]], n: int = 3) -> np.ndarray:
    """Weights ``(h, n_q, n)`` whose favourite keys are ``keys[head][query]``."""
    w = np.full((len(keys), len(keys[0]), n), 0.1)
    for h, row in enumerate(keys):
        for q, k in enumerate(row):
            w[h, q, k] = 0.8
    return w


def test_head_agreement_counts_the_queries_where_every_head_picks_the_same_key():
    assert head_agreement(rows_on([[0, 1, 2], [0, 1, 2]])) == "all"
    assert head_agreement(rows_on([[0, 1, 2], [0, 2, 1]])) == "some"
    assert head_agreement(rows_on([[0, 1, 2], [1, 2, 0]])) == "none"
    # three heads: two agreeing is not every head
    assert head_agreement(rows_on([[0, 1], [0, 1], [2, 1]])) == "some"
    assert head_agreement(rows_on([[0, 1, 2]])) == "all"  # one head agrees with itself
