"""Presentation helpers for the grouped-query attention page (pages/13_gqa.py).

Controls, charts, words and the page's steps (drawn by :func:`ui.steps.run`) only: every
number comes from :mod:`core.kv_cache` (grouped-query attention, the K/V expansions, the
cache's size), :mod:`core.findings.gqa` and, for the real model, :mod:`models.smollm` (its sizes
read from its file by :func:`ui.prompt.config`, never typed in; its queries, keys and values
by :func:`models.smollm.layer_qkv`); without the model, steps 2–4 say how to install it. The
optional PyTorch check imports torch lazily, only when its box is opened.
"""

import importlib.util
from dataclasses import dataclass

import numpy as np
import streamlit as st

import core
import core.llama as llama
from core.findings.gqa import (
    GROUPINGS,
    Tiling,
    cache_ratios,
    design,
    group_agreement,
    group_weight_gap,
    grouping_rank,
    tiling,
)
from core.kv_cache import kv_numbers_per_token, kv_variants, pool_heads, toy_heads
from core.masks import future_blank
from core.multihead import max_abs_difference
from models import smollm
from ui import charts, loaded
from ui import prompt as typed
from ui.blocks import lazy_box
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import grouped, num, sci
from ui.optional import torch as _torch
from ui.params import Choice, Int, Text, number, select, slider, text
from ui.questions import Question, Truth
from ui.sentence import more_box
from ui.steps import Controls, Got, View
from ui.turns import model_turn

TOY_H = 8  # query heads of the toy model
TOY_N = 6  # its tokens
TOY_D = 8  # its head width
KV = Choice("kv", "2", tuple(str(d) for d in range(TOY_H, 0, -1) if TOY_H % d == 0))
SEED = Int("seed", 42, 0, 999_999)
DTYPES = {"float32": 4, "float16": 2}  # bytes per number
DTYPE = Choice("dtype", "float16", tuple(DTYPES))
LESSON = "The animal didn't cross the street because it was too tired."
PROMPT = Text("prompt", LESSON, max_len=400)
SHARE = 0.62  # presenter mode: the chart column's share of the width
ALIKE_AT_MOST = (
    0.05  # step 4 says a group attends alike only if at most 5 % of random groupings do as well
)
GROUP_COLORS = [
    "#d1495b",
    "#00798c",
    "#edae49",
    "#66a182",
    "#8d6a9f",
    "#2e4057",
    "#f26b38",
    "#7f7f7f",
    "#b07aa1",
]
CURVE_POINTS = 65  # tokens sampled along the cache-size lines
MIB = 2**20


def size(n_bytes: float) -> str:
    """A memory size as people say it: bytes, kB (1000) below a MiB, else MiB or GiB."""
    if n_bytes < 1000:
        return f"{int(n_bytes)} B"
    if n_bytes < MIB:
        return f"{n_bytes / 1000:.1f} kB"
    if n_bytes < 2**30:
        return f"{n_bytes / MIB:.1f} MiB"
    return f"{n_bytes / 2**30:.2f} GiB"


def head_list(heads: list[int]) -> str:
    """Query heads for running text: ``0, 4, 8``."""
    return ", ".join(str(i) for i in heads)


# The real model ---------------------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def qkv(ids: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every layer's rotated queries, keys and values for the prompt (one forward pass, in
    its turn: :mod:`ui.turns`)."""
    m = loaded.smollm2()
    with model_turn(len(ids)):
        return smollm.layer_qkv(m, list(ids))


def sizes(cfg: llama.LlamaConfig) -> dict[str, str]:
    """The model's attention sizes for running text, read from its file."""
    return {
        "layers": str(cfg.n_layers),
        "h": str(cfg.n_heads),
        "h_kv": str(cfg.n_kv_heads),
        "rep": str(cfg.n_heads // cfg.n_kv_heads),
        "d": str(cfg.d_head),
    }


# Controls ----------------------------------------------------------------------------------


def kv_label(raw: str) -> str:
    """A K/V head count as offered: ``8 · MHA``, ``4``, ``2``, ``1 · MQA``."""
    name = {str(TOY_H): "MHA", "1": "MQA"}.get(raw)
    return f"{raw} · {name}" if name else raw


def toy_controls(ctx: PageContext, got: Got) -> tuple[int, int]:
    """Step 1: how many K/V heads the 8 query heads share, and the toy's seed (folded)."""
    t = ctx.t
    h_kv = select(ctx, KV, t("gqa.kv"), format_func=kv_label, help=t("gqa.kv_help", h=TOY_H))
    with more_box(ctx, t("gqa.more")):
        seed = number(ctx, SEED, t("gqa.seed"), width=200)
    return int(h_kv), int(seed)


def memory_controls(ctx: PageContext, got: Got) -> tuple[str, int] | None:
    """Step 2: the number type and the context length to read off (up to the model's); None,
    and nothing drawn, without the model."""
    cfg = typed.config()
    if cfg is None:
        return None
    t = ctx.t
    dtype = select(ctx, DTYPE, t("gqa.dtype"))
    context = int(cfg.context or 8192)
    tokens_ = slider(ctx, Int("tokens", context, 1, context), t("gqa.tokens"))
    return dtype, int(tokens_)


def model_controls(ctx: PageContext, got: Got) -> tuple[str, int] | None:
    """Steps 3–4: the prompt and the layer; None, and nothing drawn, without the model."""
    cfg = typed.config()
    if cfg is None:
        return None
    t = ctx.t
    raw = text(ctx, PROMPT, t("gqa.prompt"))
    layer = slider(ctx, Int("layer", 13, 0, cfg.n_layers - 1), t("gqa.layer"))
    return raw, int(layer)


# on a slide every step's controls sit below its chart, in the chart's column
TOY_CONTROLS = Controls(toy_controls, slide="below")  # step 1 (step 3 reads it too)
MEMORY_CONTROLS = Controls(memory_controls, slide="below")
MODEL_CONTROLS = Controls(model_controls, slide="below")  # steps 3 and 4


# The steps -------------------------------------------------------------------------------


def toy_step(v: View) -> None:
    """Step 1: a toy's 8 query heads reading fewer K/V heads, and their weights."""
    t = v.t
    h_kv, seed = v[TOY_CONTROLS]
    tv = toy(h_kv, seed)
    chart = v.chart(toy_chart, t, h_kv, tv.weights, v.presenter)
    v.text("gqa.s1_text", h=TOY_H, n=TOY_N, d=TOY_D)
    v.notice(toy_notice(v.ctx, tv))
    v.export("gqa_toy", chart, arrays=toy_arrays(tv))


def memory_step(v: View) -> None:
    """Step 2: the KV cache of SmolLM2's shape with multi-head, grouped-query and multi-query
    attention."""
    t, cfg, chosen = v.t, typed.config(), v[MEMORY_CONTROLS]
    if cfg is None or chosen is None:
        typed.missing(v.ctx)
        return
    m = memory(cfg, *chosen)
    names = design_names(t, m)
    args = (m.curve_tokens, m.curves, m.tokens, m.at_tokens, names, v.presenter)
    chart = v.chart(memory_chart, t, *args)
    v.text("gqa.s2_text", **sizes(cfg))
    v.lead.latex(memory_formula(t))
    v.notice(memory_notice(v.ctx, cfg, m))
    v.links("kv_cache")
    v.export("gqa_memory", chart, arrays=memory_arrays(m))


def trap_step(v: View) -> None:
    """Step 3: K/V heads repeated the right way and tiled the wrong way on one layer of
    SmolLM2, and PyTorch's grouped-query attention (on demand)."""
    t, cfg, chosen = v.t, typed.config(), v[MODEL_CONTROLS]
    if cfg is None or chosen is None:
        typed.missing(v.ctx)
        return
    raw, layer = chosen
    typed.model_or_stop(v.ctx)
    prompt = typed.prompt_or_default(v.ctx, raw, PROMPT.default)
    tr = trap(cfg, qkv(prompt.ids)[layer], layer)
    args = (tr.h, tr.h_kv, tr.gaps, trap_titles(t, layer), v.presenter)
    chart = v.chart(trap_chart, t, *args)
    with v.lead:
        typed.chinese_note(v.ctx, raw)
    v.text("gqa.s3_text", **sizes(cfg))
    v.lead.code(expansion_code(cfg.n_heads // cfg.n_kv_heads), language="python")
    # step 1's toy (its controls drawn, hidden, on every run) shows the bug too
    v.notice(trap_notice(v.ctx, tr, toy(*v[TOY_CONTROLS])))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    with v.notes:
        lazy_box(
            t("gqa.torch_title"),
            "gqa_torch",
            lambda: torch_box(v.ctx, prompt.ids),
            icon=":material/verified:",
        )
    caption = t("gqa.model_caption", layer=layer)
    v.export("gqa_trap", chart, arrays={"gaps": tr.gaps}, caption=caption)


def heads_step(v: View) -> None:
    """Step 4: one layer's 9 query heads in their 3 groups (students: the notice beside the
    tall chart)."""
    t, cfg, chosen = v.t, typed.config(), v[MODEL_CONTROLS]
    if cfg is None or chosen is None:
        typed.missing(v.ctx)
        return
    raw, layer = chosen
    typed.model_or_stop(v.ctx)
    prompt = typed.prompt_or_default(v.ctx, raw, PROMPT.default)
    weights = layer_weights(prompt.ids, layer)
    labels = charts.unique_labels(list(prompt.labels))
    chart = v.chart(model_chart, t, labels, weights, cfg.n_kv_heads, v.presenter)
    with v.lead:
        typed.chinese_note(v.ctx, raw)
    v.text("gqa.s4_text", layer=layer, n=len(prompt.ids), **sizes(cfg))
    v.notice(model_notice(v.ctx, cfg, weights, layer), place=v.aside)
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links("decoder", "rope")
    caption = t("gqa.model_caption", layer=layer)
    v.export("gqa_heads", chart, arrays={"weights": weights}, caption=caption)


# Who reads which K/V head ------------------------------------------------------------------


def mapping_rows(h: int, h_kv: int, tiled: bool = False) -> list[dict]:
    """The rows of :func:`mapping_layer`: a point per query head (top) and per K/V head
    (bottom, centred under the group it serves when shared the right way) and a link from
    each query head to the K/V head it reads (:func:`core.kv_cache.kv_head_of`)."""
    reads = core.kv_head_of(h, h_kv, tiled)  # (h,)
    rep = h // h_kv
    kv_x = [(g + 0.5) * rep - 0.5 for g in range(h_kv)]  # centre of group g
    rows = [
        {"kind": "q", "x": i, "y": 1, "x2": i, "y2": 1, "g": int(g), "label": f"Q{i}"}
        for i, g in enumerate(reads)
    ]
    rows += [
        {"kind": "kv", "x": x, "y": 0, "x2": x, "y2": 0, "g": g, "label": f"KV{g}"}
        for g, x in enumerate(kv_x)
    ]
    rows += [
        {"kind": "link", "x": i, "y": 1, "x2": kv_x[g], "y2": 0, "g": int(g), "label": ""}
        for i, g in enumerate(reads)
    ]
    return rows


def mapping_layer(
    t: Translator, rows: list[dict], h: int, title: str, name: str, presenter: bool
) -> dict:
    """Query heads on top, K/V heads below, a line from each query head to the K/V head it
    reads, coloured by that K/V head."""
    groups = sorted({r["g"] for r in rows})
    color = {
        "field": "g",
        "type": "nominal",
        "legend": None,
        "scale": {"domain": groups, "range": GROUP_COLORS[: len(groups)]},
    }
    x = {
        "field": "x",
        "type": "quantitative",
        "axis": None,
        "scale": {"domain": [-0.6, h - 0.4], "nice": False},
    }
    y = {"field": "y", "type": "quantitative", "axis": None, "scale": {"domain": [-0.45, 1.45]}}
    tips = [
        {"field": "label", "type": "nominal", "title": t("gqa.tip_head")},
        {"field": "g", "type": "nominal", "title": t("gqa.tip_kv")},
    ]
    font = 19 if presenter else 13

    def only(kind: str) -> list[dict]:
        return [{"filter": f"datum.kind == '{kind}'"}]

    return {
        "title": title,
        "width": 60 * h if not presenter else 90 * h,
        "height": 110 if not presenter else 120,
        "data": {"name": name},
        "encoding": {"x": x, "y": y, "color": color},
        "layer": [
            {
                "transform": only("link"),
                "mark": {"type": "rule", "strokeWidth": 2.5},
                "encoding": {"x2": {"field": "x2"}, "y2": {"field": "y2"}},
            },
            {
                "transform": only("q"),
                "mark": {"type": "circle", "size": 260, "opacity": 1},
                "encoding": {"tooltip": tips},
            },
            {
                "transform": only("kv"),
                "mark": {"type": "square", "size": 420, "opacity": 1},
                "encoding": {"tooltip": tips},
            },
            {
                "transform": only("q"),
                "mark": {"type": "text", "dy": -18, "fontSize": font, "fontWeight": "bold"},
                "encoding": {"text": {"field": "label", "type": "nominal"}},
            },
            {
                "transform": only("kv"),
                "mark": {"type": "text", "dy": 22, "fontSize": font, "fontWeight": "bold"},
                "encoding": {"text": {"field": "label", "type": "nominal"}},
            },
        ],
    }


@dataclass(frozen=True)
class ToyView:
    """Step 1's numbers: the toy's weights per query head with ``h_kv`` K/V heads."""

    h_kv: int
    weights: np.ndarray  # (h, n, n) causal
    output: np.ndarray  # (h, n, d)
    gap: float  # largest weight difference between two query heads of one group
    tiled: Tiling  # the bug of step 3 on the toy
    q: np.ndarray  # (h, n, d)
    k: np.ndarray  # (h_kv, n, d)
    v: np.ndarray  # (h_kv, n, d)


@st.cache_data(max_entries=64, show_spinner=False)
def toy(h_kv: int, seed: int) -> ToyView:
    """The toy multi-head layer with its K/V heads averaged into ``h_kv`` groups."""
    q, k, v = toy_heads(TOY_H, TOY_N, TOY_D, seed)
    k, v = pool_heads(k, h_kv), pool_heads(v, h_kv)  # (h_kv, n, d) each
    mask = core.causal_mask(TOY_N)
    out, w = core.grouped_query_attention(q, k, v, mask)
    return ToyView(h_kv, w, out, group_weight_gap(w, h_kv), tiling(q, k, v), q, k, v)


def toy_arrays(v: ToyView) -> dict[str, np.ndarray]:
    """Step 1's export: the toy's queries, shared keys and values, weights and outputs."""
    return {"q": v.q, "k": v.k, "v": v.v, "weights": v.weights, "output": v.output}


def head_panels(weights: np.ndarray, h_kv: int) -> dict[str, np.ndarray]:
    """One heatmap panel per query head, titled with the K/V head it reads."""
    reads = core.kv_head_of(weights.shape[0], h_kv)
    return {
        f"Q{i} · KV{g}": future_blank(w)
        for i, (w, g) in enumerate(zip(weights, reads, strict=False))
    }


def toy_chart(t: Translator, h_kv: int, weights: np.ndarray, presenter: bool) -> dict:
    """Who reads which K/V head, above each query head's weights (one panel per head)."""
    labels = [str(i) for i in range(weights.shape[-1])]
    rows = mapping_rows(TOY_H, h_kv)
    diagram = {
        "datasets": {"toy_map": rows},
        **mapping_layer(t, rows, TOY_H, t("gqa.map_title"), "toy_map", presenter),
    }
    cell = 17 if presenter else 15  # on a slide: the 8 panels fill the chart column
    # each query head above its panel: a panel and the gap after it (20 px) per head, and
    # the 0.6 head of margin left of head 0 about the width of the panels' axis labels
    diagram["width"] = round((TOY_H + 0.2) * (TOY_N * cell + 20))
    heat = charts.heatmap(
        head_panels(weights, h_kv),
        labels,
        labels,
        columns=TOY_H,
        cell=cell,
        annotate=False,
        legend=False,
        name="toy_weights",
    )
    return charts.concat([diagram, {**heat, "title": t("gqa.toy_weights")}], "vconcat", 16)


def toy_notice(ctx: PageContext, v: ToyView) -> list[str]:
    """Step 1's "what to notice"."""
    t = ctx.t
    rep = TOY_H // v.h_kv
    items = [t(f"gqa.notice_{design(TOY_H, v.h_kv)}", h=TOY_H, h_kv=v.h_kv, rep=rep)]
    if v.h_kv < TOY_H:
        items.append(t("gqa.notice_gap", gap=num(v.gap), rep=rep))
    items.append(t("gqa.notice_pooled"))
    return items


# Cache memory ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """Step 2's numbers for SmolLM2's sizes."""

    dtype: str
    tokens: int
    context: int
    variants: dict[str, int]  # design -> K/V heads
    per_token: dict[str, int]  # numbers cached per token
    at_tokens: dict[str, int]  # bytes at ``tokens`` tokens
    curve_tokens: np.ndarray  # (t,)
    curves: dict[str, np.ndarray]  # design -> bytes (t,)


def memory(cfg: llama.LlamaConfig, dtype: str, tokens_: int) -> Memory:
    """The key/value cache of SmolLM2's shape with multi-head, its own grouped-query and
    multi-query attention."""
    variants = kv_variants(cfg.n_heads, cfg.n_kv_heads)
    width, layers, d = DTYPES[dtype], cfg.n_layers, cfg.d_head
    context = int(cfg.context or tokens_)
    grid = np.linspace(0, context, CURVE_POINTS).round().astype(np.int64)  # (t,)
    return Memory(
        dtype,
        tokens_,
        context,
        variants,
        {k: kv_numbers_per_token(layers, h_kv, d) for k, h_kv in variants.items()},
        {k: core.kv_cache_bytes(tokens_, layers, h_kv, d, width) for k, h_kv in variants.items()},
        grid,
        {k: core.kv_cache_bytes(grid, layers, h_kv, d, width) for k, h_kv in variants.items()},
    )


def memory_chart(
    t: Translator,
    curve_tokens: np.ndarray,
    curves: dict[str, np.ndarray],
    tokens_: int,
    at_tokens: dict[str, int],
    names: dict[str, str],
    presenter: bool,
) -> dict:
    """The cache's size against the context length, one line per design, and the sizes at
    the chosen length marked and printed."""
    order = list(curves)
    shown = [names[k] for k in order]
    rows = charts.records(
        {
            "design": [names[k] for k in order for _ in curve_tokens],
            "tokens": np.tile(curve_tokens, len(order)),
            "mib": np.concatenate([curves[k] / MIB for k in order]),
        }
    )
    marks = charts.records(
        {
            "design": shown,
            "tokens": [tokens_] * len(order),
            "mib": [at_tokens[k] / MIB for k in order],
            "text": [size(at_tokens[k]) for k in order],
        }
    )
    colors = [charts.QUERY_COLOR, charts.KEY_COLOR, charts.ACCENT]
    color = {
        "field": "design",
        "type": "nominal",
        "title": None,
        "sort": shown,
        "scale": {"domain": shown, "range": colors[: len(shown)]},
        "legend": {"orient": "bottom"},
    }
    x = {
        "field": "tokens",
        "type": "quantitative",
        "title": t("gqa.axis_tokens"),
        "scale": {"domain": [0, int(curve_tokens[-1])], "nice": False},
        "axis": {"format": "d"},
    }
    y = {"field": "mib", "type": "quantitative", "title": t("gqa.axis_mib")}
    tips = [
        {"field": "design", "type": "nominal", "title": t("gqa.tip_design")},
        {"field": "tokens", "type": "quantitative", "title": t("gqa.axis_tokens")},
        {"field": "text", "type": "nominal", "title": t("gqa.axis_mib")},
    ]
    return {
        "datasets": {"cache": rows, "marks": marks},
        "width": 700 if presenter else 620,
        "height": 330 if presenter else 290,
        "layer": [
            {
                "data": {"name": "cache"},
                "mark": {"type": "line", "strokeWidth": 3},
                "encoding": {"x": x, "y": y, "color": color},
            },
            {
                "data": {"name": "marks"},
                "mark": {"type": "rule", "strokeDash": [4, 4], "color": "#888"},
                "encoding": {"x": {"field": "tokens", "type": "quantitative"}},
            },
            {
                "data": {"name": "marks"},
                "mark": {"type": "point", "filled": True, "size": 110, "opacity": 1},
                "encoding": {"x": x, "y": y, "color": color, "tooltip": tips},
            },
            {
                "data": {"name": "marks"},
                "mark": {
                    "type": "text",
                    "align": "right",
                    "dx": -10,
                    "dy": -10,
                    "fontWeight": "bold",
                },
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": color,
                    "text": {"field": "text", "type": "nominal"},
                },
            },
        ],
    }


def memory_arrays(m: Memory) -> dict[str, np.ndarray]:
    """Step 2's export: the lengths and each design's cache in bytes."""
    return {"tokens": m.curve_tokens, **{f"bytes_{k}": v for k, v in m.curves.items()}}


def design_names(t: Translator, m: Memory) -> dict[str, str]:
    """Each design with its K/V head count: ``GQA (3 K/V heads)``."""
    return {k: t("gqa.design", name=k, h_kv=h_kv) for k, h_kv in m.variants.items()}


def memory_facts(cfg: llama.LlamaConfig, m: Memory) -> dict[str, str]:
    """The numbers of step 2's text: SmolLM2's cache per token and at the chosen length."""
    per_token = m.per_token["GQA"]
    mha_times, mqa_part = cache_ratios(m.variants)
    return {
        **sizes(cfg),
        "numbers": grouped(per_token),
        "f32": grouped(per_token * DTYPES["float32"]),
        "f32_kb": size(per_token * DTYPES["float32"]),
        "f16": grouped(per_token * DTYPES["float16"]),
        "f16_kb": size(per_token * DTYPES["float16"]),
        "tokens": grouped(m.tokens),
        "dtype": m.dtype,
        "gqa": size(m.at_tokens["GQA"]),
        "mha": size(m.at_tokens["MHA"]),
        "mqa": size(m.at_tokens["MQA"]),
        "gqa_bytes": grouped(m.at_tokens["GQA"]),
        "mha_times": num(mha_times, 0),
        "mqa_part": num(mqa_part, 0),
    }


def memory_formula(t: Translator) -> str:
    """The cache's size as a formula (LaTeX), its words translated."""
    cache, tokens_, per = (t(f"gqa.formula_{k}") for k in ("cache", "tokens", "bytes"))
    return (
        rf"\text{{{cache}}} = 2 \times L \times h_{{kv}} \times d \times \text{{{tokens_}}}"
        rf" \times \text{{{per}}}"
    )


def memory_notice(ctx: PageContext, cfg: llama.LlamaConfig, m: Memory) -> list[str]:
    """Step 2's "what to notice"."""
    t, facts = ctx.t, memory_facts(cfg, m)
    return [t("gqa.notice_per_token", **facts), t("gqa.notice_at_tokens", **facts)]


# The tiling bug ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Trap(Tiling):
    """Step 3's numbers: the tiling bug (:class:`core.findings.gqa.Tiling`) on one layer of
    SmolLM2."""

    layer: int


def trap(cfg: llama.LlamaConfig, layer_qkv: tuple[np.ndarray, ...], layer: int) -> Trap:
    """The right and the tiled expansion on one layer's real queries, keys and values."""
    return Trap(**vars(tiling(*layer_qkv)), layer=layer)


def trap_titles(t: Translator, layer: int) -> list[str]:
    """The titles of :func:`trap_chart`'s parts: the right expansion, the wrong one, the gaps."""
    return [t("gqa.right_title"), t("gqa.wrong_title"), t("gqa.gaps_title", layer=layer)]


def trap_chart(
    t: Translator, h: int, h_kv: int, gaps: np.ndarray, titles: list[str], presenter: bool
) -> dict:
    """The right and the wrong expansion side by side (who reads which K/V head), above the
    largest change of each query head's output when the K/V heads are tiled."""
    right, wrong = mapping_rows(h, h_kv), mapping_rows(h, h_kv, tiled=True)
    parts = [
        {"datasets": {name: rows}, **mapping_layer(t, rows, h, title, name, presenter)}
        for name, rows, title in (("right", right, titles[0]), ("wrong", wrong, titles[1]))
    ]
    for part in parts:
        part["width"] = (44 if presenter else 36) * h
    heads = [f"Q{i}" for i in range(h)]
    shown = [charts.fmt(float(g), 2) if g else "0" for g in gaps]  # the same head: exactly 0
    bars = charts.records({"head": heads, "gap": gaps, "text": shown})
    x = {
        "field": "head",
        "type": "nominal",
        "sort": heads,
        "title": None,
        "axis": {"labelAngle": 0},
    }
    y = {"field": "gap", "type": "quantitative", "title": t("gqa.axis_gap")}
    chart = {
        "datasets": {"gaps": bars},
        "data": {"name": "gaps"},
        "title": titles[2],
        "width": 80 * h if presenter else 70 * h,
        "height": 140 if presenter else 130,
        "layer": [
            {
                "mark": {"type": "bar", "color": charts.QUERY_COLOR},
                "encoding": {
                    "x": x,
                    "y": y,
                    "tooltip": [
                        {"field": "head", "type": "nominal", "title": t("gqa.tip_head")},
                        {"field": "text", "type": "nominal", "title": t("gqa.axis_gap")},
                    ],
                },
            },
            {
                "mark": {"type": "text", "dy": -8, "color": "#222"},
                "encoding": {"x": x, "y": y, "text": {"field": "text", "type": "nominal"}},
            },
        ],
    }
    return charts.concat([charts.concat(parts, spacing=40), chart], "vconcat", 14)


def expansion_code(rep: int) -> str:
    """The two expansions as a student would write them, in NumPy and in PyTorch."""
    return (
        f"k_right = np.repeat(k, {rep}, axis=0)  # torch: k.repeat_interleave({rep}, dim=1)\n"
        f"k_wrong = np.tile(k, ({rep}, 1, 1))    # torch: k.repeat(1, {rep}, 1, 1)"
    )


def trap_notice(ctx: PageContext, tr: Trap, toy_view: ToyView) -> list[str]:
    """Step 3's "what to notice"."""
    t = ctx.t
    items = [
        t("gqa.notice_right_wrong", rep=tr.h // tr.h_kv, h_kv=tr.h_kv),
        t(
            "gqa.notice_bad",
            layer=tr.layer,
            bad=tr.bad,
            h=tr.h,
            gap=num(tr.worst, 2),
            same=head_list(list(tr.same)),
        ),
        t("gqa.notice_loop", loop=sci(tr.loop)),
    ]
    toy_worst = toy_view.tiled.worst
    if toy_worst > 0:
        items.append(t("gqa.notice_toy", h=TOY_H, h_kv=toy_view.h_kv, gap=num(toy_worst, 2)))
    else:
        items.append(t("gqa.notice_toy_none", h=TOY_H, h_kv=toy_view.h_kv))
    return items


@dataclass(frozen=True)
class TorchCheck:
    """core's grouped-query attention against PyTorch's on every layer."""

    version: str
    diff: float  # max |core − torch| over all layers
    layers: int


@st.cache_data(max_entries=8, show_spinner=False)
def torch_check(ids: tuple[int, ...]) -> TorchCheck | None:
    """``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True,
    enable_gqa=True)`` on every layer's q, k, v, against core; None without torch. Both run
    in one turn (:mod:`ui.turns`), taken after :func:`qkv` has had its own."""
    if importlib.util.find_spec("torch") is None:
        return None
    torch = _torch()
    if torch is None:
        return None
    worst = 0.0
    layers = qkv(ids)  # before the turn: qkv takes one itself
    sdpa = torch.nn.functional.scaled_dot_product_attention
    with model_turn(len(ids)):
        for q, k, v in layers:
            ours, _ = core.grouped_query_attention(q, k, v, core.causal_mask(q.shape[1]))
            with torch.no_grad():
                tensors = (torch.from_numpy(x) for x in (q, k, v))
                ref = sdpa(*tensors, is_causal=True, enable_gqa=True)
            worst = max(worst, max_abs_difference(ref.numpy(), ours))
    return TorchCheck(torch.__version__, worst, len(layers))


def torch_box(ctx: PageContext, ids: tuple[int, ...]) -> None:
    """The PyTorch check's result (drawn inside a box opened on demand)."""
    t = ctx.t
    check = torch_check(ids)
    if check is None:
        st.info(t("gqa.torch_missing"), icon=":material/extension:")
        return
    st.markdown(
        t("gqa.torch_result", layers=check.layers, diff=sci(check.diff), version=check.version)
    )


# The real model's heads in their groups -----------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def layer_weights(ids: tuple[int, ...], layer: int) -> np.ndarray:
    """One layer's causal attention weights per query head, as the model computes them.

    Shapes: -> ``(h, n, n)``."""
    q, k, v = qkv(ids)[layer]
    return core.grouped_query_attention(q, k, v, core.causal_mask(q.shape[1]))[1]


GROUPS_ASIDE = 0.44  # students: the notice's share of the width, right of the rows of groups


GROUPS_HEIGHT = {False: 480, True: 600}  # px for the rows of groups (students, projector)
GROUP_GAP = 10  # px between the panels
LABELLED_CELL = 7  # smaller cells leave their token labels out (they would overlap)


def model_chart(
    t: Translator, labels: list[str], weights: np.ndarray, h_kv: int, presenter: bool
) -> dict:
    """A layer's query heads, one row per group (the query heads that share K/V head g).
    The cells are as large as the rows of groups allow in the step's height, so the chart
    keeps its rows (:func:`ui.charts.fit` would otherwise wrap a chart much too tall)."""
    h, n = weights.shape[0], len(labels)
    axis = 50 if n <= 20 else 10  # the tokens under the last row, turned
    # minus the chart's title, the gaps between the rows and each row's panel titles
    per_row = (GROUPS_HEIGHT[presenter] - 25 - axis - GROUP_GAP * (h_kv - 1)) / h_kv - 22
    cell = float(np.clip(per_row / n, 1.5, 40))
    spec = charts.heatmap(
        head_panels(weights, h_kv),
        labels,
        labels,
        columns=h // h_kv,
        cell=round(cell, 1),
        annotate=False,
        name="heads",
    )
    if cell < LABELLED_CELL:
        hidden = {"labels": False, "ticks": False}
        for channel in ("x", "y"):
            spec["spec"]["encoding"][channel]["axis"] = hidden
    return {**spec, "spacing": GROUP_GAP, "title": t("gqa.groups_title", h=h, h_kv=h_kv)}


def model_notice(
    ctx: PageContext, cfg: llama.LlamaConfig, weights: np.ndarray, layer: int
) -> list[str]:
    """Step 4's "what to notice"."""
    t = ctx.t
    same, other = group_agreement(weights, cfg.n_kv_heads)
    share = grouping_rank(weights, cfg.n_kv_heads)
    key = "gqa.notice_alike" if share <= ALIKE_AT_MOST else "gqa.notice_not_alike"
    shown = {"same": num(same), "other": num(other), "pct": f"{100 * share:.0f} %"}
    return [
        t("gqa.notice_rows", **sizes(cfg)),
        t(key, layer=layer, groupings=GROUPINGS, **shown),
    ]


# Ask the class -----------------------------------------------------------------------------
# SmolLM2's heads as the question names them (its file says the same: a test checks): how
# many times smaller is the cache of ASK_KV_HEADS K/V heads than of one per query head?
ASK_HEADS, ASK_KV_HEADS = 9, 3


def _ask_smaller_truth() -> Truth:
    mha_over_gqa, _ = cache_ratios(kv_variants(ASK_HEADS, ASK_KV_HEADS))
    # a ratio of two head counts, exactly 3: only 3 is right
    return Truth(number=mha_over_gqa, tolerance=0.0)


ASK_SMALLER = Question("gqa.smaller", "number", _ask_smaller_truth)
QUESTIONS = (ASK_SMALLER,)
