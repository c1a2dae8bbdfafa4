"""Transitional: the old name of :mod:`core.softmax_numerics`. ``core.softmax`` is the function.

Only for ``core/homework.py``, ``pages/4_softmax.py`` and ``tests/app/test_softmax.py``, which
still import from here: once they import from :mod:`core.softmax_numerics`, delete this file.
"""

from core.softmax_numerics import (
    EXP_OVERFLOW,
    EXP_UNDERFLOW,
    exp_terms,
    mask_last,
    scale_sweep,
    softmax,
    softmax_naive,
)

__all__ = [
    "EXP_OVERFLOW",
    "EXP_UNDERFLOW",
    "exp_terms",
    "mask_last",
    "scale_sweep",
    "softmax",
    "softmax_naive",
]
