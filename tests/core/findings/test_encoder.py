"""core.findings.encoder: where a word sits among pieces, where a query's weight went."""

import numpy as np
import pytest

from core.findings.encoder import (
    HIDDEN_RATIO,
    MUCH_PARKED,
    RARE_MEDIAN,
    Flow,
    Pronoun,
    bare,
    favourite_flips,
    favourites,
    find_pronoun,
    flow,
    flow_facts,
    parked,
    place_of,
    question,
    rank_of,
    rare_link,
    specialist,
    spread,
    total_variation,
    weight_shift,
)
from core.interpret import rollout


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


# Pieces as the two tokenizers write them (multilingual-e5's SentencePiece, MiniLM's WordPiece)
CAT_MERGED = ["<s>", "▁", "猫", "坐在", "垫", "子", "上", ",", "因为它", "很", "累", "。", "</s>"]
CAT_ALONE = ["<s>", "▁", "猫", "坐在", "垫", "子", "上", ",", "它", "很", "累", "。", "</s>"]
LESSON_EN = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street", "because"]
LESSON_EN += ["it", "was", "too", "tired", ".", "[SEP]"]


def test_a_pronoun_of_its_own_is_the_query():
    found = find_pronoun(CAT_ALONE, sentencepiece=True)
    assert found == Pronoun("它", 8, "它") and not found.merged
    assert find_pronoun(LESSON_EN, sentencepiece=False) == Pronoun("it", 10, "it")
    spm = ["<s>", "▁The", "▁cat", "▁sat", "▁because", "▁It", "▁was", "▁tired", "</s>"]
    assert find_pronoun(spm, sentencepiece=True) == Pronoun("It", 5, "▁It")


def test_a_pronoun_inside_a_larger_piece_names_that_piece():
    found = find_pronoun(CAT_MERGED, sentencepiece=True)
    assert (found.word, found.index, found.piece) == ("它", 8, "因为它") and found.merged
    plural = find_pronoun(["<s>", "▁", "猫", ",", "因为它们", "累", "</s>"], sentencepiece=True)
    assert plural.word == "它们" and plural.index == 4  # the longest pronoun it holds


def test_the_last_personal_pronoun_is_followed_and_demonstratives_only_without_one():
    tokens = ["[CLS]", "she", "gave", "him", "the", "book", "because", "he", "asked", "[SEP]"]
    assert find_pronoun(tokens, sentencepiece=False).index == 7  # he: most words before it
    this = ["<s>", "▁这", "只", "猫", "很", "可爱", "。", "</s>"]
    assert find_pronoun(this, sentencepiece=True).word == "这"
    both = ["<s>", "▁这", "只", "猫", ",", "它", "很", "累", "</s>"]
    assert find_pronoun(both, sentencepiece=True).word == "它"


def test_words_that_only_contain_a_pronoun_are_not_pronouns():
    assert find_pronoun(["<s>", "▁", "其他", "人", "弹", "吉他", "</s>"], True) is None
    assert find_pronoun(["[CLS]", "edit", "##it", "[SEP]"], sentencepiece=False) is None
    assert find_pronoun(["<s>", "▁Ed", "it", "▁now", "</s>"], sentencepiece=True) is None
    assert find_pronoun(["<s>", "▁it", "em", "</s>"], sentencepiece=True) is None  # "item"
    assert find_pronoun(["[CLS]", "the", "cat", "sat", "[SEP]"], sentencepiece=False) is None
    assert find_pronoun(["<s>", "▁", "</s>"], sentencepiece=True) is None


def test_only_the_lesson_s_question_gets_a_target_by_itself():
    assert question(LESSON_EN, sentencepiece=False).target == 2  # it -> animal
    zh = ["<s>", "▁", "动物", "没有", "过", "马", "路", ",", "它", "太", "累", "了", "。", "</s>"]
    assert question(zh, sentencepiece=True).target == 2  # 它 -> 动物
    merged = ["<s>", "▁", "动物", "没有", "过", "马", "路", ",", "因为它", "太", "累", "</s>"]
    asked = question(merged, sentencepiece=True)
    assert asked.pronoun.index == 8 and asked.target == 2  # 因为它 stands in for 它
    # any other sentence: the page does not guess what the pronoun refers to
    assert question(CAT_ALONE, sentencepiece=True).target is None
    assert question(CAT_MERGED, sentencepiece=True).pronoun.piece == "因为它"
    he = ["[CLS]", "the", "animal", "saw", "him", "[SEP]"]  # the lesson's word, not its pronoun
    assert question(he, sentencepiece=False).target is None
    none = question(["[CLS]", "the", "animal", "sat", "[SEP]"], sentencepiece=False)
    assert none.pronoun is None and none.target is None


def test_a_link_is_rare_only_when_the_median_head_puts_almost_nothing_there():
    assert rare_link(np.array([0.9, 0.3, RARE_MEDIAN / 2, 0.01, 0.0]))
    assert not rare_link(np.array([0.9, 0.5, 0.4, 0.3, 0.01]))


def test_a_specialist_is_hidden_only_well_above_its_layer_mean():
    attention = np.full((1, 4, 3, 3), 1 / 3)  # (L, h, n, n): every head alike
    attention[0, 0, 1] = [0.2, 0.3, 0.5]
    assert not specialist(attention, 1, 2).hidden  # 0.5 against a mean of 0.375
    attention[0, 0, 1] = [0.05, 0.05, 0.9]  # 0.9 against a mean of 0.475: under twice
    found = specialist(attention, 1, 2)
    assert found.ratio < HIDDEN_RATIO and not found.hidden
    sharp = np.full((1, 4, 3, 3), 0.0)
    sharp[..., 0] = 1.0
    sharp[0, 0, 1] = [0.0, 0.0, 1.0]
    assert specialist(sharp, 1, 2).hidden  # 1.0 against a mean of 0.25


def test_much_of_the_weight_is_parked_only_from_a_quarter_on():
    attention = np.full((2, 2, 4, 4), 0.25)  # a layer's mean weight on key 0: exactly 0.25
    assert parked(attention, 0).much and MUCH_PARKED == 0.25
    attention[..., 0], attention[..., 1] = 0.1, 0.4
    assert not parked(attention, 0).much


def _attention(seed: int = 0, layers: int = 3, heads: int = 2, n: int = 5) -> np.ndarray:
    """Random attention weights ``(L, h, n, n)``, every row summing to 1."""
    return np.random.default_rng(seed).dirichlet(np.ones(n), size=(layers, heads, n))


def test_flow_is_the_last_layer_s_head_mean_the_rollout_and_uniform():
    attention = _attention()
    f = flow(attention, 3, residual=0.3)
    np.testing.assert_allclose(f.raw, attention[-1, :, 3].mean(axis=0))
    np.testing.assert_allclose(f.rolled, rollout(attention, 0.3)[-1, 3])
    np.testing.assert_array_equal(f.uniform, np.full(5, 0.2))
    np.testing.assert_allclose(f.rows.sum(axis=1), 1.0)
    np.testing.assert_array_equal(f.rows, np.stack([f.raw, f.rolled, f.uniform]))


def test_rollout_with_the_whole_share_on_the_residual_keeps_each_token_to_itself():
    f = flow(_attention(1), 2, residual=1.0)
    np.testing.assert_array_equal(f.rolled, np.eye(5)[2])


def test_total_variation_is_half_the_sum_of_the_absolute_differences():
    uniform = np.full(4, 0.25)
    assert total_variation(uniform, uniform) == 0.0
    assert total_variation(np.eye(4)[1], uniform) == pytest.approx(0.75)  # 1 − 1/n at most
    assert total_variation(np.eye(4)[0], np.eye(4)[3]) == pytest.approx(1.0)
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    assert total_variation(p, q) == pytest.approx(0.3) == total_variation(q, p)


def test_favourites_are_the_tokens_that_print_as_the_largest():
    row = np.array([0.25001, 0.2, 0.05, 0.24999, 0.25])  # 0.250 three times at three decimals
    assert favourites(row) == (0, 3, 4)
    assert favourites(row, digits=5) == (0,)
    assert favourites(row, skip=[0, 4]) == (3,)
    assert favourites(row, skip=range(5)) == ()


def test_a_rank_counts_the_weights_that_print_larger():
    row = np.array([0.4, 0.3, 0.3, 0.0001, 0.0])
    assert [rank_of(row, j) for j in range(5)] == [1, 2, 2, 4, 4]  # 0.000 twice: a tie
    assert rank_of(row, 4, digits=5) == 5


def test_flow_facts_name_the_favourites_the_special_share_and_the_distances():
    f = Flow(np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), np.full(3, 1 / 3))
    facts = flow_facts(f, special=[0])
    assert (facts.raw_top, facts.rolled_top, facts.shared) == ((0,), (2,), ())
    assert (facts.raw_words, facts.rolled_words) == ((1,), (2,))  # without token 0
    assert (facts.raw_special, facts.rolled_special) == (0.5, 0.2)
    assert facts.raw_distance == pytest.approx(1 / 6) == facts.rolled_distance
    assert facts.farther is None, "the same distance: neither is farther"
    peaked = Flow(np.array([0.5, 0.3, 0.2]), np.array([0.9, 0.05, 0.05]), np.full(3, 1 / 3))
    facts = flow_facts(peaked, special=[])
    assert facts.shared == (0,) and facts.raw_words == (0,)
    assert facts.raw_special == 0.0
    assert facts.farther == "rollout" and facts.rolled_distance == pytest.approx(0.9 - 1 / 3)
    flat = Flow(peaked.rolled, np.array([0.4, 0.3, 0.3]), np.full(3, 1 / 3))
    assert flow_facts(flat, special=[2]).farther == "raw"


def test_a_tie_on_one_side_shares_the_token_the_other_side_favours():
    f = Flow(np.array([0.4, 0.2, 0.4]), np.array([0.1, 0.1, 0.8]), np.full(3, 1 / 3))
    facts = flow_facts(f, special=[0, 2])
    assert facts.raw_top == (0, 2) and facts.rolled_top == (2,) and facts.shared == (2,)
    assert facts.raw_words == facts.rolled_words == (1,)
    assert facts.raw_special == pytest.approx(0.8) and facts.rolled_special == pytest.approx(0.9)
