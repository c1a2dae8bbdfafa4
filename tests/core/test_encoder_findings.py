"""core.encoder_findings: where a word sits among pieces, where a query's weight went."""

import numpy as np
import pytest

from core.encoder_findings import bare, place_of, weight_shift


def test_bare_drops_only_the_word_start_mark():
    assert bare("▁它") == "它" and bare("它▁") == "它▁" and bare("▁") == ""


def test_a_word_that_is_a_piece_is_found_where_it_is():
    tokens = ["<s>", "▁", "动物", "没有", ",", "它", "太", "累", "</s>"]
    place = place_of(tokens, "它")
    assert place.index == 5 and place.inside is None and not place.merged
    assert place_of(["<s>", "▁The", "▁animal", "</s>"], "animal").index == 2


def test_a_word_inside_a_larger_piece_is_reported_as_merged():
    tokens = ["<s>", "▁", "动物", ",", "因为它", "太", "累", "</s>"]
    place = place_of(tokens, "它")
    assert place.index is None and place.inside == 4 and place.merged


def test_a_word_that_is_nowhere_is_neither():
    place = place_of(["<s>", "▁cat", "</s>"], "它")
    assert place == place.__class__(None, None) and not place.merged
    assert not place_of(["<s>", "</s>"], "").merged


def test_weight_shift_splits_the_change_between_target_special_and_others():
    row_a = np.array([0.10, 0.50, 0.20, 0.15, 0.05])  # <s>, 动物, 马, 路, </s>
    row_b = np.array([0.25, 0.30, 0.22, 0.13, 0.10])
    found = weight_shift(row_a, row_b, target=1, special=[0, 4])
    assert found.target == pytest.approx(-0.20)
    assert found.special == pytest.approx(0.20)
    assert found.others == pytest.approx(0.0)
    assert found.top == 2 and found.top_gain == pytest.approx(0.02)
    assert found.target + found.special + found.others == pytest.approx(0.0)


def test_weight_shift_on_rows_that_sum_to_one_balances():
    rng = np.random.default_rng(0)
    a, b = rng.dirichlet(np.ones(9)), rng.dirichlet(np.ones(9))
    found = weight_shift(a, b, target=3, special=[0, 8])
    assert found.target + found.special + found.others == pytest.approx(0.0, abs=1e-12)
    assert found.top not in (0, 3, 8)


def test_weight_shift_with_no_other_key_has_no_top():
    found = weight_shift(np.array([0.4, 0.6]), np.array([0.7, 0.3]), target=1, special=[0])
    assert found.top == -1 and found.top_gain == 0.0 and found.others == 0.0
