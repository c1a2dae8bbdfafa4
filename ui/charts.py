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

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from streamlit import dataframe_util

from ui.i18n import Translator
from ui.shell import PageContext

FONT = "Source Sans Pro, Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"
QUERY_COLOR = "#d1495b"
KEY_COLOR = "#00798c"
VALUE_COLOR = "#2e7d32"
ACCENT = "#edae49"
MASKED = "#d9d9d9"  # a cell without a value: masked (−∞) or not there
FRAME = "#111111"  # the frame around a highlighted row
MAX_ANNOTATED = 30  # print numbers in heatmap cells only up to this many rows/columns…
MIN_ANNOTATED_CELL = 22  # …and only in cells at least this many px wide (else they overlap)
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


def fmt(value: float, digits: int = 2) -> str:
    """A number as shown in cells: −∞/+∞ spelled out, minus sign typographic, NaN blank."""
    if np.isnan(value):
        return ""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "+∞"
    return f"{value:.{digits}f}".replace("-", "−")


def fmt_list(values: np.ndarray, digits: int = 3) -> str:
    """A row of numbers for running text: ``[0.097, 0.122, …]``."""
    return "[" + ", ".join(fmt(float(v), digits) for v in values) + "]"


def fmt_cells(values: np.ndarray, digits: int = 2) -> list[str]:
    """:func:`fmt` of every entry (flattened) in one pass: ~2 ms for 64 × 64, not ~50 ms."""
    v = np.asarray(values, dtype=float).ravel()
    spec = f"{{:.{digits}f}}".format
    text = [spec(x).replace("-", "−") for x in v.tolist()]
    for k in np.flatnonzero(~np.isfinite(v)).tolist():
        text[k] = "" if np.isnan(v[k]) else ("+∞" if v[k] > 0 else "−∞")
    return text


def _cells(
    matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], panel: str
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
        "text": fmt_cells(v),
    }


def records(columns: Mapping[str, Sequence | np.ndarray]) -> list[dict]:
    """Columns -> one dict per row (Vega-Lite inline data, JSON-ready), without pandas."""
    keys = list(columns)
    values = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in columns.values()]
    return [dict(zip(keys, row, strict=True)) for row in zip(*values, strict=True)]


def symmetric_domain(*matrices: np.ndarray) -> list[float]:
    """A colour domain centred on 0 that holds every finite entry (±1 if there is none)."""
    finite = [m[np.isfinite(m)] for m in map(np.asarray, matrices)]
    top = max((float(np.abs(f).max()) for f in finite if f.size), default=0.0) or 1.0
    return [-top, top]


def fit_cell(
    columns: int,
    rows: int = 1,
    width: float = 420,
    height: float | None = None,
    lo: int = 12,
    hi: int = 56,
) -> int:
    """Cell size in px so that ``columns`` cells fit ``width`` (and ``rows`` fit ``height``),
    kept within ``lo``..``hi``."""
    fit = width / max(columns, 1)
    if height is not None:
        fit = min(fit, height / max(rows, 1))
    return int(np.clip(fit, lo, hi))


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
) -> dict:
    """Annotated heatmap of one matrix, or one small multiple per panel (same shape, one
    shared colour scale, wrapped after ``columns`` panels), as a Vega-Lite dict.

    ``kind="weights"``: a fixed 0..1 sequential scale; ``"scores"``/``"values"``: a diverging
    scale symmetric around 0 (or the fixed ``domain``, e.g. shared with another chart).
    Cells without a finite value are drawn in ``blank`` grey and keep their text (−∞, or
    blank for NaN). Numbers are printed (``annotate=None``) while the matrix is at most
    :data:`MAX_ANNOTATED` wide and tall and cells are at least :data:`MIN_ANNOTATED_CELL` px.
    ``frame`` outlines that row. A single panel is titled with its shape, e.g.
    "weights (6 × 6)" (or ``title``). Cells are ``cell`` px (default: the matrix fits
    ~420 px); with ``max_width`` small multiples wrap so that they fit that many px.
    The cells (``panel``, ``row``, ``col``, ``i``, ``j``, ``value``, ``text``) are the
    dataset ``name``.
    """
    rows, cols = unique_labels(list(rows)), unique_labels(list(cols))
    n_r, n_c = len(rows), len(cols)
    cell = cell or fit_cell(n_c, n_r, 420, 420)
    mats = {p: np.asarray(m, dtype=float) for p, m in panels.items()}
    cells = [_cells(m, rows, cols, p) for p, m in mats.items()]
    data = records({k: [x for c in cells for x in c[k]] for k in cells[0]})
    if kind == "weights":
        scale, dark = {"domain": list(domain or [0, 1]), "scheme": "blues"}, 0.55
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
        annotate = max(n_r, n_c) <= MAX_ANNOTATED and cell >= MIN_ANNOTATED_CELL
    if annotate:
        ink = {"test": f"{_VALID} && abs(datum.value) > {dark}", "value": "white"}
        layers.append(
            {
                "mark": {"type": "text", "fontSize": max(9, min(14, int(cell / 2.6)))},
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
                "mark": {"type": "rect", "fillOpacity": 0, "stroke": frame_color, "strokeWidth": 3},
                "encoding": {"x": {"value": 0}, "x2": {"value": cell * n_c}},
            }
        )
    crowded = {"labelOverlap": "greedy"} if cell < 16 else {}  # tiny cells: skip clashing labels
    tips = "α" if kind == "weights" else "="
    view = {
        "width": cell * n_c,
        "height": cell * n_r,
        "encoding": {
            "x": {"field": "col", "type": "nominal", "sort": cols, "title": x_title or None,
                  "axis": {"labelAngle": -45, **crowded}},
            "y": {"field": "row", "type": "nominal", "sort": rows, "title": y_title or None,
                  "axis": crowded},
            "tooltip": [
                {"field": "row", "type": "nominal", "title": y_title or "i"},
                {"field": "col", "type": "nominal", "title": x_title or "j"},
                {"field": "text", "type": "nominal", "title": tips},
            ],
        },
        "layer": layers,
    }  # fmt: skip
    head = {"datasets": {name: data}, "data": {"name": name}}
    if len(mats) == 1:
        ((panel, m),) = mats.items()
        return {**head, "title": shape_title(panel, m.shape) if title is None else title, **view}
    if max_width:
        columns = max(1, min(columns, max_width // (cell * n_c + 20)))
    return {
        **head,
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
) -> dict:
    """Matrices of different shapes side by side (X, W_Q, Q, …), each titled with its shape
    and on its own colour scale.

    ``items`` are ``(title, matrix, row_labels, col_labels)``; ``kinds`` maps a title to its
    :func:`heatmap` kind (default ``"values"``), ``frames`` a title to the row to frame.
    Cells shrink so the strip fits a 1920 px screen with the sidebar open (without it in
    presenter mode), and grow up to 26 px (34 px on a projector).
    """
    kinds, frames = kinds or {}, frames or {}
    # px for the strip, largest cell, and the axis labels, legend and gap of one panel
    width, top, overhead = (1650, 34, 100) if presenter else (1350, 26, 80)
    columns, rows = sum(len(c) for *_, c in items), max(len(r) for _, _, r, _ in items)
    cell = fit_cell(columns, rows, width - overhead * len(items), 900, lo=4, hi=top)
    return concat(
        [
            heatmap({t: m}, r, c, kinds.get(t, "values"), cell=cell, frame=frames.get(t))
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


def _series_color(
    field: str, domain: Sequence[str] | None, colors: Sequence[str] | None = None
) -> alt.Color:
    """Colour per series; a fixed ``domain`` keeps each series' colour in every language."""
    scale = alt.Scale(
        domain=list(domain) if domain else alt.Undefined,
        range=list(colors) if colors else alt.Undefined,
    )
    return alt.Color(f"{field}:N", title=None, scale=scale, legend=alt.Legend(orient="bottom"))


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
) -> alt.Chart:
    """Bar chart of ``y`` per category ``x``.

    Optional: a colour series ``color`` (``color_domain`` fixes its order, so colours do not
    swap with the language; ``colors`` picks them) and one panel per value of ``column``.
    """
    scale = alt.Scale(domain=list(y_domain)) if y_domain else alt.Undefined
    enc = {
        "x": alt.X(
            f"{x}:N", sort=list(sort) if sort else None, title=x_title, axis=alt.Axis(labelAngle=0)
        ),
        "y": alt.Y(f"{y}:Q", scale=scale, title=y_title),
        "tooltip": [
            alt.Tooltip(f"{x}:N", title=x_title or ""),
            alt.Tooltip(f"{y}:Q", title=y_title or "y", format=".4f"),
        ],
    }
    if color:
        enc["color"] = _series_color(color, color_domain, colors)
    else:
        enc["color"] = alt.value(KEY_COLOR)
    base = alt.Chart(alt.Undefined if column else data).encode(**enc)
    layers = [base.mark_bar()]
    if labels:
        layers.append(
            base.mark_text(dy=-8, color="#222").encode(
                text=alt.Text(f"{y}:Q", format=".3f"), color=alt.value("#222")
            )
        )
    chart = alt.layer(*layers).properties(width=width, height=height)
    if column:
        return chart.facet(column=alt.Column(f"{column}:N", title=None, sort=None), data=data)
    return chart.properties(title=title) if title else chart


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
    axis = alt.Axis(format=y_format) if y_format else alt.Undefined
    enc = {
        "x": alt.X(f"{x}:Q", scale=alt.Scale(type="log" if log_x else "linear"), title=x_title),
        "y": alt.Y(
            f"{y}:Q", scale=alt.Scale(type="log" if log_y else "linear"), title=y_title, axis=axis
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
    bins = len(edges) - 1
    data = pd.DataFrame(
        {
            "start": np.tile(edges[:-1], len(counts)),
            "end": np.tile(edges[1:], len(counts)),
            "count": np.concatenate(list(counts.values())),
            "series": np.repeat(list(counts), bins),
        }
    )
    return (
        alt.Chart(data)
        .mark_bar(opacity=0.6, binSpacing=0)
        .encode(
            x=alt.X("start:Q", title=x_title),
            x2="end:Q",
            y=alt.Y("count:Q", title=y_title),
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
    """The house Vega-Lite ``config``: fonts, sizes (larger in presenter mode), white
    background so dark labels stay legible when the app is switched to a dark theme."""
    label, heading = (16, 20) if presenter else (12, 15)
    return {
        "font": FONT,
        "background": "#ffffff",
        "padding": 8,
        "axis": {"labelFontSize": label, "titleFontSize": label + 1, "labelLimit": 220},
        "legend": {"labelFontSize": label, "titleFontSize": label},
        "header": {"labelFontSize": label + 1, "titleFontSize": label + 1,
                   "labelFont": FONT, "titleFont": FONT},
        "title": {"fontSize": heading, "anchor": "start"},
        "text": {"fontSize": label},
        "view": {"strokeWidth": 0},
    }  # fmt: skip


def to_spec(chart: alt.TopLevelMixin | dict, presenter: bool) -> dict:
    """A finished Vega-Lite spec (a dict) in the house theme, sized by its own width and
    height (axes and legends come on top: ``autosize: pad``).

    Altair charts are converted without re-validating them: validation is what makes a
    chart cost ~100 ms, and the builders here are tested to produce valid specs.
    """
    spec = dict(chart) if isinstance(chart, dict) else chart.to_dict(validate=False)
    spec["config"] = {**spec.get("config", {}), **theme_config(presenter)}
    spec.setdefault("$schema", alt.SCHEMA_URL)
    spec.setdefault("autosize", {"type": "pad", "contains": "padding"})
    return spec


def show(ctx: PageContext, chart: alt.TopLevelMixin | dict, key: str | None = None) -> dict:
    """Draw ``chart`` in the house theme at its own size and return the spec (for exports)."""
    spec = to_spec(chart, ctx.presenter)
    st.vega_lite_chart(spec=spec, theme=None, key=key, width="content")
    return spec


Builder = Callable[..., dict | alt.TopLevelMixin]  # a chart builder: inputs -> chart


@st.cache_data(max_entries=256, show_spinner=False, hash_funcs={Translator: lambda t: t.lang})
def _built(name: str, _builder: Builder, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    """``_builder(*args, **kwargs)`` as a Vega-Lite dict, once per (builder ``name``, inputs),
    and the same spec with its datasets already in the Arrow form ``st.vega_lite_chart``
    sends (it passes bytes through instead of converting every dataset on every rerun)."""
    chart = _builder(*args, **kwargs)
    spec = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
    arrow = {
        key: dataframe_util.convert_anything_to_arrow_bytes(values)
        for key, values in spec.get("datasets", {}).items()
    }
    return spec, {**spec, "datasets": arrow} if arrow else spec


def _key(builder: Builder) -> str:
    name = f"{builder.__module__}.{builder.__qualname__}"
    if "<" in name:  # a lambda or a nested function: its name would not identify it
        raise TypeError(f"chart builders must be module-level functions, not {name}")
    return name


def build(builder: Builder, *args: object, **kwargs: object) -> dict:
    """``builder(*args, **kwargs)`` as a Vega-Lite dict, built once per distinct input.

    ``builder`` is a module-level function (its module and name identify it in the cache)
    of hashable inputs: arrays, tables, labels, translated titles, a :class:`Translator`.
    Each call returns a fresh copy, so callers may change it.
    """
    return _built(_key(builder), builder, args, kwargs)[0]


def show_cached(ctx: PageContext, builder: Builder, *args: object, **kwargs: object) -> dict:
    """:func:`show` the chart ``builder(*args, **kwargs)``, built (and its data converted
    for the browser) once per input: see :func:`build`. Returns the themed spec, data
    inline, for the exports."""
    spec, arrow = _built(_key(builder), builder, args, kwargs)
    show(ctx, arrow)
    return to_spec(spec, ctx.presenter)
