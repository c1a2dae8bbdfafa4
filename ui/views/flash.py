"""Presentation helpers for the FlashAttention page (pages/14_flash.py).

Controls, charts and words only: every number comes from :mod:`core.flash` and
:mod:`core.findings.flash`. The charts are plain Vega-Lite dicts built by the module-level
builders here (:func:`tile_chart`, :func:`agreement_chart`, :func:`traffic_chart`) and drawn
with :func:`ui.charts.show_cached`.
"""

from dataclasses import dataclass

import numpy as np
import streamlit as st

import core
from core.findings.flash import (
    FLOAT32_EPS,
    FLOAT32_EXP_LIMIT,
    Agreement,
    TileRow,
    first_nan,
    tile_row,
)
from core.findings.flash import agreement as tiled_agreement
from core.flash import (
    AHEAD,
    CURRENT,
    DTYPES,
    HIDDEN,
    SEEN,
    Traffic,
    memory_curves,
    scores_held,
    tile_count,
    toy_qkv,
    traffic_curves,
    traffic_ratio_limit,
)
from ui import charts
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.notes import grouped, num, subtitled
from ui.params import Choice, Flag, Int, index_slider, number, select, slider, toggle
from ui.sentence import more_box
from ui.steps import Controls, Got, View

D = 8  # the toy head's width (d_k = d_v): eight output numbers fit one small panel
KEYS = Int("keys", 40, 8, 128)  # T: keys (and queries) of the toy head
BLOCK = Int("block", 8, 1, 64)  # B: keys per tile
CAUSAL = Flag("causal", False)
SEED = Int("seed", 0, 0, 999_999)
FACTOR = Int("factor", 1, 1, 50)  # every score multiplied by this
FACTORS = np.arange(1.0, 51.0)  # the growth curve's factors: the slider's whole range
BLOCKS = (4, 8, 16, 32, 64)  # step 2's tile sizes
WIDTHS = ("32", "64", "128", "256")
WIDTH = Choice("d", "64", WIDTHS)  # d of the traffic model
SRAM = Int("sram", 100, 8, 512)  # M in thousands of numbers
LENGTHS = 2 ** np.arange(7, 18)  # T = 128 … 131 072 for the memory and traffic curves
MARKED = (1024, 4096, 16384)  # lengths whose ratio the page states
SHARE = 0.62  # presenter mode: the chart column's share of the width
STATE_KEYS = {SEEN: "seen", CURRENT: "current", AHEAD: "ahead", HIDDEN: "hidden"}
STATE_COLORS = {SEEN: charts.KEY_COLOR, CURRENT: charts.ACCENT, AHEAD: "#c4c4c4", HIDDEN: "#ececec"}
SERIES_COLORS = [charts.KEY_COLOR, charts.QUERY_COLOR]
FLOOR = 1e-18  # an error of exactly 0 is drawn here on the log axis (and labelled 0)
NAN_AT = 3e-3  # where "NaN" marks sit on the growth curve's log axis (above every error)


# Small helpers ---------------------------------------------------------------------------


def sci(value: float) -> str:
    """A small difference in scientific notation (``3.3e−16``), exactly 0 as ``0``."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}".replace("-", "−")


def big(value: float) -> str:
    """A count of numbers as people say it: 65 536, 1.1 M, 4.3 G."""
    if value < 1e6:
        return grouped(value)
    for unit, size in (("G", 1e9), ("M", 1e6)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return grouped(value)


# Controls --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Toy:
    """The toy head of steps 1 and 2."""

    n: int  # T keys (and as many queries)
    block: int  # B keys per tile
    causal: bool
    seed: int


def toy_controls(ctx: PageContext, got: Got) -> Toy:
    """T and B side by side, the causal mask; the seed folded."""
    t = ctx.t
    left, right = st.columns(2)
    with left:
        n = slider(ctx, KEYS, t("flash.keys"), help=t("flash.keys_help"))
    with right:
        block = slider(ctx, BLOCK, t("flash.block"), help=t("flash.block_help"))
    causal = toggle(ctx, CAUSAL, t("flash.causal"), help=t("flash.causal_help"))
    with more_box(ctx, t("flash.more")):
        seed = number(ctx, SEED, t("flash.seed"), width=140)
    return Toy(int(n), int(block), bool(causal), int(seed))


def row_controls(ctx: PageContext, got: Got) -> tuple[int, int]:
    """Step 1: the query row and how many tiles have been read, side by side."""
    t, toy = ctx.t, got[TOY]
    left, right = st.columns(2)
    with left:
        row = index_slider(ctx, Int("query", toy.n - 1, 0, toy.n - 1), t("flash.query"))
    with right:
        count = tile_count(toy.n, toy.block)
        tile = index_slider(
            ctx, Int("tile", 1, 1, count), t("flash.tile"), help=t("flash.tile_help")
        )
    return int(row), int(tile)


def factor_control(ctx: PageContext, got: Got) -> float:
    """Step 2: the factor every score is multiplied by."""
    t = ctx.t
    tip = t("flash.factor_help", limit=num(FLOAT32_EXP_LIMIT, 1))
    return float(slider(ctx, FACTOR, t("flash.factor"), help=tip))


def traffic_controls(ctx: PageContext, got: Got) -> tuple[int, int]:
    """Step 3: the head width d and the on-chip memory M (thousands of numbers)."""
    t = ctx.t
    d = select(ctx, WIDTH, t("flash.d"), help=t("flash.d_help"))
    sram = slider(ctx, SRAM, t("flash.sram"), help=t("flash.sram_help"))
    return int(d), int(sram) * 1000


# a slide folds the toy head away: the lecturer moves the step's own controls
TOY = Controls(toy_controls, slide="notes", fold="flash.toy")
ROW = Controls(row_controls, slide="notes")
FACTOR_CONTROL = Controls(factor_control, slide="notes")
TRAFFIC = Controls(traffic_controls, slide="notes")
UPDATE = (
    r"m' = \max\big(m,\ \max_{j \in \text{tile}} s_j\big),\quad "
    r"\ell' = e^{m-m'}\,\ell + \sum_{j \in \text{tile}} e^{s_j-m'},\quad "
    r"a' = e^{m-m'}\,a + \sum_{j \in \text{tile}} e^{s_j-m'}\,v_j,\quad o = a/\ell"
)
TRAFFIC_TEX = (
    r"\text{IO}_{\text{standard}} = 4Td + 4T^2,\qquad "
    r"\text{IO}_{\text{flash}} = 3Td + 2T + \lceil T/B_c \rceil\,(3Td + 4T)"
    r"\approx \frac{(12d^2+16d)\,T^2}{M}"
)


# The steps -------------------------------------------------------------------------------


def tiles_step(v: View) -> None:
    """Step 1: one query row read tile by tile, its running maximum and sum."""
    t, toy = v.t, v[TOY]
    row, tile = v[ROW]
    tl = tiles(toy)
    rv = row_view(tl, toy, row, tile)
    chart = v.chart(tile_chart, t, rv, v.presenter)
    v.text("flash.s1_text", n=toy.n, d=D, block=toy.block)
    v.lead.latex(UPDATE)
    v.notice(row_notice(v.ctx, rv, toy))
    caption = t("flash.s1_caption", n=toy.n, block=toy.block, i=row, t=tile)
    v.export("flash_tiles", chart, arrays=row_arrays(tl, rv), caption=caption)


def agreement_step(v: View) -> None:
    """Step 2: tiled and ordinary attention agree, also when the logits grow."""
    t, toy = v.t, v[TOY]
    a = agreement(toy, v[FACTOR_CONTROL])
    chart = v.chart(agreement_chart, t, a, v.presenter)
    v.text("flash.s2_text", n=toy.n, d=D, count=len(BLOCKS))
    v.notice(agreement_notice(v.ctx, a, toy))
    v.export("flash_agreement", chart, arrays=agreement_arrays(a))


def traffic_step(v: View) -> None:
    """Step 3: what the paper's memory model says about memory and traffic."""
    t = v.t
    d, sram = v[TRAFFIC]
    tv = traffic(d, sram)
    chart = v.chart(traffic_chart, t, tv, v.presenter)
    v.text("flash.s3_text")
    v.lead.latex(TRAFFIC_TEX)
    (v.below if v.presenter else v.lead).caption(t("flash.assumptions"))
    v.notice(traffic_notice(v.ctx, tv))
    with v.below if v.presenter else v.notes:  # a slide: below the chart
        export_panel(v.ctx, "flash_traffic", chart, arrays=traffic_arrays(tv))


# Step 1: tile by tile ----------------------------------------------------------------------


@dataclass(frozen=True)
class Tiles:
    """The toy head attended tile by tile, and ordinarily."""

    q: np.ndarray  # (T, D)
    k: np.ndarray  # (T, D)
    v: np.ndarray  # (T, D)
    mask: np.ndarray  # (T, T) True = may attend
    scores: np.ndarray  # (T, T) scaled scores, before the mask
    output: np.ndarray  # (T, D) tiled result
    reference: np.ndarray  # (T, D) ordinary attention
    trace: core.FlashTrace


@st.cache_data(max_entries=32, show_spinner=False)
def tiles(toy: Toy) -> Tiles:
    """Everything step 1 shows for the toy head (cached per setting)."""
    q, k, v = toy_qkv(toy.n, D, toy.seed)
    mask = core.causal_mask(toy.n) if toy.causal else np.ones((toy.n, toy.n), bool)
    output, trace = core.flash_attention(q, k, v, toy.block, mask)
    reference, _ = core.scaled_dot_product_attention(q, k, v, mask)
    return Tiles(q, k, v, mask, core.attention_scores(q, k), output, reference, trace)


RowView = TileRow  # step 1's numbers (core.findings.flash)


def row_view(tl: Tiles, toy: Toy, row: int, tile: int) -> RowView:
    """Step 1's numbers for query ``row`` after ``tile`` tiles."""
    return tile_row(tl.trace, tl.output, tl.reference, tl.scores, tl.mask, toy.block, row, tile)


def _level(rows: list[dict], field: str, line: dict, label: dict, x: int | str) -> list[dict]:
    """A horizontal line across the view at each row's ``field`` with the row's ``label``
    written beside it at ``x`` (0: the left edge, ``"width"``: the right one): two layers,
    a rule styled ``line`` and a text styled ``label``."""
    y = {"field": field, "type": "quantitative"}
    text = {"field": "label", "type": "nominal"}
    return [
        {"data": {"values": rows}, "mark": {"type": "rule", **line}, "encoding": {"y": y}},
        {
            "data": {"values": rows},
            "mark": {"type": "text", **label},
            "encoding": {"x": {"value": x}, "y": y, "text": text},
        },
    ]


def _finite(values: np.ndarray) -> list[float | None]:
    """Numbers for a chart's data: null where not finite (JSON has no −∞)."""
    return [float(x) if np.isfinite(x) else None for x in values]


def tile_chart(t: Translator, v: RowView, presenter: bool) -> dict:
    """Three views of one query's row: its scores, coloured by tile state, with the tile
    edges and the running maximum; m and ℓ after each tile; the output after this tile
    beside the final one."""
    n = len(v.scores)
    names = [t(f"flash.state_{STATE_KEYS[s]}") for s in (SEEN, CURRENT, AHEAD, HIDDEN)]
    state = [names[int(s)] for s in v.states]
    height = np.where(v.states == HIDDEN, 0.0, v.scores)
    bars = charts.records(
        {
            "j": np.arange(n),
            "x0": np.arange(n) - 0.4,
            "x1": np.arange(n) + 0.4,
            "score": height,
            "state": state,
            "text": charts.fmt_cells(v.scores, 3),
        }
    )
    edges = charts.records({"edge": v.ends[:-1] - 0.5})  # between the last key of a tile
    m_now = v.maxima[v.tile - 1]
    m_label = t("flash.m_rule", m=num(m_now))
    color = {
        "field": "state",
        "type": "nominal",
        "title": None,
        "scale": {
            "domain": names,
            "range": [STATE_COLORS[s] for s in (SEEN, CURRENT, AHEAD, HIDDEN)],
        },
        "legend": {"orient": "top", "direction": "horizontal"},
    }
    x = {
        "field": "x0",
        "type": "quantitative",
        "title": t("flash.axis_key"),
        "scale": {"domain": [-0.5, n - 0.5], "nice": False, "zero": False},
        "axis": {"tickMinStep": 1, "grid": False},
    }
    y_title = t("flash.axis_score")
    top_layers = [
        {
            "data": {"name": "bars"},
            "mark": {"type": "rect"},
            "encoding": {
                "x": x,
                "x2": {"field": "x1"},
                "y": {"field": "score", "type": "quantitative", "title": None},
                "y2": {"datum": 0},
                "color": color,
                "tooltip": [
                    {"field": "j", "type": "quantitative", "title": t("flash.tip_key")},
                    {"field": "text", "type": "nominal", "title": y_title},
                    {"field": "state", "type": "nominal", "title": t("flash.tip_state")},
                ],
            },
        },
        {
            "data": {"name": "bars"},
            "transform": [{"filter": {"field": "state", "equal": names[3]}}],
            "mark": {"type": "tick", "color": "#a8a8a8", "thickness": 2},
            "encoding": {"x": {"field": "j", "type": "quantitative"}, "y": {"datum": 0}},
        },
        {
            "data": {"name": "edges"},
            "mark": {"type": "rule", "color": "#555", "strokeDash": [3, 3]},
            "encoding": {"x": {"field": "edge", "type": "quantitative"}},
        },
    ]
    if np.isfinite(m_now):
        line = {"color": charts.QUERY_COLOR, "strokeWidth": 2}
        bold = {"color": charts.QUERY_COLOR, "fontWeight": "bold"}
        label = {"align": "right", "baseline": "bottom", "dy": -3, **bold}
        top_layers += _level([{"m": float(m_now), "label": m_label}], "m", line, label, "width")
    top = {
        "title": t("flash.row_title", i=v.row, t=v.tile, count=v.count),
        "width": 760,
        "height": 130,
        "layer": top_layers,
    }
    steps = np.arange(1, v.count + 1)
    run = charts.records(
        {
            "tile": steps,
            "m": _finite(v.maxima),
            "l": _finite(v.sums),
            "now": steps == v.tile,
            "tm": [num(x) for x in v.maxima],
            "tl": [num(x) for x in v.sums],
        }
    )

    def running(field: str, title: str, text: str) -> dict:
        enc_x = {
            "field": "tile",
            "type": "quantitative",
            "title": t("flash.axis_tile"),
            "scale": {"domain": [0.5, v.count + 0.5], "nice": False, "zero": False},
            "axis": {"tickMinStep": 1, "format": "d"},
        }
        enc_y = {"field": field, "type": "quantitative", "title": None, "scale": {"zero": False}}
        tips = [
            {"field": "tile", "type": "quantitative", "title": t("flash.axis_tile")},
            {"field": text, "type": "nominal", "title": title},
        ]
        return {
            "title": title,
            "width": 200,
            "height": 105,
            "data": {"name": "run"},
            "encoding": {"x": enc_x, "y": enc_y, "tooltip": tips},
            "layer": [
                {
                    "transform": [{"filter": f"datum.tile >= {v.tile}"}],
                    "mark": {
                        "type": "line",
                        "color": "#bdbdbd",
                        "strokeDash": [4, 3],
                        "interpolate": "step-after",
                    },
                },
                {
                    "transform": [{"filter": f"datum.tile <= {v.tile}"}],
                    "mark": {
                        "type": "line",
                        "color": charts.KEY_COLOR,
                        "interpolate": "step-after",
                    },
                },
                {
                    "mark": {"type": "point", "filled": True},
                    "encoding": {
                        "color": {
                            "condition": [
                                {"test": "datum.now", "value": charts.ACCENT},
                                {"test": f"datum.tile > {v.tile}", "value": "#bdbdbd"},
                            ],
                            "value": charts.KEY_COLOR,
                        },
                        "size": {"condition": {"test": "datum.now", "value": 160}, "value": 40},
                    },
                },
            ],
        }

    dims = charts.dim_labels(D, "o")
    after = t("flash.series_after", t=v.tile)
    final = t("flash.series_final")
    out = charts.records(
        {
            "dim": dims * 2,
            "series": [after] * D + [final] * D,
            "value": np.concatenate([v.partial, v.final]),
            "text": charts.fmt_cells(np.concatenate([v.partial, v.final]), 3),
        }
    )
    output = {
        "title": subtitled(t("flash.output_title"), t("flash.output_sub", t=v.tile), presenter),
        "width": 240,
        "height": 105,
        "data": {"name": "out"},
        "mark": {"type": "bar"},
        "encoding": {
            "x": {
                "field": "dim",
                "type": "nominal",
                "sort": dims,
                "title": None,
                "axis": {"labelAngle": 0},
            },
            "xOffset": {"field": "series", "type": "nominal", "sort": [after, final]},
            "y": {"field": "value", "type": "quantitative", "title": None},
            "color": {
                "field": "series",
                "type": "nominal",
                "title": None,
                "scale": {"domain": [after, final], "range": [charts.ACCENT, "#444"]},
                "legend": None,
            },
            "tooltip": [
                {"field": "series", "type": "nominal", "title": t("flash.tip_series")},
                {"field": "dim", "type": "nominal", "title": t("flash.tip_dim")},
                {"field": "text", "type": "nominal", "title": "="},
            ],
        },
    }
    return {
        "datasets": {"bars": bars, "edges": edges, "run": run, "out": out},
        "vconcat": [
            top,
            {
                "hconcat": [
                    running("m", t("flash.m_title"), "tm"),
                    running("l", t("flash.l_title"), "tl"),
                    output,
                ],
                "spacing": 30,
            },
        ],
        "spacing": 18,
        "resolve": {"scale": {"color": "independent"}},
    }


def row_notice(ctx: PageContext, v: RowView, toy: Toy) -> list[str]:
    """Step 1's "what to notice"."""
    t = ctx.t
    common = {
        "t": v.tile,
        "count": v.count,
        "a": v.first,
        "b": v.last,
        "m": num(v.m),
        "l": num(v.l),
    }
    key = f"flash.notice_{v.step}"
    items = [t(key, m0=num(v.m_before), alpha=num(v.alpha, 4), **common)]
    if v.tile < v.count:
        items.append(t("flash.notice_partial", b=v.last + 1, gap=num(v.partial_gap, 4)))
    else:
        items.append(t("flash.notice_done", row=v.row, diff=sci(v.row_error), all=sci(v.error)))
    items.append(t("flash.notice_memory", block=toy.block, n=toy.n))
    return items


def intro_values() -> dict[str, str]:
    """The introduction's example: the scores of one head at T = 16 384."""
    full, _ = scores_held(MARKED[-1], MARKED[-1], 1)
    return {"n": grouped(MARKED[-1]), "held": big(full)}


def row_arrays(tl: Tiles, v: RowView) -> dict[str, np.ndarray]:
    """Step 1's export: the toy head, the trace and both results."""
    tr = tl.trace
    return {
        "q": tl.q,
        "k": tl.k,
        "v": tl.v,
        "mask": tl.mask,
        "tile_ends": tr.ends,
        "running_max": tr.running_max,
        "running_sum": tr.running_sum,
        "tiled_output": tl.output,
        "ordinary_output": tl.reference,
        "row": np.array(v.row),
        "tiles_read": np.array(v.tile),
    }


# Step 2: the same answer -------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def agreement(toy: Toy, factor: float) -> Agreement:
    """The error table at ``factor`` and the growth curve over every factor (cached)."""
    q, k, v = toy_qkv(toy.n, D, toy.seed)
    mask = core.causal_mask(toy.n) if toy.causal else None
    return tiled_agreement(q, k, v, toy.block, mask, factor, FACTORS, BLOCKS)


def agreement_chart(t: Translator, a: Agreement, presenter: bool) -> dict:
    """Left: the largest difference between the tiled result and ordinary attention per
    tile size, precision and mask (log axis). Right: float32 errors against float64 as the
    logits grow, tiled and with a softmax that skips the max subtraction (NaN marked)."""
    dtypes = [t(f"flash.dtype_{d}") for d in DTYPES]
    masks = [t("flash.mask_none"), t("flash.mask_causal")]
    rows = [
        (masks[m], dtypes[p], str(b), a.errors[m, p, i])
        for m in range(2)
        for p in range(2)
        for i, b in enumerate(BLOCKS)
    ]
    table = charts.records(
        {
            "mask": [r[0] for r in rows],
            "dtype": [r[1] for r in rows],
            "block": [r[2] for r in rows],
            "error": [max(r[3], FLOOR) for r in rows],
            "text": [sci(r[3]) for r in rows],
        }
    )
    y_err = {
        "field": "error",
        "type": "quantitative",
        "title": t("flash.axis_error"),
        "scale": {"type": "log", "domain": [FLOOR, 1e-3]},
        "axis": {"format": ".0e", "tickCount": 6},
    }
    dtype_color = {
        "field": "dtype",
        "type": "nominal",
        "title": None,
        "scale": {"domain": dtypes, "range": SERIES_COLORS},
        "legend": {"orient": "bottom", "direction": "horizontal"},
    }
    blocks = [str(b) for b in BLOCKS]

    def panel(mask: str, first: bool) -> dict:
        y = {**y_err, "title": None, "axis": {**y_err["axis"], "labels": first}}
        color = dtype_color if not first else {**dtype_color, "legend": None}
        return {
            "title": subtitled(mask, t("flash.axis_error"), presenter),
            "width": 150,
            "height": 250,
            "data": {"name": "errors"},
            "transform": [{"filter": {"field": "mask", "equal": mask}}],
            "mark": {"type": "point", "filled": True, "size": 90},
            "encoding": {
                "x": {
                    "field": "block",
                    "type": "ordinal",
                    "sort": blocks,
                    "title": t("flash.axis_block"),
                    "axis": {"labelAngle": 0},
                },
                "y": y,
                "color": color,
                "shape": {"field": "dtype", "type": "nominal", "legend": None, "sort": dtypes},
                "tooltip": [
                    {"field": "block", "type": "nominal", "title": t("flash.axis_block")},
                    {"field": "dtype", "type": "nominal", "title": t("flash.tip_dtype")},
                    {"field": "text", "type": "nominal", "title": t("flash.axis_error")},
                ],
            },
        }

    g = a.growth
    tiled_name, naive_name = t("flash.series_tiled"), t("flash.series_naive")
    nan_word = t("flash.nan")
    curve = charts.records(
        {
            "factor": np.concatenate([g.factors, g.factors]),
            "series": [tiled_name] * len(g.factors) + [naive_name] * len(g.factors),
            "error": [
                max(x, FLOOR) if np.isfinite(x) else None
                for x in np.concatenate([g.tiled, g.naive])
            ],
            "text": [
                sci(x) if np.isfinite(x) else nan_word for x in np.concatenate([g.tiled, g.naive])
            ],
        }
    )
    broke = np.isnan(g.naive)
    broken = charts.records(
        {
            "factor": g.factors[broke],
            "y": [NAN_AT] * int(broke.sum()),
            "text": [nan_word] * int(broke.sum()),
        }
    )
    start = first_nan(g)
    flag = (
        []
        if start is None
        else [
            {
                "factor": start,
                "y": NAN_AT,
                "label": t("flash.nan_from", nan=nan_word, f=num(start, 0)),
            }
        ]
    )
    series = [tiled_name, naive_name]
    x_f = {
        "field": "factor",
        "type": "quantitative",
        "title": t("flash.axis_factor"),
        "scale": {"domain": [1, float(FACTORS[-1])], "nice": False},
    }
    y_g = {
        "field": "error",
        "type": "quantitative",
        "title": None,
        "scale": {"type": "log", "domain": [1e-9, 1e-2]},
        "axis": {"format": ".0e"},
    }
    chosen = [{"factor": a.factor, "label": t("flash.factor_rule", f=num(a.factor, 0))}]
    growth_view = {
        "title": subtitled(t("flash.growth_title"), t("flash.axis_error32"), presenter),
        "width": 360,
        "height": 250,
        "layer": [
            {
                "data": {"name": "curve"},
                "mark": {"type": "line", "point": True},
                "encoding": {
                    "x": x_f,
                    "y": y_g,
                    "color": {
                        "field": "series",
                        "type": "nominal",
                        "title": None,
                        "scale": {"domain": series, "range": SERIES_COLORS},
                        "legend": {"orient": "bottom", "direction": "horizontal"},
                    },
                    "tooltip": [
                        {"field": "series", "type": "nominal", "title": t("flash.tip_series")},
                        {
                            "field": "factor",
                            "type": "quantitative",
                            "title": t("flash.axis_factor"),
                        },
                        {"field": "text", "type": "nominal", "title": t("flash.axis_error32")},
                    ],
                },
            },
            {
                "data": {"name": "broken"},
                "mark": {
                    "type": "point",
                    "shape": "cross",
                    "filled": True,
                    "size": 50,
                    "color": charts.QUERY_COLOR,
                },
                "encoding": {
                    "x": {"field": "factor", "type": "quantitative"},
                    "y": {"field": "y", "type": "quantitative"},
                    "tooltip": [
                        {
                            "field": "factor",
                            "type": "quantitative",
                            "title": t("flash.axis_factor"),
                        },
                        {"field": "text", "type": "nominal", "title": naive_name},
                    ],
                },
            },
            {
                "data": {"values": flag},
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "bottom",
                    "dy": -8,
                    "color": charts.QUERY_COLOR,
                    "fontWeight": "bold",
                },
                "encoding": {
                    "x": {"field": "factor", "type": "quantitative"},
                    "y": {"field": "y", "type": "quantitative"},
                    "text": {"field": "label", "type": "nominal"},
                },
            },
            {
                "data": {"values": chosen},
                "mark": {"type": "rule", "color": "#333", "strokeDash": [4, 3]},
                "encoding": {"x": {"field": "factor", "type": "quantitative"}},
            },
            {
                "data": {"values": chosen},
                "mark": {
                    "type": "text",
                    "align": "left",
                    "dx": 4,
                    "baseline": "bottom",
                    "color": "#333",
                    "fontWeight": "bold",
                },
                "encoding": {
                    "x": {"field": "factor", "type": "quantitative"},
                    "y": {"value": "height"},
                    "text": {"field": "label", "type": "nominal"},
                },
            },
        ],
    }
    return {
        "datasets": {"errors": table, "curve": curve, "broken": broken},
        "hconcat": [panel(masks[0], True), panel(masks[1], False), growth_view],
        "spacing": 24,
        "resolve": {"scale": {"color": "independent", "shape": "independent"}},
    }


def agreement_notice(ctx: PageContext, a: Agreement, toy: Toy) -> list[str]:
    """Step 2's "what to notice"."""
    t = ctx.t
    g = a.growth
    items = [
        t(
            "flash.notice_float64",
            e=sci(a.float64_error),
            blocks=", ".join(str(b) for b in BLOCKS),
        ),
        t("flash.notice_float32", e=sci(a.float32_error), eps=sci(FLOAT32_EPS)),
    ]
    naive = a.naive
    common = {
        "f": num(a.factor, 0),
        "top": num(g.top_score[a.at], 1),
        "tiled": sci(float(g.tiled[a.at])),
        "limit": num(a.overflow, 1),
    }
    if np.isnan(naive):
        items.append(t("flash.notice_nan", nan=t("flash.nan"), **common))
    elif a.first_nan is not None:
        items.append(
            t(
                "flash.notice_before_nan",
                naive=sci(float(naive)),
                at=num(a.first_nan, 0),
                nan=t("flash.nan"),
                **common,
            )
        )
    else:
        most = num(FACTORS[-1], 0)
        items.append(t("flash.notice_no_nan", naive=sci(float(naive)), most=most, **common))
    return items


def agreement_arrays(a: Agreement) -> dict[str, np.ndarray]:
    """Step 2's export."""
    g = a.growth
    return {
        "blocks": np.array(BLOCKS),
        "errors_mask_dtype_block": a.errors,
        "factors": g.factors,
        "top_score": g.top_score,
        "tiled_float32_error": g.tiled,
        "naive_float32_error": g.naive,
    }


# Step 3: memory and traffic ----------------------------------------------------------------


@dataclass(frozen=True)
class TrafficView:
    """Step 3's numbers for one head width and on-chip memory."""

    d: int
    sram: int
    memory: tuple[np.ndarray, np.ndarray]  # (ordinary, tiled) scores held, per length
    traffic: Traffic
    limit: float  # the ratio for very long texts
    marked: np.ndarray  # (3,) the ratio at MARKED


@st.cache_data(max_entries=32, show_spinner=False)
def traffic(d: int, sram: int) -> TrafficView:
    """The memory and traffic curves (cached per setting)."""
    tr = traffic_curves(LENGTHS, d, sram)
    marked = traffic_curves(np.array(MARKED), d, sram).ratio
    return TrafficView(
        d, sram, memory_curves(LENGTHS, tr.block), tr, traffic_ratio_limit(d, sram), marked
    )


def traffic_chart(t: Translator, v: TrafficView, presenter: bool) -> dict:
    """Left: scores held at once, the whole matrix against one tile per query (log-log).
    Right: how many times more numbers ordinary attention moves, against T (log-log), with
    the stated lengths labelled and the long-text limit."""
    lengths = v.traffic.lengths
    ordinary, tiled = t("flash.series_ordinary"), t("flash.series_flash", b=v.traffic.block)
    mem = charts.records(
        {
            "T": np.concatenate([lengths, lengths]),
            "series": [ordinary] * len(lengths) + [tiled] * len(lengths),
            "held": np.concatenate(v.memory).astype(float),
            "text": [big(x) for x in np.concatenate(v.memory)],
        }
    )
    x_t = {
        "field": "T",
        "type": "quantitative",
        "title": "T",
        "scale": {
            "type": "log",
            "base": 2,
            "domain": [int(lengths[0]), int(lengths[-1])],
            "nice": False,
        },
        "axis": {
            "values": [128, 1024, 8192, 65536],
            "labelExpr": "datum.value >= 1024 ? datum.value / 1024 + 'k' : datum.value",
        },
    }
    memory_view = {
        "title": t("flash.memory_title"),
        "width": 300,
        "height": 250,
        "data": {"name": "mem"},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": x_t,
            "y": {
                "field": "held",
                "type": "quantitative",
                "title": t("flash.axis_held"),
                "scale": {"type": "log"},
                "axis": {"format": "~s"},
            },
            "color": {
                "field": "series",
                "type": "nominal",
                "title": None,
                "scale": {"domain": [ordinary, tiled], "range": ["#444", charts.KEY_COLOR]},
                "legend": {"orient": "bottom", "direction": "vertical"},
            },
            "tooltip": [
                {"field": "series", "type": "nominal", "title": t("flash.tip_series")},
                {"field": "T", "type": "quantitative", "title": "T"},
                {"field": "text", "type": "nominal", "title": t("flash.axis_held")},
            ],
        },
    }
    ratio = charts.records(
        {
            "T": lengths,
            "ratio": v.traffic.ratio,
            "text": [t("flash.times", r=num(r, 1)) for r in v.traffic.ratio],
            "marked": [int(x) in MARKED for x in lengths],
        }
    )
    limit = [{"y": v.limit, "label": t("flash.limit_rule", r=num(v.limit, 1))}]
    even = [{"y": 1.0, "label": t("flash.even_rule")}]
    limit_line = {"strokeDash": [6, 4], "color": "#555"}
    limit_label = {"align": "left", "baseline": "top", "dx": 4, "dy": 3, "color": "#555"}
    even_label = {"align": "right", "baseline": "top", "dy": 3, "color": "#999"}
    low = min(float(v.traffic.ratio.min()), v.limit, 1.0) / 1.5
    high = max(float(v.traffic.ratio.max()), v.limit, 1.0) * 1.6
    y_r = {
        "field": "ratio",
        "type": "quantitative",
        "title": t("flash.axis_ratio"),
        "scale": {"type": "log", "domain": [low, high], "nice": False},
        "axis": {"format": "~g"},
    }
    tips = [
        {"field": "T", "type": "quantitative", "title": "T"},
        {"field": "text", "type": "nominal", "title": t("flash.axis_ratio")},
    ]
    ratio_view = {
        "title": subtitled(
            t("flash.ratio_title"), t("flash.ratio_sub", d=v.d, m=grouped(v.sram)), presenter
        ),
        "width": 340,
        "height": 250,
        "layer": [
            {
                "data": {"name": "ratio"},
                "mark": {
                    "type": "line",
                    "color": charts.QUERY_COLOR,
                    "point": {"color": charts.QUERY_COLOR},
                },
                "encoding": {"x": x_t, "y": y_r, "tooltip": tips},
            },
            {
                "data": {"name": "ratio"},
                "transform": [{"filter": "datum.marked"}],
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "top",
                    "dx": 4,
                    "dy": 6,
                    "fontWeight": "bold",
                    "color": charts.QUERY_COLOR,
                },
                "encoding": {
                    "x": x_t,
                    "y": {"field": "ratio", "type": "quantitative"},
                    "text": {"field": "text", "type": "nominal"},
                },
            },
            *_level(limit, "y", limit_line, limit_label, 0),
            *_level(even, "y", {"color": "#bbb"}, even_label, "width"),
        ],
    }
    return {
        "datasets": {"mem": mem, "ratio": ratio},
        "hconcat": [memory_view, ratio_view],
        "spacing": 30,
        "resolve": {"scale": {"color": "independent", "y": "independent"}},
    }


def traffic_notice(ctx: PageContext, v: TrafficView) -> list[str]:
    """Step 3's "what to notice"."""
    t = ctx.t
    r1, r4, r16 = (num(r, 1) for r in v.marked)
    lengths = dict(zip(("n1", "n2", "n3"), map(grouped, MARKED), strict=True))
    items = [t("flash.notice_ratios", d=v.d, m=grouped(v.sram), r1=r1, r4=r4, r16=r16, **lengths)]
    if not ctx.presenter:  # the slide's legend names the tile
        items.append(
            t(
                "flash.notice_tiles",
                bc=v.traffic.block,
                br=v.traffic.query_block,
                d=v.d,
                m=grouped(v.sram),
            )
        )
    key = "flash.notice_limit" if v.limit >= 1 else "flash.notice_limit_below"
    items.append(t(key, r=num(v.limit, 1)))
    full, tile = scores_held(MARKED[-1], MARKED[-1], v.traffic.block)
    items.append(
        t(
            "flash.notice_memory_held",
            n=grouped(MARKED[-1]),
            full=big(full),
            tile=big(tile),
            bc=v.traffic.block,
            br=v.traffic.query_block,
            block=big(v.traffic.query_block * v.traffic.block),
        )
    )
    return items


def traffic_arrays(v: TrafficView) -> dict[str, np.ndarray]:
    """Step 3's export."""
    tr = v.traffic
    return {
        "lengths": tr.lengths,
        "standard_io": tr.standard,
        "flash_io": tr.flash,
        "ratio": tr.ratio,
        "scores_held_ordinary": v.memory[0],
        "scores_held_tiled": v.memory[1],
        "d": np.array(v.d),
        "sram": np.array(v.sram),
        "block_c": np.array(tr.block),
        "block_r": np.array(tr.query_block),
    }
