"""The multi-head attention page (pages/7_multi_head.py): its controls, charts, words and
steps.

Only drawing and wiring live here; every number comes from :mod:`core.multihead`. The
optional PyTorch cross-check imports torch lazily, inside :func:`torch_check`, so the app
runs (and says how to enable the check) when torch is not installed.
"""

import importlib.util
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.findings.multi_head import head_agreement, head_picks
from core.multihead import (
    MultiHeadTrace,
    average_heads,
    init_multihead,
    max_abs_difference,
    multi_head_attention_loop,
    multi_head_trace,
    torch_layout,
)
from core.textplot import text_heatmap
from core.tokens import embed_tokens, tokenize
from ui import charts
from ui.blocks import link
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.notes import sci, untrained
from ui.optional import torch as _torch
from ui.params import divisor_choice, select
from ui.questions import Question, Truth, choices
from ui.sentence import (
    D_MODEL,
    EMBED,
    LESSON_TEXT,
    POSITIONS,
    SEED,
    Sentence,
    current_d_model,
    sentence_controls,
)
from ui.steps import Controls, Got, View

HEADS_KEY = "heads"
DEFAULT_HEADS = 2  # lesson 002's PyTorch example: d_model = 8, n_heads = 2
FLAT = 2.0  # a head whose top weight is below FLAT × 1/n is "nearly flat"
MAX_HEAD_PANELS = 8  # heads drawn in the faceted chart; the rest are in the exports


@dataclass(frozen=True)
class MultiHeadView:
    """Everything the page shows for one setting of the controls."""

    weights: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # W_Q, W_K, W_V, W_O
    trace: MultiHeadTrace
    average: np.ndarray  # (n, n)
    loop_output: np.ndarray  # (n, d_model)
    loop_weights: np.ndarray  # (h, n, n)


@dataclass(frozen=True)
class TorchCheck:
    """torch.nn.MultiheadAttention run with our weights, and how far it is from ours."""

    version: str
    output_diff: float
    average_diff: float
    per_head_diff: float


def heads_control(ctx: PageContext, d_model: int) -> int:
    """The head-count selector (``?heads=``): only divisors of ``d_model`` are offered.

    A whole number that does not divide ``d_model`` (in a link, or left in the URL by a
    larger d_model a moment ago) falls back to the default with a warning that says why;
    any other unusable value gets the generic warning of :func:`ui.params.select`.
    """
    spec = divisor_choice(HEADS_KEY, d_model, DEFAULT_HEADS)
    raw = st.query_params.get(HEADS_KEY)
    if raw is not None and raw.isdigit() and int(raw) > 0 and d_model % int(raw):
        ctx.warn(ctx.t("multi_head.heads_fallback", h=raw, d_model=d_model, default=spec.default))
        del st.query_params[HEADS_KEY]  # explained above: no second, generic warning
    label, helptext = ctx.t("multi_head.heads"), ctx.t("multi_head.heads_help")
    return int(select(ctx, spec, label, help=helptext))


@dataclass(frozen=True)
class Heads:
    """The head count h and the place of the line saying what it derives (:func:`derived`)."""

    h: int
    line: DeltaGenerator


def heads_group(ctx: PageContext, got: Got) -> Heads:
    """Heads h first (for students in the sidebar, the line below it; on a slide the line
    beside it). Its choices are the divisors of the d_model the sentence's slider is about
    to show (:func:`ui.sentence.current_d_model`: that slider moves to a multiple of h)."""
    if not ctx.presenter:
        return Heads(heads_control(ctx, current_d_model()), st.container())
    left, line = st.columns([2, 3], vertical_alignment="center")
    with left:
        h = heads_control(ctx, current_d_model())
    return Heads(h, line)


@dataclass(frozen=True)
class Model:
    """The page's settings and the pass through every stage they give."""

    h: int
    sentence: Sentence
    view: MultiHeadView
    d_k: int  # = d_v = d_model / h


def model_group(ctx: PageContext, got: Got) -> Model:
    """The sentence and d_model (a move of d_model lands on a multiple of h, so h always
    divides it; d_k = d_v = d_model / h); then the line that says what h derives, and the
    pass (:func:`compute`)."""
    heads = got[HEADS]
    s = sentence_controls(ctx, key_dims=False, native=True, d_model_step=heads.h)
    view = compute(s.x, s.d_model, heads.h, s.seed)
    d_k = view.trace.q_heads.shape[-1]
    derived(ctx, heads.line, s.d_model, heads.h, d_k)
    return Model(heads.h, s, view, d_k)


def derived(ctx: PageContext, line: DeltaGenerator, d_model: int, h: int, d_k: int) -> None:
    """ "d_k = d_v = d_model / h = 8 / 2 = 4", below h in the sidebar (small type) or
    beside it on a slide."""
    text = ctx.t("multi_head.derived", d_model=d_model, h=h, d_k=d_k)
    line.markdown(text) if ctx.presenter else line.caption(text)


@st.cache_data(max_entries=64, show_spinner=False)
def compute(x: np.ndarray, d_model: int, h: int, seed: int) -> MultiHeadView:
    """The batched pass (with every stage), the head average and the per-head loop."""
    w = init_multihead(d_model, h, seed)
    trace = multi_head_trace(x, *w, h)
    loop_out, loop_w = multi_head_attention_loop(x, *w, h)
    return MultiHeadView(w, trace, average_heads(trace.weights), loop_out, loop_w)


def stage_table(ctx: PageContext, tr: MultiHeadTrace) -> pd.DataFrame:
    """The eight stages, one row each: what is done (as NumPy) and the live shape."""
    stages = [
        ("x", "x", tr.x),
        ("project", "q = x @ w_q", tr.q),
        ("reshape", "q.reshape(n, h, d_k)", tr.q_split),
        ("transpose", "q.swapaxes(-3, -2)", tr.q_heads),
        ("weights", "softmax(q @ kᵀ / √d_k)", tr.weights),
        ("heads", "weights @ v", tr.heads),
        ("merge", "heads.swapaxes(-3, -2).reshape(n, h·d_v)", tr.concat),
        ("output", "concat @ w_o", tr.output),
    ]
    t = ctx.t
    return pd.DataFrame(
        {
            "": [str(i) for i in range(1, len(stages) + 1)],
            t("multi_head.col_stage"): [t(f"multi_head.stage_{name}") for name, _, _ in stages],
            "NumPy": [f"`{code}`" for _, code, _ in stages],
            t("multi_head.col_shape"): [
                "`(" + ", ".join(str(s) for s in arr.shape) + ")`" for _, _, arr in stages
            ],
        }
    )


def check_table(
    ctx: PageContext, loop: tuple[float, float], check: TorchCheck | None
) -> pd.DataFrame:
    """Step 4 for students: each comparison and its largest difference (the loop's, then
    PyTorch's when it is installed)."""
    t = ctx.t
    rows = [("loop_output_diff", loop[0]), ("loop_weights_diff", loop[1])]
    if check is not None:
        rows += [
            ("torch_output_diff", check.output_diff),
            ("torch_average_diff", check.average_diff),
            ("torch_heads_diff", check.per_head_diff),
        ]
    return pd.DataFrame(
        {
            t("multi_head.col_check"): [t(f"multi_head.{key}") for key, _ in rows],
            t("multi_head.col_value"): [sci(value) for _, value in rows],
        }
    )


WEIGHTS_SHARE = 0.6  # a slide: the heads' chart column (Step.share), the notes beside it
WEIGHTS_HEIGHT = 600  # presenter px for the heads' panels (the notes are beside them)
MERGE_HEIGHT = 530  # presenter px for step 3's strip (the formula above it)


def head_panels(
    t: Translator, per_head: np.ndarray, extra: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """``{"head 0": …, "head 1": …}`` for the first :data:`MAX_HEAD_PANELS` heads (+ extra)."""
    shown = per_head[:MAX_HEAD_PANELS]
    panels = {t("multi_head.head", i=i): m for i, m in enumerate(shown)}  # 0-based, as tokens
    return panels | (extra or {})


def shorter(
    ctx: PageContext, chart_col: DeltaGenerator, notes_col: DeltaGenerator, h: int
) -> DeltaGenerator:
    """Where the weights step's last notes go: on a slide, below the column with room left
    (the chart's while its panels fit one row, else the notes'); for students, after the
    "what to notice" box."""
    shown = min(h, MAX_HEAD_PANELS) + 1  # panels, with the average
    one_row = panel_columns(shown) == shown
    return chart_col if ctx.presenter and one_row else notes_col


def weights_chart(
    t: Translator, presenter: bool, weights: np.ndarray, average: np.ndarray, tokens: list[str]
) -> dict:
    """Per-head attention weights (``weights``: (h, n, n)) next to their average, as small
    multiples in rows of equal length (up to 5 in a row), titled with what rows and columns
    are (a y-axis title would collide with the panel headers); the row pointed at (a query)
    is outlined in every panel (linked views: :func:`ui.charts.heatmap`'s ``link="rows"``)."""
    panels = head_panels(t, weights, {t("multi_head.average"): average})
    room = int(charts.PRESENTER_WIDTH * WEIGHTS_SHARE) if presenter else charts.PAGE_WIDTH
    columns = panel_columns(len(panels))
    per_panel = (room - 20 * (columns - 1)) / columns - 70  # minus the gaps and each axis
    cell = charts.fit_cell(len(tokens), width=min(300, per_panel), lo=8)
    font = charts.SLIDE_FONT if presenter else 15
    spec = charts.heatmap(
        panels,
        tokens,
        tokens,
        columns=columns,
        cell=cell,
        name="weights",
        max_font=font,
        link="rows",  # pointing at a query's row outlines it in every head
    )
    return {**spec, "title": t("multi_head.axes")}


def output_chart(
    t: Translator,
    presenter: bool,
    concat: np.ndarray,
    w_o: np.ndarray,
    output: np.ndarray,
    h: int,
    tokens: list[str],
) -> dict:
    """The ``h`` heads concatenated, W_O and the output, each titled with its shape: side
    by side on a slide; for students one below the other (the concatenation, times W_O,
    gives the output). A student's cells are as large as the page's room
    (:data:`ui.charts.PAGE_WIDTH` × :data:`ui.charts.PAGE_HEIGHT`) allows in the better of
    the two layouts: side by side while d_model is small, one below the other when W_O's
    d_model rows make a row of three too small (:func:`ui.charts.fit` picks the layout that
    is drawn larger), so the whole strip is on the first screen up to d_model = 64."""
    d_model, n = w_o.shape[0], len(tokens)
    concat_cols = _concat_labels(h, concat.shape[-1] // h)
    dims = charts.dim_labels(d_model)
    if presenter:
        width, height = charts.PRESENTER_WIDTH - 360, 330 * 1.35  # minus labels and legends
        cell = charts.fit_cell(3 * d_model, max(n, d_model), width, height, lo=4)
    else:  # minus each panel's labels and legend, and the titles and x axes
        width, height = charts.PAGE_WIDTH, charts.PAGE_HEIGHT
        beside = charts.fit_cell(3 * d_model, max(n, d_model), width - 300, height - 70, lo=4)
        stacked = charts.fit_cell(d_model, 2 * n + d_model, width - 110, height - 170, lo=4)
        cell = min(max(beside, stacked), 26)
    font = charts.SLIDE_FONT if presenter else 15
    items = [
        ("concat", t("multi_head.concat"), concat, tokens, concat_cols),
        ("w_o", "W_O", w_o, concat_cols, dims),
        ("output", t("multi_head.output"), output, tokens, dims),
    ]
    maps = [
        charts.heatmap(
            {title: m}, r, c, "values", cell=cell, name=key, max_font=font, live_domain=True
        )
        for key, title, m, r, c in items
    ]
    return charts.concat(maps, "hconcat" if presenter else "vconcat")


def _concat_labels(h: int, d_v: int) -> list[str]:
    """Column labels of the concatenation: ``h0·0 … h0·3 h1·0 …`` (head, column in head)."""
    return [f"h{i}·{j}" for i in range(h) for j in range(d_v)]


def head_columns(ctx: PageContext, h: int, d_k: int) -> str:
    """Markdown list: which columns of Q, K and V each head receives."""
    lines = [
        ctx.t("multi_head.head_columns", i=i, a=i * d_k, b=(i + 1) * d_k - 1)
        for i in range(min(h, MAX_HEAD_PANELS))
    ]
    if h > MAX_HEAD_PANELS:
        lines.append("…")
    return "\n".join(f"- {line}" for line in lines)


def all_arrays(view: MultiHeadView) -> dict[str, np.ndarray]:
    """Every matrix of the page, for the NPZ export (names as in the code)."""
    tr = view.trace
    w_q, w_k, w_v, w_o = view.weights
    return {
        "x": tr.x,
        "w_q": w_q,
        "w_k": w_k,
        "w_v": w_v,
        "w_o": w_o,
        "q": tr.q,
        "q_split": tr.q_split,
        "q_heads": tr.q_heads,
        "k_heads": tr.k_heads,
        "v_heads": tr.v_heads,
        "weights": tr.weights,
        "weights_average": view.average,
        "heads": tr.heads,
        "concat": tr.concat,
        "output": tr.output,
        "loop_output": view.loop_output,
        "loop_weights": view.loop_weights,
    }


def weights_text(ctx: PageContext, view: MultiHeadView, tokens: list[str]) -> str:
    """Text heatmaps of every head and of the average (the TXT export)."""
    blocks = [
        f"{ctx.t('multi_head.head', i=i)}\n{text_heatmap(w, tokens)}"
        for i, w in enumerate(view.trace.weights)
    ]
    blocks.append(f"{ctx.t('multi_head.average')}\n{text_heatmap(view.average, tokens)}")
    return "\n\n".join(blocks)


def notice_items(ctx: PageContext, view: MultiHeadView, tokens: list[str]) -> list[str]:
    """The live "what to notice" sentences about the heads and their average."""
    t, tr = ctx.t, view.trace
    labels = charts.unique_labels(tokens)
    found = head_picks(tr.weights, FLAT)
    q, shown = found.query, range(min(len(found.keys), MAX_HEAD_PANELS))
    picks = t("multi_head.list_sep").join(
        t("multi_head.pick", i=i, tok=labels[found.keys[i]], w=charts.fmt(found.weights[i]))
        for i in shown
    )
    h, d_k, n = tr.q_heads.shape[0], tr.q_heads.shape[-1], len(tokens)
    best, flat = found.best, found.flat  # flat: random heads, none much sharper than even
    one = "_one" if h == 1 else ""  # one head: nothing to compare it with, or to average
    if flat:
        key = f"multi_head.notice_heads_flat{one}"
        heads = t(
            key, tok=labels[q], best=charts.fmt(best), even=charts.fmt(1 / n), n=n, picks=picks
        )
    elif h == 1:
        heads = t("multi_head.notice_heads_one", tok=labels[q], picks=picks)
    elif found.agree:
        heads = t("multi_head.notice_heads_agree", tok=labels[q], picks=picks)
    else:
        heads = t("multi_head.notice_heads", tok=labels[q], picks=picks)
    average = {
        "tok": labels[q],
        "avg_tok": labels[found.average_key],
        "avg": charts.fmt(found.average_weight),
        "best": charts.fmt(best),
    }
    if h == 1:
        return [
            t("multi_head.notice_split_one", d_model=d_k),
            heads,
            t("multi_head.notice_average_one"),
        ]
    return [
        t("multi_head.notice_split", d_model=h * d_k, h=h, d_k=d_k),
        heads,
        t("multi_head.notice_average" + ("_flat" if flat else ""), **average),
    ]


def panel_columns(panels: int, most: int = 5) -> int:
    """Panels per row (at most ``most``) that leave the fewest empty places in the last row:
    9 panels -> 3 × 3, not 5 + 4."""
    fewest = math.ceil(math.sqrt(panels))  # fewer columns than this would mean more rows
    return min(range(min(panels, most), min(fewest, most) - 1, -1), key=lambda c: -panels % c)


def loop_differences(view: MultiHeadView) -> tuple[float, float]:
    """Max |batched − loop| of the outputs and of the weights."""
    tr = view.trace
    return (
        max_abs_difference(tr.output, view.loop_output),
        max_abs_difference(tr.weights, view.loop_weights),
    )


def torch_check(x: np.ndarray, d_model: int, h: int, seed: int) -> TorchCheck | None:
    """The PyTorch cross-check, or None when torch is not installed (it is optional)."""
    if importlib.util.find_spec("torch") is None:
        return None
    return _torch_run(x, d_model, h, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def _torch_run(x: np.ndarray, d_model: int, h: int, seed: int) -> TorchCheck | None:
    """Run torch.nn.MultiheadAttention loaded with our weights.

    Our projections are ``x @ W``; torch computes ``x @ W.T``, hence
    :func:`core.multihead.torch_layout`. float64 so that only rounding differs.
    """
    torch = _torch()
    if torch is None:  # found but broken: treat as not installed
        return None
    w_q, w_k, w_v, w_o = init_multihead(d_model, h, seed)
    in_proj, out_proj = torch_layout(w_q, w_k, w_v, w_o)
    mha = torch.nn.MultiheadAttention(
        d_model, h, bias=False, batch_first=True, dtype=torch.float64
    ).eval()
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))[None]  # (1, n, d_model)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(in_proj))
        mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(out_proj)))
        out, avg = mha(xt, xt, xt)  # average_attn_weights=True is the default
        _, per_head = mha(xt, xt, xt, average_attn_weights=False)
    ours = multi_head_trace(x, w_q, w_k, w_v, w_o, h)
    return TorchCheck(
        torch.__version__,
        max_abs_difference(out[0].numpy(), ours.output),
        max_abs_difference(avg[0].numpy(), average_heads(ours.weights)),
        max_abs_difference(per_head[0].numpy(), ours.weights),
    )


# Every step reads h and the sentence. Students: both in the sidebar, h first. A slide: h
# with its line under the step's text, the sentence folded below them.
HEADS = Controls(heads_group, box="multi_head.settings")
MODEL = Controls(model_group, fold="multi_head.settings")
MERGE = (
    r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_0,\dots,\mathrm{head}_{h-1})\,W^O,"
    r"\quad \mathrm{head}_i=\mathrm{Attention}(XW^Q_i,\,XW^K_i,\,XW^V_i)"
)


# The steps -------------------------------------------------------------------------------


def split_step(v: View) -> None:
    """Step 1: the stages of the pass and their shapes; the columns each head receives."""
    m, ctx = v[MODEL], v.ctx
    v.lead.markdown(v.t("multi_head.split_text", d_model=m.sentence.d_model, h=m.h, d_k=m.d_k))
    v.figure.table(stage_table(ctx, m.view.trace), hide_index=True)
    v.notes.markdown(head_columns(ctx, m.h, m.d_k))


def weights_step(v: View) -> None:
    """Step 2: each head's weights beside their average."""
    t, ctx, m = v.t, v.ctx, v[MODEL]
    tokens = m.sentence.tokens
    v.text("multi_head.weights_text")  # a slide: the lecturer says it; the notes keep the numbers
    chart = v.chart(weights_chart, t, v.presenter, m.view.trace.weights, m.view.average, tokens)
    if m.h > MAX_HEAD_PANELS:
        v.below.caption(t("multi_head.more_heads", shown=MAX_HEAD_PANELS, h=m.h))
    items = notice_items(ctx, m.view, tokens)
    v.notice(items[1:] if v.presenter else items)  # a slide: step 1 showed the split
    with shorter(ctx, v.below, v.notes, m.h):  # on a slide, below the shorter column
        untrained(ctx)
        text = weights_text(ctx, m.view, tokens)
        export_panel(ctx, "multi_head_weights", chart, arrays=all_arrays(m.view), text=text)


def merge_step(v: View) -> None:
    """Step 3: the heads concatenated, times W_O, give the output."""
    t, m = v.t, v[MODEL]
    tr = m.view.trace
    # a slide: the lecturer says it; the strip takes the room
    v.text("multi_head.merge_text", h=m.h, d_k=m.d_k, d_model=m.sentence.d_model)
    v.lead.latex(MERGE)
    strip = (tr.concat, m.view.weights[3], tr.output, m.h)  # concat, W_O, output, heads
    chart = v.chart(output_chart, t, v.presenter, *strip, m.sentence.tokens)
    v.export("multi_head_output", chart, arrays=all_arrays(m.view))


def check_step(v: View) -> None:
    """Step 4: the batched pass equals the per-head loop and, when it is installed,
    PyTorch's ``nn.MultiheadAttention`` (the comparison runs only on this step)."""
    t, ctx, m = v.t, v.ctx, v[MODEL]
    s = m.sentence
    v.lead.markdown(t("multi_head.check_text", h=m.h))
    loop = loop_differences(m.view)
    check = torch_check(s.x, s.d_model, m.h, s.seed)
    if not v.presenter:  # every difference in one table, first on the screen
        v.figure.table(check_table(ctx, loop, check), hide_index=True)
    else:  # large numbers for the back of the hall, each under its heading
        c1, c2 = v.lead.columns(2)
        c1.metric(t("multi_head.loop_output_diff"), sci(loop[0]))
        c2.metric(t("multi_head.loop_weights_diff"), sci(loop[1]))
    with v.lead if v.presenter else v.notes:
        st.markdown(f"#### {t('multi_head.torch_title')}")
        st.markdown(t("multi_head.torch_mapping"))
        if check is None:
            st.info(t("multi_head.torch_missing"), icon=":material/extension:")
        elif v.presenter:
            c1, c2, c3 = st.columns(3)
            c1.metric(t("multi_head.torch_output_diff"), sci(check.output_diff))
            c2.metric(t("multi_head.torch_average_diff"), sci(check.average_diff))
            c3.metric(t("multi_head.torch_heads_diff"), sci(check.per_head_diff))
        if check is not None:
            st.caption(t("multi_head.torch_version", version=check.version))
        link(ctx, "masking")
        link(ctx, "kv_cache")


# Ask the class -----------------------------------------------------------------------------
# The page's opening settings (h = 2, d_model = 8, seed 42, the lesson's embeddings, which
# depend on a token's position only, so both languages' six-token opening sentences give the
# same heads): does each query's favourite key agree between the heads?
AGREE_OPTIONS = ("all", "some", "none")


def _ask_agree_truth() -> Truth:
    tokens = tokenize(LESSON_TEXT)
    x = embed_tokens(tokens, D_MODEL.default, EMBED.default, SEED.default, POSITIONS.default)
    view = compute(x, D_MODEL.default, DEFAULT_HEADS, SEED.default)
    return Truth(right=frozenset({head_agreement(view.trace.weights)}))


ASK_AGREE = Question(
    "multi_head.agree", "choice", _ask_agree_truth, choices("multi_head.ask.agree", AGREE_OPTIONS)
)
QUESTIONS = (ASK_AGREE,)
