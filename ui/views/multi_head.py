"""Presentation helpers for the multi-head attention page (pages/7_multi_head.py).

Only drawing and wiring live here; every number comes from :mod:`core.multihead`. The
optional PyTorch cross-check imports torch lazily, inside :func:`torch_check`, so the app
runs (and says how to enable the check) when torch is not installed.
"""

import importlib.util
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.multihead import (
    MultiHeadTrace,
    average_heads,
    head_focus,
    init_multihead,
    max_abs_difference,
    most_disputed_query,
    multi_head_attention_loop,
    multi_head_trace,
    torch_layout,
)
from core.textplot import text_heatmap
from ui import charts
from ui.params import divisor_choice, select
from ui.shell import PageContext

HEADS_KEY = "heads"
DEFAULT_HEADS = 2  # lesson 002's PyTorch example: d_model = 8, n_heads = 2
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


def controls_frame(ctx: PageContext) -> DeltaGenerator:
    """Where the sentence controls go: in place, or a folded expander in presenter mode."""
    if ctx.presenter:
        return st.expander(ctx.t("multi_head.settings"), icon=":material/tune:")
    return st.container()


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


@st.cache_data(max_entries=64, show_spinner=False)
def compute(x: np.ndarray, d_model: int, h: int, seed: int) -> MultiHeadView:
    """The batched pass (with every stage), the head average and the per-head loop."""
    w = init_multihead(d_model, h, seed)
    trace = multi_head_trace(x, *w, h)
    loop_out, loop_w = multi_head_attention_loop(x, *w, h)
    return MultiHeadView(w, trace, average_heads(trace.weights), loop_out, loop_w)


def stage_table(ctx: PageContext, tr: MultiHeadTrace) -> str:
    """A markdown table of the eight stages: what is done (as NumPy) and the live shape."""
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
    head = f"| | {ctx.t('multi_head.col_stage')} | NumPy | {ctx.t('multi_head.col_shape')} |"
    lines = [head, "|---|---|---|---|"]
    for i, (name, code, arr) in enumerate(stages, start=1):
        shape = "(" + ", ".join(str(s) for s in arr.shape) + ")"
        lines.append(f"| {i} | {ctx.t(f'multi_head.stage_{name}')} | `{code}` | `{shape}` |")
    return "\n".join(lines)


PAGE_WIDTH = {False: 1250, True: 1650}  # pixels a chart may use (sidebar open / presenter)
MIN_ANNOTATED_CELL = 22  # smaller cells get no printed numbers: they would not fit


def _panel_layout(ctx: PageContext, n: int, panels: int) -> tuple[int, int]:
    """Cell size and columns for ``panels`` n × n facets: up to 5 in a row, within the page."""
    room = PAGE_WIDTH[ctx.presenter] - 80  # minus the row labels
    columns = min(panels, 5)
    cell = int(np.clip(min(300 * _zoom(ctx) / n, (room / columns - 20) / n), 8, 56))
    return cell, max(1, min(columns, room // (cell * n + 20)))


def _strip_cell(ctx: PageContext, n: int, d_model: int) -> int:
    """Cell size for three matrices side by side (3·d_model columns) within the page."""
    fit = (PAGE_WIDTH[ctx.presenter] - 350) / (3 * d_model)  # minus labels and legends
    return int(np.clip(min(fit, 330 * _zoom(ctx) / max(n, d_model)), 4, 56))


def _zoom(ctx: PageContext) -> float:
    """Charts are larger on the projector."""
    return 1.35 if ctx.presenter else 1.0


# --- The two charts are Vega-Lite dicts drawn with charts.show, in the look of
# charts.heatmap. Why not charts.heatmap / charts.matrix_strip (reported): converting an
# Altair chart goes through Altair's global data transformer, which refuses more than 5000
# rows (8 heads + average at n = 32 is 9216 cells); building one costs ~50 ms per rerun here;
# and matrix_strip has a fixed cell size (3 × 64 columns at 26 px overflow the page). A dict
# costs ~2 ms and has no row limit.


def _heatmap(
    kind: str,
    top: float,
    rows: list[str],
    cols: list[str],
    cell: int,
    titles: tuple[str | None, str | None] = (None, None),
) -> dict:
    """A heatmap unit (rect + printed numbers) without data, like ``charts.heatmap``:
    ``kind="weights"`` 0..1 blues, ``"values"`` red-blue symmetric in [−top, top]."""
    x_title, y_title = titles
    if kind == "weights":
        scale, dark = {"domain": [0, 1], "scheme": "blues"}, "datum.value > 0.55"
    else:
        scale = {"domain": [-top, top], "scheme": "redblue", "reverse": True}
        dark = f"abs(datum.value) > {0.6 * top}"
    color = {"field": "value", "type": "quantitative", "scale": scale, "title": None}
    tips = [{"field": f, "type": "nominal", "title": t} for f, t in _TIPS]
    rect = {"type": "rect", "stroke": "white", "strokeWidth": 0.5 if cell >= 8 else 0}
    layers = [{"mark": rect, "encoding": {"color": color, "tooltip": tips}}]
    if max(len(rows), len(cols)) <= charts.MAX_ANNOTATED and cell >= MIN_ANNOTATED_CELL:
        ink = {"condition": {"test": dark, "value": "white"}, "value": "#222"}
        text = {"type": "text", "fontSize": max(9, min(14, cell // 3))}
        enc = {"text": {"field": "text", "type": "nominal"}, "color": ink}
        layers.append({"mark": text, "encoding": enc})
    x = {"field": "col", "type": "nominal", "sort": cols, "title": x_title}
    y = {"field": "row", "type": "nominal", "sort": rows, "title": y_title}
    return {
        "width": cell * len(cols),
        "height": cell * len(rows),
        "encoding": {
            "x": x | {"axis": {"labelAngle": -45, "labelOverlap": "greedy"}},
            "y": y | {"axis": {"labelOverlap": "greedy"}},  # tiny cells: skip clashing labels
        },
        "layer": layers,
    }


_TIPS = (("row", "row"), ("col", "col"), ("text", "value"))


def _records(frame: pd.DataFrame) -> list[dict]:
    """A chart's data inline in its spec (JSON-ready, so the exports can render it).

    Built from plain lists: ``DataFrame.to_dict("records")`` takes ~40 ms for a 64 × 64 W_O.
    """
    keys = list(frame.columns)
    rows = zip(*(frame[k].tolist() for k in keys), strict=True)
    return [dict(zip(keys, row, strict=True)) for row in rows]


def head_panels(
    ctx: PageContext, per_head: np.ndarray, extra: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """``{"head 1": …, "head 2": …}`` for the first :data:`MAX_HEAD_PANELS` heads (+ extra)."""
    shown = per_head[:MAX_HEAD_PANELS]
    panels = {ctx.t("multi_head.head", i=i + 1): m for i, m in enumerate(shown)}
    return panels | (extra or {})


def weights_chart(
    ctx: PageContext, tr: MultiHeadTrace, average: np.ndarray, tokens: list[str]
) -> tuple[dict, pd.DataFrame]:
    """Per-head attention weights next to their average: one faceted heatmap, and its data."""
    panels = head_panels(ctx, tr.weights, {ctx.t("multi_head.average"): average})
    labels = charts.unique_labels(tokens)
    frame = pd.concat([charts.matrix_frame(m, labels, labels, p) for p, m in panels.items()])
    titles = (ctx.t("multi_head.keys"), ctx.t("multi_head.queries"))
    cell, columns = _panel_layout(ctx, len(tokens), len(panels))
    spec = {
        "data": {"name": "weights"},
        "datasets": {"weights": _records(frame)},
        "facet": {"field": "panel", "type": "nominal", "sort": list(panels), "title": None},
        "columns": columns,
        "spec": _heatmap("weights", 1.0, labels, labels, cell, titles),
        "resolve": {"scale": {"color": "shared"}},
    }
    return spec, frame


def output_chart(
    ctx: PageContext, view: MultiHeadView, tokens: list[str]
) -> tuple[dict, pd.DataFrame]:
    """Concatenated heads, W_O and the output side by side, each titled with its shape."""
    tr, w_o = view.trace, view.weights[3]
    d_model = w_o.shape[0]
    rows = charts.unique_labels(tokens)
    concat_cols = _concat_labels(tr.heads.shape[0], tr.heads.shape[-1])
    dims = charts.dim_labels(d_model)
    items = [
        ("concat", ctx.t("multi_head.concat"), tr.concat, rows, concat_cols),
        ("w_o", "W_O", w_o, concat_cols, dims),
        ("output", ctx.t("multi_head.output"), tr.output, rows, dims),
    ]
    cell = _strip_cell(ctx, len(tokens), d_model)
    frames = {key: charts.matrix_frame(m, r, c, key) for key, _, m, r, c in items}
    panels = [
        _heatmap("values", float(np.abs(m).max()) or 1.0, r, c, cell)
        | {"title": charts.shape_title(name, m.shape), "data": {"name": key}}
        for key, name, m, r, c in items
    ]
    spec = {
        "hconcat": panels,
        "datasets": {key: _records(f) for key, f in frames.items()},
        "spacing": 18,
        "resolve": {"scale": {"color": "independent"}},
    }
    return spec, pd.concat(list(frames.values()))


def _concat_labels(h: int, d_v: int) -> list[str]:
    """Column labels of the concatenation: ``h1·0 … h1·3 h2·0 …`` (head, column in head)."""
    return [f"h{i + 1}·{j}" for i in range(h) for j in range(d_v)]


def head_columns(ctx: PageContext, h: int, d_k: int) -> str:
    """Markdown list: which columns of Q, K and V each head receives."""
    lines = [
        ctx.t("multi_head.head_columns", i=i + 1, a=i * d_k, b=(i + 1) * d_k - 1)
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
        f"{ctx.t('multi_head.head', i=i + 1)}\n{text_heatmap(w, tokens)}"
        for i, w in enumerate(view.trace.weights)
    ]
    blocks.append(f"{ctx.t('multi_head.average')}\n{text_heatmap(view.average, tokens)}")
    return "\n\n".join(blocks)


def notice_items(ctx: PageContext, view: MultiHeadView, tokens: list[str]) -> list[str]:
    """The live "what to notice" sentences about the heads and their average."""
    t, tr = ctx.t, view.trace
    labels = charts.unique_labels(tokens)
    q = most_disputed_query(tr.weights)
    top, top_w = head_focus(tr.weights)
    avg_top, avg_w = head_focus(view.average[None])
    picks = ", ".join(
        t("multi_head.pick", i=i + 1, tok=labels[top[i, q]], w=charts.fmt(top_w[i, q]))
        for i in range(min(len(top), MAX_HEAD_PANELS))
    )
    h, d_k = tr.q_heads.shape[0], tr.q_heads.shape[-1]
    return [
        t("multi_head.notice_split", d_model=h * d_k, h=h, d_k=d_k),
        t("multi_head.notice_heads", tok=labels[q], picks=picks),
        t(
            "multi_head.notice_average",
            tok=labels[q],
            avg_tok=labels[avg_top[0, q]],
            avg=charts.fmt(avg_w[0, q]),
            best=charts.fmt(top_w[:, q].max()),
        ),
    ]


def loop_differences(view: MultiHeadView) -> tuple[float, float]:
    """Max |batched − loop| of the outputs and of the weights."""
    tr = view.trace
    return (
        max_abs_difference(tr.output, view.loop_output),
        max_abs_difference(tr.weights, view.loop_weights),
    )


def sci(value: float) -> str:
    """A tiny difference in scientific notation (``2.2e−16``), exactly 0 as ``0``."""
    return "0" if value == 0 else f"{value:.1e}".replace("-", "−")


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
    try:
        import torch
    except ImportError:  # found but broken: treat as not installed
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
