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


def _number(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals, ``-`` for a value that is not finite, never ``-0.00``."""
    return f"{round(x, digits) + 0.0:.{digits}f}" if np.isfinite(x) else "-"


def shade_legend(top: float, digits: int = 2) -> str:
    """The key to the shades: each one's share of the largest weight ``top``."""
    steps = len(BLOCKS) - 1
    parts = [f"{BLOCKS[k]} >= {k * 100 // steps}%" for k in range(steps - 1, 0, -1)]
    return f"{BLOCKS[-1]} = max ({_number(top, digits)}), " + ", ".join(parts) + " of max"


def text_heatmap(
    weights: np.ndarray,
    row_labels: list[str],
    col_labels: list[str] | None = None,
    numbers: bool = True,
    legend: bool = True,
    digits: int = 2,
) -> str:
    """Render ``weights`` as rows of shade characters, darkest for the largest weight, each
    followed by its value (``numbers``, ``digits`` decimals), and a last line saying what
    the shades mean (``legend``).

    Shapes: ``weights`` ``(n_q, n_k)`` with ``n_q`` row labels and ``n_k`` column labels
    (default: the row labels) -> a multi-line string. Shades are relative to the matrix
    maximum (a value that is not finite is blank and printed ``-``); an all-zero matrix is
    blank.
    """
    col_labels = row_labels if col_labels is None else col_labels
    w = np.asarray(weights, dtype=float)
    finite = np.where(np.isfinite(w), w, 0.0)
    top = finite.max() if finite.size and finite.max() > 0 else 1.0
    levels = np.clip((finite / top * (len(BLOCKS) - 1)).astype(int), 0, len(BLOCKS) - 1)
    texts = [[_number(x, digits) for x in row] for row in w.tolist()] if numbers else None
    widest = max((len(s) for row in texts for s in row), default=0) + 1 if texts else 0
    cell = max([_width(s) for s in col_labels] + [3, 2 + widest]) + 1
    left = max([_width(s) for s in row_labels] + [1])
    lines = [" " * left + "".join(_pad(s, cell) for s in col_labels)]
    for i, (label, row) in enumerate(zip(row_labels, levels, strict=True)):
        shown = [
            BLOCKS[lv] * 2 + (_pad(texts[i][j], widest) if texts else "")
            for j, lv in enumerate(row)
        ]
        lines.append(_pad(label, left) + "".join(_pad(s, cell) for s in shown))
    if legend:
        lines.append(shade_legend(float(finite.max()) if finite.size else 0.0, digits))
    return "\n".join(lines)
