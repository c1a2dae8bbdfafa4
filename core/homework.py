"""Homework checking: the exercises' exact inputs, a catalogue of common mistakes, and a
diagnosis that says which mistake an uploaded result was made with.

The inputs are lesson 002's (``lesson_inputs`` and ``init_projections`` with the same seed),
so with the defaults (n = 6, d_model = 8, d_k = d_v = 4, seed 42) exercise 1's answer is
exactly the lesson's output.

Every mistake is one small pure function that computes what a buggy implementation returns
on the same inputs. Each belongs to one of the five steps of attention:

    1 project (x @ W, split into heads)   2 score (Q Kᵀ)   3 scale (÷ √d_k)
    4 softmax (mask just before it)        5 weighted sum (mix the values, merge, W_O)

A diagnosis compares the upload with the right answer first (so a right answer is never
called a mistake) and then with every mistake whose result differs from the right one
(a mistake that changes nothing on these inputs cannot be told apart, so it is skipped).

Comparison: within ``tol`` (1e-6 for float64 results, 1e-4 for float32) of ``max(1, |expected|)``
per cell; NaN and ±inf must sit in the same cells on both sides.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from core.attention import scaled_dot_product_attention
from core.masks import apply_mask, causal_mask
from core.multihead import merge_heads, split_heads
from core.projections import init_projections, lesson_inputs, xavier_std
from core.softmax import softmax, softmax_naive

EXERCISES = (1, 2, 3, 4)
STEPS = ("project", "score", "scale", "softmax", "mix")  # the five steps, numbered from 1
TOL_FLOAT64 = 1e-6
TOL_FLOAT32 = 1e-4
# Exercise 4: (offset, spread) of each row of logits, cycled. Rows 3, 4 and 6 are far beyond
# what exp() can take in float64 (it overflows above ≈ 709.78, underflows below ≈ −745).
LOGIT_ROWS = ((0.0, 1.0), (0.0, 10.0), (1000.0, 1.0), (-1000.0, 1.0), (0.0, 100.0), (800.0, 50.0))

Result = tuple[np.ndarray, np.ndarray]  # (output, weights) of one attention pass


@dataclass(frozen=True)
class Homework:
    """One exercise and its sizes. ``d_k`` is per head (and ``d_v = d_k``)."""

    exercise: int = 1  # 1 attention, 2 causal attention, 3 multi-head, 4 stable softmax
    n: int = 6
    d_model: int = 8
    d_k: int = 4
    h: int = 2
    seed: int = 42

    def __post_init__(self) -> None:
        if self.exercise not in EXERCISES:
            raise ValueError(f"exercise must be one of {EXERCISES}, got {self.exercise}")
        if min(self.n, self.d_model, self.d_k, self.h) < 1:
            raise ValueError("n, d_model, d_k and h must be positive")


# ---------------------------------------------------------------------------- inputs


def multihead_weights(
    d_model: int, d_k: int, h: int, seed: int = 42
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V ``(d_model, h*d_k)`` and W_O ``(h*d_k, d_model)``, Xavier-normal, drawn
    in the order Q, K, V, O from one ``default_rng(seed)``.

    When ``h * d_k == d_model`` these are exactly :func:`core.multihead.init_multihead`'s.
    """
    rng = np.random.default_rng(seed)
    width = h * d_k
    std = xavier_std(d_model, width)
    w_q, w_k, w_v = (rng.normal(0.0, std, (d_model, width)) for _ in range(3))
    return w_q, w_k, w_v, rng.normal(0.0, xavier_std(width, d_model), (width, d_model))


def stability_logits(n: int, seed: int = 42) -> np.ndarray:
    """Exercise 4's logits: row ``i`` is ``offset + spread * z`` with ``z`` standard normal
    and ``(offset, spread)`` from :data:`LOGIT_ROWS` (cycled), so some rows are huge.

    Shapes: -> ``(n, n)``.
    """
    z = np.random.default_rng(seed).normal(0.0, 1.0, (n, n))
    offset, spread = np.array([LOGIT_ROWS[i % len(LOGIT_ROWS)] for i in range(n)]).T  # (n,) ×2
    return offset[:, None] + spread[:, None] * z  # (n, n)


def homework_inputs(hw: Homework) -> dict[str, np.ndarray]:
    """The exercise's named input arrays, as the student downloads them.

    Exercises 1–2: ``X (n, d_model)``, ``W_Q``/``W_K``/``W_V (d_model, d_k)`` (lesson 002's),
    exercise 2 also ``mask`` bool ``(n, n)`` (True = may attend). Exercise 3: ``X``,
    ``W_Q``/``W_K``/``W_V (d_model, h*d_k)``, ``W_O (h*d_k, d_model)``. Exercise 4:
    ``logits (n, n)``.
    """
    if hw.exercise == 4:
        return {"logits": stability_logits(hw.n, hw.seed)}
    x = lesson_inputs(hw.n, hw.d_model, hw.seed)
    if hw.exercise == 3:
        w_q, w_k, w_v, w_o = multihead_weights(hw.d_model, hw.d_k, hw.h, hw.seed)
        return {"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "W_O": w_o}
    w_q, w_k, w_v = init_projections(hw.d_model, hw.d_k, hw.d_k, hw.seed)
    mask = {"mask": causal_mask(hw.n)} if hw.exercise == 2 else {}
    return {"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, **mask}


def reference_attention(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """The right answer of exercises 1–2.

    Shapes: ``x`` ``(n, d_model)``, ``w_q``/``w_k`` ``(d_model, d_k)``, ``w_v``
    ``(d_model, d_v)``, ``mask`` bool ``(n, n)`` or None -> ``(output (n, d_v), weights (n, n))``.
    """
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask)


def reference_multihead(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """The right answer of exercise 3 (``d_k`` may differ from ``d_model / h``).

    Shapes: ``x`` ``(n, d_model)``, ``w_q``/``w_k``/``w_v`` ``(d_model, h*d_k)``, ``w_o``
    ``(h*d_k, d_model)`` -> ``(output (n, d_model), weights (h, n, n))``.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h)


def homework_answer(hw: Homework, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The right results for the exercise, by part name (see :func:`answer_parts`)."""
    if hw.exercise == 4:
        return {"probs": softmax(inputs["logits"])}
    if hw.exercise == 3:
        out, weights = reference_multihead(*_mh_args(inputs, hw.h))
    else:
        out, weights = reference_attention(*_attn_args(inputs))
    return {"output": out, "weights": weights}


def _attn_args(inputs: Mapping[str, np.ndarray]) -> tuple:
    return inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], inputs.get("mask")


def _mh_args(inputs: Mapping[str, np.ndarray], h: int) -> tuple:
    return inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], inputs["W_O"], h


# ------------------------------------------------------- mistakes in single-head attention


def _scores(q: np.ndarray, k: np.ndarray, divisor: float, mask: np.ndarray | None) -> np.ndarray:
    """``Q Kᵀ / divisor`` with the mask applied. Shapes: -> ``(..., n_q, n_k)``."""
    return apply_mask(q @ np.swapaxes(k, -1, -2) / divisor, mask)  # (..., n_q, n_k)


def no_scaling(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: the scores are not divided by √d_k (step 3, scale). The softmax gets scores
    √d_k times too spread out, so the weights come out too peaked.

    Shapes: as :func:`reference_attention`.
    """
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask, scale=False)


def scaled_by_dk(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: the scores are divided by d_k instead of √d_k (step 3, scale): the weights come
    out too flat. (Indistinguishable when d_k = 1.)

    Shapes: as :func:`reference_attention`.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(q, k, q.shape[-1], mask))  # (n, n)
    return weights @ v, weights


def softmax_wrong_axis(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: softmax over the queries (``axis=0``, the columns) instead of over the keys
    (step 4, softmax): columns sum to 1, rows do not.

    Shapes: as :func:`reference_attention`.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(q, k, math.sqrt(q.shape[-1]), mask), axis=-2)  # (n, n)
    return weights @ v, weights


def scores_transposed(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``K Qᵀ`` instead of ``Q Kᵀ`` (Q and K swapped, or K not transposed where it
    should be), so row i holds key i's scores against every query (step 2, score).

    Shapes: as :func:`reference_attention` (n_q = n_k = n).
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(k, q, math.sqrt(q.shape[-1]), mask))  # (n, n) from K Qᵀ
    return weights @ v, weights


def weights_not_output(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: the attention weights are returned as the output: the values are never mixed
    (step 5, weighted sum is missing).

    Shapes: -> ``(weights (n, n) in the output's place, weights (n, n))``.
    """
    _, weights = reference_attention(x, w_q, w_k, w_v, mask)
    return weights, weights


def mask_after_softmax(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: the mask zeroes the weights *after* the softmax instead of setting the scores
    to −∞ before it (step 4, softmax): the rows no longer sum to 1. None without a mask.

    Shapes: as :func:`reference_attention`.
    """
    if mask is None:
        return None
    _, full = reference_attention(x, w_q, w_k, w_v, None)
    weights = np.where(mask, full, 0.0)  # (n, n)
    return weights @ (x @ w_v), weights


def mask_missing(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: the mask is never applied (step 4: nothing happens before the softmax), so every
    token also sees the tokens after it. None without a mask.

    Shapes: as :func:`reference_attention`.
    """
    return None if mask is None else reference_attention(x, w_q, w_k, w_v, None)


def mask_upper(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: the wrong triangle is kept (``np.triu`` instead of ``np.tril``; step 4): token i
    sees the tokens after it and not the ones before. None without a mask.

    Shapes: as :func:`reference_attention`; the mask used is ``mask.T``.
    """
    return None if mask is None else reference_attention(x, w_q, w_k, w_v, mask.T)


# ------------------------------------------------------------- mistakes in multi-head


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Result:
    return scaled_dot_product_attention(q, k, v)


def _attend_unscaled(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Result:
    return scaled_dot_product_attention(q, k, v, scale=False)


def _attend_by_dk(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Result:
    weights = softmax(_scores(q, k, q.shape[-1], None))  # (h, n, n)
    return weights @ v, weights


def _split_by_reshape(a: np.ndarray, h: int) -> np.ndarray:
    return a.reshape(h, a.shape[-2], a.shape[-1] // h)  # (h, n, d): the wrong cells


def _merge_by_reshape(heads: np.ndarray) -> np.ndarray:
    h, n, d = heads.shape
    return heads.reshape(n, h * d)  # (n, h*d): inverse of the wrong split


def _merge_interleaved(heads: np.ndarray) -> np.ndarray:
    h, n, d = heads.shape
    return heads.transpose(1, 2, 0).reshape(n, d * h)  # (n, d*h): feature-major


def _merge_reversed(heads: np.ndarray) -> np.ndarray:
    return merge_heads(heads[::-1])  # (n, h*d): last head first


def _heads(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray | None,
    h: int,
    split: Callable[[np.ndarray, int], np.ndarray] = split_heads,
    attend: Callable[[np.ndarray, np.ndarray, np.ndarray], Result] = _attend,
    merge: Callable[[np.ndarray], np.ndarray] = merge_heads,
) -> Result:
    """Multi-head attention with each stage replaceable by a buggy one.

    Shapes: as :func:`reference_multihead`; ``w_o=None`` returns the concatenated heads.
    """
    # 1) project and split into heads
    q, k, v = (split(x @ w, h) for w in (w_q, w_k, w_v))  # (h, n, d_k), (h, n, d_k), (h, n, d_v)
    # 2) score 3) scale 4) softmax 5) mix — every head at once
    heads, weights = attend(q, k, v)  # (h, n, d_v), (h, n, n)
    # 5) merge the heads and project
    concat = merge(heads)  # (n, h*d_v)
    return (concat if w_o is None else concat @ w_o), weights


def mh_no_scaling(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: no ÷ √d_k in the heads (step 3, scale). Shapes: as :func:`reference_multihead`."""
    return _heads(x, w_q, w_k, w_v, w_o, h, attend=_attend_unscaled)


def mh_scaled_by_dk(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the heads divide by d_k, not √d_k (step 3). Shapes: as :func:`reference_multihead`."""
    return _heads(x, w_q, w_k, w_v, w_o, h, attend=_attend_by_dk)


def heads_no_transpose(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the heads are split with ``reshape(h, n, d_k)`` and no transpose (step 1,
    project and split): each "head" gets pieces of several tokens. Merged back the same way.

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, split=_split_by_reshape, merge=_merge_by_reshape)


def heads_wrong_order(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the heads are merged feature by feature (``transpose(1, 2, 0)``) instead of head
    after head, so W_O multiplies the wrong columns (step 5, merge). Weights are unaffected.

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, merge=_merge_interleaved)


def heads_reversed(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the heads are concatenated last to first (step 5, merge).

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, merge=_merge_reversed)


def wo_forgotten(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the concatenated heads are returned without the final ``@ W_O`` (step 5).

    Shapes: -> ``(concat (n, h*d_v), weights (h, n, n))``.
    """
    return _heads(x, w_q, w_k, w_v, None, h)


def linear_layout(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result | None:
    """Bug: every weight is used as ``x @ W.T``, PyTorch's ``nn.Linear`` layout, while these
    matrices are meant as ``x @ W`` (step 1, project). Only possible when the matrices are
    square (``h * d_k == d_model``); None otherwise.

    Shapes: as :func:`reference_multihead`.
    """
    if w_q.shape[0] != w_q.shape[1] or w_o.shape[0] != w_o.shape[1]:
        return None
    return _heads(x, w_q.T, w_k.T, w_v.T, w_o.T, h)


# --------------------------------------------------------------- mistakes in softmax


def no_max_subtraction(logits: np.ndarray, dtype: str = "float64") -> np.ndarray:
    """Bug: ``exp(z) / sum(exp(z))`` without subtracting the row maximum first (step 4,
    softmax). Identical to the stable softmax unless ``exp`` overflows (or every term
    underflows): then the row turns into NaN. Computed in ``dtype`` (float32 overflows
    above ≈ 88.7, float64 above ≈ 709.8).

    Shapes: ``(..., n)`` -> ``(..., n)``.
    """
    return softmax_naive(np.asarray(logits).astype(dtype))


def softmax_columns(logits: np.ndarray) -> np.ndarray:
    """Bug: softmax down the columns (``axis=0``) instead of along each row (step 4).

    Shapes: ``(n, m)`` -> ``(n, m)``; columns sum to 1.
    """
    return softmax(logits, axis=0)


# ---------------------------------------------------------------------- the catalogue


@dataclass(frozen=True)
class Mistake:
    """One known bug: its id (a catalog key of the page), its step (1–5) and its function."""

    id: str
    step: int
    fn: Callable[..., object]


ATTENTION_MISTAKES = (
    Mistake("no_scaling", 3, no_scaling),
    Mistake("scaled_by_dk", 3, scaled_by_dk),
    Mistake("softmax_wrong_axis", 4, softmax_wrong_axis),
    Mistake("scores_transposed", 2, scores_transposed),
    Mistake("weights_not_output", 5, weights_not_output),
    Mistake("mask_after_softmax", 4, mask_after_softmax),
    Mistake("mask_missing", 4, mask_missing),
    Mistake("mask_upper", 4, mask_upper),
)
MULTIHEAD_MISTAKES = (
    Mistake("no_scaling", 3, mh_no_scaling),
    Mistake("scaled_by_dk", 3, mh_scaled_by_dk),
    Mistake("heads_no_transpose", 1, heads_no_transpose),
    Mistake("heads_wrong_order", 5, heads_wrong_order),
    Mistake("heads_reversed", 5, heads_reversed),
    Mistake("wo_forgotten", 5, wo_forgotten),
    Mistake("linear_layout", 1, linear_layout),
)
SOFTMAX_MISTAKES = (
    Mistake("no_max_subtraction", 4, no_max_subtraction),
    Mistake("softmax_wrong_axis", 4, softmax_columns),
)
MISTAKE_STEPS = {
    m.id: m.step for m in (*ATTENTION_MISTAKES, *MULTIHEAD_MISTAKES, *SOFTMAX_MISTAKES)
}


# --------------------------------------------------------------------- comparison


def tolerance(dtype: np.dtype | str) -> float:
    """1e-6 for float64 (and integer) results, 1e-4 for float32 or narrower floats."""
    dt = np.dtype(dtype)
    return TOL_FLOAT32 if np.issubdtype(dt, np.floating) and dt.itemsize <= 4 else TOL_FLOAT64


def _bad_cells(candidate: np.ndarray, reference: np.ndarray, tol: float) -> np.ndarray:
    """Cells that disagree: beyond ``tol * max(1, |reference|)``, or a NaN/±inf on one side
    that the other does not have. Shapes: equal shapes -> bool, same shape."""
    c, r = np.asarray(candidate, dtype=float), np.asarray(reference, dtype=float)
    both = np.isfinite(c) & np.isfinite(r)
    with np.errstate(invalid="ignore"):
        far = np.abs(c - r) > tol * np.maximum(1.0, np.abs(r))
        same_special = (np.isnan(c) & np.isnan(r)) | (~np.isnan(c) & (c == r))
    return np.where(both, far, ~same_special)


def matches(candidate: np.ndarray, reference: np.ndarray, tol: float) -> bool:
    """Same shape and every cell within tolerance (NaN/±inf in the same cells)."""
    c, r = np.asarray(candidate), np.asarray(reference)
    return c.shape == r.shape and not _bad_cells(c, r, tol).any()


@dataclass(frozen=True)
class Comparison:
    """An upload held against the right answer (equal shapes)."""

    equal: bool
    tol: float
    error: np.ndarray  # candidate − reference, NaN where either side is not finite
    bad: np.ndarray  # bool, the cells that disagree
    max_abs: float  # largest |error| over cells finite on both sides (0.0 if none)
    max_abs_at: tuple[int, ...]
    max_rel: float  # largest |error| / max(|reference|, tiny)
    max_rel_at: tuple[int, ...]
    first_row: tuple[int, ...] | None  # index of the first row (all but the last axis) that
    # holds a disagreeing cell, or None


def compare(candidate: np.ndarray, reference: np.ndarray, tol: float) -> Comparison:
    """Cell-by-cell comparison of two arrays of the same shape.

    Shapes: ``candidate`` and ``reference`` ``(..., m)`` -> :class:`Comparison`.
    """
    c, r = np.asarray(candidate, dtype=float), np.asarray(reference, dtype=float)
    if c.shape != r.shape:
        raise ValueError(f"shapes differ: {c.shape} vs {r.shape}")
    both = np.isfinite(c) & np.isfinite(r)
    error = np.where(both, c - np.where(both, r, 0.0), np.nan)  # NaN where either is not finite
    abs_err = np.where(both, np.abs(error), -1.0)
    rel_err = np.where(both, abs_err / np.maximum(np.abs(r), np.finfo(float).tiny), -1.0)
    bad = _bad_cells(c, r, tol)
    rows = bad.reshape(-1, c.shape[-1]).any(axis=-1) if c.size else np.zeros(0, bool)  # (r,)

    def top(values: np.ndarray) -> tuple[float, tuple[int, ...]]:
        if not values.size or values.max() <= 0:  # no finite cell, or no error at all
            return max(float(values.max(initial=0.0)), 0.0), ()
        at = np.unravel_index(int(np.argmax(values)), values.shape)
        return float(values[at]), tuple(int(i) for i in at)

    max_abs, abs_at = top(abs_err)
    max_rel, rel_at = top(rel_err)
    first = None
    if rows.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(rows)), c.shape[:-1]))
    return Comparison(not bad.any(), tol, error, bad, max_abs, abs_at, max_rel, rel_at, first)


# ---------------------------------------------------------------------- diagnosis


def _diagnose(
    candidate: np.ndarray,
    correct: Mapping[str, np.ndarray],
    wrong: list[tuple[str, Mapping[str, np.ndarray]]],
    part: str | None,
    tol: float | None,
) -> str | None:
    """ "correct", the first mistake whose result for ``part`` matches, or None.

    ``correct`` and each mistake's results map part names to arrays; ``part=None`` accepts
    a candidate for any part. A mistake whose result equals the right one is skipped.
    """
    c = np.asarray(candidate)
    if not np.issubdtype(c.dtype, np.number) or c.dtype.kind == "c":
        return None
    tol = tolerance(c.dtype) if tol is None else tol
    parts = list(correct) if part is None else [part]
    if any(matches(c, correct[p], tol) for p in parts):
        return "correct"
    for mistake_id, results in wrong:
        for p in parts:
            own = results.get(p)
            if own is not None and not matches(own, correct[p], tol) and matches(c, own, tol):
                return mistake_id
    return None


def _as_parts(result: Result | None) -> dict[str, np.ndarray]:
    return {} if result is None else {"output": result[0], "weights": result[1]}


def attention_mistake_results(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    mask: np.ndarray | None = None,
) -> list[tuple[str, dict[str, np.ndarray]]]:
    """Every single-head mistake's ``{"output": …, "weights": …}`` on these inputs (mistakes
    that need a mask are left out without one). ``weights_not_output`` has only an output."""
    results = []
    for m in ATTENTION_MISTAKES:
        parts = _as_parts(m.fn(x, w_q, w_k, w_v, mask))
        if m.id == "weights_not_output":
            parts.pop("weights", None)  # its weights are the right ones
        if parts:
            results.append((m.id, parts))
    return results


def diagnose_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    candidate: np.ndarray,
    *,
    causal: bool = False,
    part: str | None = None,
    tol: float | None = None,
) -> str | None:
    """Which mistake (if any) made ``candidate``, a student's result of exercises 1–2.

    Shapes: ``x`` ``(n, d_model)``, ``w_q``/``w_k`` ``(d_model, d_k)``, ``w_v``
    ``(d_model, d_v)``; ``candidate`` the output ``(n, d_v)`` or the weights ``(n, n)``.
    ``part`` ("output"/"weights") says which one it is meant to be (None: either; then
    ``weights_not_output`` cannot be told from right weights). ``tol`` defaults to
    :func:`tolerance` of the candidate's dtype.

    Returns ``"correct"``, a mistake id from :data:`ATTENTION_MISTAKES`, or None (no match).
    """
    mask = causal_mask(x.shape[-2]) if causal else None
    correct = _as_parts(reference_attention(x, w_q, w_k, w_v, mask))
    return _diagnose(
        candidate, correct, attention_mistake_results(x, w_q, w_k, w_v, mask), part, tol
    )


def multihead_mistake_results(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> list[tuple[str, dict[str, np.ndarray]]]:
    """Every multi-head mistake's ``{"output": …, "weights": …}`` on these inputs."""
    results = [(m.id, _as_parts(m.fn(x, w_q, w_k, w_v, w_o, h))) for m in MULTIHEAD_MISTAKES]
    return [(mistake_id, parts) for mistake_id, parts in results if parts]


def diagnose_multihead(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    h: int,
    candidate: np.ndarray,
    *,
    part: str | None = None,
    tol: float | None = None,
) -> str | None:
    """Which mistake (if any) made ``candidate``, a student's result of exercise 3.

    Shapes: as :func:`reference_multihead`; ``candidate`` the output ``(n, d_model)`` or the
    per-head weights ``(h, n, n)``. Returns ``"correct"``, an id from
    :data:`MULTIHEAD_MISTAKES`, or None.
    """
    correct = _as_parts(reference_multihead(x, w_q, w_k, w_v, w_o, h))
    return _diagnose(
        candidate, correct, multihead_mistake_results(x, w_q, w_k, w_v, w_o, h), part, tol
    )


def diagnose_softmax(
    logits: np.ndarray, candidate: np.ndarray, *, tol: float | None = None
) -> str | None:
    """Which mistake (if any) made ``candidate``, a student's softmax of each row of
    ``logits`` (exercise 4).

    ``no_max_subtraction`` is reported only when the upload has NaN/±inf where the stable
    softmax has none, as the naive formula gives in float64 or float32 (elsewhere the
    two are identical). Shapes: ``logits`` ``(n, m)``, ``candidate`` ``(n, m)``.
    Returns ``"correct"``, an id from :data:`SOFTMAX_MISTAKES`, or None.
    """
    wrong = [
        ("no_max_subtraction", {"probs": no_max_subtraction(logits, dtype)})
        for dtype in ("float64", "float32")
    ]
    wrong.append(("softmax_wrong_axis", {"probs": softmax_columns(logits)}))
    return _diagnose(candidate, {"probs": softmax(logits)}, wrong, "probs", tol)


def diagnose_homework(
    hw: Homework,
    inputs: Mapping[str, np.ndarray],
    candidate: np.ndarray,
    part: str,
    tol: float | None = None,
) -> str | None:
    """:func:`diagnose_attention`, :func:`diagnose_multihead` or :func:`diagnose_softmax`
    for the exercise ``hw`` (``inputs`` from :func:`homework_inputs`)."""
    if hw.exercise == 4:
        return diagnose_softmax(inputs["logits"], candidate, tol=tol)
    if hw.exercise == 3:
        return diagnose_multihead(*_mh_args(inputs, hw.h), candidate, part=part, tol=tol)
    x, w_q, w_k, w_v, _ = _attn_args(inputs)
    return diagnose_attention(
        x, w_q, w_k, w_v, candidate, causal=hw.exercise == 2, part=part, tol=tol
    )


def mistake_result(
    hw: Homework, inputs: Mapping[str, np.ndarray], mistake_id: str, part: str
) -> np.ndarray | None:
    """What the mistake ``mistake_id`` returns for ``part`` on the exercise's inputs (None if
    it does not apply), e.g. to show how far an upload is from it."""
    if hw.exercise == 4:
        found = {m.id: m.fn for m in SOFTMAX_MISTAKES}.get(mistake_id)
        return None if found is None else np.asarray(found(inputs["logits"]))
    if hw.exercise == 3:
        results = multihead_mistake_results(*_mh_args(inputs, hw.h))
    else:
        results = attention_mistake_results(*_attn_args(inputs))
    return dict(results).get(mistake_id, {}).get(part)
