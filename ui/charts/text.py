"""Numbers, labels and titles as the charts and the pages print them.

Pure text (NumPy in, strings out, no Streamlit): the views' running text and LaTeX
(:func:`fmt`, :func:`fmt_list`, :func:`vector_tex`), a heatmap's cells (:func:`fmt_cells`),
axis labels (:func:`unique_labels`, :func:`dim_labels`) and titles (:func:`shape_title`,
:func:`data_title`). :func:`chars` is how wide a text is in Latin characters, for the size
estimate and a heatmap's label angle.
"""

import json
from collections import Counter
from collections.abc import Sequence

import numpy as np

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Labels made unique for an axis: repeated tokens get their position as a subscript.

    ``["the", "cat", "the"]`` -> ``["the₀", "cat", "the₂"]``.
    """
    counts = Counter(labels)
    return [
        f"{s}{str(i).translate(SUBSCRIPTS)}" if counts[s] > 1 else s for i, s in enumerate(labels)
    ]


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    """Column labels for feature dimensions: ``d0, d1, …``."""
    return [f"{prefix}{i}" for i in range(n)]


def shape_title(title: str, shape: tuple[int, ...]) -> str:
    """``"weights (6 × 6)"``."""
    return f"{title} ({' × '.join(str(s) for s in shape)})"


def data_title(name: str) -> dict:
    """A heatmap's title read in the browser from its dataset ``name`` (the cells of
    :func:`ui.charts.specs.heatmap`): its panel and shape, as :func:`shape_title` writes
    them. A new shape or panel name then changes only the data, not the spec."""
    cells = f"data({json.dumps(name)})"
    last = f"peek({cells})"  # the cells are in row-major order: the last one has the shape
    shape = f"' (' + ({last}.i + 1) + ' × ' + ({last}.j + 1) + ')'"
    return {"text": {"expr": f"{cells}[0].panel + {shape}"}}


def thousands(n: int) -> str:
    """A whole number with its digits grouped by spaces: 49152 -> "49 152"."""
    return f"{int(n):,}".replace(",", " ")


def fmt(value: float, digits: int = 2) -> str:
    """A number as shown in cells: −∞/+∞ spelled out, minus sign typographic, NaN blank, no
    "−0.00" for a small negative number, and an integer (``int``, ``np.int64``) as one."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return str(int(value)).replace("-", "−")
    if np.isnan(value):
        return ""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "+∞"
    return f"{round(float(value), digits) + 0.0:.{digits}f}".replace("-", "−")


def fmt_list(values: np.ndarray, digits: int = 3) -> str:
    """A row of numbers for running text: ``[0.097, 0.122, …]`` (integers as integers)."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    return "[" + ", ".join(fmt(v, digits) for v in items) + "]"


def vector_tex(values: np.ndarray, limit: int = 8, digits: int = 3) -> str:
    """A row vector as LaTeX ``[a, b, …]``; longer than ``limit`` entries, the first
    ``limit − 2``, a ``…`` and the last two, so the reader sees where the vector ends."""
    shown = [fmt(float(v), digits).replace("−", "-") for v in values]  # no "-0.00"
    if len(values) > limit:
        shown = [*shown[: limit - 2], r"\dots", *shown[-2:]]
    return r"\left[\," + r",\ ".join(shown) + r"\,\right]"


def fmt_cells(values: np.ndarray, digits: int = 2) -> list[str]:
    """:func:`fmt` of every entry (flattened) in one pass: ~2 ms for 64 × 64, not ~50 ms."""
    raw = np.asarray(values)
    if raw.dtype.kind in "iu":
        return [str(x).replace("-", "−") for x in raw.ravel().tolist()]
    v = raw.astype(float).ravel()
    with np.errstate(invalid="ignore"):
        shown = np.round(v, digits) + 0.0  # −0.004 -> −0.0 -> 0.0: never "−0.00"
    spec = f"{{:.{digits}f}}".format
    text = [spec(x).replace("-", "−") for x in shown.tolist()]
    for k in np.flatnonzero(~np.isfinite(v)).tolist():
        text[k] = "" if np.isnan(v[k]) else ("+∞" if v[k] > 0 else "−∞")
    return text


def chars(text: str) -> int:
    """How wide ``text`` is in Latin characters: a CJK character counts as two."""
    return sum(2 if ord(c) > 0x2E80 else 1 for c in text)
