"""The chart builders: inputs (arrays, labels, tables) -> one Vega-Lite chart, a plain dict.

* **Heatmaps** (:func:`heatmap`; matrices of different shapes side by side:
  :func:`matrix_strip`), **bars** (:func:`bars`), **lines** (:func:`lines`) and
  **histograms** (:func:`histogram`), with their data inline as a named dataset (a
  heatmap's cells are its records, null where a cell has no value). Lines and histograms
  also take the name of a dataset instead of rows: a layout built without its data, to
  which its caller adds the rows of each new input (the browser then swaps the rows into
  the chart on screen).
* Charts combine as dicts too: side by side or stacked (:func:`concat`), drawn over each
  other in one view (:func:`layer`).

Why dicts and not Altair: building the chart is what costs, not the dict it ends as.
Measured on this 2-core machine (2026-12-04, Altair 6.3, median CPU time of 30 builds;
bench/RESULTS.md, "Building a chart: Altair vs dicts"), the same chart built with Altair
and converted with ``to_dict(validate=False)``, against its builder here: an annotated
30 × 30 heatmap 28–31 ms against 0.9 ms, a line chart of 40 points 3.6–4.7 ms against
0.09, a histogram of 80 bars 8–11 ms against 0.4, ten bars 8–10 ms against 0.04
(validated, Altair's default: 6–40 ms). Altair copies its objects, passes the data through
pandas and hashes the rows to name the dataset. A slider step is a new input, so its
charts are built again on every step: tens of ms per chart are a large share of a rerun's
100 ms budget, and while other processes shared the cores the same builds took 2–7× as
long on the clock. Altair's data transformer also refuses more than 5000 rows (9 heads
of 40 × 40 cells are 14 400); a dict has no row limit. And a server whose charts are all
dicts never imports Altair (~180 ms, once per process).

Builders size their views in px before any room is known (a heatmap by its cell size,
:func:`ui.charts.sizing.fit_cell`); :func:`ui.charts.sizing.fit` then scales the chart to
its room. :func:`table` is the data behind a finished spec (the CSV export).
"""

import json
import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Literal

import numpy as np
import pandas as pd

from ui.charts.sizing import CROWDED_STEP, PAGE_WIDTH, PRESENTER_WIDTH, SKIP_TOUCHING, fit_cell
from ui.charts.text import chars, data_title, fmt_cells, unique_labels
from ui.charts.theme import FRAME, KEY_COLOR, MASKED, QUERY_COLOR

# A tooltip's title for the field that names a coloured series (a line, a bar, a point): a
# swatch-like dot in every language. An empty title would not hide the name: Vega-Lite then
# shows the field's own name ("series", "entry"), English in a Chinese tooltip.
SERIES_TIP = "●"
MAX_ANNOTATED = 30  # print numbers in heatmap cells only up to this many rows/columns…
MIN_ANNOTATED_CELL = 22  # …and only in cells at least this many px wide (else they overlap)
SLIDE_FONT = 26  # presenter mode: cell numbers up to this many px (large cells, back of the hall)
CELL_FILL = 0.9  # the widest number in a heatmap takes at most this share of its cell
# Character widths in em of the fonts the numbers fall back to (Noto Sans CJK, Arial: a digit
# 0.556 em), wider than the theme's Source Sans, so the numbers fit whichever font draws them.
_EM = {".": 0.28, ",": 0.28, "−": 0.56, "-": 0.35, "∞": 1.0, " ": 0.25}  # a digit: 0.56
_VALID = "isValid(datum.value)"
LINK_COLOR = (
    QUERY_COLOR  # linked views (heatmap's link): the outline of the row or column pointed at
)
Link = Literal["rows", "cols"]  # what heatmap's ``link`` outlines in every panel

Panel = tuple[str, np.ndarray, Sequence[str], Sequence[str]]  # title, matrix, rows, columns


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


def text_em(texts: Sequence[str]) -> float:
    """Estimated width in em of the widest of ``texts`` (see :data:`_EM`; at least 1)."""
    widths = (sum(_EM.get(c, 0.56 if c.isdigit() else 0.6) for c in s) for s in set(texts))
    return max(widths, default=1.0) or 1.0


def cell_font(
    texts: Sequence[str], cell: float, max_font: float = 15, aspect: float = 1.0
) -> float:
    """px of the numbers in ``cell``-px cells (``aspect`` × as high): as large as the widest
    of ``texts`` allows (:data:`CELL_FILL` of the width, 60 % of the height), kept within
    9..``max_font`` (to 0.1 px: a chart grown or shrunk by :func:`ui.charts.sizing.fit`
    rounds it once)."""
    fits = min(cell * CELL_FILL / text_em(texts), cell * aspect * 0.6)
    return round(float(np.clip(fits, 9, max_font)), 1)


def annotated(rows: int, columns: int, cell: float) -> bool:
    """Whether a heatmap of this size prints its numbers (see :func:`heatmap`)."""
    return max(rows, columns) <= MAX_ANNOTATED and cell >= MIN_ANNOTATED_CELL


def by_index(field: str) -> dict:
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
    domain: Sequence[float] | None = None,
    legend: bool = True,
    annotate: bool | None = None,
    blank: str = MASKED,
    name: str = "cells",
    live_domain: bool = False,
    digits: int = 2,
    max_font: int = 15,
    aspect: float = 1.0,
    link: Link | None = None,
) -> dict:
    """Annotated heatmap of one matrix, or one small multiple per panel (same shape, one
    shared colour scale, wrapped after ``columns`` panels), as a Vega-Lite dict.

    ``kind="weights"``: a fixed 0..1 sequential scale; ``"scores"``/``"values"``: a diverging
    scale symmetric around 0 (or the fixed ``domain``, e.g. shared with another chart).
    Cells without a finite value are drawn in ``blank`` grey and keep their text (−∞, or
    blank for NaN). Numbers are printed (``annotate=None``) while the matrix is at most
    :data:`MAX_ANNOTATED` wide and tall and cells are at least :data:`MIN_ANNOTATED_CELL` px.
    A single panel is titled with its shape, e.g.
    "weights (6 × 6)", read from its cells in the browser (:func:`data_title`; or
    ``title``). Cells are ``cell`` px (default: the matrix fits ~420 px) and the views are
    sized per cell, so a matrix of another shape with the same cell size has the same spec
    (:func:`ui.charts.sizing.fit` wraps small multiples that do not fit their room).
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

    ``link`` (linked views): pointing at a cell outlines its row (``"rows"``: the same ``i``,
    e.g. a query's row in every head) or its column (``"cols"``: the same ``j``, e.g. a key
    token in every layer and head) in :data:`LINK_COLOR` in every panel at once, and a click
    pins that outline until a second click on it or a click beside the cells
    (:func:`_linked`). Nothing is outlined while nobody points (an export), and new data
    keeps the spec. None (the default): the spec has neither selections nor outline.
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
    if link is not None:  # the cells' layer holds the selections, the outline is drawn on top
        params, outline = _linked(name, cell, link)
        layers[0] = {"params": params, **layers[0]}
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
                    **{ch: {"value": 0} for ch in ("x", "x2", "y", "y2")},
                    "color": {**color, "field": "_limit"},
                    "tooltip": None,
                },
            }
        )
    if link is not None:
        layers.append(outline)
    # Labels that would touch are skipped (a chart scaled down by fit, low rows with aspect < 1):
    # upright labels always, slanted ones (long tokens) only in tiny cells, where they
    # would pile up; slanted boxes overlap long before their text does.
    angle = 0 if max(map(chars, cols), default=0) <= 2 else -45  # "d0", "猫": upright
    upright = SKIP_TOUCHING
    crowded = upright if angle == 0 or cell < CROWDED_STEP else {}
    tips = "α" if kind == "weights" else "="
    view = {
        "width": {"step": cell},  # the view grows with the columns: same spec, more data
        "height": {"step": round(cell * aspect, 1)},
        "encoding": {
            "x": {
                "field": "col",
                "type": "nominal",
                "sort": by_index("j"),
                "title": x_title or None,
                "axis": {"labelAngle": angle, **crowded},
            },
            "y": {
                "field": "row",
                "type": "nominal",
                "sort": by_index("i"),
                "title": y_title or None,
                "axis": upright,
            },
            "tooltip": [
                {"field": "row", "type": "nominal", "title": y_title or "i"},
                {"field": "col", "type": "nominal", "title": x_title or "j"},
                {"field": "text", "type": "nominal", "title": tips},
            ],
        },
        "layer": layers,
    }
    head = {"datasets": {name: data}, "data": {"name": name}}
    if not facet:
        return {**head, "title": data_title(name) if title is None else title, **view}
    return {
        **head,
        **({"transform": peak} if live else {}),  # before faceting: max|value| of all panels
        "facet": {"field": "panel", "type": "nominal", "sort": list(mats), "title": None},
        "columns": columns,
        "spec": view,
        "resolve": {"scale": {"color": "shared"}},
    }


def _linked(name: str, cell: float, link: Link) -> tuple[list[dict], dict]:
    """:func:`heatmap`'s ``link``: the two point selections on the row index ``i``
    (``"rows"``) or the column index ``j`` (``"cols"``) that the cells' layer holds, pointed
    at and pinned, both global (one row or column in every facet panel), and the outline
    layer: one rect per row or column (aggregated once per data, so pointing re-tests rows
    or columns, not cells), seen (``strokeOpacity``) where its index is selected.
    Their names carry the dataset's ``name``, so heatmaps side by side (:func:`concat`)
    keep theirs apart. A second click on the pinned row or column unpins it (``toggle``:
    the clicked one is the pinned one), a click anywhere in the chart but on a cell clears
    it. The outline draws no tooltip, so the pointer passes through it to the cells."""
    rows = link == "rows"
    index, label = ("i", "row") if rows else ("j", "col")
    point, pin = f"{name}_point", f"{name}_pin"
    shown = {"or": [{"param": point, "empty": False}, {"param": pin, "empty": False}]}
    on = {"type": "point", "fields": [index], "resolve": "global"}
    again = f"!!datum && vlSelectionTest('{pin}_store', datum)"
    # a click not on a cell (a title, an axis, a gap); an event's filter knows no datum
    on_cell = f"event.item && event.item.datum && isValid(event.item.datum.{index})"
    beside = f"click[!({on_cell})]"
    params = [
        {"name": point, "select": {**on, "on": "pointerover", "clear": "pointerout"}},
        {"name": pin, "select": {**on, "on": "click", "toggle": again, "clear": beside}},
    ]
    width = float(np.clip(cell / 6, 1.5, 3))
    # Inside the row's (column's) band, and clipped to the panel (a chart that fit scaled,
    # whose cells shrank but not the stroke): a stroke that stood out of the panel would
    # widen its bounds and move the panels beside it while it is shown (round joins: no
    # miter spike). Across the panel: from one edge of the view to the other.
    half = width / 2
    across, along = ("x", "height") if rows else ("y", "width")
    outline = {
        "transform": [{"aggregate": [{"op": "count", "as": "_n"}], "groupby": [label, index]}],
        "mark": {
            "type": "rect",
            "fillOpacity": 0,
            "stroke": LINK_COLOR,
            "strokeWidth": width,
            "strokeJoin": "round",
            f"{across}Offset": half,
            f"{across}2Offset": -half,
            along: {"band": round(1 - width / cell, 3)},  # centred in its band, stroke inside
            "clip": True,
        },
        "encoding": {
            across: {"value": 0},
            f"{across}2": {"value": "width" if rows else "height"},
            "strokeOpacity": {"condition": {"test": shown, "value": 1}, "value": 0},
            "tooltip": None,
        },
    }
    return params, outline


def framed(
    spec: dict, rows: int | Sequence[int], color: str = FRAME, panel: str | None = None
) -> dict:
    """``spec`` (a :func:`heatmap`, one panel or several) with row ``rows`` (one index or
    several) outlined in ``color``, in every panel or in ``panel`` only; a frame as thick as
    a sixth of a cell, 1..3 px (thin rows, thin frame)."""
    rows = [int(rows)] if isinstance(rows, int | np.integer) else [int(r) for r in rows]
    if not rows:
        return spec
    view = spec["spec"] if "facet" in spec else spec
    test = f"datum.i == {rows[0]}" if len(rows) == 1 else f"indexof({rows}, datum.i) >= 0"
    if panel is not None:
        test += f" && datum.panel == {json.dumps(panel)}"
    frame = {
        "transform": [{"filter": test}],
        "mark": {
            "type": "rect",
            "fillOpacity": 0,
            "stroke": color,
            "strokeWidth": float(np.clip(view["width"]["step"] / 6, 1, 3)),
        },
        "encoding": {"x": {"value": 0}, "x2": {"value": "width"}},
    }
    view = {**view, "layer": [*view["layer"], frame]}
    return {**spec, "spec": view} if "facet" in spec else view


def concat(
    charts: Sequence[dict],
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
        part = {k: v for k, v in chart.items() if k not in ("$schema", "config")}
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
    Cells shrink (not below 10 px) so the strip fits the page's width
    (:data:`ui.charts.sizing.PAGE_WIDTH`, or ``PRESENTER_WIDTH`` on a slide), and grow up to
    ``largest`` px (default 26, or 34 on a
    projector, numbers up to :data:`SLIDE_FONT`), unless ``cell`` gives their px (a caller
    that lays the panels out in rows of its own sizes them for those rows).
    """
    kinds, frames = kinds or {}, frames or {}
    # px for the strip (the page's room), largest cell, and one panel's axis labels, legend
    # and gap
    width, top, overhead = (PRESENTER_WIDTH, 34, 100) if presenter else (PAGE_WIDTH, 26, 80)
    top = largest or top
    columns, rows = sum(len(c) for *_, c in items), max(len(r) for _, _, r, _ in items)
    # At least 10 px: a wide strip then wraps into rows (see fit) instead of shrinking its
    # cells to hairlines (d_model = 64: 3 px cells, rows too thin to tell apart).
    if cell is None:
        cell = fit_cell(columns, rows, width - overhead * len(items), 900, lo=10, hi=top)
    maps = [
        heatmap(
            {t: m},
            r,
            c,
            kinds.get(t, "values"),
            cell=cell,
            live_domain=live_domain,
            digits=digits,
            legend=legends or not annotated(len(r), len(c), cell),
            max_font=SLIDE_FONT if presenter else 15,
            aspect=aspect,
        )
        for t, m, r, c in items
    ]
    framed_maps = [
        h if frames.get(t) is None else framed(h, frames[t])
        for h, (t, *_) in zip(maps, items, strict=True)
    ]
    return concat(framed_maps)


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


Data = pd.DataFrame | str  # a chart's rows, or the name of a dataset its caller adds later


def _rows(data: pd.DataFrame) -> list[dict]:
    """A table as inline records, JSON-ready: a missing value is null (JSON has no NaN)."""
    rows = records({c: data[c].to_numpy() for c in data.columns})
    for row in rows:
        for k, v in row.items():
            if isinstance(v, float) and not math.isfinite(v):
                row[k] = None
    return rows


def _data(data: Data, name: str) -> dict:
    """A chart's data: the rows of ``data`` as the dataset ``name``, or, given a name, the
    dataset of that name that its caller adds (a layout whose rows change with every input,
    while the spec stays: the browser swaps the rows into the chart on screen)."""
    if isinstance(data, str):
        return {"data": {"name": data}}
    return {"datasets": {name: _rows(data)}, "data": {"name": name}}


def _series_encoding(
    field: str, domain: Sequence[str] | None, colors: Sequence[str] | None = None
) -> dict:
    """Colour per series; a fixed ``domain`` keeps each series' colour in every language."""
    scale = {"domain": list(domain)} if domain else {}
    if colors:
        scale["range"] = list(colors)
    return {
        "field": field,
        "type": "nominal",
        "title": None,
        "scale": scale,
        "legend": {"orient": "bottom"},
    }


def layer(charts: Sequence[dict], title: str | None = None) -> dict:
    """Charts drawn over each other in one view, each from its own data: the view takes the
    first size given (``width``, ``height``) and ``title``; the datasets go to the top (a
    name used twice for different data is an error)."""
    datasets: dict[str, list] = {}
    size: dict = {}
    layers = []
    for chart in charts:
        part = dict(chart)
        for name, values in part.pop("datasets", {}).items():
            if datasets.setdefault(name, values) != values:
                raise ValueError(f"dataset {name!r} is used twice for different data")
        for key in ("width", "height"):
            if key in part:
                size.setdefault(key, part.pop(key))
        layers.append(part)
    spec = {"layer": layers, **size, **({"title": title} if title else {})}
    return {**spec, "datasets": datasets} if datasets else spec


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
    """Bar chart of ``y`` per category ``x`` (the dataset "bars").

    Optional: a colour series ``color`` (``color_domain`` fixes its order, so colours do not
    swap with the language; ``colors`` picks them) and one panel per value of ``column``.
    """
    tooltip = [
        {"field": x, "type": "nominal", "title": x_title or ""},
        {"field": y, "type": "quantitative", "title": y_title or "y", "format": ".4f"},
    ]
    enc: dict = {
        "x": {
            "field": x,
            "type": "nominal",
            "sort": list(sort) if sort else None,
            "title": x_title,
            "axis": {"labelAngle": 0},
        },
        "y": {
            "field": y,
            "type": "quantitative",
            "title": y_title,
            **({"scale": {"domain": list(y_domain)}} if y_domain else {}),
        },
        "tooltip": tooltip,
    }
    bar_color = _series_encoding(color, color_domain, colors) if color else None
    layers = [
        {"mark": {"type": "bar"}, "encoding": {**enc, "color": bar_color or {"value": KEY_COLOR}}}
    ]
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
    spec = _data(data, "bars")
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


def _quantitative(field: str, title: str | None, log: bool = False, **axis: object) -> dict:
    """A quantitative position channel: on a ``log`` scale (labelled at its powers of ten,
    :data:`_POWER_OF_TEN`) or a linear one, with ``axis`` properties."""
    scale = {"scale": {"type": "log"}} if log else {}
    channel = {"field": field, "type": "quantitative", **scale, "title": title}
    axis = {**axis, **_log_labels(log)}
    return {**channel, "axis": axis} if axis else channel


def lines(
    data: Data,
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
) -> dict:
    """Line chart with points, one series per ``color`` value; optional log axes. ``data``
    is the rows (the dataset "lines") or the name of a dataset the caller adds later.

    ``dashed`` names a boolean column whose True rows are drawn dashed (e.g. theory lines);
    ``color_domain``/``colors`` fix each series' colour; ``y_format`` formats the y labels
    (e.g. ``"~s"``: 1e10 -> "10G").
    """
    enc = {
        "x": _quantitative(x, x_title, log_x),
        "y": _quantitative(y, y_title, log_y, **({"format": y_format} if y_format else {})),
        "color": _series_encoding(color, color_domain, colors),
        "tooltip": [
            {"field": color, "type": "nominal", "title": SERIES_TIP},
            {"field": x, "type": "quantitative", "title": x_title or "x"},
            {"field": y, "type": "quantitative", "title": y_title or "y", "format": ".4g"},
        ],
    }
    if dashed:
        enc["strokeDash"] = {"field": dashed, "type": "nominal", "legend": None}
    return {
        **_data(data, "lines"),
        "mark": {"type": "line", "point": True},
        "encoding": enc,
        "width": width,
        "height": height,
        **({"title": title} if title else {}),
    }


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
    data: Data,
    series: Sequence[str],
    title: str,
    x_title: str,
    y_title: str | None = None,
    colors: Sequence[str] | None = None,
    width: int = 420,
    height: int = 260,
) -> dict:
    """Counts per bin of one or more ``series``, overlaid half-transparent, each bar from 0
    (not stacked); colours follow the order of ``series``. ``data`` is the rows of
    :func:`histogram_rows` (the dataset "histogram"; each series may have its own bins) or
    the name of a dataset of such rows that the caller adds later."""
    # the counts change with the data and the layout does not: a taller peak gives more
    # ticks, which on a slide's large type would touch; Vega then drops every other one
    count_axis = {"labelOverlap": "parity", "labelSeparation": 8}
    return {
        **_data(data, "histogram"),
        "mark": {"type": "bar", "opacity": 0.6, "binSpacing": 0},
        "encoding": {
            # the first label is set flush with the axis's start: keep the next one apart
            "x": _quantitative("start", x_title, labelSeparation=8),
            "x2": {"field": "end"},
            "y": _quantitative("count", y_title, **count_axis),
            "y2": {"datum": 0},
            "color": _series_encoding("series", series, colors),
            "tooltip": [
                {"field": "series", "type": "nominal", "title": SERIES_TIP},
                {"field": "start", "type": "quantitative", "title": x_title, "format": ".2f"},
                {"field": "count", "type": "quantitative", "title": y_title or "n"},
            ],
        },
        "title": title,
        "width": width,
        "height": height,
    }
