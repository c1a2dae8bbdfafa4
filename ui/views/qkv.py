"""Presentation helpers for the Q, K, V page: its controls, charts and steps."""

from collections.abc import Sequence

import numpy as np
import streamlit as st

import core
from core.findings.qkv import FusedCheck, fused_check
from core.projections import fuse_qkv, fused_project
from ui import charts
from ui import sentence as shared
from ui.charts import vector_tex as vec_tex
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import short_list, untrained
from ui.params import Choice, select
from ui.safe import plain
from ui.sentence import LESSON_SETTINGS, Sentence, sentence_draw, token_draw
from ui.steps import Controls, Got, View

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


def projection_picker(ctx: PageContext, got: Got) -> str:
    """Which product step 1 draws, ``"q"``, ``"k"`` or ``"v"`` (``?projection=k``)."""
    return select(ctx, PROJECTION, ctx.t("qkv.projection"), format_func=str.upper)


# The sentence and its sizes serve every step (a slide: the settings box above the step). The
# followed token serves steps 1 and 2, the projection step 1 alone: for students in the
# sidebar under the sentence's settings (no heading of their own: step 1's pickers then fit a
# 1280 x 720 screen too), on a slide in one row at the top of the step's notes.
SENTENCE = Controls(sentence_draw(), box="qkv.settings", slide="settings")
TOKEN = Controls(token_draw(SENTENCE, "qkv.token"), slide="notes", row=True)
PRODUCT = Controls(projection_picker, slide="notes", row=True)  # which product step 1 draws


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
    (:func:`core.findings.qkv.fused_check`)."""
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
LESSON_CELL = 46  # px of a student's step-4 cell, at most: room for "−0.233" at 11 px and up


def lesson_cell(ctx: PageContext) -> int | None:
    """The largest cell of the step-4 heatmaps: :data:`LESSON_CELL` for students (the
    lesson's three decimals must be legible), the slide's own default on a projector (the
    chart grows into the room there)."""
    return None if ctx.presenter else LESSON_CELL


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


# ---- the steps -----------------------------------------------------------------------------


def _trace(s: Sentence) -> tuple[core.AttentionTrace, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The sentence's self-attention trace and its W_Q, W_K, W_V."""
    ws = s.projections()
    return core.self_attention_trace(s.x, *ws), ws


def matrices_step(v: View) -> None:
    """Step 1: X times one weight matrix gives Q, K or V, with their shapes; the followed
    token's rows framed (a slide: the formula and the notes beside the grid)."""
    t, s, i, which = v.t, v[SENTENCE], v[TOKEN], v[PRODUCT]
    tr, (w_q, w_k, w_v) = _trace(s)
    check = fused_check(s.x, w_q, w_k, w_v)  # the fused projection against the separate ones
    w, out = {"q": (w_q, tr.q), "k": (w_k, tr.k), "v": (w_v, tr.v)}[which]
    shapes = shapes_tex(tr.x, w, out, which)
    v.text("qkv.matrices_text")
    if not v.presenter:  # a slide has the text's formula beside the chart
        v.lead.latex(shapes)
    panels = matrix_panels(s, tr.x, w, out, which)
    shown = v.chart(
        projection_strip, panels, frames={"X": i, which.upper(): i}, **strip_options(v.ctx)
    )
    notes = matrix_notes(v.ctx, s, out, i, which, check)
    arrays = {"x": tr.x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "q": tr.q, "k": tr.k, "v": tr.v}
    if v.presenter:  # the text is what the lecturer says; the slide keeps the formulas
        v.notes.latex(r"\small " + shapes)  # smaller than the body text: the notes fit below
        v.notice(notes[:2])  # a slide: the two main points
        with v.notes:
            untrained(v.ctx)
        v.export("qkv_matrices", shown, arrays=arrays)
    else:
        name = which.upper()
        v.notes.caption(t("qkv.matrices_caption", token=plain(s.tokens[i]), i=i, name=name))
        v.export("qkv_matrices", shown, arrays=arrays)
        v.notice(notes)
        with v.notes:
            untrained(v.ctx)


def follow_step(v: View) -> None:
    """Step 2: the followed token's vector and its query, key and value, written out and as
    one-row heatmaps."""
    t, s, i = v.t, v[SENTENCE], v[TOKEN]
    tr, _ = _trace(s)
    v.lead.markdown(t(f"qkv.follow_text_{s.mode}", token=plain(s.tokens[i]), i=i))
    v.lead.latex(follow_tex(i, tr.x[i], tr.q[i], tr.k[i], tr.v[i]))
    shown = v.chart(stack, follow_panels(s, tr, i))
    arrays = {"x_i": tr.x[i], "q_i": tr.q[i], "k_i": tr.k[i], "v_i": tr.v[i]}
    v.export("qkv_follow", shown, arrays=arrays)


def fused_step(v: View) -> None:
    """Step 3: one fused W_QKV gives Q, K and V at once, equal to the separate products up to
    rounding."""
    t, s = v.t, v[SENTENCE]
    ws = s.projections()
    check = fused_check(s.x, *ws)
    v.lead.markdown(t("qkv.fused_text", width=2 * s.d_k + s.d_v, d_k=s.d_k))
    v.lead.latex(
        r"W^{QKV}=\left[\,W^Q\;\middle|\;W^K\;\middle|\;W^V\,\right],\qquad"
        r"\left[\,Q\;\middle|\;K\;\middle|\;V\,\right]=X\,W^{QKV}"
    )
    panels, fused_arrays = fused_view(s, s.x, ws)
    shown = v.chart(charts.matrix_strip, panels, **strip_options(v.ctx))
    with v.notes:
        cols = st.columns(3)
        for col, name, value in zip(cols, "QKV", (check.q, check.k, check.v), strict=True):
            col.metric(t("qkv.fused_metric", name=name), difference_text(value))
    if not v.presenter:  # the metrics say it on a slide; students read it above the chart
        v.notice([t("qkv.fused_caption", diff=difference_text(check.largest))])
    v.export("qkv_fused", shown, arrays=fused_arrays)


def lesson_step(v: View) -> None:
    """Step 4: the attention weights and output of the from-scratch lesson, with its three
    decimals, and whether these settings are the lesson's."""
    t, s = v.t, v[SENTENCE]
    tr, _ = _trace(s)
    panels, kinds = lesson_panels(t, s, tr)
    style = {"kinds": kinds, "frames": {p[0]: 0 for p in panels}, "largest": lesson_cell(v.ctx)}
    style |= {**strip_options(v.ctx), "digits": 3, "aspect": 1.0}  # square cells, 3 decimals
    shown = v.chart(charts.matrix_strip, panels, **style)
    with v.notes:
        if is_lesson(s):
            st.success(t("qkv.lesson_match"), icon=":material/check_circle:")
        else:
            st.info(t("qkv.lesson_differs"), icon=":material/info:")
    first = short_list(tr.weights[0]), short_list(tr.output[0])
    rows = t("qkv.first_rows", token=plain(s.tokens[0]), weights=first[0], output=first[1])
    if v.presenter:
        v.notes.markdown(rows)
    else:  # the numbers to compare with a program's, above the chart
        v.notice([rows])
    text = core.text_heatmap(tr.weights, charts.unique_labels(s.tokens))
    arrays = {"weights": tr.weights, "output": tr.output}
    v.export("qkv_lesson", shown, arrays=arrays, text=text)
    v.links(("scaling", t("qkv.next_link")), "weighted_sum")
