"""Homework checking: the exercises' exact inputs, a table of common mistakes, and a
diagnosis that says which mistake an uploaded result was made with.

The inputs are lesson 002's (``lesson_inputs`` and ``init_projections`` with the same seed),
so with the defaults (n = 6, d_model = 8, d_k = d_v = 4, seed 42) exercise 1's answer is
exactly the lesson's output.

Every mistake is one row of :data:`MISTAKES`, a small frozen :class:`Mistake`:

- **what it is**: an id (the page's catalog key for its name, explanation and fix) and the
  step of attention it happens in, one of five:

      1 project (x @ W, split into heads)   2 score (Q Kᵀ)   3 scale (÷ √d_k)
      4 softmax (mask just before it)        5 weighted sum (mix the values, merge, W_O)

- **how to make it**: a short function that computes what the buggy code returns on the
  exercise's inputs; its docstring quotes the mistaken line;
- **how it is recognised**: a recogniser that holds the upload against that result
  (usually: the same numbers).

Adding a mistake is adding one function and one row. A diagnosis compares the upload with
the right answer first (so a right answer is never called a mistake), then goes down the
table; a mistake that changes nothing on these inputs cannot be told apart, so it is skipped.

Comparison: within ``tol`` (1e-6 for float64 results, 1e-4 for float32) of ``max(1, |expected|)``
per cell; NaN and ±inf must sit in the same cells on both sides.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from core.attention import scaled_dot_product_attention
from core.masks import apply_mask, causal_mask, row_sums
from core.multihead import merge_heads, multi_head_attention, split_heads
from core.projections import init_projections, lesson_inputs, xavier_std
from core.softmax_numerics import softmax, softmax_naive

EXERCISES = (1, 2, 3, 4)
STEPS = ("project", "score", "scale", "softmax", "mix")  # the five steps, numbered from 1
KINDS = {1: "attention", 2: "attention", 3: "multihead", 4: "softmax"}  # by exercise
TOL_FLOAT64 = 1e-6
TOL_FLOAT32 = 1e-4
# A right value below this share of the answer's largest |value| counts as "near 0": there a
# relative error means nothing (0.1 against 0 is infinitely wrong), the absolute one says it.
NEAR_ZERO = 1e-3
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
    return multi_head_attention(x, w_q, w_k, w_v, w_o, h)


REFERENCES: dict[str, Callable[..., Result | np.ndarray]] = {
    "attention": reference_attention,
    "multihead": reference_multihead,
    "softmax": softmax,
}  # the right answer of each kind of exercise, taking the arguments of :func:`exercise_args`


def exercise_args(hw: Homework, inputs: Mapping[str, np.ndarray]) -> tuple:
    """The exercise's inputs in the order its reference and its mistakes take them:
    ``(x, w_q, w_k, w_v, mask)``, ``(x, w_q, w_k, w_v, w_o, h)`` or ``(logits,)``."""
    if hw.exercise == 4:
        return (inputs["logits"],)
    x, w_q, w_k, w_v = inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"]
    if hw.exercise == 3:
        return x, w_q, w_k, w_v, inputs["W_O"], hw.h
    return x, w_q, w_k, w_v, inputs.get("mask")


def homework_answer(hw: Homework, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The right results for the exercise, by part name: ``output`` and ``weights``, or
    ``probs`` in exercise 4."""
    kind = KINDS[hw.exercise]
    return as_parts(REFERENCES[kind](*exercise_args(hw, inputs)))


def as_parts(result: Result | np.ndarray | None) -> dict[str, np.ndarray]:
    """A result by part name: ``(output, weights)`` of attention, ``probs`` of a softmax."""
    if result is None:
        return {}
    if isinstance(result, np.ndarray):
        return {"probs": result}
    return {"output": result[0], "weights": result[1]}


# ------------------------------------------------------- mistakes in single-head attention


def _scores(q: np.ndarray, k: np.ndarray, divisor: float, mask: np.ndarray | None) -> np.ndarray:
    """``Q Kᵀ / divisor`` with the mask applied. Shapes: -> ``(..., n_q, n_k)``."""
    return apply_mask(q @ np.swapaxes(k, -1, -2) / divisor, mask)  # (..., n_q, n_k)


def no_scaling(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``scores = Q @ K.T`` with no ``/ np.sqrt(d_k)`` (step 3, scale). The softmax
    gets scores √d_k times too spread out, so the weights come out too peaked.

    Shapes: as :func:`reference_attention`.
    """
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask, scale=False)


def scaled_by_dk(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``scores = Q @ K.T / d_k`` instead of ``/ np.sqrt(d_k)`` (step 3, scale): the
    weights come out too flat. (Indistinguishable when d_k = 1.)

    Shapes: as :func:`reference_attention`.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(q, k, q.shape[-1], mask))  # (n, n)
    return weights @ v, weights


def softmax_wrong_axis(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``softmax(scores, axis=0)``, over the queries (the columns) instead of over the
    keys (step 4, softmax): columns sum to 1, rows do not.

    Shapes: as :func:`reference_attention`.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(q, k, math.sqrt(q.shape[-1]), mask), axis=-2)  # (n, n)
    return weights @ v, weights


def scores_transposed(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``scores = K @ Q.T`` instead of ``Q @ K.T`` (Q and K swapped, or the transpose
    on the wrong matrix), so row i holds key i's scores against every query (step 2, score).

    Shapes: as :func:`reference_attention` (n_q = n_k = n).
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(k, q, math.sqrt(q.shape[-1]), mask))  # (n, n) from K Qᵀ
    return weights @ v, weights


def weights_not_output(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``return weights, weights``: the values are never mixed (step 5, weighted sum
    is missing). Its weights are the right ones, so only its output tells it.

    Shapes: -> ``(weights (n, n) in the output's place, weights (n, n))``.
    """
    _, weights = reference_attention(x, w_q, w_k, w_v, mask)
    return weights, weights


def mask_after_softmax(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: ``weights = softmax(scores) * mask``: the hidden weights are zeroed *after* the
    softmax instead of their scores set to −∞ before it (step 4, softmax), so the rows no
    longer sum to 1. None without a mask.

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
    """Bug: the line ``scores = np.where(mask, scores, -np.inf)`` is missing (step 4,
    softmax: nothing happens before it), so every token also sees the tokens after it.
    None without a mask.

    Shapes: as :func:`reference_attention`.
    """
    return None if mask is None else reference_attention(x, w_q, w_k, w_v, None)


def mask_upper(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: ``mask = np.triu(np.ones((n, n), bool))`` instead of ``np.tril`` (step 4): token i
    sees the tokens after it and not the ones before. None without a mask.

    Shapes: as :func:`reference_attention`; the mask used is ``mask.T``.
    """
    return None if mask is None else reference_attention(x, w_q, w_k, w_v, mask.T)


def mask_wrong_sign(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result | None:
    """Bug: ``scores = scores + mask * -1e9`` (step 4, softmax), copied from tutorials whose
    mask has 1 on the keys to *hide*, while here True (1) marks the keys a token *may* see:
    the visible keys are pushed down to −10⁹ and each token attends only where it must not.
    None without a mask.

    A row in which every key is visible comes out nearly right here (all its scores move
    by −10⁹), but uniform from ``np.where(mask, -1e9, scores)`` and NaN with ``-np.inf``:
    see :func:`same_where_it_differs`. Shapes: as :func:`reference_attention`.
    """
    if mask is None:
        return None
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(_scores(q, k, math.sqrt(q.shape[-1]), None) + mask * -1e9)  # (n, n)
    return weights @ v, weights


def own_projections(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> Result:
    """Bug: ``self.W_Q = np.random.randn(d_model, d_k)`` in a class's ``__init__`` (and the
    same for W_K, W_V), used instead of the downloaded matrices (step 1, project). Every
    number changes, but the weights keep the form of attention weights: this draw (seed 0)
    is one example, a student's own draw gives other numbers, so it is recognised by that
    form (:func:`valid_weights`), never by its numbers.

    Shapes: as :func:`reference_attention`.
    """
    rng = np.random.default_rng(0)
    own = (rng.standard_normal(w.shape) for w in (w_q, w_k, w_v))
    return reference_attention(x, *own, mask)


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
    """Bug: ``scores = Q @ K.transpose(0, 2, 1)`` in the heads, with no ``/ np.sqrt(d_k)``
    (step 3, scale). Shapes: as :func:`reference_multihead`."""
    return _heads(x, w_q, w_k, w_v, w_o, h, attend=_attend_unscaled)


def mh_scaled_by_dk(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: the heads' scores ``/ d_k`` instead of ``/ np.sqrt(d_k)`` (step 3, scale).
    Shapes: as :func:`reference_multihead`."""
    return _heads(x, w_q, w_k, w_v, w_o, h, attend=_attend_by_dk)


def heads_no_transpose(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: ``Q.reshape(h, n, d_k)`` with no transpose (step 1, project and split): each
    "head" gets pieces of several tokens. Merged back the same way.

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, split=_split_by_reshape, merge=_merge_by_reshape)


def heads_wrong_order(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: ``heads.transpose(1, 2, 0).reshape(n, h * d_v)``: the heads merged feature by
    feature instead of head after head, so W_O multiplies the wrong columns (step 5, merge).
    Weights are unaffected.

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, merge=_merge_interleaved)


def heads_reversed(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: ``np.concatenate(heads[::-1], axis=-1)``: the heads concatenated last to first
    (step 5, merge).

    Shapes: as :func:`reference_multihead`.
    """
    return _heads(x, w_q, w_k, w_v, w_o, h, merge=_merge_reversed)


def wo_forgotten(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: ``return concat`` instead of ``return concat @ W_O`` (step 5).

    Shapes: -> ``(concat (n, h*d_v), weights (h, n, n))``.
    """
    return _heads(x, w_q, w_k, w_v, None, h)


def linear_layout(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result | None:
    """Bug: ``Q = X @ W_Q.T`` (and the same for every weight), PyTorch's ``nn.Linear``
    layout, while these matrices are meant as ``X @ W`` (step 1, project). Only possible
    when the matrices are square (``h * d_k == d_model``); None otherwise.

    Shapes: as :func:`reference_multihead`.
    """
    if w_q.shape[0] != w_q.shape[1] or w_o.shape[0] != w_o.shape[1]:
        return None
    return _heads(x, w_q.T, w_k.T, w_v.T, w_o.T, h)


def mh_own_projections(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int
) -> Result:
    """Bug: ``self.W_Q = np.random.randn(d_model, h * d_k)`` in a class's ``__init__`` (and
    the same for W_K, W_V, W_O) instead of the downloaded matrices (step 1, project); see
    :func:`own_projections`. Shapes: as :func:`reference_multihead`."""
    rng = np.random.default_rng(0)
    own = (rng.standard_normal(w.shape) for w in (w_q, w_k, w_v, w_o))
    return _heads(x, *own, h)


# --------------------------------------------------------------- mistakes in softmax


def no_max_subtraction(logits: np.ndarray, dtype: str | None = None) -> np.ndarray:
    """Bug: ``np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)`` without subtracting the
    row maximum first (step 4, softmax). Identical to the stable softmax unless ``exp``
    overflows (or every term underflows): then the row turns into NaN. Computed in ``dtype``
    (the logits' own by default; float32 overflows above ≈ 88.7, float64 above ≈ 709.8).

    Shapes: ``(..., n)`` -> ``(..., n)``.
    """
    z = np.asarray(logits)
    return softmax_naive(z if dtype is None else z.astype(dtype))


def softmax_columns(logits: np.ndarray) -> np.ndarray:
    """Bug: ``softmax(logits, axis=0)``, down the columns instead of along each row (step 4).

    Shapes: ``(n, m)`` -> ``(n, m)``; columns sum to 1.
    """
    return softmax(logits, axis=0)


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
    with np.errstate(invalid="ignore", over="ignore"):
        far = np.abs(c - r) > tol * np.maximum(1.0, np.abs(r))
        same_special = (np.isnan(c) & np.isnan(r)) | (~np.isnan(c) & (c == r))
    return np.where(both, far, ~same_special)


def matches(candidate: np.ndarray, reference: np.ndarray, tol: float) -> bool:
    """Same shape and every cell within tolerance (NaN/±inf in the same cells)."""
    c, r = np.asarray(candidate), np.asarray(reference)
    return c.shape == r.shape and not _bad_cells(c, r, tol).any()


def _rows(a: np.ndarray) -> np.ndarray:
    """Every row of ``a`` (all axes but the last folded). Shapes: ``(..., m)`` -> ``(r, m)``."""
    return np.asarray(a).reshape(-1, np.shape(a)[-1])  # (r, m)


@dataclass(frozen=True)
class Comparison:
    """An upload held against the right answer (equal shapes)."""

    equal: bool
    tol: float
    error: np.ndarray  # candidate − reference, NaN where either side is not finite
    bad: np.ndarray  # bool, the cells that disagree
    max_abs: float  # largest |error| over cells finite on both sides (0.0 if none)
    max_abs_at: tuple[int, ...]
    max_rel: float  # largest |error| / |reference| where the reference is not near 0
    max_rel_at: tuple[int, ...]  # (see NEAR_ZERO; 0.0 and () if no such cell errs)
    first_row: tuple[int, ...] | None  # index of the first row (all but the last axis) that
    # holds a disagreeing cell, or None

    @property
    def bad_count(self) -> int:
        """How many cells disagree."""
        return int(self.bad.sum())

    @property
    def bad_rows(self) -> list[tuple[int, ...]]:
        """The rows (index over every axis but the last) that hold a disagreeing cell, in
        order."""
        return sorted({tuple(int(i) for i in idx[:-1]) for idx in np.argwhere(self.bad)})


def compare(candidate: np.ndarray, reference: np.ndarray, tol: float) -> Comparison:
    """Cell-by-cell comparison of two arrays of the same shape. The relative error counts
    only cells whose reference is at least :data:`NEAR_ZERO` of the reference's largest
    ``|value|``, so it stays a meaningful number (never ``|error| / 0``).

    Shapes: ``candidate`` and ``reference`` ``(..., m)`` -> :class:`Comparison`.
    """
    c, r = np.asarray(candidate, dtype=float), np.asarray(reference, dtype=float)
    if c.shape != r.shape:
        raise ValueError(f"shapes differ: {c.shape} vs {r.shape}")
    both = np.isfinite(c) & np.isfinite(r)
    biggest = np.finfo(float).max
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.clip(c - r, -biggest, biggest)  # 1e308 − (−1e308) is no ∞ on screen
    error = np.where(both, gap, np.nan)  # NaN where either side is not finite
    abs_err = np.where(both, np.abs(error), -1.0)
    scale = float(np.abs(r[both]).max(initial=0.0))
    counted = both & (np.abs(r) >= NEAR_ZERO * scale) & (r != 0)
    rel_err = np.where(counted, abs_err / np.where(counted, np.abs(r), 1.0), -1.0)
    bad = _bad_cells(c, r, tol)
    rows = _rows(bad).any(axis=-1) if c.size else np.zeros(0, bool)  # (r,)

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


def transposed_matches(candidate: np.ndarray, reference: np.ndarray, tol: float) -> bool:
    """Whether a matrix of the wrong shape is the right answer transposed (``out.T`` where
    ``out`` was meant).

    Shapes: ``candidate`` ``(m, n)``, ``reference`` ``(n, m)`` -> bool.
    """
    c = np.asarray(candidate)
    return c.ndim == 2 and matches(c.T, reference, tol)


def weight_sums(weights: np.ndarray) -> np.ndarray:
    """Each row's total of uploaded weights or probabilities (NaN where ∞ − ∞ meet): every
    row of a softmax sums to 1.

    Shapes: ``(..., n_k)`` -> ``(...)`` float.
    """
    with np.errstate(invalid="ignore"):
        return row_sums(np.asarray(weights).astype(float))


@dataclass(frozen=True)
class SumRange:
    """The smallest and largest row sum, or how many are NaN/±∞."""

    lo: float  # NaN when some sum is not finite
    hi: float
    nonfinite: int  # sums that are NaN or ±∞


def sum_range(sums: np.ndarray) -> SumRange:
    """Summarise row sums (:func:`weight_sums`).

    Shapes: ``(...)`` non-empty -> :class:`SumRange`.
    """
    bad = ~np.isfinite(sums)
    if bad.any():
        return SumRange(math.nan, math.nan, int(bad.sum()))
    return SumRange(float(sums.min()), float(sums.max()), 0)


# -------------------------------------------------------------------- recognisers


@dataclass(frozen=True)
class Held:
    """An upload held against one mistake: what that mistake's recogniser looks at."""

    candidate: np.ndarray  # the upload
    made: np.ndarray  # the mistake's result for the same part
    right: np.ndarray  # the right result for that part
    tol: float


def same(held: Held) -> bool:
    """The upload gives the mistake's numbers (within ``tol``), and those are not the right
    ones (a mistake that changes nothing on these inputs cannot be told apart)."""
    return not matches(held.made, held.right, held.tol) and matches(
        held.candidate, held.made, held.tol
    )


def same_where_it_differs(held: Held) -> bool:
    """The upload gives the mistake's numbers in every row the mistake changes (there is at
    least one); the rows it leaves right are not compared, for a mistake whose code can be
    written several ways that differ only there (see :func:`mask_wrong_sign`)."""
    c, made, right = held.candidate, held.made, held.right
    if np.shape(c) != np.shape(made) or np.shape(made) != np.shape(right):
        return False
    changed = _rows(_bad_cells(made, right, held.tol)).any(axis=-1)  # (r,)
    return bool(changed.any()) and matches(_rows(c)[changed], _rows(made)[changed], held.tol)


def _score_rank(weights: np.ndarray, noise: float) -> np.ndarray:
    """Rank of the scores behind softmax rows with every weight > 0: ``log w`` is the row
    of scores plus a constant, so ``log w`` minus each row's mean has the rank of the
    scores minus their row means. Singular values up to ``n * noise`` (``noise``: the weights'
    relative error) count as 0.

    Shapes: ``(..., n, n)`` -> ``(...)``.
    """
    logs = np.log(weights)  # (..., n, n)
    centred = logs - logs.mean(axis=-1, keepdims=True)  # (..., n, n)
    return (np.linalg.svd(centred, compute_uv=False) > weights.shape[-1] * noise).sum(axis=-1)


def valid_weights(held: Held) -> bool:
    """Weights right in form and wrong in number: finite, ≥ 0, every row summing to 1, zero
    wherever the right weights are (the hidden keys), and wrong in every row that has a
    choice (other queries and keys change them all; a row with one visible key is 1 there
    whatever the scores).

    Where it can be checked (no mask, every weight > 0) they must also have the low rank of
    attention scores: ``Q′ K′ᵀ`` with any queries and keys of width d_k has rank at most
    d_k, so random projections keep it and random weights (of full rank) do not pass.
    The right weights' own rank stands for d_k.
    """
    c, right, tol = np.asarray(held.candidate, dtype=float), held.right, held.tol
    if c.shape != right.shape or not np.isfinite(c).all():
        return False
    hidden = right == 0
    free = (~hidden).sum(axis=-1) > 1  # (..., n): rows whose weights depend on the scores
    right_rows = ~_bad_cells(c, right, tol).any(axis=-1)  # (..., n)
    if (c < -tol).any() or (np.abs(c[hidden]) > tol).any() or (right_rows & free).any():
        return False
    if (np.abs(c.sum(axis=-1) - 1.0) > c.shape[-1] * tol).any():
        return False
    if hidden.any() or (c <= 0).any():
        return True  # a zero has no log: the rank cannot be checked
    return bool((_score_rank(c, tol) <= _score_rank(right, 1e-10)).all())


# ---------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Mistake:
    """One known bug. What it is: ``id`` (its name, explanation and fix in the page's
    catalog, ``homework.mistake.<id>``) and ``step`` (1–5, see :data:`STEPS`). How to make
    it: ``make``, called with the ``kind`` of exercise's arguments (:func:`exercise_args`)
    once in each of ``precisions``. How it is recognised: ``recognise``, on each of ``parts``
    of the result (None: every part)."""

    id: str
    step: int
    kind: str  # "attention" (exercises 1–2), "multihead" (3) or "softmax" (4)
    make: Callable[..., Result | np.ndarray | None]
    recognise: Callable[[Held], bool] = same
    parts: tuple[str, ...] | None = None
    precisions: tuple[str, ...] = ("float64",)


# The order is the diagnosis's: the first row that recognises an upload names it, so a row
# that holds less than every number against the upload (some rows only, or only the form)
# comes after every row of its kind that holds them all.
MISTAKES = (
    Mistake("no_scaling",         3, "attention", no_scaling),
    Mistake("scaled_by_dk",       3, "attention", scaled_by_dk),
    Mistake("softmax_wrong_axis", 4, "attention", softmax_wrong_axis),
    Mistake("scores_transposed",  2, "attention", scores_transposed),
    Mistake("weights_not_output", 5, "attention", weights_not_output),
    Mistake("mask_after_softmax", 4, "attention", mask_after_softmax),
    Mistake("mask_missing",       4, "attention", mask_missing),
    Mistake("mask_upper",         4, "attention", mask_upper),
    Mistake("mask_wrong_sign",    4, "attention", mask_wrong_sign, same_where_it_differs),
    Mistake("own_projections",    1, "attention", own_projections, valid_weights, ("weights",)),
    Mistake("no_scaling",         3, "multihead", mh_no_scaling),
    Mistake("scaled_by_dk",       3, "multihead", mh_scaled_by_dk),
    Mistake("heads_no_transpose", 1, "multihead", heads_no_transpose),
    Mistake("heads_wrong_order",  5, "multihead", heads_wrong_order),
    Mistake("heads_reversed",     5, "multihead", heads_reversed),
    Mistake("wo_forgotten",       5, "multihead", wo_forgotten),
    Mistake("linear_layout",      1, "multihead", linear_layout),
    Mistake("own_projections",    1, "multihead", mh_own_projections, valid_weights, ("weights",)),
    Mistake("no_max_subtraction", 4, "softmax", no_max_subtraction,
            precisions=("float64", "float32")),
    Mistake("softmax_wrong_axis", 4, "softmax", softmax_columns),
)  # fmt: skip
ATTENTION_MISTAKES = tuple(m for m in MISTAKES if m.kind == "attention")
MULTIHEAD_MISTAKES = tuple(m for m in MISTAKES if m.kind == "multihead")
SOFTMAX_MISTAKES = tuple(m for m in MISTAKES if m.kind == "softmax")
MISTAKE_STEPS = {m.id: m.step for m in MISTAKES}


# ---------------------------------------------------------------------- diagnosis


def _in_precision(args: tuple, dtype: str) -> tuple:
    """``args`` with every float array cast to ``dtype`` (masks and sizes untouched)."""
    return tuple(
        a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args
    )


def mistake_results(kind: str, *args: object) -> list[tuple[Mistake, dict[str, np.ndarray]]]:
    """Every mistake of ``kind`` with its results by part on these inputs (``args`` as
    :func:`exercise_args` gives them), once per precision it is made in. Mistakes that do
    not apply (a mask mistake without a mask) are left out; so are the parts a mistake is
    not recognised from."""
    results = []
    for m in (m for m in MISTAKES if m.kind == kind):
        for dtype in m.precisions:
            parts = as_parts(m.make(*_in_precision(args, dtype)))
            parts = {p: a for p, a in parts.items() if m.parts is None or p in m.parts}
            if parts:
                results.append((m, parts))
    return results


def _diagnose(
    kind: str, args: tuple, candidate: np.ndarray, part: str | None, tol: float | None
) -> str | None:
    """ "correct", the id of the first mistake of ``kind`` that recognises the candidate as
    its ``part``, or None. ``part=None`` accepts a candidate for any part."""
    c = np.asarray(candidate)
    if not np.issubdtype(c.dtype, np.number) or c.dtype.kind == "c":
        return None
    tol = tolerance(c.dtype) if tol is None else tol
    right = as_parts(REFERENCES[kind](*args))
    parts = list(right) if part is None else [part]
    if any(matches(c, right[p], tol) for p in parts):
        return "correct"
    for mistake, made in mistake_results(kind, *args):
        for p in parts:
            if p in made and mistake.recognise(Held(c, made[p], right[p], tol)):
                return mistake.id
    return None


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
    return _diagnose("attention", (x, w_q, w_k, w_v, mask), candidate, part, tol)


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
    return _diagnose("multihead", (x, w_q, w_k, w_v, w_o, h), candidate, part, tol)


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
    return _diagnose("softmax", (logits,), candidate, "probs", tol)


def diagnose_homework(
    hw: Homework,
    inputs: Mapping[str, np.ndarray],
    candidate: np.ndarray,
    part: str,
    tol: float | None = None,
) -> str | None:
    """:func:`diagnose_attention`, :func:`diagnose_multihead` or :func:`diagnose_softmax`
    for the exercise ``hw`` (``inputs`` from :func:`homework_inputs`)."""
    return _diagnose(KINDS[hw.exercise], exercise_args(hw, inputs), candidate, part, tol)


def mistake_result(
    hw: Homework, inputs: Mapping[str, np.ndarray], mistake_id: str, part: str
) -> np.ndarray | None:
    """What the mistake ``mistake_id`` returns for ``part`` on the exercise's inputs (None if
    it does not apply), e.g. to show how far an upload is from it."""
    results = mistake_results(KINDS[hw.exercise], *exercise_args(hw, inputs))
    return next((made.get(part) for m, made in results if m.id == mistake_id), None)
