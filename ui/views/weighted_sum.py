"""Presentation helpers for the weighted-sum page: one query's output as a sum of scaled values.

The two bar charts are small Vega-Lite dicts (the steps draw them with
:meth:`ui.steps.View.chart`); every number comes from :mod:`core.attention`.
"""

from collections.abc import Sequence

import numpy as np
import streamlit as st

import core
from core.attention import RowMix, mix_row
from core.findings.weighted_sum import SumTerms, row_leaders, sum_terms
from ui import charts
from ui.blocks import folded
from ui.charts import vector_tex as vec_tex
from ui.context import PageContext
from ui.notes import short_list, untrained
from ui.safe import plain
from ui.sentence import Sentence, sentence_draw, token_draw
from ui.steps import Controls, View

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
                        {"field": "token", "type": "nominal", "title": charts.SERIES_TIP},
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
                {"field": "token", "type": "nominal", "title": charts.SERIES_TIP},
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
    longer value vector can give the bigger piece; step 1's), that the weights average the
    values (step 3's), and the output's width (step 4's)."""
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
    """Which terms :func:`sum_tex` writes out (:func:`core.findings.weighted_sum.sum_terms`):
    every term up to :data:`ALL_TERMS_UP_TO` keys, else the :data:`TOP_TERMS` largest and the
    rest summed."""
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


SLIDE_CELL = 60  # presenter mode: px of a strip's cells at most ("−0.37" at 18+ px)


def strip_style(ctx: PageContext) -> dict:
    """:func:`charts.matrix_strip` options of steps 2 and 4: new values only swap the data.
    On a slide the strips print their numbers in cells large enough for 18 px type, and a
    colour legend would only repeat them."""
    live = {"presenter": ctx.presenter, "live_domain": True}
    return {**live, "largest": SLIDE_CELL, "legends": False} if ctx.presenter else live


def next_links(v: View) -> None:
    """Where to go from here: back to softmax, on to masking."""
    v.links(("softmax", v.t("weighted_sum.back_link")), ("masking", v.t("weighted_sum.next_link")))


# The sentence, its sizes and the query token serve every step (a slide: the settings box
# above the step).
SENTENCE = Controls(sentence_draw(), box="weighted_sum.settings", slide="settings")
TOKEN = Controls(token_draw(SENTENCE, "weighted_sum.token"))


# ---- the steps -----------------------------------------------------------------------------


def _mix(s: Sentence, i: int) -> tuple[core.AttentionTrace, RowMix]:
    """The sentence's self-attention trace and query ``i``'s mix of the values."""
    tr = core.self_attention_trace(s.x, *s.projections())
    return tr, mix_row(tr.weights[i], tr.v)


def row_step(v: View) -> None:
    """Step 1: the query's weights, one bar per key token, adding up to 1."""
    t, s, i = v.t, v[SENTENCE], v[TOKEN]
    _, mix = _mix(s, i)
    labels = charts.unique_labels(s.tokens)
    v.lead.markdown(t("weighted_sum.row_text", token=plain(s.tokens[i]), i=i, n=len(s.tokens)))
    title = t("weighted_sum.row_chart", token=labels[i])
    shown = v.chart(weight_bars, mix.weights, labels, title, v.presenter)
    v.notes.caption(t("weighted_sum.row_caption", total=f"{mix.weight_total:.3f}"))
    v.notice(what_to_notice(v.ctx, s.tokens, i, mix)[:1])
    with v.notes:
        untrained(v.ctx)
    v.export("weighted_sum_row", shown, arrays={"weights_row": mix.weights})


def scale_step(v: View) -> None:
    """Step 2: each value row scaled by its weight, and their running sum (a slide: the four
    panels at its whole width)."""
    t, s, i = v.t, v[SENTENCE], v[TOKEN]
    tr, mix = _mix(s, i)
    v.lead.markdown(t("weighted_sum.scale_text", i=i))
    alpha, v_cols = f"α_{i}", charts.dim_labels(s.d_v, "v")
    panels = [
        ("V", tr.v, s.tokens, v_cols),
        (alpha, column(mix.weights), s.tokens, [alpha]),
        (t("weighted_sum.contributions"), mix.contributions, s.tokens, v_cols),
        (t("weighted_sum.running"), mix.running, s.tokens, v_cols),
    ]
    framed, kinds = {panels[3][0]: len(s.tokens) - 1}, {alpha: "weights"}
    style = {"kinds": kinds, "frames": framed, **strip_style(v.ctx)}
    shown = v.chart(charts.matrix_strip, panels, **style)
    v.notes.caption(t("weighted_sum.scale_caption", i=i, last=plain(s.tokens[-1])))
    arrays = {"v": tr.v, "weights_row": mix.weights}
    arrays |= {"contributions": mix.contributions, "running": mix.running}
    v.export("weighted_sum_scaled", shown, arrays=arrays)


def sum_step(v: View) -> None:
    """Step 3: the scaled values stacked per output dimension; their sum is the output."""
    t, s, i = v.t, v[SENTENCE], v[TOKEN]
    tr, mix = _mix(s, i)
    labels = charts.unique_labels(s.tokens)
    v.lead.markdown(t("weighted_sum.sum_text", token=plain(s.tokens[i]), i=i))
    title = t("weighted_sum.sum_chart", i=i, token=labels[i])
    args = (mix.contributions, mix.output, labels, f"o_{i}", title, v.presenter)
    shown = v.chart(stacked, *args)
    with v.notes:
        st.caption(t("weighted_sum.sum_caption", i=i))
        folded(
            v.ctx, t("weighted_sum.sum_terms"), "sum_terms", lambda: st.latex(sum_tex(i, mix, tr.v))
        )
        rest = rest_of_sum(mix, tr.v)
        if rest is not None:
            st.caption(t("weighted_sum.rest_caption", count=rest[0], weight=f"{rest[1]:.3f}"))
    v.notice(what_to_notice(v.ctx, s.tokens, i, mix)[1:2])
    arrays = {"contributions": mix.contributions, "output_row": mix.output}
    v.export("weighted_sum_stack", shown, arrays=arrays)


def matrix_step(v: View) -> None:
    """Step 4: every query at once, O = A V, the query's output row framed."""
    t, s, i = v.t, v[SENTENCE], v[TOKEN]
    tr, mix = _mix(s, i)
    v.lead.markdown(t("weighted_sum.matrix_text", n=len(s.tokens), d_v=s.d_v))
    v.notes.latex(
        r"\underbrace{O}_{n\times d_v} = "
        r"\underbrace{A}_{n\times n}\,\underbrace{V}_{n\times d_v}"
    )
    weights_title, output_title = t("weighted_sum.weights"), t("weighted_sum.output")
    v_cols = charts.dim_labels(s.d_v, "v")
    panels = [
        (weights_title, tr.weights, s.tokens, s.tokens),
        ("V", tr.v, s.tokens, v_cols),
        (output_title, tr.output, s.tokens, v_cols),
    ]
    framed, kinds = {weights_title: i, output_title: i}, {weights_title: "weights"}
    style = {"kinds": kinds, "frames": framed, **strip_style(v.ctx)}
    shown = v.chart(charts.matrix_strip, panels, **style)
    row = short_list(tr.output[i])
    v.notes.markdown(t("weighted_sum.output_row", token=plain(s.tokens[i]), i=i, row=row))
    v.notice(what_to_notice(v.ctx, s.tokens, i, mix)[2:])
    labels = charts.unique_labels(s.tokens)
    v.export(
        "weighted_sum_matrix",
        shown,
        arrays={"weights": tr.weights, "v": tr.v, "output": tr.output},
        text=lambda: core.text_heatmap(tr.weights, labels),
    )
    next_links(v)
