"""A Unicode-block heatmap of a weight matrix, for terminals and text exports."""

import unicodedata

import numpy as np

BLOCKS = " ░▒▓█"


def _width(s: str) -> int:
    """Terminal columns taken by ``s`` (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, width: int) -> str:
    """Right-align ``s`` in ``width`` terminal columns."""
    return " " * max(width - _width(s), 0) + s


def text_heatmap(
    weights: np.ndarray, row_labels: list[str], col_labels: list[str] | None = None
) -> str:
    """Render ``weights`` as rows of shade characters, darkest for the largest weight.

    Shapes: ``weights`` ``(n_q, n_k)`` with ``n_q`` row labels and ``n_k`` column labels
    (default: the row labels) -> a multi-line string. Shades are relative to the matrix
    maximum; an all-zero matrix is blank.
    """
    col_labels = row_labels if col_labels is None else col_labels
    w = np.asarray(weights, dtype=float)
    top = w.max() if w.size and w.max() > 0 else 1.0
    levels = np.clip((w / top * (len(BLOCKS) - 1)).astype(int), 0, len(BLOCKS) - 1)
    cell = max([_width(s) for s in col_labels] + [3]) + 1
    left = max([_width(s) for s in row_labels] + [1])
    lines = [" " * left + "".join(_pad(s, cell) for s in col_labels)]
    for label, row in zip(row_labels, levels, strict=True):
        shades = "".join(_pad(BLOCKS[lv] * 2, cell) for lv in row)
        lines.append(_pad(label, left) + shades)
    return "\n".join(lines)
