"""Boolean attention masks. ``True`` = the query may attend to that key.

Masked scores are replaced by :data:`MASK_FILL` (``-inf``), so after softmax their weight
is exactly 0. :data:`LARGE_NEGATIVE` (``-1e9``, the lessons' choice) is kept for comparison:
it gives weights that are ~0 rather than exactly 0, and a fully masked row then becomes a
uniform distribution instead of the all-zero row that ``-inf`` gives.
"""

import numpy as np

MASK_FILL = -np.inf
LARGE_NEGATIVE = -1e9


def causal_mask(n: int) -> np.ndarray:
    """Decoder mask: token ``i`` may attend to tokens ``0..i``.

    Shapes: -> bool ``(n, n)``, lower triangle (with diagonal) True.
    """
    return np.tril(np.ones((n, n), dtype=bool))


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
    return np.where(np.asarray(mask, dtype=bool), scores, fill)
