"""Presentation helpers for the Q, K, V page.

``token_picker`` and ``settings`` are also used by the weighted-sum page.
"""

import json
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from streamlit import dataframe_util

import core
from ui import charts
from ui import sentence as shared
from ui.params import Choice, select
from ui.safe import plain
from ui.sentence import LESSON_SETTINGS, Sentence, sentence_controls
from ui.shell import PageContext

TOKEN = "token"  # URL key of the followed token (an index "0".."n-1")
STRIP_WIDTH = 1350  # px a strip of matrices may take (1920 px screen, sidebar open)
MIN_ANNOTATED_CELL = 24  # px: below this the numbers no longer fit in a cell

Panel = tuple[str, np.ndarray, Sequence[str], Sequence[str]]


def settings(ctx: PageContext, label: str) -> Sentence:
    """The shared sentence controls; folded into a closed expander in presenter mode."""
    if not ctx.presenter:
        return sentence_controls(ctx)
    with st.expander(label, icon=":material/tune:"):
        return sentence_controls(ctx)


def token_picker(ctx: PageContext, tokens: list[str], label: str) -> int:
    """The followed token, kept in the URL as its index (``?token=2``), shown as the token.

    An index that does not exist in this sentence (a shortened sentence, a bad link) warns
    and falls back to the first token.
    """
    labels = charts.unique_labels(tokens)
    spec = Choice(TOKEN, "0", tuple(str(i) for i in range(len(tokens))))
    return int(select(ctx, spec, label, format_func=lambda i: plain(labels[int(i)], 24)))


def vector_tex(values: np.ndarray, limit: int = 8, digits: int = 3) -> str:
    """A row vector as LaTeX ``[a, b, …]``, cut after ``limit`` entries."""
    shown = [f"{v:.{digits}f}" for v in values[:limit]]
    if len(values) > limit:
        shown.append(r"\dots")
    return r"\left[\," + r",\ ".join(shown) + r"\,\right]"


def numbers(values: np.ndarray, digits: int = 3) -> str:
    """A row of numbers for markdown text: ``[0.097, 0.122, …]``."""
    return "[" + ", ".join(charts.fmt(float(v), digits) for v in values) + "]"


def is_lesson(s: Sentence) -> bool:
    """Whether the page shows lesson 002's exact example."""
    shown = {
        shared.TEXT.key: " ".join(s.tokens),
        shared.D_MODEL.key: s.d_model,
        shared.D_K.key: s.d_k,
        shared.D_V.key: s.d_v,
        shared.SEED.key: s.seed,
        shared.EMBED.key: s.mode,
        shared.POSITIONS.key: s.positions,
    }
    lesson = {spec.key: value for spec, value in LESSON_SETTINGS}
    lesson[shared.TEXT.key] = " ".join(core.tokenize(str(lesson[shared.TEXT.key])))
    return shown == lesson


def fused_columns(d_k: int, d_v: int) -> list[str]:
    """Column labels of the fused matrix: q0…, k0…, v0…."""
    return charts.dim_labels(d_k, "q") + charts.dim_labels(d_k, "k") + charts.dim_labels(d_v, "v")


def difference_text(value: float) -> str:
    """A rounding-level difference as ``2.2e-16`` (exact zero as ``0``)."""
    return "0" if value == 0 else f"{value:.1e}"


def _shape(shape: tuple[int, ...]) -> str:
    return r"\times".join(str(d) for d in shape)


def shapes_tex(x: np.ndarray, ws: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> str:
    """``Q = X W^Q`` with the live shapes under each factor, for Q, K and V."""
    lines = []
    for name, w, out in zip("QKV", ws, outs, strict=True):
        lines.append(
            rf"{name} &= X\,W^{name} &&"
            rf"\underbrace{{({_shape(x.shape)})}}_{{X}}\cdot"
            rf"\underbrace{{({_shape(w.shape)})}}_{{W^{name}}}"
            rf"\;\to\;\underbrace{{({_shape(out.shape)})}}_{{{name}}}"
        )
    return r"\begin{aligned}" + r"\\[4pt]".join(lines) + r"\end{aligned}"


def follow_tex(i: int, x_i: np.ndarray, q_i: np.ndarray, k_i: np.ndarray, v_i: np.ndarray) -> str:
    """``x_i`` and its three projections written out with the live numbers."""
    rows = [rf"x_{{{i}}} &= {vector_tex(x_i)}"]
    for name, vec in (("q", q_i), ("k", k_i), ("v", v_i)):
        rows.append(rf"{name}_{{{i}}} &= x_{{{i}}}\,W^{name.upper()} = {vector_tex(vec)}")
    return r"\begin{aligned}" + r"\\".join(rows) + r"\end{aligned}"


def side_by_side(*matrices: np.ndarray) -> np.ndarray:
    """Matrices with the same row count glued left to right (for showing ``[Q | K | V]``)."""
    return np.concatenate(matrices, axis=-1)  # (n, sum of widths)


# --- Charts kept as Vega-Lite specs -------------------------------------------------------
# ui.charts.heatmap builds each panel with Altair, whose schema validation costs ~50 ms of CPU
# per panel; the strips here have up to 7 panels and rebuild on every slider step. So these
# charts are written as plain Vega-Lite dicts with the same look (colours, numbers, theme from
# ui.charts.themed) and cached per input.


class SpecChart:
    """A finished chart kept as a Vega-Lite spec plus the tables behind it.

    ``to_json`` is all :func:`ui.exports.export_panel` needs for PNG/SVG; ``data`` is the CSV.
    """

    def __init__(self, spec: dict, frames: dict[str, pd.DataFrame]) -> None:
        spec = {"autosize": {"type": "pad", "contains": "padding"}, **spec}  # legends included
        self.spec = spec  # without data
        self.frames = frames  # dataset name -> long table
        self.data = pd.concat(frames.values(), ignore_index=True)
        # Streamlit ships datasets as Arrow and passes bytes through: convert them once.
        arrow = {k: dataframe_util.convert_anything_to_arrow_bytes(f) for k, f in frames.items()}
        self.display = {**spec, "datasets": arrow}

    def to_json(self) -> str:
        """The spec with its data inline (JSON null for missing values)."""
        rows = {k: json.loads(f.to_json(orient="records")) for k, f in self.frames.items()}
        return json.dumps({**self.spec, "datasets": rows})


@st.cache_resource(show_spinner=False)
def theme(presenter: bool) -> dict:
    """The house configuration of :func:`ui.charts.themed`, as a Vega-Lite ``config`` dict."""
    probe = charts.themed(alt.Chart(pd.DataFrame({"a": [0]})).mark_point(), presenter)
    spec = probe.to_dict(validate=False)
    return {"$schema": spec["$schema"], "config": spec["config"]}


def draw(ctx: PageContext, chart: SpecChart) -> SpecChart:
    """Show a :class:`SpecChart` (the counterpart of :func:`ui.charts.show`)."""
    st.vega_lite_chart(chart.display, theme=None, width="content")
    return chart


def _cell(columns: int, rows: int, panels: int, presenter: bool) -> int:
    """Cell size so that a strip of ``panels`` matrices with ``columns`` columns in all fits a
    1920 px screen (axes, legends and gaps take ~80–100 px per panel); larger on a projector."""
    budget, overhead, top = (1650, 100, 34) if presenter else (STRIP_WIDTH, 80, 26)
    fit = (budget - overhead * panels) / max(columns, 1)
    return int(np.clip(min(fit, 900 / max(rows, 1)), 6, top))


def heat_panel(
    name: str, panel: Panel, cell: int, kind: str = "values", framed: int | None = None
) -> tuple[dict, pd.DataFrame]:
    """One titled heatmap layer spec reading dataset ``name``, like :func:`ui.charts.heatmap`:
    weights on a fixed 0..1 blue scale, other matrices on a red–blue scale symmetric around 0,
    numbers printed while cells are wide enough; row ``framed`` gets a dark frame."""
    title, m, rows, cols = panel
    rows, cols = charts.unique_labels(list(rows)), charts.unique_labels(list(cols))
    data = charts.matrix_frame(m, rows, cols, title)
    valid = "isValid(datum.value)"
    if kind == "weights":
        scale, dark = {"domain": [0, 1], "scheme": "blues"}, "datum.value > 0.55"
    else:
        top = float(np.nanmax(np.abs(data["value"]))) if data["value"].notna().any() else 1.0
        top = top or 1.0
        scale = {"domain": [-top, top], "scheme": "redblue", "reverse": True}
        dark = f"abs(datum.value) > {0.6 * top}"
    color = {"field": "value", "type": "quantitative", "scale": scale, "title": None}
    layers = [
        {
            "mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5},
            "encoding": {
                "color": {"condition": {"test": valid, **color}, "value": "#d9d9d9"},
                "tooltip": [
                    {"field": "row", "type": "nominal", "title": "row"},
                    {"field": "col", "type": "nominal", "title": "col"},
                    {"field": "text", "type": "nominal", "title": "value"},
                ],
            },
        }
    ]
    if cell >= MIN_ANNOTATED_CELL and max(len(rows), len(cols)) <= charts.MAX_ANNOTATED:
        layers.append(
            {
                "mark": {"type": "text", "fontSize": max(9, min(16, int(cell / 2.6)))},
                "encoding": {
                    "text": {"field": "text", "type": "nominal"},
                    "color": {
                        "condition": {"test": f"{valid} && {dark}", "value": "white"},
                        "value": "#222",
                    },
                },
            }
        )
    if framed is not None:
        layers.append(
            {
                "transform": [{"filter": f"datum.i == {int(framed)}"}],
                "mark": {"type": "rect", "fillOpacity": 0, "stroke": "#111", "strokeWidth": 3},
                "encoding": {"x": {"value": 0}, "x2": {"value": cell * len(cols)}},
            }
        )
    spec = {
        "title": charts.shape_title(title, m.shape),
        "data": {"name": name},
        "width": cell * len(cols),
        "height": cell * len(rows),
        "encoding": {
            "x": {
                "field": "col",
                "type": "nominal",
                "sort": cols,
                "title": None,
                "axis": {"labelAngle": -45},
            },
            "y": {"field": "row", "type": "nominal", "sort": rows, "title": None},
        },
        "layer": layers,
    }
    return spec, data


def _concat(
    direction: str,
    panels: Sequence[Panel],
    cell: int,
    presenter: bool,
    framed: dict[str, int] | None = None,
    kinds: dict[str, str] | None = None,
) -> SpecChart:
    framed, kinds = framed or {}, kinds or {}
    specs, frames = [], {}
    for k, p in enumerate(panels):
        spec, frames[f"m{k}"] = heat_panel(
            f"m{k}", p, cell, kinds.get(p[0], "values"), framed.get(p[0])
        )
        specs.append(spec)
    body = {direction: specs, "spacing": 18, "resolve": {"scale": {"color": "independent"}}}
    return SpecChart({**theme(presenter), **body}, frames)


@st.cache_resource(max_entries=64, show_spinner=False)
def strip(
    panels: Sequence[Panel],
    presenter: bool,
    framed: dict[str, int] | None = None,
    kinds: dict[str, str] | None = None,
) -> SpecChart:
    """Matrices of different shapes side by side, each titled with its shape; ``framed``
    (panel title -> row index) frames one row. Cells shrink for wide matrices. Cached."""
    columns, rows = sum(len(p[3]) for p in panels), max(len(p[2]) for p in panels)
    cell = _cell(columns, rows, len(panels), presenter)
    return _concat("hconcat", panels, cell, presenter, framed, kinds)


@st.cache_resource(max_entries=64, show_spinner=False)
def stack(panels: Sequence[Panel], presenter: bool) -> SpecChart:
    """One-row heatmaps stacked (x_i, then q_i, k_i, v_i) with large cells. Cached."""
    cell = int(np.clip(1100 / max(len(p[3]) for p in panels), 14, 44))
    return _concat("vconcat", panels, cell, presenter)
