"""What the pages on today's attention (/rope, /gqa) read from SmolLM2 besides
:func:`models.smollm.layer_qkv`: a prompt as the model reads it (capped, with readable token
texts) and each layer's queries before and after their RoPE rotation.

The rotation is the model's own: :func:`core.llama.rotated_qkv` (normalise, project, then
:func:`core.rope.apply_rope` with :func:`core.rope.rope_angles`), run once with the tokens'
true positions and once with every position 0, where RoPE turns nothing (cos 1, sin 0).
"""

from dataclasses import dataclass

import numpy as np

import core.llama as llama
from models.smollm import MAX_PROMPT_TOKENS, SmolLM, encode, token_labels


@dataclass(frozen=True)
class PromptTokens:
    """A prompt as the model reads it, capped at ``cap`` tokens."""

    ids: tuple[int, ...]  # the first ``cap`` token ids
    labels: tuple[str, ...]  # readable text of each kept token (models.smollm.token_labels)
    total: int  # tokens before the cap


def prompt_tokens(model: SmolLM, text: str, cap: int = MAX_PROMPT_TOKENS) -> PromptTokens:
    """Tokenise ``text`` with the model's tokenizer, keeping the first ``cap`` tokens.

    Shapes: -> ``ids`` ``(min(total, cap),)``; empty for a text without tokens.
    """
    ids = encode(model, text)
    kept = ids[:cap]
    return PromptTokens(tuple(kept), tuple(token_labels(model, kept)), len(ids))


@dataclass(frozen=True)
class LayerQueries:
    """One layer's queries for a prompt, before and after RoPE, and the angles it used."""

    before: np.ndarray  # (h, n, d_head) projected, not yet turned (every position 0)
    after: np.ndarray  # (h, n, d_head) turned to the tokens' positions: what attention uses
    cos: np.ndarray  # (n, d_head/2) cos of the angles p · θ_i (core.rope.rope_angles)
    sin: np.ndarray  # (n, d_head/2)


def layer_queries(model: SmolLM, ids: list[int] | tuple[int, ...]) -> list[LayerQueries]:
    """Every layer's queries for ``ids`` (causal forward pass), before and after RoPE.

    Shapes: ``ids`` ``(n,)`` with ``n >= 1`` -> ``L`` items, each ``before``/``after``
    ``(h, n, d_head)`` float32 and ``cos``/``sin`` ``(n, d_head/2)`` float32.
    """
    cfg = model.config
    hidden = llama.forward(model.weights, list(ids), all_logits=False).hidden  # (L+1, n, d)
    n = len(ids)
    positions, still = np.arange(n), np.zeros(n, dtype=np.int64)
    cos, sin = llama.rope_angles(positions, cfg.d_head, cfg.rope_base)  # (n, d_head/2) each
    out = []
    for x, layer in zip(hidden[:-1], model.weights.layers, strict=True):
        before = llama.rotated_qkv(x, layer, cfg, still)[0]  # (h, n, d_head)
        after = llama.rotated_qkv(x, layer, cfg, positions)[0]  # (h, n, d_head)
        out.append(LayerQueries(before, after, cos, sin))
    return out
