"""Presentation helpers for the weighted-sum page: one query's output as a sum of scaled values.

The two bar charts are small Vega-Lite dicts (pages draw them with
:func:`ui.charts.show_cached`); every number comes from :mod:`core.attention`.
"""

from collections.abc import Sequence

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.attention import RowMix
from core.findings.weighted_sum import SumTerms, row_leaders, sum_terms
from ui import charts
from ui.blocks import frame_room, link, notice
from ui.charts import vector_tex as vec_tex
from ui.context import PageContext
from ui.notes import untrained
from ui.safe import plain

ALL_TERMS_UP_TO = 8  # sentences this short get every term of the sum written out
TOP_TERMS = 6  # longer ones: this many largest terms, then the rest summed
PALETTE = "tableau20"  # one colour per token, the same in both bar charts


def _token_color(labels: Sequence[str]) -> dict:
    return {
        "field": "token",
        "type": "nominal",
        "sort": list(labels),
        "scale": {"domain": list(labels), "scheme": PALETTE},
        "legend": {"orient": "bottom", "title": None, "columns": min(len(labels), 8)},
    }


def weight_bars(weights: np.ndarray, labels: Sequence[str], title: str, presenter: bool) -> dict:
    """One bar per key token: the query's attention weights (0..1), labelled to 3 decimals."""
    labels = list(labels)
    data = charts.records(
        {"token": labels, "weight": weights, "text": charts.fmt_cells(weights, 3)}
    )
    scale = 1.6 if presenter else 1.0  # a projector gets bigger charts
    width = int(np.clip(70 * scale * len(labels), 320 * scale, 1100))
    return {
        "title": title,
        "datasets": {"weights": data},
        "data": {"name": "weights"},
        "width": width,
        "height": int(260 * scale),
        "encoding": {
            "x": {
                "field": "token",
                "type": "nominal",
                "sort": labels,
                "title": None,
                "axis": {"labelAngle": 0 if len(labels) <= 12 else -45},
            },
            "y": {
                "field": "weight",
                "type": "quantitative",
                "scale": {"domain": [0, 1]},
                "title": "α",
            },
        },
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "color": {**_token_color(labels), "legend": None},
                    "tooltip": [
                        {"field": "token", "type": "nominal", "title": ""},
                        {"field": "text", "type": "nominal", "title": "α"},
                    ],
                },
            },
            {
                "mark": {"type": "text", "dy": -10, "color": "#222"},
                "encoding": {"text": {"field": "text", "type": "nominal"}},
            },
        ],
    }


def stacked(
    contributions: np.ndarray,
    output: np.ndarray,
    labels: Sequence[str],
    output_label: str,
    title: str,
    presenter: bool,
) -> dict:
    """Per output dimension, the scaled values α_ij v_j stacked (one colour per token; positive
    parts above 0, negative below) and a black mark at their sum, the output."""
    labels = list(labels)
    n, d_v = contributions.shape
    dims = charts.dim_labels(d_v, "v")
    parts = charts.records(
        {
            "token": np.repeat(labels, d_v),
            "j": np.repeat(np.arange(n), d_v),
            "dim": dims * n,
            "contribution": contributions.ravel(),
            "text": charts.fmt_cells(contributions, 3),
        }
    )
    # the output's number stands above the stack (below it when negative), inside its band
    ends = np.where(output >= 0, contributions.clip(min=0).sum(0), contributions.clip(max=0).sum(0))
    total = charts.records(
        {"dim": dims, "output": output, "end": ends, "text": charts.fmt_cells(output, 3)}
    )
    scale = 1.5 if presenter else 1.0  # a projector gets bigger charts
    step = int(np.clip(1000 / d_v, 14, 150 * scale))
    axis = {"labelAngle": 0, **({"labelOverlap": "greedy"} if d_v > 12 else {})}
    x = {"field": "dim", "type": "nominal", "sort": dims, "title": None, "axis": axis}
    bars = {
        "data": {"name": "parts"},
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "y": {
                "field": "contribution",
                "type": "quantitative",
                "stack": "zero",
                "title": "α·v",
                "scale": {"padding": 30 if d_v <= 12 else 0},
            },  # room for the numbers
            "color": _token_color(labels),
            "order": {"field": "j", "type": "quantitative"},
            "tooltip": [
                {"field": "token", "type": "nominal", "title": ""},
                {"field": "dim", "type": "nominal", "title": "v"},
                {"field": "text", "type": "nominal", "title": "α·v"},
            ],
        },
    }
    mark = {
        "data": {"name": "total"},
        "mark": {"type": "tick", "color": "#111", "thickness": 3, "size": int(step * 0.8)},
        "encoding": {
            "x": x,
            "y": {"field": "output", "type": "quantitative"},
            "tooltip": [
                {"field": "dim", "type": "nominal", "title": "v"},
                {"field": "text", "type": "nominal", "title": output_label},
            ],
        },
    }

    def text(sign: str, baseline: str, dy: int) -> dict:
        return {
            "data": {"name": "total"},
            "transform": [{"filter": f"datum.output {sign} 0"}],
            "mark": {
                "type": "text",
                "baseline": baseline,
                "dy": dy,
                "fontWeight": "bold",
                "color": "#111",
            },
            "encoding": {
                "x": x,
                "y": {"field": "end", "type": "quantitative"},
                "text": {"field": "text", "type": "nominal"},
            },
        }

    numbers = [text(">=", "bottom", -4), text("<", "top", 4)] if d_v <= 12 else []
    layers = [bars, mark, *numbers]
    return {
        "title": title,
        "datasets": {"parts": parts, "total": total},
        "width": {"step": step},
        "height": 360 if presenter else 320,
        "layer": layers,
    }


def what_to_notice(ctx: PageContext, tokens: Sequence[str], i: int, mix: RowMix) -> list[str]:
    """The page's "what to notice" items for query ``i``: its largest weight and whose
    piece α·v of the output is the biggest (not always the same key: a smaller weight on a
    longer value vector can give the bigger piece), that the weights average the values,
    and the output's width."""
    t = ctx.t
    lead = row_leaders(mix)  # core.attention: the largest weight, the biggest piece
    top, big = lead.top, lead.big
    largest = t(
        "weighted_sum.notice_top" if lead.same else "weighted_sum.notice_top_other",
        token=plain(tokens[i]),
        top=plain(tokens[top]),
        w=f"{mix.weights[top]:.3f}",
        big=plain(tokens[big]),
        size=f"{mix.sizes[big]:.3f}",
        top_size=f"{mix.sizes[top]:.3f}",
    )
    return [
        largest,
        t("weighted_sum.notice_average", total=f"{mix.weight_total:.3f}"),
        t("weighted_sum.notice_width", d_v=len(mix.output), n=len(tokens)),
    ]


def shown_terms(mix: RowMix, v: np.ndarray) -> SumTerms:
    """Which terms :func:`sum_tex` writes out (:func:`core.attention.sum_terms`): every term
    up to :data:`ALL_TERMS_UP_TO` keys, else the :data:`TOP_TERMS` largest and the rest summed."""
    return sum_terms(mix.weights, v, ALL_TERMS_UP_TO, TOP_TERMS)


def sum_tex(i: int, mix: RowMix, v: np.ndarray) -> str:
    """``o_i = Σ_j α_ij v_j`` written out with the live numbers, one term per line.

    Short sentences show every term in token order; longer ones the largest
    :data:`TOP_TERMS` and then the remaining terms summed into one vector (:func:`shown_terms`).
    """
    terms = shown_terms(mix, v)
    lines = [rf"o_{{{i}}} &= \sum_{{j}} \alpha_{{{i}j}}\, v_j"]
    for k, j in enumerate(terms.shown):
        sign = "=" if k == 0 else "+"
        term = rf"{mix.weights[j]:.3f}\cdot\underbrace{{{vec_tex(v[j])}}}_{{v_{{{j}}}}}"
        lines.append(rf"&{sign} {term}")
    if terms.folded:
        shown = ",".join(str(j) for j in terms.shown)
        rest = vec_tex(terms.rest)
        lines.append(rf"&+ \sum_{{j\,\notin\,\{{{shown}\}}}} \alpha_{{{i}j}}\, v_j = {rest}")
    lines.append(rf"&= {vec_tex(mix.output)}")
    return r"\begin{aligned}" + r"\\[2pt]".join(lines) + r"\end{aligned}"


def rest_of_sum(mix: RowMix, v: np.ndarray) -> tuple[int, float] | None:
    """How many terms :func:`sum_tex` folded into one line, and their total weight."""
    terms = shown_terms(mix, v)
    return (terms.folded, terms.rest_weight) if terms.folded else None


def column(values: np.ndarray) -> np.ndarray:
    """A weight row shown as a column next to V: ``(n,)`` -> ``(n, 1)``."""
    return values[:, None]  # (n, 1)


PRESENTER_SHARE = 0.6  # presenter mode: the chart's share of the width, its notes beside it
SLIDE_CELL = 60  # presenter mode: px of a strip's cells at most ("−0.37" at 18+ px)


def chart_room(ctx: PageContext, height: int) -> charts.Room:
    """Where a step's chart fits (:func:`ui.blocks.frame_room`): the page width, or in
    presenter mode the wide column of :func:`beside` and at most ``height`` px (the step's
    text and notes stay on screen)."""
    return frame_room(ctx, PRESENTER_SHARE, height)


def beside(ctx: PageContext) -> tuple[DeltaGenerator, DeltaGenerator]:
    """The chart's place and its notes' place: one below the other for students, side by
    side in presenter mode so a step fits one screen."""
    if ctx.presenter:
        chart, notes = st.columns([PRESENTER_SHARE, 1 - PRESENTER_SHARE], gap="large")
        return chart, notes
    return st.container(), st.container()


def step_notice(ctx: PageContext, items: list[str], index: int) -> None:
    """Presenter mode: the "what to notice" item ``index`` of the page's list beside the
    step's chart, and on the first one the untrained-weights note (students get them all at
    the page's end)."""
    if ctx.presenter:
        notice(ctx, [items[index]])
        if index == 0:
            untrained(ctx)


def next_links(ctx: PageContext) -> None:
    """Where to go from here: back to softmax, on to masking."""
    link(ctx, "softmax", ctx.t("weighted_sum.back_link"))
    link(ctx, "masking", ctx.t("weighted_sum.next_link"))
