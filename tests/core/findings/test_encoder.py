"""core.findings.encoder: where a word sits among pieces, where a query's weight went."""

import numpy as np
import pytest

from core.findings.encoder import (
    bare,
    favourite_flips,
    parked,
    place_of,
    specialist,
    spread,
    weight_shift,
)


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


def test_specialist_is_the_best_head_against_its_layer_mean():
    rng = np.random.default_rng(1)
    attention = rng.dirichlet(np.ones(5), size=(3, 4, 5))  # (L, h, n, n)
    attention[2, 1, 3] = [0.02, 0.9, 0.03, 0.03, 0.02]  # the one head that links 3 -> 1
    found = specialist(attention, 3, 1)
    assert (found.layer, found.head) == (2, 1) and found.weight == pytest.approx(0.9)
    assert found.mean == pytest.approx(attention[2, :, 3, 1].mean())
    assert found.ratio == pytest.approx(0.9 / found.mean) and found.ratio > 1


def test_parked_names_the_layers_and_head_that_park_most():
    attention = np.full((3, 2, 4, 4), 0.25)  # (L, h, n, n)
    attention[1, 0, :, :] = [0.7, 0.1, 0.1, 0.1]  # layer 1 head 0 parks on key 0
    attention[2, :, :, :] = [0.1, 0.3, 0.3, 0.3]
    found = parked(attention, 0)
    np.testing.assert_allclose(found.per_layer, [0.25, 0.475, 0.1])
    assert (found.low_layer, found.high_layer) == (2, 1)
    assert found.top_head == (1, 0) and found.top == pytest.approx(0.7)


def test_favourite_flips_counts_heads_whose_top_key_changes():
    a = np.zeros((2, 3, 4, 4))
    a[..., 0] = 1.0  # every head's favourite is key 0
    b = a.copy()
    b[0, 1, 2] = [0, 0, 1.0, 0]  # one head of query 2 now favours key 2
    assert favourite_flips(a, b, 2, 2) == 1 and favourite_flips(a, b, 1, 1) == 0


def test_spread_finds_the_largest_rise_and_fall_and_counts_what_moves():
    diff = np.array([[0.0, 0.1, -0.1], [0.01, -0.2, 0.19], [0.0, 0.02, -0.02]])
    found = spread(diff, 0.05)
    assert found.rise == (1, 2) and found.rise_by == pytest.approx(0.19)
    assert found.fall == (1, 1) and found.fall_by == pytest.approx(-0.2)
    assert (found.moved, found.moved_cells, found.rows) == (2, 4, 3)
    assert found.largest == ((1, 1), pytest.approx(-0.2))
    row = spread(diff[:1], 0.05)
    assert row.largest == ((0, 1), pytest.approx(0.1)) and row.moved_cells == 2
