"""Attention maths in pure NumPy — the single source of truth for every number the app shows.

``import core`` gives what a notebook needs to compute attention:

* tokens and inputs: :func:`tokenize` (and the errors it raises), :func:`embed_tokens`,
  lesson 002's :func:`lesson_inputs`, :func:`init_projections` and :func:`project_qkv`;
* attention: :func:`attention_scores`, :func:`scaled_dot_product_attention` and the
  step-by-step :func:`self_attention_trace`; :func:`softmax` (the one softmax of ``core``);
  the boolean masks :func:`causal_mask`, :func:`padding_mask`, :func:`sliding_window_mask`
  and :func:`apply_mask`; the lookup it generalises, :func:`hard_lookup` and
  :func:`soft_lookup`;
* heads: :func:`split_heads`, :func:`merge_heads`, :func:`multi_head_attention` (with its
  per-head reference loop and :func:`multi_head_trace`) and :func:`init_multihead`;
  grouped-query attention (:func:`grouped_query_attention`, its loop, :func:`repeat_kv`,
  :func:`kv_head_of`);
* positions: RoPE (:func:`rope_frequencies`, :func:`rope_angles`, :func:`apply_rope`,
  :func:`rope_rotate`);
* speed: :func:`flash_attention` (the online softmax over tiles of keys) and the key/value
  cache (:class:`KVCache`, :func:`decode_step`, :func:`decode_trace`,
  :func:`cached_causal_attention`, :func:`gqa_decode_step`, :func:`kv_cache_bytes`);
* real models: the BERT encoder's :func:`bert_forward` and the Llama decoder's
  :func:`llama_forward` (:func:`core.llama.forward`) and :func:`generate_steps`, with the
  config and weight types their readers in ``models/`` fill in;
* :func:`train_attention` (one attention layer trained in NumPy) and :func:`text_heatmap`
  (weights as text).

Everything else lives in its module and is imported from there: the concept modules
(``core.attention``, ``core.masks``, ``core.rope``, ``core.flash``, ``core.kv_cache``,
``core.experiments``, ``core.homework``, …) hold the pages' experiments too, and what each
page's notes point out is in :mod:`core.findings` (``core.findings.<page id>``).

Shape vocabulary (used in every docstring and shape comment in this package):

    n          number of tokens; ``n_q`` queries and ``n_k`` keys/values when they differ
    d_model    width of a token embedding (the model dimension)
    h          number of attention heads
    d_k        width of a query/key vector (per head)
    d_v        width of a value vector (per head)
    ...        optional leading batch dimensions

Conventions:

* Row vectors: a projection is ``x @ W`` with ``W`` of shape ``(d_in, d_out)``, as in the lessons.
* Masks are boolean and ``True`` means *may attend*.
* Randomness only through an explicit ``seed`` (or ``np.random.Generator``) argument.
* Functions are pure: they return new arrays and keep no state.

Names: ``from core import softmax`` gives the function, like every name imported below. No
module shares a name with a function, so ``core.softmax`` is always the function; the
module that holds it (with ``log_softmax``, the naive softmax and the limits of ``exp``) is
:mod:`core.softmax_numerics`.

Nothing in this package imports streamlit, altair or pandas, or does I/O, so it runs in a
notebook with only NumPy installed.
"""

from core.attention import (
    AttentionTrace,
    attention_scores,
    scaled_dot_product_attention,
    self_attention_trace,
)
from core.bert import BertConfig, BertLayer, BertOutput, BertWeights, bert_forward
from core.flash import FlashTrace, flash_attention
from core.kv_cache import (
    DecodeStep,
    KVCache,
    cached_causal_attention,
    decode_step,
    decode_trace,
    gqa_decode_step,
    grouped_query_attention,
    grouped_query_attention_loop,
    kv_cache_bytes,
    kv_head_of,
    repeat_kv,
)
from core.llama import GenStep, LayerWeights, LlamaConfig, LlamaWeights, generate_steps
from core.llama import forward as llama_forward
from core.lookup import hard_lookup, soft_lookup
from core.masks import apply_mask, causal_mask, padding_mask, sliding_window_mask
from core.multihead import (
    MultiHeadTrace,
    init_multihead,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    multi_head_trace,
    split_heads,
)
from core.projections import init_projections, lesson_inputs, project_qkv
from core.rope import apply_rope, rope_angles, rope_frequencies, rope_rotate
from core.softmax_numerics import softmax
from core.textplot import text_heatmap
from core.tokens import (
    EMBEDDING_MODES,
    EmptyTextError,
    TokenizeError,
    TooManyTokensError,
    embed_tokens,
    tokenize,
)
from core.training import History, train_attention

__all__ = [
    "EMBEDDING_MODES",
    "AttentionTrace",
    "BertConfig",
    "BertLayer",
    "BertOutput",
    "BertWeights",
    "DecodeStep",
    "EmptyTextError",
    "FlashTrace",
    "GenStep",
    "History",
    "KVCache",
    "LayerWeights",
    "LlamaConfig",
    "LlamaWeights",
    "MultiHeadTrace",
    "TokenizeError",
    "TooManyTokensError",
    "apply_mask",
    "apply_rope",
    "attention_scores",
    "bert_forward",
    "cached_causal_attention",
    "causal_mask",
    "decode_step",
    "decode_trace",
    "embed_tokens",
    "flash_attention",
    "generate_steps",
    "gqa_decode_step",
    "grouped_query_attention",
    "grouped_query_attention_loop",
    "hard_lookup",
    "init_multihead",
    "init_projections",
    "kv_cache_bytes",
    "kv_head_of",
    "lesson_inputs",
    "llama_forward",
    "merge_heads",
    "multi_head_attention",
    "multi_head_attention_loop",
    "multi_head_trace",
    "padding_mask",
    "project_qkv",
    "repeat_kv",
    "rope_angles",
    "rope_frequencies",
    "rope_rotate",
    "scaled_dot_product_attention",
    "self_attention_trace",
    "sliding_window_mask",
    "soft_lookup",
    "softmax",
    "split_heads",
    "text_heatmap",
    "tokenize",
    "train_attention",
]
