"""Chart builders shared by every page: one look, legible on a projector, cheap to redraw.

Two kinds of builder, both drawn by :func:`show`:

* **Heatmaps** (:func:`heatmap`, :func:`matrix_strip`, side by side with :func:`concat`) are
  plain Vega-Lite dicts whose cells are inline records (a named dataset, null where a cell
  has no value). A heatmap has a rect and a number per cell, hundreds to thousands of rows:
  through Altair (object copies, schema validation) one cost 30–300 ms, and Altair's data
  transformer refuses more than 5000 rows. A dict costs a few ms and has no row limit.
* **Lines, bars, histograms, arrows** (:func:`lines`, :func:`bars`, :func:`histogram`,
  :func:`vectors_2d`) stay Altair: few rows, and pages layer and combine them with
  Altair's operators.

:func:`show_cached` builds a chart once per distinct input (Streamlit's data cache: each
caller gets its own copy, so sessions share nothing mutable), converts Altair charts
without validating them again and draws them in the house theme (:func:`to_spec`). The
spec it returns carries the chart's data, so the exports (PNG/SVG, and :func:`table` for
the CSV) are made from the very chart on screen.

Nothing here switches Altair's global theme or data transformer (``st.altair_chart`` does,
under a lock): charts are converted with the defaults and drawn with ``st.vega_lite_chart``.
"""

import hashlib
import io
import json
import math
import pickle
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import repeat

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util

from ui.context import PageContext
from ui.i18n import Translator

# The app's own font first ("Source Sans", served by Streamlit with the page): chart text
# then matches the page around it. Chinese characters fall through to a CJK font. (With a
# CJK font first, Latin titles took its full-width “ ” quotes: a gap like two spaces.)
FONT = "Source Sans, Source Sans Pro, Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"
QUERY_COLOR = "#d1495b"
KEY_COLOR = "#00798c"
VALUE_COLOR = "#2e7d32"
ACCENT = "#edae49"
MASKED = "#d9d9d9"  # a cell without a value: masked (−∞) or not there
FRAME = "#111111"  # the frame around a highlighted row
MAX_ANNOTATED = 30  # print numbers in heatmap cells only up to this many rows/columns…
MIN_ANNOTATED_CELL = 22  # …and only in cells at least this many px wide (else they overlap)
SLIDE_FONT = 26  # presenter mode: cell numbers up to this many px (large cells, back of the hall)
CELL_FILL = 0.9  # the widest number in a heatmap takes at most this share of its cell
# Character widths in em of the fonts the numbers fall back to (Noto Sans CJK, Arial: a digit
# 0.556 em), wider than the theme's Source Sans, so the numbers fit whichever font draws them.
_EM = {".": 0.28, ",": 0.28, "−": 0.56, "-": 0.35, "∞": 1.0, " ": 0.25}  # a digit: 0.56
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_VALID = "isValid(datum.value)"

Panel = tuple[str, np.ndarray, Sequence[str], Sequence[str]]  # title, matrix, rows, columns


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
    :func:`heatmap`): its panel and shape, as :func:`shape_title` writes them. A new shape
    or panel name then changes only the data, not the spec."""
    cells = f"data({json.dumps(name)})"
    last = f"peek({cells})"  # the cells are in row-major order: the last one has the shape
    shape = f"' (' + ({last}.i + 1) + ' × ' + ({last}.j + 1) + ')'"
    return {"text": {"expr": f"{cells}[0].panel + {shape}"}}


def _title_text(node: Mapping, rows: list | None) -> object:
    """A view's title as drawn: a :func:`data_title` worked out from ``rows``."""
    title, data = node.get("title"), node.get("data")
    name = data.get("name") if isinstance(data, Mapping) else None
    if rows and isinstance(name, str) and title == data_title(name):
        return shape_title(rows[0]["panel"], (rows[-1]["i"] + 1, rows[-1]["j"] + 1))
    return title


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


def _cells(
    matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], panel: str, digits: int = 2
) -> dict[str, list]:
    """A matrix as columns of a long table: one entry per cell, None where not finite."""
    m = np.asarray(matrix, dtype=float)
    n_r, n_c = m.shape
    v = m.ravel()
    return {
        "panel": [panel] * v.size,
        "row": [r for r in rows for _ in range(n_c)],
        "col": list(cols) * n_r,
        "i": np.repeat(np.arange(n_r), n_c).tolist(),
        "j": np.tile(np.arange(n_c), n_r).tolist(),
        "value": [x if math.isfinite(x) else None for x in v.tolist()],
        "text": fmt_cells(v, digits),
    }


def records(columns: Mapping[str, Sequence | np.ndarray]) -> list[dict]:
    """Columns -> one dict per row (Vega-Lite inline data, JSON-ready), without pandas."""
    keys = list(columns)
    values = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in columns.values()]
    rows = zip(*values, strict=True)  # columns of different lengths: ValueError
    return list(map(dict, map(zip, repeat(keys), rows)))  # ~25 % faster than a for loop


def symmetric_domain(*matrices: np.ndarray) -> list[float]:
    """A colour domain centred on 0 that holds every finite entry (±1 if there is none)."""
    finite = [m[np.isfinite(m)] for m in map(np.asarray, matrices)]
    top = max((float(np.abs(f).max()) for f in finite if f.size), default=0.0) or 1.0
    return [-top, top]


# Sizes come in steps of this factor (cells from :func:`fit_cell`, the scale :func:`fit`
# shrinks a chart by), so a chart keeps its spec while its shape changes a little (a
# d_model slider): the browser swaps the new rows into the chart on screen instead of
# compiling and drawing it again (~80 ms of main-thread work for a strip of 7 matrices).
LADDER = 2**0.125


def on_ladder(x: float) -> float:
    """The largest power of :data:`LADDER` that is at most ``x`` (> 0)."""
    return LADDER ** math.floor(math.log(x, LADDER) + 1e-9)


def fit_cell(
    columns: int,
    rows: int = 1,
    width: float = 420,
    height: float | None = None,
    lo: int = 12,
    hi: int = 56,
) -> int:
    """Cell size in px so that ``columns`` cells fit ``width`` (and ``rows`` fit ``height``):
    ``hi`` if they fit at that size, else the whole px of the largest step of
    :data:`LADDER` that fits, not below ``lo``."""
    fit = width / max(columns, 1)
    if height is not None:
        fit = min(fit, height / max(rows, 1))
    return hi if fit >= hi else max(lo, int(on_ladder(fit)))


def text_em(texts: Sequence[str]) -> float:
    """Estimated width in em of the widest of ``texts`` (see :data:`_EM`; at least 1)."""
    return max((sum(_EM.get(c, 0.56 if c.isdigit() else 0.6) for c in s) for s in set(texts)),
               default=1.0) or 1.0  # fmt: skip


def cell_font(
    texts: Sequence[str], cell: float, max_font: float = 15, aspect: float = 1.0
) -> float:
    """px of the numbers in ``cell``-px cells (``aspect`` × as high): as large as the widest
    of ``texts`` allows (:data:`CELL_FILL` of the width, 60 % of the height), kept within
    9..``max_font`` (to 0.1 px: a chart grown or shrunk by :func:`fit` rounds it once)."""
    fits = min(cell * CELL_FILL / text_em(texts), cell * aspect * 0.6)
    return round(float(np.clip(fits, 9, max_font)), 1)


def annotated(rows: int, columns: int, cell: float) -> bool:
    """Whether a heatmap of this size prints its numbers (see :func:`heatmap`)."""
    return max(rows, columns) <= MAX_ANNOTATED and cell >= MIN_ANNOTATED_CELL


def _by_index(field: str) -> dict:
    """A heatmap axis in the order of its index ``field`` in the data, not of a label list in
    the spec: other labels (another sentence, another layer) leave the spec unchanged."""
    return {"field": field, "op": "min", "order": "ascending"}


def heatmap(
    panels: Mapping[str, np.ndarray],
    rows: Sequence[str],
    cols: Sequence[str],
    kind: str = "weights",
    x_title: str = "",
    y_title: str = "",
    *,
    title: str | None = None,
    columns: int = 4,
    cell: int | None = None,
    max_width: int | None = None,
    domain: Sequence[float] | None = None,
    legend: bool = True,
    annotate: bool | None = None,
    frame: int | None = None,
    frame_color: str = FRAME,
    blank: str = MASKED,
    name: str = "cells",
    live_domain: bool = False,
    digits: int = 2,
    max_font: int = 15,
    aspect: float = 1.0,
) -> dict:
    """Annotated heatmap of one matrix, or one small multiple per panel (same shape, one
    shared colour scale, wrapped after ``columns`` panels), as a Vega-Lite dict.

    ``kind="weights"``: a fixed 0..1 sequential scale; ``"scores"``/``"values"``: a diverging
    scale symmetric around 0 (or the fixed ``domain``, e.g. shared with another chart).
    Cells without a finite value are drawn in ``blank`` grey and keep their text (−∞, or
    blank for NaN). Numbers are printed (``annotate=None``) while the matrix is at most
    :data:`MAX_ANNOTATED` wide and tall and cells are at least :data:`MIN_ANNOTATED_CELL` px.
    ``frame`` outlines that row. A single panel is titled with its shape, e.g.
    "weights (6 × 6)", read from its cells in the browser (:func:`data_title`; or
    ``title``). Cells are ``cell`` px (default: the matrix fits ~420 px) and the views are
    sized per cell, so a matrix of another shape with the same cell size has the same spec;
    with ``max_width`` small multiples wrap so that they fit that many px.
    The cells (``panel``, ``row``, ``col``, ``i``, ``j``, ``value``, ``text``: the value
    with ``digits`` decimals, in px as large as the widest text fits its cell
    (:func:`cell_font`) up to ``max_font``; :data:`SLIDE_FONT` on a projector) are the
    dataset ``name``.

    ``live_domain=True`` (a diverging kind): the symmetric colour domain and the white-ink
    threshold are computed in the browser from the cells (of all panels together), so new
    values of the same shape leave the spec unchanged and the chart on screen only swaps its
    data instead of being compiled and drawn again. A fixed (symmetric) ``domain`` then
    travels in the data too: every cell carries its half-width, so the domain is exactly
    ``domain`` while it holds the cells, and a new one only swaps the data as well.

    ``aspect`` < 1: cells lower than wide (a wide, low room: numbers need width, not height).
    """
    rows, cols = unique_labels(list(rows)), unique_labels(list(cols))
    n_r, n_c = len(rows), len(cols)
    cell = cell or fit_cell(n_c, n_r, 420, 420)
    mats = {p: np.asarray(m, dtype=float) for p, m in panels.items()}
    cells = [_cells(m, rows, cols, p, digits) for p, m in mats.items()]
    fields = {k: [x for c in cells for x in c[k]] for k in cells[0]}
    live = live_domain and kind != "weights"
    if live and domain is not None:  # the fixed domain travels in the data: ±its half-width
        fields["_span"] = [max(map(abs, domain))] * len(fields["value"])
    data = records(fields)
    # the numbers' size: from the widest text; live, from "−0.00" (new values, same spec)
    text = ["−0." + "0" * digits] if live else [x for c in cells for x in c["text"]]
    facet = len(mats) > 1
    if kind == "weights":
        scale, dark = {"domain": list(domain or [0, 1]), "scheme": "blues"}, 0.55
    elif live:  # domain: an invisible layer holds ±max|value| (below); ink: 0.6 × that
        scale, dark = {"scheme": "redblue", "reverse": True}, "0.6 * datum._top"
    else:
        low, top = domain or symmetric_domain(*mats.values())
        scale = {"domain": [low, top], "scheme": "redblue", "reverse": True}
        dark = 0.6 * max(abs(low), abs(top))
    color = {"field": "value", "type": "quantitative", "scale": scale, "title": None}
    stroke = {"stroke": "white", "strokeWidth": 0.5 if cell >= 8 else 0}
    layers = [
        {
            "mark": {"type": "rect", **stroke},
            "transform": [{"filter": _VALID}],
            "encoding": {"color": color if legend else {**color, "legend": None}},
        }
    ]
    if not all(np.isfinite(m).all() for m in mats.values()):
        blanks = {"type": "rect", "color": blank, **stroke}
        layers.append({"mark": blanks, "transform": [{"filter": f"!{_VALID}"}]})
    if annotate is None:
        annotate = annotated(n_r, n_c, cell)
    size = "max(abs(datum.value), datum._span)" if "_span" in fields else "abs(datum.value)"
    peak = [{"calculate": size, "as": "_abs"}]  # max|value| of the cells (or ± the domain)
    peak.append({"joinaggregate": [{"op": "max", "field": "_abs", "as": "_top"}]})
    if annotate:
        ink = {"test": f"{_VALID} && abs(datum.value) > {dark}", "value": "white"}
        layers.append(
            {
                **({"transform": peak} if live and not facet else {}),  # facets: on top
                "mark": {"type": "text", "fontSize": cell_font(text, cell, max_font, aspect)},
                "encoding": {
                    "text": {"field": "text", "type": "nominal"},
                    "color": {"condition": ink, "value": "#222"},
                },
            }
        )
    if frame is not None:
        layers.append(
            {
                "transform": [{"filter": f"datum.i == {int(frame)}"}],
                "mark": {
                    "type": "rect",
                    "fillOpacity": 0,
                    "stroke": frame_color,
                    "strokeWidth": float(np.clip(cell / 6, 1, 3)),
                },  # thin rows: thin frame
                "encoding": {"x": {"value": 0}, "x2": {"value": "width"}},
            }
        )
    if live:  # two invisible cells at ±max|value| (±1 if all 0) span the colour domain
        limits = [{"filter": _VALID}, peak[0]]
        limits.append({"aggregate": [{"op": "max", "field": "_abs", "as": "_top"}]})
        limits.append({"calculate": "datum._top || 1", "as": "_top"})
        limits.append({"calculate": "-datum._top", "as": "_low"})
        limits.append({"fold": ["_low", "_top"], "as": ["_end", "_limit"]})
        layers.append(
            {
                "transform": limits,
                "mark": {"type": "rect", "opacity": 0},
                "encoding": {
                    **{ch: {"value": 0} for ch in _POSITION},
                    "color": {**color, "field": "_limit"},
                    "tooltip": None,
                },
            }
        )
    crowded = {"labelOverlap": "greedy"} if cell < 16 else {}  # tiny cells: skip clashing labels
    angle = 0 if max(map(_chars, cols), default=0) <= 2 else -45  # "d0", "猫": upright
    tips = "α" if kind == "weights" else "="
    view = {
        "width": {"step": cell},  # the view grows with the columns: same spec, more data
        "height": {"step": round(cell * aspect, 1)},
        "encoding": {
            "x": {"field": "col", "type": "nominal", "sort": _by_index("j"),
                  "title": x_title or None, "axis": {"labelAngle": angle, **crowded}},
            "y": {"field": "row", "type": "nominal", "sort": _by_index("i"),
                  "title": y_title or None, "axis": crowded},
            "tooltip": [
                {"field": "row", "type": "nominal", "title": y_title or "i"},
                {"field": "col", "type": "nominal", "title": x_title or "j"},
                {"field": "text", "type": "nominal", "title": tips},
            ],
        },
        "layer": layers,
    }  # fmt: skip
    head = {"datasets": {name: data}, "data": {"name": name}}
    if not facet:
        return {**head, "title": data_title(name) if title is None else title, **view}
    if max_width:
        columns = max(1, min(columns, max_width // (cell * n_c + 20)))
    return {
        **head,
        **({"transform": peak} if live else {}),  # before faceting: max|value| of all panels
        "facet": {"field": "panel", "type": "nominal", "sort": list(mats), "title": None},
        "columns": columns,
        "spec": view,
        "resolve": {"scale": {"color": "shared"}},
    }


def concat(
    charts: Sequence[dict | alt.TopLevelMixin],
    direction: str = "hconcat",
    spacing: int = 18,
    resolve: Mapping | None = None,
) -> dict:
    """Charts side by side (``"hconcat"``) or stacked (``"vconcat"``), each on its own colour
    scale unless ``resolve`` says otherwise. Their datasets move to the top level (a name
    used twice for different data is renamed in the chart that brings it)."""
    datasets: dict[str, list] = {}
    parts = []
    for chart in charts:
        part = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
        part = {k: v for k, v in part.items() if k not in ("$schema", "config")}
        for name, values in part.pop("datasets", {}).items():
            unique, k = name, 1
            while unique in datasets and datasets[unique] != values:
                unique, k = f"{name}_{k}", k + 1
            if unique != name:
                if part.get("data") != {"name": name}:
                    raise ValueError(f"dataset {name!r} is used twice for different data")
                part["data"] = {"name": unique}
                if part.get("title") == data_title(name):
                    part["title"] = data_title(unique)
            datasets[unique] = values
        parts.append(part)
    spec = {
        direction: parts,
        "spacing": spacing,
        "resolve": dict(resolve or {"scale": {"color": "independent"}}),
    }
    return {**spec, "datasets": datasets} if datasets else spec


def matrix_strip(
    items: Sequence[Panel],
    *,
    kinds: Mapping[str, str] | None = None,
    frames: Mapping[str, int] | None = None,
    presenter: bool = False,
    live_domain: bool = False,
    digits: int = 2,
    legends: bool = True,
    aspect: float = 1.0,
    largest: int | None = None,
    cell: int | None = None,
) -> dict:
    """Matrices of different shapes side by side (X, W_Q, Q, …), each titled with its shape
    and on its own colour scale (``live_domain``: see :func:`heatmap`).

    ``items`` are ``(title, matrix, row_labels, col_labels)``; ``kinds`` maps a title to its
    :func:`heatmap` kind (default ``"values"``), ``frames`` a title to the row to frame;
    cells print ``digits`` decimals and are ``aspect`` × as high as wide. ``legends=False``:
    a matrix whose cells print their numbers gets no colour legend (it repeats them; on a
    slide the room goes to the cells).
    Cells shrink (not below 10 px) so the strip fits a 1920 px screen with the sidebar open
    (without it in presenter mode), and grow up to ``largest`` px (default 26, or 34 on a
    projector, numbers up to :data:`SLIDE_FONT`), unless ``cell`` gives their px (a caller
    that lays the panels out in rows of its own sizes them for those rows).
    """
    kinds, frames = kinds or {}, frames or {}
    # px for the strip, largest cell, and the axis labels, legend and gap of one panel
    width, top, overhead = (1650, 34, 100) if presenter else (1350, 26, 80)
    top = largest or top
    columns, rows = sum(len(c) for *_, c in items), max(len(r) for _, _, r, _ in items)
    # At least 10 px: a wide strip then wraps into rows (see fit) instead of shrinking its
    # cells to hairlines (d_model = 64: 3 px cells, rows too thin to tell apart).
    if cell is None:
        cell = fit_cell(columns, rows, width - overhead * len(items), 900, lo=10, hi=top)
    return concat(
        [
            heatmap(
                {t: m},
                r,
                c,
                kinds.get(t, "values"),
                cell=cell,
                frame=frames.get(t),
                live_domain=live_domain,
                digits=digits,
                legend=legends or not annotated(len(r), len(c), cell),
                max_font=SLIDE_FONT if presenter else 15,
                aspect=aspect,
            )
            for t, m, r, c in items
        ]
    )


def table(spec: Mapping) -> pd.DataFrame:
    """The data behind a chart spec, every dataset and inline ``data.values`` in one table
    (the CSV export of what is on screen)."""
    parts = [pd.DataFrame(v) for v in spec.get("datasets", {}).values()]

    def walk(node: object) -> None:
        if isinstance(node, Mapping):
            data = node.get("data")
            if isinstance(data, Mapping) and isinstance(data.get("values"), list):
                parts.append(pd.DataFrame(data["values"]))
            for key, child in node.items():
                if key != "datasets":
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(spec)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _series_encoding(
    field: str, domain: Sequence[str] | None, colors: Sequence[str] | None = None
) -> dict:
    """Colour per series; a fixed ``domain`` keeps each series' colour in every language."""
    scale = {"domain": list(domain)} if domain else {}
    if colors:
        scale["range"] = list(colors)
    return {"field": field, "type": "nominal", "title": None, "scale": scale,
            "legend": {"orient": "bottom"}}  # fmt: skip


def _series_color(
    field: str, domain: Sequence[str] | None, colors: Sequence[str] | None = None
) -> alt.Color:
    """:func:`_series_encoding` for an Altair chart."""
    return alt.Color(**_series_encoding(field, domain, colors))


def bars(
    data: pd.DataFrame,
    x: str,
    y: str,
    title: str = "",
    color: str | None = None,
    column: str | None = None,
    y_domain: tuple[float, float] | None = None,
    labels: bool = True,
    sort: Sequence[str] | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    width: int = 360,
    height: int = 260,
    color_domain: Sequence[str] | None = None,
    colors: Sequence[str] | None = None,
) -> dict:
    """Bar chart of ``y`` per category ``x``, as a plain Vega-Lite dict (through Altair a
    chart of ten bars cost ~50 ms to build, as much as the rest of a rerun).

    Optional: a colour series ``color`` (``color_domain`` fixes its order, so colours do not
    swap with the language; ``colors`` picks them) and one panel per value of ``column``.
    """
    rows = records({c: data[c].to_numpy() for c in data.columns})
    for row in rows:  # JSON has no NaN: a missing value is null
        for k, v in row.items():
            if isinstance(v, float) and not math.isfinite(v):
                row[k] = None
    tooltip = [
        {"field": x, "type": "nominal", "title": x_title or ""},
        {"field": y, "type": "quantitative", "title": y_title or "y", "format": ".4f"},
    ]
    enc: dict = {
        "x": {"field": x, "type": "nominal", "sort": list(sort) if sort else None,
              "title": x_title, "axis": {"labelAngle": 0}},
        "y": {"field": y, "type": "quantitative", "title": y_title,
              **({"scale": {"domain": list(y_domain)}} if y_domain else {})},
        "tooltip": tooltip,
    }  # fmt: skip
    bar_color = _series_encoding(color, color_domain, colors) if color else None
    layers = [{"mark": {"type": "bar"},
               "encoding": {**enc, "color": bar_color or {"value": KEY_COLOR}}}]  # fmt: skip
    if labels:
        layers.append(
            {
                "mark": {"type": "text", "dy": -8, "color": "#222"},
                "encoding": {
                    **enc,
                    "text": {"field": y, "type": "quantitative", "format": ".3f"},
                    "color": {"value": "#222"},
                },
            }
        )
    view = {"layer": layers, "width": width, "height": height}
    spec: dict = {"datasets": {"bars": rows}, "data": {"name": "bars"}}
    if column:
        facet = {"field": column, "type": "nominal", "title": None, "sort": None}
        return {**spec, "facet": {"column": facet}, "spec": view}
    return {**spec, **view, **({"title": title} if title else {})}


# A log axis labels only its powers of ten (1, 10, 100, …): Vega also labels 2, 3, 5 … between
# them when a few decades are shown, and on a narrow chart "1" and "2" run together.
_DECADE = "log(datum.value) / LN10"
_POWER_OF_TEN = f"abs({_DECADE} - round({_DECADE})) < 1e-6 ? datum.label : ''"


def _log_labels(log: bool) -> dict:
    """Axis properties of a log axis (:data:`_POWER_OF_TEN`), none for a linear one."""
    return {"labelExpr": _POWER_OF_TEN, "labelOverlap": "greedy"} if log else {}


def lines(
    data: pd.DataFrame,
    x: str,
    y: str,
    color: str,
    title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    x_title: str | None = None,
    y_title: str | None = None,
    dashed: str | None = None,
    width: int = 420,
    height: int = 280,
    color_domain: Sequence[str] | None = None,
    colors: Sequence[str] | None = None,
    y_format: str | None = None,
) -> alt.Chart:
    """Line chart with points, one series per ``color`` value; optional log axes.

    ``dashed`` names a boolean column whose True rows are drawn dashed (e.g. theory lines);
    ``color_domain``/``colors`` fix each series' colour; ``y_format`` formats the y labels
    (e.g. ``"~s"``: 1e10 -> "10G").
    """
    y_axis = {"format": y_format} if y_format else {}
    enc = {
        "x": alt.X(
            f"{x}:Q",
            scale=alt.Scale(type="log" if log_x else "linear"),
            title=x_title,
            axis=alt.Axis(**_log_labels(log_x)),
        ),
        "y": alt.Y(
            f"{y}:Q",
            scale=alt.Scale(type="log" if log_y else "linear"),
            title=y_title,
            axis=alt.Axis(**y_axis, **_log_labels(log_y)),
        ),
        "color": _series_color(color, color_domain, colors),
        "tooltip": [
            alt.Tooltip(f"{color}:N", title=""),
            alt.Tooltip(f"{x}:Q", title=x_title or "x"),
            alt.Tooltip(f"{y}:Q", title=y_title or "y", format=".4g"),
        ],
    }
    if dashed:
        enc["strokeDash"] = alt.StrokeDash(f"{dashed}:N", legend=None)
    chart = (
        alt.Chart(data).mark_line(point=True).encode(**enc).properties(width=width, height=height)
    )
    return chart.properties(title=title) if title else chart


def histogram_rows(edges: np.ndarray, counts: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """The bars of :func:`histogram`: one row (``start``, ``end``, ``count``, ``series``) per
    bin and series."""
    return pd.DataFrame(
        {
            "start": np.tile(edges[:-1], len(counts)),
            "end": np.tile(edges[1:], len(counts)),
            "count": np.concatenate(list(counts.values())),
            "series": np.repeat(list(counts), len(edges) - 1),
        }
    )


def histogram(
    edges: np.ndarray,
    counts: Mapping[str, np.ndarray],
    title: str,
    x_title: str,
    y_title: str | None = None,
    colors: Sequence[str] | None = None,
    width: int = 420,
    height: int = 260,
) -> alt.Chart:
    """Counts per bin of one or more series on the same bins (``edges``: one more than each
    ``counts``), overlaid half-transparent; colours follow the order of ``counts``."""
    return (
        alt.Chart(histogram_rows(edges, counts))
        .mark_bar(opacity=0.6, binSpacing=0)
        .encode(
            x=alt.X("start:Q", title=x_title),
            x2="end:Q",
            # the counts change with the data and the layout does not: a taller peak gives more
            # ticks, which on a slide's large type would touch; Vega then drops every other one
            y=alt.Y(
                "count:Q", title=y_title, axis=alt.Axis(labelOverlap="parity", labelSeparation=8)
            ),
            y2=alt.datum(0),  # bars from 0: overlaid, not stacked
            color=_series_color("series", list(counts), colors),
            tooltip=[
                alt.Tooltip("series:N", title=""),
                alt.Tooltip("start:Q", title=x_title, format=".2f"),
                alt.Tooltip("count:Q", title=y_title or "n"),
            ],
        )
        .properties(title=title, width=width, height=height)
    )


def vectors_2d(data: pd.DataFrame, title: str, extent: float) -> alt.Chart:
    """Arrows from the origin in 2-D: columns ``label, x, y, role`` (``query``/``key``), and
    ``size`` (e.g. each key's attention weight) and ``text`` for the label drawn at the tip."""
    domain = [-extent, extent]
    colors = alt.Scale(domain=["query", "key"], range=[QUERY_COLOR, KEY_COLOR])
    base = alt.Chart(data).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=domain), title=None),
        y=alt.Y("y:Q", scale=alt.Scale(domain=domain), title=None),
        color=alt.Color("role:N", scale=colors, legend=None),
    )
    shafts = base.mark_rule(strokeWidth=3).encode(x2=alt.datum(0), y2=alt.datum(0))
    tips = base.mark_point(filled=True, opacity=1).encode(
        size=alt.Size("size:Q", scale=alt.Scale(domain=[0, 1], range=[40, 900]), legend=None),
        tooltip=[alt.Tooltip("label:N", title="")],
    )
    text = base.mark_text(dy=-16, fontWeight="bold").encode(text="text:N")
    return alt.layer(shafts, tips, text).properties(title=title, width=440, height=440)


def theme_config(presenter: bool) -> dict:
    """The house Vega-Lite ``config``: fonts, sizes (larger in presenter mode: >= 18 px on a
    1920 px projector), white background so dark labels stay legible when the app is
    switched to a dark theme. Y-axis titles are horizontal, above the axis: Chinese titles
    turned on their side are hard to read."""
    label, heading = (19, 23) if presenter else (12, 15)
    return {
        "font": FONT,
        "background": "#ffffff",
        "padding": 8,
        "axis": {"labelFontSize": label, "titleFontSize": label + 1, "labelLimit": 220},
        "axisY": {"titleAngle": 0, "titleAlign": "left", "titleAnchor": "end",
                  "titleBaseline": "bottom", "titleX": 0, "titleY": -8},
        "legend": {"labelFontSize": label, "titleFontSize": label, "labelLimit": 400,
                   "symbolSize": 180 if presenter else 100},
        "header": {"labelFontSize": label + 1, "titleFontSize": label + 1,
                   "labelFont": FONT, "titleFont": FONT},
        "title": {"fontSize": heading, "anchor": "start"},
        "text": {"fontSize": label},
        "view": {"strokeWidth": 0},
    }  # fmt: skip


# The room a chart may take, in CSS px. Normal mode: the main column of a 1366 x 768 laptop
# with the sidebar open (~905 px; at 1920 the same chart simply has room to spare).
# Presenter mode: a 1920 x 1080 projector with the sidebar closed (~1700 px), and a height
# that leaves the step's title, a line of text and the "what to notice" box on screen.
PAGE_WIDTH = 880
# Students: the height left on a 1280 x 720 laptop below the title and the step bar, so a
# chart is on the first screen together with the sidebar's controls that change it.
PAGE_HEIGHT = 480
PRESENTER_WIDTH = 1660
PRESENTER_HEIGHT = 520
MAX_GROWTH = 2.2  # presenter mode: a small chart grows at most this much…
MIN_SHRINK = 0.45  # …and a large one shrinks at most this much (then it scrolls in its box)
WRAP_BELOW = 0.75  # a chart that would have to shrink below this wraps its parts into rows
MIN_CELL_FONT = 9  # cell numbers that would shrink below this many px are left out
_CONTINUOUS_W, _STEP_W = 300, 20  # Vega-Lite's default view width and band step


@dataclass(frozen=True)
class Room:
    """The px a chart may take: ``width``, ``height`` (None: any), and whether a smaller chart
    grows into it (presenter mode) or keeps its own size."""

    width: int
    height: int | None = None
    grow: bool = False


def room(ctx: PageContext, share: float = 1.0, height: int | None = None) -> Room:
    """The :class:`Room` for a chart on this page: ``share`` of the page width (``0.5`` in
    one of two equal columns), ``height`` px at most in presenter mode (default
    :data:`PRESENTER_HEIGHT`; pass less on a step with more text). For students at most
    :data:`PAGE_HEIGHT` (their text goes below the chart)."""
    if ctx.presenter:
        return Room(int(PRESENTER_WIDTH * share), height or PRESENTER_HEIGHT, grow=True)
    return Room(int(PAGE_WIDTH * share), min(height or PAGE_HEIGHT, PAGE_HEIGHT))


def _data_rows(node: Mapping, datasets: Mapping, inherited: list | None) -> list | None:
    data = node.get("data")
    if isinstance(data, Mapping):
        if isinstance(data.get("values"), list):
            return data["values"]
        if isinstance(datasets.get(data.get("name")), list):
            return datasets[data["name"]]
    return inherited


# What :func:`fit` has already read off a dataset, for the length of one call: it estimates
# the same axes for every candidate layout and scale (a 64 × 64 strip: ~190 passes over 4096
# cells). Keyed on the rows' id, which stays valid while the spec being fitted holds them;
# a context variable, so every session's script thread has its own (or none).
_FIT_MEMO: ContextVar[dict | None] = ContextVar("fit_memo", default=None)


def _memo(key: tuple, compute: Callable[[], object]) -> object:
    memo = _FIT_MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _distinct(rows: list | None, field: str | None) -> list:
    """The values of ``field`` in ``rows``, in order of appearance."""
    if not rows or not field:
        return []
    return _memo(("distinct", id(rows), field), lambda: _distinct_values(rows, field))


def _distinct_values(rows: list, field: str) -> list:
    try:  # rows are dicts with the field (a heatmap's cells): 3× faster than the check below
        return list(dict.fromkeys([r[field] for r in rows]))
    except (KeyError, TypeError):
        return list(dict.fromkeys(r.get(field) for r in rows if isinstance(r, Mapping)))


def _extent(
    node: Mapping,
    datasets: Mapping,
    rows: list | None = None,
    font: float | None = None,
    titles: bool = True,
) -> tuple[float, float]:
    """Estimated px (width, height) of a Vega-Lite (sub)spec with its axes, legends and
    titles (``font``: the axis label size, read from the spec's config; ``titles=False``:
    leave out how wide the title texts are, so the width is linear in the view sizes)."""
    rows = _data_rows(node, datasets, rows)
    font = font or node.get("config", {}).get("axis", {}).get("labelFontSize", 12)
    gap = node.get("spacing", 20)
    for key in ("hconcat", "vconcat", "concat"):
        if key in node:
            # the padding (16 px) goes round the whole chart, not round each part
            sizes = [
                (w - 16, h - 16)
                for w, h in (_extent(p, datasets, rows, font, titles) for p in node[key])
            ]
            if key == "hconcat":
                w, h = sum(w for w, _ in sizes) + gap * (len(sizes) - 1), max(h for _, h in sizes)
            elif key == "vconcat":
                w, h = max(w for w, _ in sizes), sum(h for _, h in sizes) + gap * (len(sizes) - 1)
            else:
                cols = max(1, min(node.get("columns") or len(sizes), len(sizes)))
                grid = [sizes[i : i + cols] for i in range(0, len(sizes), cols)]
                widths = [max(sizes[i][0] for i in range(c, len(sizes), cols)) for c in range(cols)]
                w, h = sum(widths) + gap * (cols - 1), sum(max(h for _, h in r) for r in grid)
            if node.get("title"):
                h += _title_height(node["title"], font)
                w = max(w, _text_width(node["title"], font * 1.25) if titles else 0)
            return w + 16, h + 16
    if "facet" in node and "spec" in node:
        return _facet_extent(node, datasets, rows, font, titles)
    for layer in node.get("layer", []) if rows is None else []:  # layers with their own data
        rows = _data_rows(layer, datasets, None)
        if rows:
            break
    box = _unit_box(node, rows, font)
    w = max(box.left + box.view_w + box.right, box.title_w if titles else 0)
    return w + 16, box.top + box.view_h + box.bottom + 16  # + padding


@dataclass(frozen=True)
class _Box:
    """Estimated px of one view (``view_w`` × ``view_h``) and what stands around it: the y
    axis (``left``), the x axis (``bottom``, with a legend below), the legend on the right,
    the title and a horizontal y title (``top``), and the width of the title text."""

    view_w: float
    view_h: float
    left: float
    bottom: float
    right: float
    top: float
    title_w: float


def _text_width(text: object, font: float, em: float = 0.5) -> float:
    """Estimated px of a title or label: ``em`` × ``font`` a character (CJK: twice that)."""
    if isinstance(text, Mapping):
        text = text.get("text", "")
    if isinstance(text, Mapping):  # an expression: its text is known only in the browser
        return 0.0
    lines = text if isinstance(text, list) else [text]
    return max((_chars(str(s)) for s in lines), default=0) * font * em


def _title_height(title: object, font: float) -> float:
    """Estimated px of a chart title (a list of strings: one line each) and its offset."""
    text = title.get("text", "") if isinstance(title, Mapping) else title
    return (len(text) if isinstance(text, list) else 1) * (font * 1.25 + 2) + 8


def _chars(text: str) -> int:
    return sum(2 if ord(c) > 0x2E80 else 1 for c in text)


def _unit_box(node: Mapping, rows: list | None, font: float) -> _Box:
    enc = node.get("encoding", {})
    for layer in node.get("layer", []):
        enc = {**layer.get("encoding", {}), **enc}
    x, y = enc.get("x", {}), enc.get("y", {})
    top = bottom = right = title_w = 0.0
    if node.get("title"):
        top += _title_height(node["title"], font)
        title_w = _text_width(_title_text(node, rows), font * 1.25)
    left = _axis_depth(y, rows, font, across=True)
    if isinstance(y, Mapping) and y.get("title"):  # horizontal, above the axis
        top += font + 8
        if (y.get("axis") or {}).get("titleAlign") != "right":  # it stands over the view
            title_w = max(title_w, left + _text_width(y["title"], font))
    legend = enc.get("color", {})
    if isinstance(legend, Mapping) and "field" in legend and legend.get("legend", {}) is not None:
        if legend.get("legend", {}).get("orient", "right") in ("right", "left"):
            right = 30 + _label_chars(legend, rows, quantitative_chars=4) * font * 0.55
        else:
            bottom += font + 16
    bottom += _axis_depth(x, rows, font, across=False)
    return _Box(
        _view_length(node.get("width"), x, rows),
        _view_length(node.get("height"), y, rows),
        left,
        bottom,
        right,
        top,
        title_w,
    )


def _facet_extent(
    node: Mapping, datasets: Mapping, rows: list | None, font: float, titles: bool
) -> tuple[float, float]:
    """A facet's px: the panels in a grid that share one y axis per row (on the left), one x
    axis per column (at the bottom), one legend, and a header label above each panel."""
    inner = node["spec"]
    rows = _data_rows(inner, datasets, rows)
    if "facet" in inner or any(k in inner for k in ("hconcat", "vconcat", "concat")):
        w, h = _extent(inner, datasets, rows, font, titles)  # nested: each panel in full
        box = _Box(w - 16, h - 16, 0, 0, 0, 0, 0)
    else:
        box = _unit_box(inner, rows, font)
    facet, gap = node["facet"], node.get("spacing", 20)
    header = font + 1  # the theme's header labels are one px larger than the axis labels
    if "field" in facet:
        names = _distinct(rows, facet["field"]) or [""]
        cols = max(1, min(node.get("columns") or len(names), len(names)))
        n_rows, row_names = math.ceil(len(names) / cols), []
    else:
        names = _distinct(rows, facet.get("column", {}).get("field")) or [""]
        row_names = _distinct(rows, facet.get("row", {}).get("field"))
        cols, n_rows = len(names), max(1, len(row_names))
    col_w = max(box.view_w, max(_text_width(s, header) for s in names) if titles else 0)
    w = box.left + cols * col_w + gap * (cols - 1) + box.right
    w += max((_text_width(s, header) + 10 for s in row_names), default=0)  # row labels
    h = box.top + n_rows * (box.view_h + header + 10) + gap * (n_rows - 1) + box.bottom
    if node.get("title"):
        h += _title_height(node["title"], font)
        w = max(w, _text_width(node["title"], font * 1.25) if titles else 0)
    return max(w, box.title_w if titles else 0) + 16, h + 16


def _label_chars(channel: object, rows: list | None, quantitative_chars: int = 5) -> int:
    """Characters in the longest label of an axis or legend (CJK characters count double)."""
    if not isinstance(channel, Mapping) or "field" not in channel:
        return 0
    if channel.get("type") not in ("nominal", "ordinal"):
        return quantitative_chars

    def longest() -> int:
        labels = [str(v) for v in _distinct(rows, channel["field"])] or ["xxxx"]
        return max(_chars(s) for s in labels)

    return _memo(("chars", id(rows), channel["field"]), longest)


def _axis_depth(channel: object, rows: list | None, font: float, across: bool) -> float:
    """px an axis takes beside (``across``: a y axis) or below its view (an x axis)."""
    if not isinstance(channel, Mapping) or "field" not in channel:
        return 0.0
    text = _label_chars(channel, rows) * font * 0.55
    if across:  # a y title put beside the labels (facets: see _facet_titles) may be wider
        beside = (channel.get("axis") or {}).get("titleAlign") == "right"
        return max(text, _text_width(channel.get("title") or "", font) if beside else 0) + 12
    angle = (channel.get("axis") or {}).get("labelAngle", 0)
    depth = text * 0.71 + font * 0.71 if angle else font
    return depth + 12 + (font + 8 if channel.get("title") else 0)


def _view_length(size: object, channel: object, rows: list | None) -> float:
    if isinstance(size, int | float):
        return float(size)
    discrete = isinstance(channel, Mapping) and channel.get("type") in ("nominal", "ordinal")
    step = size.get("step", _STEP_W) if isinstance(size, Mapping) else _STEP_W
    if discrete:
        return step * max(1, len(_distinct(rows, channel.get("field"))))
    return _CONTINUOUS_W


def _wrap(spec: dict, width: int, datasets: Mapping) -> dict:
    """``spec`` with side-by-side parts or panels wrapped into rows that fit ``width``."""
    rows = _data_rows(spec, datasets, None)
    if "vconcat" in spec:
        return {**spec, "vconcat": [_wrap(p, width, datasets) for p in spec["vconcat"]]}
    if "hconcat" in spec and len(spec["hconcat"]) > 1:
        parts = spec["hconcat"]
        for cols in range(len(parts) - 1, 0, -1):
            candidate = {**{k: v for k, v in spec.items() if k != "hconcat"}, "concat": parts,
                         "columns": cols}  # fmt: skip
            if _extent(candidate, datasets)[0] <= width or cols == 1:
                return candidate
    if "facet" in spec and "spec" in spec:
        facet = spec["facet"]
        if "column" in facet and "row" not in facet:  # one row of panels -> a wrapping facet
            spec = {**spec, "facet": dict(facet["column"])}
            spec.pop("columns", None)
            facet = spec["facet"]
        if "field" in facet:
            n = len(_distinct(rows, facet["field"])) or 1
            cols = min(spec.get("columns") or n, n)
            while cols > 1 and _extent({**spec, "columns": cols}, datasets)[0] > width:
                cols -= 1
            return {**spec, "columns": cols}
    return spec


def _wrapped(spec: dict, width: int, datasets: Mapping) -> list[dict]:
    """Ways to wrap ``spec``: side-by-side parts or facet panels in every number of columns
    that gives a different number of rows (the caller keeps the one that can be drawn
    largest), or stacked parts each wrapped to fit ``width`` (:func:`_wrap`)."""
    wrapped = _wrap(spec, width, datasets)
    if "hconcat" in spec and len(spec["hconcat"]) > 1:
        n = len(spec["hconcat"])
    elif "facet" in wrapped and "columns" in wrapped:
        n = len(_distinct(_data_rows(spec, datasets, None), wrapped["facet"]["field"])) or 1
    else:
        return [wrapped]
    layouts = []
    for cols in sorted({math.ceil(n / r) for r in range(2, n + 1)}, reverse=True):
        if "hconcat" in spec:
            rest = {k: v for k, v in spec.items() if k != "hconcat"}
            layouts.append({**rest, "concat": spec["hconcat"], "columns": cols})
        else:
            layouts.append({**wrapped, "columns": cols})
    return layouts


_SCALED = ("width", "height")
_POSITION = ("x", "x2", "y", "y2")
_PARTS = ("layer", "hconcat", "vconcat", "concat", "spec")  # where sized views nest


def _scaled(node: object, f: float) -> object:
    """A copy of a (sub)spec with view sizes, pixel positions and mark fonts times ``f``
    (datasets, data, config and lists of plain values, such as an axis's sort order, are
    shared, not copied); text layers whose font would fall below :data:`MIN_CELL_FONT` px
    are dropped (their numbers would overlap). Specs are JSON, so their nodes are dicts
    and lists (an ``isinstance`` against them is ~3× faster than against ``Mapping``: this
    walk runs a few thousand times a fit)."""
    if isinstance(node, list):
        return [_scaled(x, f) for x in node] if _nested(node) else node
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("datasets", "data", "config", "title", "tooltip"):
            out[key] = value
        elif key == "layer" and isinstance(value, list):  # cell numbers too small: drop them
            out[key] = [_scaled(x, f) for x in value if _font(x) * f >= MIN_CELL_FONT]
        elif key in _SCALED and isinstance(value, int | float):
            out[key] = round(value * f, 1)
        elif key in _SCALED and isinstance(value, Mapping) and "step" in value:
            out[key] = {**value, "step": round(value["step"] * f, 1)}
        elif key == "mark" and isinstance(value, Mapping) and "fontSize" in value:
            out[key] = {**value, "fontSize": int(np.clip(round(value["fontSize"] * f), 9, 28))}
        elif key == "encoding" and isinstance(value, Mapping):
            enc = dict(value)
            for ch in _POSITION:
                pos = enc.get(ch)
                if isinstance(pos, Mapping) and isinstance(pos.get("value"), int | float):
                    enc[ch] = {**pos, "value": pos["value"] * f}
            out[key] = enc
        elif key in _PARTS:
            out[key] = _scaled(value, f)
        else:  # transforms, facet definitions, resolve…: nothing sized inside
            out[key] = value
    return out


def _nested(items: list) -> bool:
    """Whether a spec list holds dicts or lists (else: plain values, nothing to walk)."""
    return any(isinstance(x, dict | list) for x in items)


def _font(layer: object) -> float:
    """A layer's own mark font size (inf when it sets none: such layers always stay)."""
    mark = layer.get("mark") if isinstance(layer, Mapping) else None
    size = mark.get("fontSize") if isinstance(mark, Mapping) else None
    return float(size) if isinstance(size, int | float) else math.inf


# A facet's y title, horizontal, stands left of the panels' header labels (beside the axis
# labels, its right end at the axis) instead of above the first panel, where it would run
# into that panel's header label.
_Y_TITLE_BESIDE = {"titleAlign": "right", "titleX": -6}


def _y_title_beside(spec: Mapping) -> dict:
    """``spec`` (a facet's panel) with its y title moved beside the axis labels."""

    def moved(enc: object) -> object:
        y = enc.get("y") if isinstance(enc, Mapping) else None
        if not isinstance(y, Mapping) or not y.get("title") or y.get("axis", {}) is None:
            return enc
        return {**enc, "y": {**y, "axis": {**(y.get("axis") or {}), **_Y_TITLE_BESIDE}}}

    out = {**spec, "encoding": moved(spec["encoding"])} if "encoding" in spec else dict(spec)
    if isinstance(spec.get("layer"), list):
        out["layer"] = [
            {**x, "encoding": moved(x["encoding"])} if isinstance(x, Mapping) and "encoding" in x
            else x
            for x in spec["layer"]
        ]  # fmt: skip
    return out


def _fixed_facets(node: object, datasets: Mapping, rows: list | None = None) -> object:
    """Facets without an explicit order get the order of their data (Vega-Lite would sort
    the panel labels, so the panels would swap places with the language), and their y
    title goes beside the axis labels (:func:`_y_title_beside`)."""
    if isinstance(node, list):
        return [_fixed_facets(x, datasets, rows) for x in node] if _nested(node) else node
    if not isinstance(node, dict):  # JSON: see _scaled
        return node
    rows = _data_rows(node, datasets, rows)
    out = {k: v if k in ("datasets", "data", "config") else _fixed_facets(v, datasets, rows)
           for k, v in node.items()}  # fmt: skip
    facet = out.get("facet")
    if isinstance(facet, Mapping) and isinstance(out.get("spec"), Mapping):
        out["spec"] = _y_title_beside(out["spec"])
        defs = [facet] if "field" in facet else [facet.get(k) for k in ("row", "column")]
        fixed = {}
        for d in defs:
            if isinstance(d, Mapping) and d.get("sort") is None and _distinct(rows, d["field"]):
                fixed[id(d)] = {**d, "sort": _distinct(rows, d["field"])}
        if "field" in facet:
            out["facet"] = fixed.get(id(facet), facet)
        else:
            out["facet"] = {k: fixed.get(id(v), v) for k, v in facet.items()}
    return out


def _scale_for(spec: dict, space: Room, datasets: Mapping) -> float:
    """The factor that makes ``spec`` fit ``space`` (or fill it, when ``space.grow``)."""
    # Axes, legends and titles keep their size, so without the title texts' widths the
    # extent is linear in the scale: solve for it.
    w, h = _extent(spec, datasets, titles=False)
    w2, h2 = _extent(_scaled(spec, 2.0), datasets, titles=False)
    f = 1 + (space.width - w) / max(w2 - w, 1) if (w > space.width or space.grow) else 1.0
    if space.height and (space.grow or h > space.height):
        f = min(f, 1 + (space.height - h) / max(h2 - h, 1))
    f = float(np.clip(f, MIN_SHRINK, MAX_GROWTH if space.grow else 1.0))

    def too_wide(g: float) -> bool:
        return _extent(_scaled(spec, g), datasets)[0] > space.width + 1

    # A title wider than its view widens its part: shrink the views further while that
    # helps (a title wider than the room whatever the scale leaves them be). Shrinking
    # goes down the ladder (see LADDER); growing into a slide's room, by bisection.
    if not space.grow:
        f = 1.0 if f >= 1 else on_ladder(f)
        if too_wide(f) and not too_wide(MIN_SHRINK):
            while too_wide(f):
                f = max(f / LADDER, MIN_SHRINK)
        return f
    if not too_wide(f) or too_wide(MIN_SHRINK):
        return f
    low = MIN_SHRINK
    for _ in range(8):
        mid = (low + f) / 2
        low, f = (low, mid) if too_wide(mid) else (mid, f)
    return low


def fit(spec: Mapping, space: Room) -> dict:
    """``spec`` laid out for ``space``: side-by-side parts and facet panels wrap into rows
    when they are much too wide, stacked parts go side by side when the room is wide and
    low (presenter mode), then the whole chart is scaled (view sizes, cells, cell text)
    down to fit, or up to fill the room when ``space.grow``; facets get a fixed order.
    Sizes are estimated from the spec (axes and legends by rule of thumb)."""
    token = _FIT_MEMO.set({})
    try:
        return _fit(spec, space)
    finally:
        _FIT_MEMO.reset(token)


def _fit(spec: Mapping, space: Room) -> dict:
    datasets = spec.get("datasets", {})
    out = _fixed_facets(spec, datasets)
    layouts = [out]
    as_is = _scale_for(out, space, datasets)
    if as_is < WRAP_BELOW:  # too small if only shrunk
        layouts += _wrapped(out, int(space.width / WRAP_BELOW), datasets)
    if space.height and "vconcat" in out and len(out["vconcat"]) > 1:
        side = {**{k: v for k, v in out.items() if k != "vconcat"}, "hconcat": out["vconcat"]}
        layouts.append(side)
    scales = [as_is] + [_scale_for(layout, space, datasets) for layout in layouts[1:]]
    order = range(0, -len(layouts), -1)  # equal scales: the earlier layout
    f, _, best = max(zip(scales, order, layouts, strict=True), key=lambda x: x[:2])
    return best if abs(f - 1) < 0.03 else _scaled(best, f)


_HASHED = re.compile(r"data-[0-9a-f]{32}")  # Altair's name for a dataset: a hash of its rows


def stable_names(spec: dict) -> dict:
    """``spec`` with Altair's dataset names (a hash of the rows) replaced by their order,
    ``data-0``, ``data-1``, …: new values under the old name leave the spec unchanged, so
    the chart on screen swaps its data instead of being compiled and drawn again."""
    old = [name for name in spec.get("datasets", {}) if _HASHED.fullmatch(name)]
    if not old:
        return spec
    taken = set(spec["datasets"]) - set(old)
    free = (f"data-{k}" for k in range(len(spec["datasets"]) + 1) if f"data-{k}" not in taken)
    new = dict(zip(old, free, strict=False))

    def walk(node: object) -> object:
        if isinstance(node, list):
            return [walk(x) for x in node] if _nested(node) else node
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("name"), str) and node["name"] in new:
            return {**node, "name": new[node["name"]]}  # a reference: {"name": …}
        return {k: v if k == "datasets" else walk(v) for k, v in node.items()}

    out = walk(spec)
    out["datasets"] = {new.get(k, k): v for k, v in spec["datasets"].items()}
    return out


def to_spec(chart: alt.TopLevelMixin | dict, presenter: bool) -> dict:
    """A finished Vega-Lite spec (a dict) in the house theme, sized by its own width and
    height (axes and legends come on top: ``autosize: pad``).

    Altair charts are converted without re-validating them: validation is what makes a
    chart cost ~100 ms, and the builders here are tested to produce valid specs.
    """
    spec = stable_names(dict(chart) if isinstance(chart, dict) else chart.to_dict(validate=False))
    spec["config"] = {**spec.get("config", {}), **theme_config(presenter)}
    spec.setdefault("$schema", alt.SCHEMA_URL)
    spec.setdefault("autosize", {"type": "pad", "contains": "padding"})
    return spec


# How Vega draws a chart in the browser. For students, on a canvas: a slider step redraws
# one bitmap per chart instead of rewriting hundreds of SVG nodes, which cut a step's
# main-thread work by 8-23 % on /masking, /weighted_sum and /qkv (bench/RESULTS.md,
# session 7). A canvas has no element per mark, so the ARIA description Vega-Lite writes
# for every mark (a string built from all its fields, per cell, through Vega's expression
# interpreter, on every data swap) reaches no one there: off ("aria": false; ~13 % of
# /qkv's Vega work per step, session 10). On a slide, SVG with those descriptions:
# presenter mode scales a chart too wide for a laptop's column with CSS (vector-sharp on a
# projector), and its text stays measurable in the DOM.
def _drawn(spec: dict, presenter: bool) -> dict:
    if presenter:
        return spec
    config = {**spec.get("config", {}), "aria": False}
    return {**spec, "config": config, "usermeta": {"embedOptions": {"renderer": "canvas"}}}


def _draw(spec: dict, key: str | None, presenter: bool) -> None:
    st.vega_lite_chart(spec=_drawn(spec, presenter), theme=None, key=key, width="content")


def show(
    ctx: PageContext,
    chart: alt.TopLevelMixin | dict,
    key: str | None = None,
    *,
    space: Room | None = None,
) -> dict:
    """Draw ``chart`` in the house theme, fitted to ``space`` (default: :func:`room`, the
    whole page width), and return the spec as drawn (for exports)."""
    spec = fit(to_spec(chart, ctx.presenter), space or room(ctx))
    _draw(spec, key, ctx.presenter)
    return spec


Builder = Callable[..., dict | alt.TopLevelMixin]  # a chart builder: inputs -> chart


class _KeyPickler(pickle.Pickler):
    """Pickles a chart's inputs for :func:`_input_key`; a :class:`Translator` as its language."""

    def reducer_override(self, obj: object) -> object:
        if isinstance(obj, Translator):
            return Translator, (obj.lang,)
        return NotImplemented


def _input_key(builder: Builder, *inputs: object) -> str:
    """One short key for a builder and its inputs (arrays, labels, tables, a Translator…).

    Streamlit's own argument hashing walks every argument in Python (and looks the
    function's signature up once per argument): ~1–2 ms a chart on every rerun. A pickle is
    made in C and is a faithful copy of the values, so equal keys mean equal inputs.
    """
    buf = io.BytesIO()
    try:
        _KeyPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(inputs)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(f"the inputs of {_key(builder)} must be plain values: {e}") from e
    return f"{_key(builder)}:{hashlib.blake2b(buf.getbuffer(), digest_size=20).hexdigest()}"


@st.cache_data(max_entries=256, show_spinner=False)
def _built(key: str, _job: tuple[Builder, tuple, dict]) -> tuple[dict, dict]:
    """``builder(*args, **kwargs)`` of ``_job`` as a Vega-Lite dict, once per ``key`` (the
    builder and its inputs, :func:`_input_key`), and the same spec with its datasets already
    in the Arrow form ``st.vega_lite_chart`` sends (it passes bytes through instead of
    converting every dataset on every rerun)."""
    return _make(*_job)


def _make(builder: Builder, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    chart = builder(*args, **kwargs)
    spec = stable_names(chart if isinstance(chart, dict) else chart.to_dict(validate=False))
    arrow = {key: _arrow(values) for key, values in spec.get("datasets", {}).items()}
    return spec, {**spec, "datasets": arrow} if arrow else spec


def _arrow(values: object) -> bytes:
    """A dataset in the Arrow form ``st.vega_lite_chart`` sends. Records go straight to
    Arrow (~2 ms for a 64 × 64 heatmap; through pandas, Streamlit's default, ~100×
    longer); anything else, or records Arrow cannot type, the default way."""
    if isinstance(values, list) and values and all(isinstance(r, dict) for r in values):
        try:
            return dataframe_util.convert_anything_to_arrow_bytes(pa.Table.from_pylist(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return dataframe_util.convert_anything_to_arrow_bytes(values)


@st.cache_data(max_entries=256, show_spinner=False)
def _fitted(key: str, _job: tuple[Builder, tuple, dict, bool, Room]) -> tuple[dict, dict]:
    """The chart of :func:`_built` themed and :func:`fit` to the room (the spec as drawn,
    data inline, for the exports) and the same with its datasets in Arrow form (what is
    sent): once per ``key`` (builder, inputs, presenter flag and room), as fitting a chart
    cost as much as building it (~10 ms)."""
    builder, args, kwargs, presenter, space = _job
    spec, arrow = _make(builder, args, kwargs)
    fitted = fit(to_spec(spec, presenter), space)
    return fitted, {**fitted, "datasets": arrow["datasets"]} if "datasets" in arrow else fitted


def _key(builder: Builder) -> str:
    name = f"{builder.__module__}.{builder.__qualname__}"
    if "<" in name:  # a lambda or a nested function: its name would not identify it
        raise TypeError(f"chart builders must be module-level functions, not {name}")
    return name


def build(builder: Builder, *args: object, **kwargs: object) -> dict:
    """``builder(*args, **kwargs)`` as a Vega-Lite dict, built once per distinct input.

    ``builder`` is a module-level function (its module and name identify it in the cache)
    of picklable inputs: arrays, tables, labels, translated titles, a :class:`Translator`.
    Each call returns a fresh copy, so callers may change it.
    """
    return _built(_input_key(builder, args, kwargs), (builder, args, kwargs))[0]


def show_cached(
    ctx: PageContext,
    builder: Builder,
    *args: object,
    space: Room | None = None,
    **kwargs: object,
) -> dict:
    """:func:`show` the chart ``builder(*args, **kwargs)``, built (and its data converted
    for the browser) once per input: see :func:`build`. ``space`` is where it must fit
    (default: :func:`room`, the page width). Returns the themed spec as drawn, data inline,
    for the exports."""
    job = (builder, args, kwargs, ctx.presenter, space or room(ctx))
    fitted, drawn = _fitted(_input_key(builder, *job[1:]), job)
    _draw(drawn, None, ctx.presenter)
    return fitted
