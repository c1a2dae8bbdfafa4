"""Attention maths in pure NumPy — the single source of truth for every number the app shows.

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
module that holds it (with the naive softmax and the limits of ``exp``) is
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
from core.bert import (
    BertConfig,
    BertLayer,
    BertOutput,
    BertWeights,
    WeightExplained,
    bert_forward,
    erf,
    explain_weight,
    gelu,
    head_ranking,
    key_share,
    layer_norm,
    without_keys,
)
from core.experiments import (
    dot_product_samples,
    dot_variance_curve,
    entropy,
    gradient_curve,
    path_lengths,
    saturation_curve,
    softmax_jacobian,
    softmax_jacobian_norm,
)
from core.flash import (
    FlashTrace,
    flash_attention,
    flash_attention_io,
    flash_block_sizes,
    scores_held,
    standard_attention_io,
)
from core.homework import (
    ATTENTION_MISTAKES,
    MULTIHEAD_MISTAKES,
    SOFTMAX_MISTAKES,
    Homework,
    diagnose_attention,
    diagnose_homework,
    diagnose_multihead,
    diagnose_softmax,
    homework_answer,
    homework_inputs,
)
from core.kv_cache import (
    CostCurve,
    DecodeStep,
    KVCache,
    cached_causal_attention,
    decode_costs,
    decode_step,
    decode_trace,
    gqa_decode_step,
    grouped_query_attention,
    grouped_query_attention_loop,
    kv_cache_bytes,
    kv_head_of,
    kv_numbers_per_token,
    kv_variants,
    repeat_kv,
    tile_kv,
)
from core.llama import (
    LayerWeights,
    LlamaConfig,
    LlamaWeights,
    first_token_share,
    generate_steps,
    lean_forward,
    rms_norm,
    token_nll,
    top_tokens,
)
from core.lookup import hard_lookup, polar_query, soft_lookup
from core.masks import (
    LARGE_NEGATIVE,
    MASK_FILL,
    apply_mask,
    causal_mask,
    padding_mask,
    receptive_field,
    sliding_window_mask,
    window_reach,
)
from core.multihead import (
    init_multihead,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    split_heads,
)
from core.projections import (
    fuse_qkv,
    fused_project,
    init_projections,
    lesson_inputs,
    project_qkv,
    xavier_std,
)
from core.rope import (
    apply_rope,
    rope_angles,
    rope_frequencies,
    rope_relative_score,
    rope_rotate,
    rope_score,
    rope_slow_pairs,
    rope_wavelengths,
    rotate_pair,
)
from core.softmax_numerics import softmax, softmax_naive
from core.textplot import text_heatmap
from core.tokens import (
    EMBEDDING_MODES,
    MAX_TOKENS,
    EmptyTextError,
    TokenizeError,
    TooManyTokensError,
    embed_tokens,
    sinusoidal_positions,
    stable_embeddings,
    tokenize,
)
from core.training import (
    History,
    Snapshot,
    TrainConfig,
    loss_at,
    steps_to,
    train_attention,
    train_live,
)

__all__ = [
    "ATTENTION_MISTAKES",
    "EMBEDDING_MODES",
    "LARGE_NEGATIVE",
    "MASK_FILL",
    "MAX_TOKENS",
    "MULTIHEAD_MISTAKES",
    "SOFTMAX_MISTAKES",
    "AttentionTrace",
    "BertConfig",
    "BertLayer",
    "BertOutput",
    "BertWeights",
    "CostCurve",
    "DecodeStep",
    "EmptyTextError",
    "FlashTrace",
    "History",
    "Homework",
    "KVCache",
    "LayerWeights",
    "LlamaConfig",
    "LlamaWeights",
    "Snapshot",
    "TokenizeError",
    "TooManyTokensError",
    "TrainConfig",
    "WeightExplained",
    "apply_mask",
    "apply_rope",
    "attention_scores",
    "bert_forward",
    "cached_causal_attention",
    "causal_mask",
    "decode_costs",
    "decode_step",
    "decode_trace",
    "diagnose_attention",
    "diagnose_homework",
    "diagnose_multihead",
    "diagnose_softmax",
    "dot_product_samples",
    "dot_variance_curve",
    "embed_tokens",
    "entropy",
    "erf",
    "explain_weight",
    "first_token_share",
    "flash_attention",
    "flash_attention_io",
    "flash_block_sizes",
    "fuse_qkv",
    "fused_project",
    "gelu",
    "generate_steps",
    "gqa_decode_step",
    "gradient_curve",
    "grouped_query_attention",
    "grouped_query_attention_loop",
    "hard_lookup",
    "head_ranking",
    "homework_answer",
    "homework_inputs",
    "init_multihead",
    "init_projections",
    "key_share",
    "kv_cache_bytes",
    "kv_head_of",
    "kv_numbers_per_token",
    "kv_variants",
    "layer_norm",
    "lean_forward",
    "lesson_inputs",
    "loss_at",
    "merge_heads",
    "multi_head_attention",
    "multi_head_attention_loop",
    "padding_mask",
    "path_lengths",
    "polar_query",
    "project_qkv",
    "receptive_field",
    "repeat_kv",
    "rms_norm",
    "rope_angles",
    "rope_frequencies",
    "rope_relative_score",
    "rope_rotate",
    "rope_score",
    "rope_slow_pairs",
    "rope_wavelengths",
    "rotate_pair",
    "saturation_curve",
    "scaled_dot_product_attention",
    "scores_held",
    "self_attention_trace",
    "sinusoidal_positions",
    "sliding_window_mask",
    "soft_lookup",
    "softmax",
    "softmax_jacobian",
    "softmax_jacobian_norm",
    "softmax_naive",
    "split_heads",
    "stable_embeddings",
    "standard_attention_io",
    "steps_to",
    "text_heatmap",
    "tile_kv",
    "token_nll",
    "tokenize",
    "top_tokens",
    "train_attention",
    "train_live",
    "window_reach",
    "without_keys",
    "xavier_std",
]
