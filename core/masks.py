"""Boolean attention masks. ``True`` = the query may attend to that key.

A mask must be a boolean array (:func:`as_mask`). PyTorch's float ``attn_mask`` is additive
(0 = keep, −inf = hide, added to the scores): read as booleans it would flip, 0 meaning
"hidden" and −inf "visible", and a causal mask would silently turn anti-causal. So any
other dtype (float or int) is refused with :class:`MaskTypeError`, whose message says how to
convert (``mask = additive == 0``).

Masked scores are replaced by :data:`MASK_FILL` (``-inf``), so after softmax their weight
is exactly 0. :data:`LARGE_NEGATIVE` (``-1e9``, the lessons' choice) is kept for comparison:
it gives weights that are ~0 rather than exactly 0, and a fully masked row then becomes a
uniform distribution instead of the all-zero row that ``-inf`` gives.

Beside the masks: why each cell of a sliding window is visible or hidden
(:func:`mask_states`) and after how many layers information crosses it (:func:`reach_depth`),
which /sinks draws; what a fill becomes in a dtype and which rows a softmax without the
all-masked guard would turn into 0/0 (:func:`stored_fill`, :func:`undefined_rows`,
:func:`fill_comparison`), which /masking draws. What those pages point out is in
:mod:`core.findings.masking` and :mod:`core.findings.sinks`.
"""

import math

import numpy as np

from core.softmax_numerics import softmax

MASK_FILL = -np.inf
LARGE_NEGATIVE = -1e9


class MaskTypeError(TypeError):
    """A mask that is not boolean (e.g. PyTorch's additive float mask)."""


def as_mask(mask: np.ndarray | list) -> np.ndarray:
    """``mask`` as a boolean array (True = may attend), or :class:`MaskTypeError` if it holds
    anything but booleans: an additive float mask (0 keep, −inf hide) or 0/1 integers are
    never guessed at. Shapes: any -> same."""
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise MaskTypeError(
            f"attention masks are boolean (True = may attend), got dtype {arr.dtype}. An "
            "additive mask (0 = keep, -inf = hide, as PyTorch's float attn_mask) converts "
            "with `mask = additive == 0`; a 0/1 mask with `mask = m.astype(bool)`."
        )
    return arr


def causal_mask(n: int, past: int = 0) -> np.ndarray:
    """Decoder mask: token ``i`` may attend to tokens ``0..i``.

    With ``past`` tokens already in a key/value cache, the ``n`` new tokens stand at
    positions ``past … past + n − 1``: each sees every cached token and the new ones up to
    itself (the last ``n`` rows of ``causal_mask(past + n)``). With fewer queries than keys
    the mask is aligned bottom-right, as in FlashAttention and PyTorch's
    ``causal_lower_right``; PyTorch's ``is_causal=True`` aligns top-left instead (query ``i``
    sees keys ``0..i`` whatever the number of keys), which is only the same when
    ``past = 0``.

    Shapes: -> bool ``(n, past + n)``; with ``past = 0`` the square lower triangle (with
    diagonal) is True.
    """
    return np.tril(np.ones((n, past + n), dtype=bool), k=past)


def sliding_window_mask(n: int, window: int, sinks: int = 0) -> np.ndarray:
    """Causal mask that keeps only the last ``window`` tokens, plus the first ``sinks``.

    Token ``i`` may attend to ``j`` when ``j <= i`` and either ``i − window < j`` (the
    window, itself included) or ``j < sinks`` (the "attention sink" tokens a streaming cache
    keeps). ``window >= n`` with no sinks is :func:`causal_mask`.

    Shapes: -> bool ``(n, n)``, True = may attend.
    """
    if window < 1:
        raise ValueError(f"window must be at least 1 (the token itself), got {window}")
    if sinks < 0:
        raise ValueError(f"sinks must be 0 or more, got {sinks}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]  # (n, 1), (1, n)
    return (j <= i) & ((j > i - window) | (j < sinks))  # (n, n)


def window_reach(window: int, layers: int) -> int:
    """How many positions back a token's information can come from after ``layers`` layers
    of sliding-window attention: each layer adds ``window − 1`` (the window holds the token
    itself), so ``(window − 1) · layers``.

    Shapes: scalars -> int.
    """
    if window < 1 or layers < 0:
        raise ValueError(f"need window >= 1 and layers >= 0, got {window} and {layers}")
    return (window - 1) * layers


def receptive_field(mask: np.ndarray, layers: int) -> np.ndarray:
    """Which tokens can reach which after ``layers`` layers that all use ``mask``: the
    boolean matrix power ``mask^layers`` (``i`` reaches ``j`` if some path
    ``i -> k -> … -> j`` follows visible entries, one per layer).

    Shapes: bool ``(n, n)`` -> bool ``(n, n)``; 0 layers gives the identity.
    """
    step = np.asarray(mask, dtype=float)  # (n, n) 0/1: path counts stay exact in float64
    reach = np.eye(step.shape[0], dtype=bool)  # (n, n)
    for _ in range(layers):
        reach = (reach @ step) > 0  # (n, n)
    return reach


# why a key is or is not visible to a query (mask_states)
WINDOW, SINK, TOO_FAR, FUTURE = 0, 1, 2, 3


def mask_states(n: int, window: int, sinks: int) -> np.ndarray:
    """Each (query, key) cell of :func:`sliding_window_mask`: :data:`WINDOW`
    (visible: one of the last ``window`` tokens), :data:`SINK` (visible only as one of the
    first ``sinks`` tokens), :data:`TOO_FAR` (hidden: before the window) or :data:`FUTURE`
    (hidden by the causal rule).

    Shapes: -> ``(n, n)`` int.
    """
    in_window = sliding_window_mask(n, window)  # (n, n)
    visible = sliding_window_mask(n, window, sinks)  # (n, n)
    past = causal_mask(n)  # (n, n)
    return np.select([in_window, visible, past], [WINDOW, SINK, TOO_FAR], default=FUTURE)  # (n, n)


def reach_depth(mask: np.ndarray, layers: int) -> np.ndarray:
    """After how many layers (1 … ``layers``) query ``i`` can first draw on token ``j``,
    every layer using ``mask`` (:func:`receptive_field`); 0 where it cannot
    within ``layers`` layers.

    Shapes: bool ``(n, n)`` -> int ``(n, n)``.
    """
    depth = np.zeros(np.shape(mask), dtype=int)  # (n, n)
    for layer in range(layers, 0, -1):  # the smallest layer count wins: fill from the top
        depth[receptive_field(mask, layer)] = layer
    return depth


def padding_mask(valid: np.ndarray | list) -> np.ndarray:
    """Mask out padding keys.

    Shapes: ``valid`` bool ``(..., n_k)`` (True = real token) -> bool ``(..., 1, n_k)``,
    which broadcasts against scores ``(..., n_q, n_k)``.
    """
    return np.asarray(valid, dtype=bool)[..., None, :]  # (..., 1, n_k)


def apply_mask(scores: np.ndarray, mask: np.ndarray | None, fill: float = MASK_FILL) -> np.ndarray:
    """Replace scores where ``mask`` is False by ``fill``.

    Shapes: ``scores`` ``(..., n_q, n_k)``, ``mask`` bool broadcastable to it -> same as
    ``scores``. ``mask=None`` returns the scores unchanged.
    """
    if mask is None:
        return scores
    return np.where(as_mask(mask), scores, fill)


SMALL_NEGATIVE = -1e4  # the "large negative" of the original BERT code; finite in float16


def padded_valid(n_real: int, n_pad: int, side: str = "right") -> np.ndarray:
    """Which positions of a sentence padded with ``n_pad`` [PAD] tokens are real.

    ``side="right"`` appends the padding, ``"left"`` puts it first (as batched decoders do).
    Shapes: -> bool ``(n_real + n_pad,)``, True = real token.
    """
    real, pad = np.ones(n_real, dtype=bool), np.zeros(n_pad, dtype=bool)
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left', got {side!r}")
    return np.concatenate([real, pad] if side == "right" else [pad, real])


def pad_rows(x: np.ndarray, n_pad: int, side: str = "right") -> np.ndarray:
    """Add ``n_pad`` zero embedding rows for [PAD] tokens (like ``nn.Embedding``'s padding_idx).

    Shapes: ``x`` ``(n, d_model)`` -> ``(n + n_pad, d_model)``.
    """
    zeros = np.zeros((n_pad, x.shape[-1]), dtype=x.dtype)  # (n_pad, d_model)
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left', got {side!r}")
    return np.concatenate([x, zeros] if side == "right" else [zeros, x])


def combine_masks(n: int, causal: bool, valid: np.ndarray | list | None = None) -> np.ndarray:
    """One mask from the causal rule and a key padding mask (both optional).

    Shapes: ``valid`` bool ``(n,)`` (True = real token) -> bool ``(n, n)``; all True when
    neither rule is on.
    """
    mask = causal_mask(n) if causal else np.ones((n, n), dtype=bool)
    if valid is not None:
        mask = mask & padding_mask(valid)  # (1, n) broadcasts over the query rows -> (n, n)
    return mask


def fully_masked_rows(mask: np.ndarray) -> np.ndarray:
    """Queries that may attend to no key at all.

    Shapes: bool ``(..., n_q, n_k)`` -> bool ``(..., n_q)``.
    """
    return ~as_mask(mask).any(axis=-1)


def row_sums(weights: np.ndarray) -> np.ndarray:
    """Total weight of each query's row.

    Shapes: ``(..., n_q, n_k)`` -> ``(..., n_q)``.
    """
    return np.sum(weights, axis=-1)


def future_blank(weights: np.ndarray) -> np.ndarray:
    """Causal weights with the cells a query may not see (keys after it) as NaN, so a chart
    draws them as "not there" instead of as weight 0.

    Shapes: ``(..., n, n)`` -> ``(..., n, n)`` float.
    """
    return np.where(causal_mask(weights.shape[-1]), weights, np.nan)


def _filled(
    scores: np.ndarray, mask: np.ndarray, fill: float, temperature: float, dtype: str
) -> np.ndarray:
    """Scores in ``dtype`` with masked entries set to ``fill``, then divided by the temperature.

    Shapes: ``(..., n_q, n_k)`` -> same. Values too large for ``dtype`` become ±inf, as in
    real float16 code.
    """
    with np.errstate(over="ignore"):
        s = np.asarray(scores, dtype=dtype)
        return apply_mask(s, mask, np.asarray(fill, dtype=dtype)) / temperature


def stored_fill(fill: float, dtype: str, temperature: float = 1.0) -> float:
    """The number a masked score becomes once stored in ``dtype`` and divided by ``temperature``.

    Shapes: scalars. ``stored_fill(-1e9, "float16")`` is ``-inf`` (float16 stops at 65504).
    """
    return float(_filled(np.zeros(1), np.zeros(1, dtype=bool), fill, temperature, dtype)[0])


def overflow_temperature(fill: float, dtype: str) -> float:
    """Below this temperature ``fill / temperature`` no longer fits in ``dtype`` and becomes −∞.

    Shapes: scalars. ``inf`` when ``fill`` is already too large to store (or is −∞).
    """
    top = float(np.finfo(dtype).max)
    return math.inf if abs(fill) > top else abs(fill) / top


def masked_softmax(
    scores: np.ndarray,
    mask: np.ndarray,
    fill: float = MASK_FILL,
    temperature: float = 1.0,
    dtype: str = "float64",
) -> np.ndarray:
    """Mask with ``fill`` and take the softmax, all in ``dtype`` (e.g. to show float16 effects).

    Shapes: ``scores`` ``(..., n_q, n_k)``, ``mask`` bool broadcastable -> weights, same
    shape, in ``dtype``. Rows that end up all −∞ get zeros (the softmax policy).
    """
    with np.errstate(over="ignore"):
        return softmax(_filled(scores, mask, fill, 1.0, dtype), temperature=temperature)


def undefined_rows(
    scores: np.ndarray,
    mask: np.ndarray,
    fill: float = MASK_FILL,
    temperature: float = 1.0,
    dtype: str = "float64",
) -> np.ndarray:
    """Rows a softmax *without* the all-masked guard would turn into 0/0: every entry −∞.

    Shapes: ``(..., n_q, n_k)`` -> bool ``(..., n_q)``.
    """
    return np.isneginf(_filled(scores, mask, fill, temperature, dtype)).all(axis=-1)


def fill_comparison(
    scores: np.ndarray,
    mask: np.ndarray,
    v: np.ndarray,
    fills: list[float],
    temperature: float = 1.0,
    dtype: str = "float64",
) -> tuple[np.ndarray, np.ndarray]:
    """One query's weights and output under each fill value.

    Shapes: ``scores`` ``(n_k,)``, ``mask`` bool ``(n_k,)``, ``v`` ``(n_k, d_v)``, ``m`` fills
    -> ``(weights (m, n_k), outputs (m, d_v))``, both float64.
    """
    rows = [masked_softmax(scores, mask, f, temperature, dtype) for f in fills]
    weights = np.stack(rows).astype(np.float64)  # (m, n_k)
    return weights, weights @ v  # (m, n_k), (m, d_v)
