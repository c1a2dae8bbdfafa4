"""Presentation helpers for the Q, K, V page."""

from collections.abc import Sequence
from contextlib import AbstractContextManager

import numpy as np
from streamlit.delta_generator import DeltaGenerator

import core
from core.findings.qkv import FusedCheck
from core.projections import fuse_qkv, fused_project
from ui import charts
from ui import sentence as shared
from ui.blocks import Frame, frame_room
from ui.charts import vector_tex as vec_tex
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import short_list
from ui.params import Choice, select
from ui.safe import plain
from ui.sentence import LESSON_SETTINGS, Sentence

STRIP_HEIGHT = 760  # presenter px for step 1's X, W and product: the slide's full height…
SLIDE_SHARE = 0.5  # …in this share of its width; the controls, formula and notes beside it
SLIDE_GRID_ASPECT = 0.7  # presenter: step 1's cells are this much as high as wide
FUSED_HEIGHT = 440  # presenter px for X, W_QKV and X · W_QKV (the metrics sit below)
LESSON_HEIGHT = 560  # presenter px for the weights and output of step 4 (notes beside them)
SLIDE_ASPECT = 0.8  # presenter: the strips' cells are this much as high as wide


def strip_options(ctx: PageContext) -> dict:
    """:func:`charts.matrix_strip` options for steps 1 and 3: new values only swap the data
    (live colour domain). On a slide the cells carry one decimal (thirty-two columns of
    two-decimal numbers at >= 18 px do not fit 1920 px) instead of colour legends, and are
    lower than wide (the strip has the width; the text and notes below need the height)."""
    slide = ctx.presenter
    return {
        "presenter": slide,
        "live_domain": True,
        "legends": not slide,
        "digits": 1 + (not slide),
        "aspect": SLIDE_ASPECT if slide else 1.0,
    }


def digits(ctx: PageContext) -> int:
    """Decimals of the numbers quoted beside the strips: as many as its cells show."""
    return strip_options(ctx)["digits"]


PROJECTION = Choice("projection", "q", ("q", "k", "v"))  # step 1 draws one product at a time


def projection_picker(ctx: PageContext) -> str:
    """Which product step 1 draws, ``"q"``, ``"k"`` or ``"v"`` (``?projection=k``)."""
    return select(ctx, PROJECTION, ctx.t("qkv.projection"), format_func=str.upper)


def pickers_place(
    ctx: PageContext, matrices: Frame | None, follow: Frame | None, hidden: DeltaGenerator
) -> AbstractContextManager:
    """Where the token picker (steps 1 and 2 follow the token) and step 1's projection
    picker go, given the places of steps 1 and 2 (None: off screen): for students in the
    sidebar, under the sentence's settings (no heading of their own: step 1's pickers then
    fit a 1280 x 720 screen too); on a slide in one row at the top of step 1's notes, or at
    the top of step 2; on the other steps in ``hidden``, a hidden container (they stay in
    the URL)."""
    if matrices is None and follow is None:
        return hidden
    if not ctx.presenter:
        return ctx.controls
    if matrices is not None:
        return matrices.notes.container(horizontal=True, gap="medium")
    return follow.lead


def matrix_panels(
    s: Sentence, x: np.ndarray, w: np.ndarray, out: np.ndarray, which: str
) -> list[charts.Panel]:
    """X, the weight matrix of projection ``which`` and its product ``out`` = X · ``w``,
    e.g. X, W_Q, Q, as heatmap panels (step 1)."""
    name, dims = which.upper(), charts.dim_labels(s.d_model)
    cols = charts.dim_labels(out.shape[1], which)
    return [("X", x, s.tokens, dims), (f"W_{name}", w, dims, cols), (name, out, s.tokens, cols)]


def projection_strip(
    panels: Sequence[charts.Panel], *, presenter: bool, frames: dict[str, int], **options: object
) -> dict:
    """Step 1's chart of :func:`matrix_panels` (X, W and their product P), laid out as the
    product is computed: W above P and X left of it, so P[i, j] sits where X's row i meets
    W's column j. For students the cells are sized for the page's room
    (:func:`charts.fit_cell`: up to 26 px, down to 4 px at d_model = 64, where W is 64 rows
    high), in steps of the ladder, so most d_model steps swap the data of the chart on
    screen instead of building a new one; a slide's grow into its room (:func:`charts.fit`)."""
    if presenter:  # lower cells: the grid is as tall as d_model + n rows, and the slide low
        options = {**options, "aspect": SLIDE_GRID_ASPECT}
        cell = None
    else:  # X beside W's product: d_model + d_k cells wide; W above it: d_model + n high
        x_rows, x_cols, w_cols = panels[0][2], panels[0][3], panels[1][3]
        width = charts.PAGE_WIDTH - 2 * STRIP_OVERHEAD
        height = charts.PAGE_HEIGHT - GRID_OVERHEAD
        columns, rows = len(x_cols) + len(w_cols), len(x_cols) + len(x_rows)
        cell = charts.fit_cell(columns, rows, width, height, lo=4, hi=26)
    strip = charts.matrix_strip(panels, frames=frames, presenter=presenter, cell=cell, **options)
    x_view, w_view, product = strip.pop("hconcat")
    corner = {"data": {"values": []}, "mark": "rect", "width": 1, "height": 1}  # grid's top left
    grid = [{**corner, "view": {"stroke": None}}, w_view, x_view, product]
    return {**strip, "concat": grid, "columns": 2, "align": "each"}


def matrix_notes(
    ctx: PageContext, s: Sentence, out: np.ndarray, i: int, which: str, check: FusedCheck
) -> list[str]:
    """Step 1's "what to notice": the shapes, token ``i``'s row of the product ``out``
    (projection ``which``) and how far the fused projection lands from the separate ones
    (:func:`core.projections.fused_check`)."""
    t = ctx.t
    fused = "qkv.notice_fused_exact" if check.exact else "qkv.notice_fused"
    row = short_list(out[i], digits(ctx))
    return [
        t("qkv.notice_shapes", n=len(s.tokens), d_model=s.d_model, d_k=s.d_k, d_v=s.d_v),
        t("qkv.notice_rows", token=plain(s.tokens[i]), i=i, name=which, row=row),
        t(fused, diff=difference_text(check.largest)),
    ]


def follow_panels(s: Sentence, tr: core.AttentionTrace, i: int) -> list[charts.Panel]:
    """x_i and its three projections, one row each (step 2)."""
    row, dims = [charts.unique_labels(s.tokens)[i]], charts.dim_labels(s.d_model)
    return [
        (f"x_{i}", tr.x[i : i + 1], row, dims),
        (f"q_{i} = x_{i} · W_Q", tr.q[i : i + 1], row, charts.dim_labels(s.d_k, "q")),
        (f"k_{i} = x_{i} · W_K", tr.k[i : i + 1], row, charts.dim_labels(s.d_k, "k")),
        (f"v_{i} = x_{i} · W_V", tr.v[i : i + 1], row, charts.dim_labels(s.d_v, "v")),
    ]


def lesson_panels(
    t: Translator, s: Sentence, tr: core.AttentionTrace
) -> tuple[list[charts.Panel], dict[str, str]]:
    """The attention weights and the output as heatmap panels, and their kinds (step 4)."""
    weights = (t("qkv.weights"), tr.weights, s.tokens, s.tokens)
    output = (t("qkv.output"), tr.output, s.tokens, charts.dim_labels(s.d_v, "v"))
    return [weights, output], {weights[0]: "weights"}


def fused_view(
    s: Sentence, x: np.ndarray, ws: Sequence[np.ndarray]
) -> tuple[list[charts.Panel], dict[str, np.ndarray]]:
    """X, the fused W_QKV and X · W_QKV as heatmap panels, and the same arrays for the
    export (step 3)."""
    w_qkv = fuse_qkv(*ws)
    qkv = side_by_side(*fused_project(x, w_qkv, s.d_k))
    cols = fused_columns(s.d_k, s.d_v)
    dims = charts.dim_labels(s.d_model)
    panels = [
        ("X", x, s.tokens, dims),
        ("W_QKV", w_qkv, dims, cols),
        ("X · W_QKV", qkv, s.tokens, cols),
    ]
    return panels, {"x": x, "w_qkv": w_qkv, "qkv": qkv}


STRIP_OVERHEAD = 80  # px of a panel's axis labels, legend and gap in the strip
GRID_OVERHEAD = 130  # px of step 1's grid that are not cells: two titles, two x axes


def strip_room(ctx: PageContext) -> charts.Room:
    """Room for step 1's chart: on a slide :data:`SLIDE_SHARE` of the width,
    :data:`STRIP_HEIGHT` high; for students the page's room (the grid's cells are sized
    for it by :func:`projection_strip`, so it stays on the first screen as d_model grows)."""
    if ctx.presenter:
        return charts.room(ctx, share=SLIDE_SHARE, height=STRIP_HEIGHT)
    return charts.room(ctx)


def fused_room(ctx: PageContext) -> charts.Room:
    """Room for the fused-projection strip: the page width, :data:`FUSED_HEIGHT` on a slide."""
    return charts.room(ctx, height=FUSED_HEIGHT)


LESSON_CELL = 46  # px of a student's step-4 cell, at most: room for "−0.233" at 11 px and up


def lesson_cell(ctx: PageContext) -> int | None:
    """The largest cell of the step-4 heatmaps: :data:`LESSON_CELL` for students (the
    lesson's three decimals must be legible), the slide's own default on a projector (the
    chart grows into the room there)."""
    return None if ctx.presenter else LESSON_CELL


def lesson_room(ctx: PageContext) -> charts.Room:
    """Room for the step-4 heatmaps: the chart column of :func:`ui.blocks.frame`."""
    return frame_room(ctx, 0.6, LESSON_HEIGHT, LESSON_HEIGHT)


def is_lesson(s: Sentence) -> bool:
    """Whether the page shows the from-scratch lesson's exact example."""
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


def shapes_tex(x: np.ndarray, w: np.ndarray, out: np.ndarray, which: str) -> str:
    """``Q = X W^Q`` (for ``which = "q"``) with the live shapes under each factor."""
    name = which.upper()
    return (
        rf"{name} = X\,W^{name} \qquad \underbrace{{({_shape(x.shape)})}}_{{X}}\cdot"
        rf"\underbrace{{({_shape(w.shape)})}}_{{W^{name}}}"
        rf"\;\to\;\underbrace{{({_shape(out.shape)})}}_{{{name}}}"
    )


def follow_tex(i: int, x_i: np.ndarray, q_i: np.ndarray, k_i: np.ndarray, v_i: np.ndarray) -> str:
    """``x_i`` and its three projections written out with the live numbers."""
    rows = [rf"x_{{{i}}} &= {vec_tex(x_i, digits=2)}"]  # 2 decimals, as the cells below
    for name, vec in (("q", q_i), ("k", k_i), ("v", v_i)):
        rows.append(rf"{name}_{{{i}}} &= x_{{{i}}}\,W^{name.upper()} = {vec_tex(vec, digits=2)}")
    return r"\begin{aligned}" + r"\\".join(rows) + r"\end{aligned}"


def side_by_side(*matrices: np.ndarray) -> np.ndarray:
    """Matrices with the same row count glued left to right (for showing ``[Q | K | V]``)."""
    return np.concatenate(matrices, axis=-1)  # (n, sum of widths)


def stack(panels: Sequence[charts.Panel]) -> dict:
    """One-row heatmaps stacked (x_i, then q_i, k_i, v_i), with large cells."""
    cell = charts.fit_cell(max(len(p[3]) for p in panels), width=1100, lo=14, hi=44)
    maps = [
        charts.heatmap({t: m}, r, c, "values", cell=cell, live_domain=True) for t, m, r, c in panels
    ]
    return charts.concat(maps, direction="vconcat")
