"""models/encoded.py: the sentence both encoders' ``encode`` return, and how they cut it."""

import numpy as np

from models.encoded import Encoded, keep_closing

SPECIAL = ("[CLS]", "[SEP]")


def encoded(tokens: list[str], total: int, unknown: int) -> Encoded:
    return Encoded(tokens, np.arange(len(tokens)), total, unknown, SPECIAL)


def test_a_sentence_within_the_cap_is_kept_whole():
    ids = [101, 7, 8, 102]
    assert keep_closing(ids, 4) == ids
    assert keep_closing(ids, 128) == ids


def test_beyond_the_cap_the_first_pieces_and_the_closing_token_are_kept():
    tokens = ["[CLS]", "a", "b", "c", "d", "[SEP]"]
    assert keep_closing(tokens, 4) == ["[CLS]", "a", "b", "[SEP]"]
    assert tokens == ["[CLS]", "a", "b", "c", "d", "[SEP]"]  # the input is left as it was


def test_cut_says_whether_the_text_had_more_tokens_than_were_kept():
    assert encoded(["[CLS]", "a", "[SEP]"], total=5, unknown=0).cut
    assert not encoded(["[CLS]", "a", "[SEP]"], total=3, unknown=0).cut


def test_unknown_share_counts_pieces_only_not_the_special_marks():
    assert encoded(["[CLS]", "[UNK]", "a", "[SEP]"], total=4, unknown=1).unknown_share == 0.5
    assert encoded(["[CLS]", "[SEP]"], total=2, unknown=0).unknown_share == 0.0  # no pieces
