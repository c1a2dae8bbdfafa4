"""Altair chart builders shared by every page: one look, legible on a projector.

Builders take plain arrays and labels and return an Altair chart; :func:`show` applies the
house configuration (fonts, presenter sizes) and draws it. Charts carry their data, so the
exports (CSV/PNG/SVG) are made from the very chart on screen.
"""

from collections import Counter
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.shell import PageContext

FONT = "Source Sans Pro, Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"
QUERY_COLOR = "#d1495b"
KEY_COLOR = "#00798c"
VALUE_COLOR = "#2e7d32"
ACCENT = "#edae49"
MAX_ANNOTATED = 30  # print numbers in heatmap cells only up to this many rows/columns
INKS = ["#222222", "#ffffff"]  # cell text on light / dark cells
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


def fmt(value: float, digits: int = 2) -> str:
    """A number as shown in cells: −∞/+∞ spelled out, minus sign typographic, NaN blank."""
    if np.isnan(value):
        return ""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "+∞"
    return f"{value:.{digits}f}".replace("-", "−")


def matrix_frame(
    matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], panel: str = ""
) -> pd.DataFrame:
    """Long table of a matrix: one line per cell (row, col, value, text), finite-safe."""
    m = np.asarray(matrix, dtype=float)
    r_idx, c_idx = np.indices(m.shape)
    values = m.ravel()
    return pd.DataFrame(
        {
            "panel": panel,
            "row": np.asarray(rows, dtype=object)[r_idx.ravel()],
            "col": np.asarray(cols, dtype=object)[c_idx.ravel()],
            "i": r_idx.ravel(),
            "j": c_idx.ravel(),
            "value": np.where(np.isfinite(values), values, np.nan),
            "text": [fmt(v) for v in values],
        }
    )


def _color(kind: str, data: pd.DataFrame) -> alt.Color:
    if kind == "weights":
        scale = alt.Scale(domain=[0, 1], scheme="blues")
        return alt.Color("value:Q", scale=scale, title=None)
    top = float(np.nanmax(np.abs(data["value"]))) if data["value"].notna().any() else 1.0
    top = top or 1.0
    scale = alt.Scale(domain=[-top, top], scheme="redblue", reverse=True)
    return alt.Color("value:Q", scale=scale, title=None)


def heatmap(
    panels: Mapping[str, np.ndarray],
    rows: Sequence[str],
    cols: Sequence[str],
    kind: str = "weights",
    x_title: str = "",
    y_title: str = "",
    columns: int = 4,
    cell: int | None = None,
) -> alt.Chart:
    """Annotated heatmap of one matrix, or one small multiple per panel (same shape).

    ``kind="weights"``: fixed 0..1 sequential scale. ``kind="scores"``/``"values"``: diverging
    scale symmetric around 0. Masked (−∞) cells are grey and labelled −∞. Numbers are printed
    while the matrix is at most :data:`MAX_ANNOTATED` wide and tall. A single panel's title
    carries its shape, e.g. "weights (6 × 6)".
    """
    rows, cols = unique_labels(list(rows)), unique_labels(list(cols))
    data = pd.concat([matrix_frame(m, rows, cols, name) for name, m in panels.items()])
    n_r, n_c = len(rows), len(cols)
    size = cell or int(np.clip(420 / max(n_r, n_c), 12, 56))
    single = len(panels) == 1
    if kind != "weights":
        top = float(np.nanmax(np.abs(data["value"]))) if data["value"].notna().any() else 1.0
        dark = data["value"].abs() > 0.6 * (top or 1.0)
    else:
        dark = data["value"] > 0.55
    data["ink"] = np.where(dark.fillna(False), INKS[1], INKS[0])
    # Faceted: the data belongs to the facet, not to each layer (or every panel draws all).
    base = alt.Chart(data if single else alt.Undefined).encode(
        x=alt.X("col:N", sort=cols, title=x_title or None, axis=alt.Axis(labelAngle=-45)),
        y=alt.Y("row:N", sort=rows, title=y_title or None),
        tooltip=[  # language-neutral titles: i = query row, j = key column
            alt.Tooltip("row:N", title=y_title or "i"),
            alt.Tooltip("col:N", title=x_title or "j"),
            alt.Tooltip("text:N", title="α" if kind == "weights" else "="),
        ],
    )
    # Grey under everything: masked (−∞ → null) cells are dropped by the colour layer.
    layers = [
        base.mark_rect(color="#d9d9d9"),
        base.mark_rect(stroke="white", strokeWidth=0.5).encode(color=_color(kind, data)),
    ]
    if max(n_r, n_c) <= MAX_ANNOTATED:
        layers.append(
            base.mark_text(fontSize=max(9, min(14, size // 3))).encode(
                text=alt.Text("text:N"),
                color=alt.Color("ink:N", scale=alt.Scale(domain=INKS, range=INKS), legend=None),
            )
        )
    chart = alt.layer(*layers).properties(width=size * n_c, height=size * n_r)
    if single:
        (name,) = panels
        return chart.properties(title=shape_title(name, (n_r, n_c)))
    order = list(panels)
    return chart.facet(
        facet=alt.Facet("panel:N", sort=order, title=None), columns=columns, data=data
    ).resolve_scale(color="shared")


def matrix_strip(
    items: Sequence[tuple[str, np.ndarray, Sequence[str], Sequence[str]]],
) -> alt.Chart:
    """Matrices of different shapes side by side (X, W_Q, Q, …), each titled with its shape.

    ``items`` are ``(title, matrix, row_labels, col_labels)``.
    """
    charts = [heatmap({t: m}, r, c, kind="values", cell=26) for t, m, r, c in items]
    return alt.hconcat(*charts, spacing=18).resolve_scale(color="independent")


def _series_color(field: str, domain: Sequence[str] | None) -> alt.Color:
    """Colour per series; a fixed ``domain`` keeps each series' colour in every language."""
    scale = alt.Scale(domain=list(domain)) if domain else alt.Undefined
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
    color_domain: Sequence[str] | None = None,
) -> alt.Chart:
    """Bar chart of ``y`` per category ``x``.

    Optional: a colour series ``color`` (``color_domain`` fixes its order, so colours do not
    swap with the language) and one panel per value of ``column``.
    """
    scale = alt.Scale(domain=list(y_domain)) if y_domain else alt.Undefined
    enc = {
        "x": alt.X(
            f"{x}:N", sort=list(sort) if sort else None, title=x_title, axis=alt.Axis(labelAngle=0)
        ),
        "y": alt.Y(f"{y}:Q", scale=scale, title=y_title),
        "tooltip": [alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{y}:Q", format=".4f")],
    }
    if color:
        enc["color"] = _series_color(color, color_domain)
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
    chart = alt.layer(*layers).properties(width=width, height=260)
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
    color_domain: Sequence[str] | None = None,
) -> alt.Chart:
    """Line chart with points, one series per ``color`` value; optional log axes.

    ``dashed`` names a boolean column whose True rows are drawn dashed (e.g. theory lines).
    """
    enc = {
        "x": alt.X(f"{x}:Q", scale=alt.Scale(type="log" if log_x else "linear"), title=x_title),
        "y": alt.Y(f"{y}:Q", scale=alt.Scale(type="log" if log_y else "linear"), title=y_title),
        "color": _series_color(color, color_domain),
        "tooltip": [
            alt.Tooltip(f"{color}:N"),
            alt.Tooltip(f"{x}:Q"),
            alt.Tooltip(f"{y}:Q", format=".4g"),
        ],
    }
    if dashed:
        enc["strokeDash"] = alt.StrokeDash(f"{dashed}:N", legend=None)
    chart = alt.Chart(data).mark_line(point=True).encode(**enc).properties(width=width, height=280)
    return chart.properties(title=title) if title else chart


def histogram(values: np.ndarray, title: str, x_title: str, bins: int = 40) -> alt.Chart:
    """Histogram of a sample."""
    data = pd.DataFrame({"x": np.asarray(values, dtype=float)})
    return (
        alt.Chart(data)
        .mark_bar(color=KEY_COLOR, opacity=0.85)
        .encode(
            x=alt.X("x:Q", bin=alt.Bin(maxbins=bins), title=x_title),
            y=alt.Y("count():Q", title=None),
        )
        .properties(title=title, width=420, height=260)
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
        tooltip=["label:N", "text:N"],
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
    """A finished Vega-Lite spec (a dict) in the house theme.

    Altair charts are converted without re-validating them: validation is what makes a
    chart cost ~100 ms, and the builders here are tested to produce valid specs.
    """
    spec = dict(chart) if isinstance(chart, dict) else chart.to_dict(validate=False)
    spec["config"] = {**spec.get("config", {}), **theme_config(presenter)}
    return spec


def themed(chart: alt.TopLevelMixin, presenter: bool) -> alt.TopLevelMixin:
    """The Altair chart with the house configuration attached (slower than :func:`to_spec`)."""
    return chart.properties(config=alt.Config(**theme_config(presenter)))


def show(ctx: PageContext, chart: alt.TopLevelMixin | dict, key: str | None = None) -> dict:
    """Draw ``chart`` in the house theme at its own size and return the spec (for exports)."""
    spec = to_spec(chart, ctx.presenter)
    st.vega_lite_chart(spec=spec, theme=None, key=key, width="content")
    return spec
