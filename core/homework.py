"""Homework checking: the exercises' exact inputs, a table of common mistakes, and a
diagnosis that says which mistake an uploaded result was made with.

The inputs are lesson 002's (``lesson_inputs`` and ``init_projections`` with the same seed),
so with the defaults (n = 6, d_model = 8, d_k = d_v = 4, seed 42) exercise 1's answer is
exactly the lesson's output.

Every mistake is one record of :data:`MISTAKES` (:class:`Mistake`): an id (the page's catalog
key for its name, explanation and fix), the kind of exercise, the student's code and how an
upload is recognised as its result (usually: the same numbers). The code is a :class:`Code`:
the right attention as a row of stages with one of them (or two that belong together)
replaced by a buggy one, a small function whose docstring quotes the mistaken line. The
mistake happens in the step of the first stage it replaces, one of five:

    1 project (x @ W, split into heads)   2 score (Q Kᵀ)   3 scale (÷ √d_k)
    4 softmax (mask just before it)        5 weighted sum (mix the values, merge, W_O)

Adding a mistake is adding one row (and, for a new kind of bug, one stage function). A
diagnosis compares the upload with the right answer first (so a right answer is never called
a mistake), then goes down the table; a mistake that changes nothing on these inputs cannot
be told apart, so it is skipped.

Comparison: within ``tol`` (1e-6 for float64 results, 1e-4 for float32) of ``max(1, |expected|)``
per cell; NaN and ±inf must sit in the same cells on both sides. How far an upload is from
the right answer, as the page reports it, is in :mod:`core.findings.homework`.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields

import numpy as np

from core.attention import scaled_dot_product_attention
from core.masks import apply_mask, causal_mask
from core.multihead import merge_heads, multi_head_attention, split_heads
from core.projections import init_projections, lesson_inputs, xavier_std
from core.softmax_numerics import softmax, softmax_naive

EXERCISES = (1, 2, 3, 4)
STEPS = ("project", "score", "scale", "softmax", "mix")  # the five steps, numbered from 1
KINDS = {1: "attention", 2: "attention", 3: "multihead", 4: "softmax"}  # by exercise
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


# ------------------------------------------------------------ the code, stage by stage

Matrices = tuple[np.ndarray, ...]  # the projection matrices: W_Q, W_K, W_V (and W_O)


def _given(w: Matrices) -> Matrices:
    """The downloaded matrices."""
    return w


def _own(w: Matrices) -> Matrices:
    """``self.W_Q = np.random.randn(d_model, d_k)`` in a class's ``__init__`` (the same for
    every matrix) instead of the downloaded ones. This draw (seed 0) is one example; a
    student's own draw gives other numbers, so it is recognised by the form of its weights
    (:func:`valid_weights`), never by its numbers."""
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(m.shape) for m in w)


def _transposed(w: Matrices) -> Matrices | None:
    """``Q = X @ W_Q.T`` (the same for every matrix), PyTorch's ``nn.Linear`` layout, while
    these matrices are meant as ``X @ W``. Only possible when they are square."""
    return None if any(m.shape[0] != m.shape[1] for m in w) else tuple(m.T for m in w)


def _reshaped(a: np.ndarray, h: int) -> np.ndarray:
    """``Q.reshape(h, n, d_k)`` with no transpose: each "head" gets pieces of several
    tokens. Shapes: ``(n, h*d)`` -> ``(h, n, d)``, the wrong cells."""
    return a.reshape(h, a.shape[-2], a.shape[-1] // h)  # (h, n, d)


def _unreshaped(heads: np.ndarray) -> np.ndarray:
    """``heads.reshape(n, h * d_v)``, the way back of :func:`_reshaped`.
    Shapes: ``(h, n, d)`` -> ``(n, h*d)``."""
    h, n, d = heads.shape
    return heads.reshape(n, h * d)  # (n, h*d)


def _interleaved(heads: np.ndarray) -> np.ndarray:
    """``heads.transpose(1, 2, 0).reshape(n, h * d_v)``: the heads merged feature by feature
    instead of head after head, so W_O multiplies the wrong columns.
    Shapes: ``(h, n, d)`` -> ``(n, d*h)``."""
    h, n, d = heads.shape
    return heads.transpose(1, 2, 0).reshape(n, d * h)  # (n, d*h): feature-major


def _reversed(heads: np.ndarray) -> np.ndarray:
    """``np.concatenate(heads[::-1], axis=-1)``: the heads merged last to first.
    Shapes: ``(h, n, d)`` -> ``(n, h*d)``."""
    return merge_heads(heads[::-1])  # (n, h*d)


def _q_kt(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``Q @ K.T``. Shapes: ``(..., n, d_k)`` ×2 -> ``(..., n, n)``."""
    return q @ np.swapaxes(k, -1, -2)


def _k_qt(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``K @ Q.T`` instead of ``Q @ K.T`` (Q and K swapped, or the transpose on the wrong
    matrix): row i holds key i's scores against every query. Shapes: as :func:`_q_kt`."""
    return k @ np.swapaxes(q, -1, -2)


def _by_sqrt(scores: np.ndarray, d_k: int) -> np.ndarray:
    """``scores / np.sqrt(d_k)``. Shapes: any -> same."""
    return scores / math.sqrt(d_k)


def _unscaled(scores: np.ndarray, d_k: int) -> np.ndarray:
    """``scores = Q @ K.T`` with no ``/ np.sqrt(d_k)``: the softmax gets scores √d_k times
    too spread out, so the weights come out too peaked."""
    return scores


def _by_d_k(scores: np.ndarray, d_k: int) -> np.ndarray:
    """``scores / d_k`` instead of ``/ np.sqrt(d_k)``: the weights come out too flat (the
    same when d_k = 1)."""
    return scores / d_k


def _masked_softmax(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``softmax(np.where(mask, scores, -np.inf))`` over the keys. Shapes: any -> same."""
    return softmax(apply_mask(scores, mask))


def _over_queries(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``softmax(scores, axis=0)``: over the queries (the columns) instead of over the keys;
    columns sum to 1, rows do not."""
    return softmax(apply_mask(scores, mask), axis=-2)


def _no_max_shift(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)`` without subtracting the row
    maximum first: the stable softmax's numbers unless ``exp`` overflows (float32 above
    ≈ 88.7, float64 above ≈ 709.8) or every term underflows; then the row turns into NaN."""
    return softmax_naive(apply_mask(scores, mask))


def _zeroed_after(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
    """``weights = softmax(scores) * mask``: the hidden weights are zeroed after the softmax
    instead of their scores set to −∞ before it, so the rows no longer sum to 1."""
    return None if mask is None else np.where(mask, softmax(scores), 0.0)


def _unmasked(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
    """The line ``scores = np.where(mask, scores, -np.inf)`` is missing: every token also
    sees the tokens after it."""
    return None if mask is None else softmax(scores)


def _upper(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
    """``mask = np.triu(np.ones((n, n), bool))`` instead of ``np.tril``: token i sees the
    tokens after it and not the ones before."""
    return None if mask is None else softmax(apply_mask(scores, mask.T))


def _plus_mask(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
    """``scores = scores + mask * -1e9``, copied from tutorials whose mask has 1 on the keys
    to hide, while here True (1) marks the keys a token may see: the visible keys are pushed
    down to −10⁹ and each token attends only where it must not. A row in which every key is
    visible comes out nearly right this way (all its scores move by −10⁹), but uniform from
    ``np.where(mask, -1e9, scores)`` and NaN with ``-np.inf``: see
    :func:`same_where_it_differs`."""
    return None if mask is None else softmax(scores + mask * -1e9)


def _weights_only(weights: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``return weights, weights``: the values are never mixed. The weights are the right
    ones, so only the output tells it."""
    return weights


def _no_w_o(concat: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """``return concat`` instead of ``return concat @ W_O``."""
    return concat


@dataclass(frozen=True)
class Code:
    """A student's attention as a row of replaceable stages, in the order they run; the
    defaults are the right code. A stage that returns None makes the code impossible on
    these inputs (a mask mistake without a mask, ``W.T`` of a matrix that is not square)."""

    weights: Callable[[Matrices], Matrices | None] = _given  # the matrices used
    split: Callable[[np.ndarray, int], np.ndarray] = split_heads  # (n, h*d) -> (h, n, d)
    score: Callable[[np.ndarray, np.ndarray], np.ndarray] = _q_kt
    scale: Callable[[np.ndarray, int], np.ndarray] = _by_sqrt
    weigh: Callable[[np.ndarray, np.ndarray | None], np.ndarray | None] = _masked_softmax
    mix: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul  # weights @ V
    merge: Callable[[np.ndarray], np.ndarray] = merge_heads  # (h, n, d) -> (n, h*d)
    out: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul  # concat @ W_O


# the step of attention (1–5, STEPS) each stage of Code belongs to
STAGE_STEPS = dict(weights=1, split=1, score=2, scale=3, weigh=4, mix=5, merge=5, out=5)
RIGHT = Code()


def changed_stages(code: Code) -> list[str]:
    """The stages of ``code`` that are not the right code's, in the order they run."""
    return [f.name for f in fields(Code) if getattr(code, f.name) is not getattr(RIGHT, f.name)]


def run_attention(
    code: Code,
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    mask: np.ndarray | None,
) -> Result | None:
    """Exercises 1–2 as ``code`` computes them (None if it cannot on these inputs).

    Shapes: as :func:`reference_attention`.
    """
    used = code.weights((w_q, w_k, w_v))
    if used is None:
        return None
    # 1) project
    q, k, v = (x @ w for w in used)  # (n, d_k), (n, d_k), (n, d_v)
    # 2) score 3) scale 4) mask and softmax
    weights = code.weigh(code.scale(code.score(q, k), q.shape[-1]), mask)  # (n, n)
    # 5) mix the values
    return None if weights is None else (code.mix(weights, v), weights)


def run_multihead(
    code: Code,
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    h: int,
) -> Result | None:
    """Exercise 3 as ``code`` computes it (None if it cannot on these inputs).

    Shapes: as :func:`reference_multihead`.
    """
    used = code.weights((w_q, w_k, w_v, w_o))
    if used is None:
        return None
    *projections, w_o = used
    # 1) project and split into heads
    q, k, v = (code.split(x @ w, h) for w in projections)  # (h, n, d_k), ..., (h, n, d_v)
    # 2) score 3) scale 4) softmax, every head at once
    weights = code.weigh(code.scale(code.score(q, k), q.shape[-1]), None)  # (h, n, n)
    # 5) mix, merge the heads and project
    concat = code.merge(code.mix(weights, v))  # (n, h*d_v)
    return code.out(concat, w_o), weights


def run_softmax(code: Code, logits: np.ndarray) -> np.ndarray | None:
    """Exercise 4 as ``code`` computes it: its softmax stage on the logits.

    Shapes: ``(n, m)`` -> ``(n, m)``.
    """
    return code.weigh(logits, None)


RUNS: dict[str, Callable[..., Result | np.ndarray | None]] = {
    "attention": run_attention,
    "multihead": run_multihead,
    "softmax": run_softmax,
}  # each kind of exercise run with a code, on the arguments of :func:`exercise_args`


# --------------------------------------------------------------------- comparison


def tolerance(dtype: np.dtype | str) -> float:
    """1e-6 for float64 (and integer) results, 1e-4 for float32 or narrower floats."""
    dt = np.dtype(dtype)
    return TOL_FLOAT32 if np.issubdtype(dt, np.floating) and dt.itemsize <= 4 else TOL_FLOAT64


def bad_cells(candidate: np.ndarray, reference: np.ndarray, tol: float) -> np.ndarray:
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
    return c.shape == r.shape and not bad_cells(c, r, tol).any()


def _rows(a: np.ndarray) -> np.ndarray:
    """Every row of ``a`` (all axes but the last folded). Shapes: ``(..., m)`` -> ``(r, m)``."""
    return np.asarray(a).reshape(-1, np.shape(a)[-1])  # (r, m)


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
    changed = _rows(bad_cells(made, right, held.tol)).any(axis=-1)  # (r,)
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
    right_rows = ~bad_cells(c, right, tol).any(axis=-1)  # (..., n)
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
    catalog, ``homework.mistake.<id>``) and the ``kind`` of exercise. How to make it:
    ``code``, run on the exercise's arguments (:func:`exercise_args`) once in each of
    ``precisions``. How it is recognised: ``recognise``, on each of ``parts`` of the result
    (None: every part)."""

    id: str
    kind: str  # "attention" (exercises 1–2), "multihead" (3) or "softmax" (4)
    code: Code
    recognise: Callable[[Held], bool] = same
    parts: tuple[str, ...] | None = None
    precisions: tuple[str, ...] = ("float64",)

    @property
    def step(self) -> int:
        """The step (1–5, :data:`STEPS`) the mistake happens in: that of the first stage its
        code replaces."""
        return STAGE_STEPS[changed_stages(self.code)[0]]

    def make(self, *args: object) -> Result | np.ndarray | None:
        """What the buggy code returns on the exercise's arguments (:func:`exercise_args`);
        None where it cannot be made (a mask mistake without a mask)."""
        return RUNS[self.kind](self.code, *args)


# The order is the diagnosis's: the first row that recognises an upload names it, so a row
# that holds less than every number against the upload (some rows only, or only the form)
# comes after every row of its kind that holds them all.
MISTAKES = (
    Mistake("no_scaling",         "attention", Code(scale=_unscaled)),
    Mistake("scaled_by_dk",       "attention", Code(scale=_by_d_k)),
    Mistake("softmax_wrong_axis", "attention", Code(weigh=_over_queries)),
    Mistake("scores_transposed",  "attention", Code(score=_k_qt)),
    Mistake("weights_not_output", "attention", Code(mix=_weights_only)),
    Mistake("mask_after_softmax", "attention", Code(weigh=_zeroed_after)),
    Mistake("mask_missing",       "attention", Code(weigh=_unmasked)),
    Mistake("mask_upper",         "attention", Code(weigh=_upper)),
    Mistake("mask_wrong_sign",    "attention", Code(weigh=_plus_mask), same_where_it_differs),
    Mistake("own_projections",    "attention", Code(weights=_own), valid_weights, ("weights",)),
    Mistake("no_scaling",         "multihead", Code(scale=_unscaled)),
    Mistake("scaled_by_dk",       "multihead", Code(scale=_by_d_k)),
    Mistake("heads_no_transpose", "multihead", Code(split=_reshaped, merge=_unreshaped)),
    Mistake("heads_wrong_order",  "multihead", Code(merge=_interleaved)),
    Mistake("heads_reversed",     "multihead", Code(merge=_reversed)),
    Mistake("wo_forgotten",       "multihead", Code(out=_no_w_o)),
    Mistake("linear_layout",      "multihead", Code(weights=_transposed)),
    Mistake("own_projections",    "multihead", Code(weights=_own), valid_weights, ("weights",)),
    Mistake("no_max_subtraction", "softmax",   Code(weigh=_no_max_shift),
            precisions=("float64", "float32")),
    Mistake("softmax_wrong_axis", "softmax",   Code(weigh=_over_queries)),
)  # fmt: skip
ATTENTION_MISTAKES = tuple(m for m in MISTAKES if m.kind == "attention")
MULTIHEAD_MISTAKES = tuple(m for m in MISTAKES if m.kind == "multihead")
SOFTMAX_MISTAKES = tuple(m for m in MISTAKES if m.kind == "softmax")
MISTAKE_STEPS = {m.id: m.step for m in MISTAKES}


def mistake(kind: str, mistake_id: str) -> Mistake | None:
    """The row of :data:`MISTAKES` named ``mistake_id`` among those of ``kind`` (None: none)."""
    return next((m for m in MISTAKES if m.kind == kind and m.id == mistake_id), None)


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
    m = mistake(KINDS[hw.exercise], mistake_id)
    if m is None or (m.parts is not None and part not in m.parts):
        return None
    return as_parts(m.make(*exercise_args(hw, inputs))).get(part)
