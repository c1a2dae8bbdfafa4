"""Tokenisation (English words, Chinese characters) and embeddings."""

import numpy as np
import pytest

from core import (
    EmptyTextError,
    TokenizeError,
    TooManyTokensError,
    embed_tokens,
    lesson_inputs,
    tokenize,
)
from core.tokens import MAX_TOKENS, sinusoidal_positions, stable_embeddings


def test_english_splits_words_and_punctuation_keeping_contractions():
    assert tokenize("The cat didn’t sit, did it?") == [
        "The",
        "cat",
        "didn’t",
        "sit",
        ",",
        "did",
        "it",
        "?",
    ]
    assert tokenize("don't") == ["don't"]


def test_chinese_is_one_token_per_character_with_fullwidth_punctuation():
    assert tokenize("我爱你") == ["我", "爱", "你"]
    assert tokenize("你好，世界。") == ["你", "好", "，", "世", "界", "。"]


def test_mixed_english_and_chinese():
    assert tokenize("I love 北京!") == ["I", "love", "北", "京", "!"]
    assert tokenize("hello世界") == ["hello", "世", "界"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_blank_text_raises_empty_text_error(text):
    with pytest.raises(EmptyTextError):
        tokenize(text)


def test_tokenize_errors_are_value_errors_for_callers():
    assert issubclass(EmptyTextError, TokenizeError)
    assert issubclass(TooManyTokensError, TokenizeError)
    assert issubclass(TokenizeError, ValueError)


def test_too_many_tokens_reports_count_and_limit():
    with pytest.raises(TooManyTokensError) as info:
        tokenize("a b c d e", max_tokens=4)
    assert info.value.count == 5
    assert info.value.limit == 4


def test_default_limit_is_max_tokens():
    assert len(tokenize("x " * MAX_TOKENS)) == MAX_TOKENS
    with pytest.raises(TooManyTokensError) as info:
        tokenize("x " * (MAX_TOKENS + 1))
    assert (info.value.count, info.value.limit) == (MAX_TOKENS + 1, MAX_TOKENS)


def test_stable_embedding_gives_a_word_the_same_vector_in_any_sentence():
    a = tokenize("The cat sat")
    b = tokenize("A black cat ran")
    ea, eb = stable_embeddings(a, 8), stable_embeddings(b, 8)
    assert ea.shape == (3, 8) and eb.shape == (4, 8)
    np.testing.assert_array_equal(ea[1], eb[2])  # "cat"
    assert not np.allclose(ea[0], ea[1])  # different words differ


def test_stable_embedding_ignores_case_but_not_the_seed():
    e = stable_embeddings(["The", "the", "THE"], 6)
    np.testing.assert_array_equal(e[0], e[1])
    np.testing.assert_array_equal(e[0], e[2])
    assert not np.allclose(stable_embeddings(["the"], 6, seed=1), stable_embeddings(["the"], 6))


def test_stable_embedding_of_no_tokens_is_empty():
    assert stable_embeddings([], 5).shape == (0, 5)


def test_lesson_mode_embeds_exactly_like_lesson_inputs():
    tokens = tokenize("the cat sat on the mat")
    np.testing.assert_array_equal(
        embed_tokens(tokens, 8, mode="lesson", seed=42), lesson_inputs(6, 8, seed=42)
    )


def test_positions_add_the_sinusoidal_encoding():
    tokens = ["a", "b", "a"]
    x = embed_tokens(tokens, 4, mode="stable", seed=3, positions=True)
    np.testing.assert_allclose(x, stable_embeddings(tokens, 4, 3) + sinusoidal_positions(3, 4))
    assert not np.allclose(x[0], x[2])  # same word, different position


def test_unknown_embedding_mode_raises_value_error():
    with pytest.raises(ValueError, match="mode"):
        embed_tokens(["a"], 4, mode="bogus")


def test_sinusoidal_positions_shape_and_first_rows_by_hand():
    p = sinusoidal_positions(5, 6)
    assert p.shape == (5, 6)
    np.testing.assert_allclose(p[0], [0, 1, 0, 1, 0, 1], atol=1e-15)
    # position 1: angles 1, 1/10000^(2/6), 1/10000^(4/6) for the sin/cos pairs
    angles = np.array([1.0, 10000 ** (-2 / 6), 10000 ** (-4 / 6)])
    expected = np.stack([np.sin(angles), np.cos(angles)], axis=-1).ravel()
    np.testing.assert_allclose(p[1], expected, rtol=1e-12)
