"""Softmax: turn a row of scores into a probability distribution, and its numerics (the naive
formula beside the stable one, where ``exp`` overflows and underflows). This is the one
softmax of ``core``: everything else that needs softmax, or its log for a cross-entropy
(:func:`log_softmax`), calls these.

The function is :func:`core.softmax` (``from core import softmax``); this module is named
``softmax_numerics`` so that ``core.softmax`` means one thing, the function, and never this
module.

Fully masked rows: a row whose entries are all ``-inf`` has no finite score to normalise.
Policy: such a row becomes **all zeros** (not NaN). In attention this means the query
attends to nothing and its output is the zero vector. Every other row sums to 1.

NaN: a row with a NaN entry (a bug upstream: 0/0, inf − inf in the scores) becomes **all
NaN**, as in PyTorch and JAX. Turning it into zeros would make it look exactly like a fully
masked query and hide the bug. A row with a ``+inf`` score is all NaN too (inf / inf).
"""

import numpy as np


def _as_float(x: np.ndarray | list) -> np.ndarray:
    """Return ``x`` as a floating array, keeping float32 if it already is."""
    arr = np.asarray(x)
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def _scaled_rows(x: np.ndarray | list, scales: np.ndarray | list) -> np.ndarray:
    """``x * s`` for every scale ``s``, one row each. Shapes: ``(n,)``, ``(s,)`` -> ``(s, n)``."""
    return np.asarray(scales, dtype=float)[:, None] * _as_float(x)[None, :]  # (s, n)


def _shifted(z: np.ndarray, axis: int) -> np.ndarray:
    """``z`` minus its largest entry along ``axis``, so every exponent is <= 0; a row with no
    finite maximum (all ``-inf``) is shifted by 0. Shapes: ``(..., n)`` -> same."""
    row_max = np.max(z, axis=axis, keepdims=True)
    return z - np.where(np.isfinite(row_max), row_max, 0.0)  # all -inf row: shift by 0


def softmax(x: np.ndarray | list, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax of ``x / temperature`` along ``axis``.

    Shapes: ``x`` any shape ``(..., n)`` -> same shape, each slice along ``axis`` sums to 1.

    Subtracting the row maximum before ``exp`` keeps every exponent <= 0, so logits like
    ``[1000, 1001]`` cannot overflow. Entries equal to ``-inf`` get weight exactly 0; a row
    that is entirely ``-inf`` gives all zeros (see the module docstring).
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    with np.errstate(invalid="ignore"):  # inf - inf in a row with +inf: NaN, as it should
        e = np.exp(_shifted(_as_float(x) / temperature, axis))
    total = np.sum(e, axis=axis, keepdims=True)
    defined = np.isfinite(total) & (total > 0)
    undefined = np.where(total == 0, 0.0, np.nan)  # all -inf: zeros; NaN or +inf: NaN
    out = np.broadcast_to(undefined, e.shape).astype(e.dtype)
    return np.divide(e, total, out=out, where=defined)


def log_softmax(x: np.ndarray | list, axis: int = -1) -> np.ndarray:
    """The log of :func:`softmax` along ``axis``, computed as ``z − log Σ exp z`` on the
    shifted ``z`` (never the log of a probability that rounded to 0): what a cross-entropy
    or a token's log-likelihood needs.

    Shapes: ``(..., n)`` -> same shape. Every row needs a finite entry.
    """
    z = _shifted(_as_float(x), axis)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def softmax_naive(x: np.ndarray | list, axis: int = -1) -> np.ndarray:
    """Textbook ``exp(x) / sum(exp(x))`` without the max shift — for demonstration only.

    Shapes: ``(..., n)`` -> ``(..., n)``. Large logits overflow to ``inf`` and the result
    contains NaN; the app shows this next to :func:`softmax` to explain the shift.
    """
    z = _as_float(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(z)
        return e / np.sum(e, axis=axis, keepdims=True)


def scale_sweep(x: np.ndarray | list, scales: np.ndarray | list) -> tuple[np.ndarray, np.ndarray]:
    """Naive and stable softmax of ``x * s`` for every scale ``s``.

    Shapes: ``x`` ``(n,)``, ``scales`` ``(s,)`` -> ``(naive (s, n), stable (s, n))``. The naive
    rows turn NaN once ``exp`` overflows; the stable rows stay a distribution.
    """
    z = _scaled_rows(x, scales)  # (s, n)
    return softmax_naive(z), softmax(z)


def mask_last(x: np.ndarray | list, count: int) -> np.ndarray:
    """``x`` with its last ``count`` entries masked to ``-inf`` (like a query that may not
    see the keys after it).

    Shapes: ``(n,)`` -> ``(n,)``; ``count`` is clipped to ``0..n``.
    """
    z = _as_float(x).copy()
    count = min(max(int(count), 0), z.shape[-1])
    if count:
        z[-count:] = -np.inf
    return z


# In float64, exp(x) is +inf above EXP_OVERFLOW (≈ 709.78) and exactly 0 below EXP_UNDERFLOW
# (≈ −745.13: half the smallest subnormal number already rounds to 0).
EXP_OVERFLOW = float(np.log(np.finfo(np.float64).max))
EXP_UNDERFLOW = float(np.log(np.finfo(np.float64).smallest_subnormal) - np.log(2.0))


def exp_terms(
    x: np.ndarray | list, scale: float = 1.0, stable: bool = True
) -> tuple[np.ndarray, np.ndarray, float]:
    """What softmax of ``x * scale`` feeds to ``exp`` and gets back, naive or stable.

    Shapes: ``x`` ``(n,)`` -> ``(arguments (n,), exp values (n,), their sum)``. The stable
    arguments are ``z - max(z)`` (so all <= 0); the naive ones are ``z`` itself.
    """
    z = _as_float(x) * scale
    top = np.max(z)
    args = z - top if stable and np.isfinite(top) else z
    with np.errstate(over="ignore"):
        e = np.exp(args)
        return args, e, float(np.sum(e))


def largest_exp_argument(
    x: np.ndarray | list, scales: np.ndarray | list
) -> tuple[np.ndarray, np.ndarray]:
    """The largest number the naive and the stable softmax of ``x * s`` pass to ``exp``.

    Shapes: ``x`` ``(n,)``, ``scales`` ``(s,)`` -> ``(naive (s,), stable (s,))``. The naive
    one grows with ``s`` until it passes :data:`EXP_OVERFLOW`; the stable one stays 0
    (``-inf`` for an all-masked ``x``).
    """
    z = _scaled_rows(x, scales)  # (s, n)
    naive = np.max(z, axis=-1)  # (s,)
    shift = np.where(np.isfinite(naive), naive, 0.0)  # (s,)
    return naive, np.max(z - shift[:, None], axis=-1)
