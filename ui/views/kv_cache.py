"""The KV cache page (pages/8_kv_cache.py): its controls, charts, words and steps.

Only wiring, charts and formatting live here; every number comes from :mod:`core`.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.findings.kv_cache import projections, step_vs_full_diff, step_work
from core.kv_cache import (
    CostCurve,
    CostSummary,
    DecodeStep,
    cost_summary,
    decode_costs,
    decode_trace,
    sample_steps,
)
from ui import charts
from ui.blocks import link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.notes import power_of_ten, significant, untrained
from ui.params import Flag, Int, index_slider, number, slider, toggle
from ui.questions import Question, Truth
from ui.safe import plain
from ui.sentence import Sentence, sentence_controls
from ui.steps import Controls, Got, View

N_MAX = Int("n_max", 2048, 16, 8192)
WIDTH = Int("width", 768, 16, 8192)
LAYERS = Int("layers", 12, 1, 128)
LOG = Flag("log", True)
EMPTY = "#ebebeb"  # cache rows not filled yet


@dataclass(frozen=True)
class KVView:
    """The sentence projected once, decoded step by step, and full causal attention."""

    tokens: list[str]
    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    v: np.ndarray  # (n, d_v)
    steps: list[DecodeStep]  # step t holds a cache of t + 1 rows
    full: np.ndarray  # (n, n) full causal weights
    costs: CostCurve  # multiply-adds per step for this sentence's sizes


CHART_SHARE = 0.55  # a slide, step 1: the chart column's share; readouts and notes beside it
CHART_HEIGHT = 570  # presenter px for step 1's cache chart (the slider above, the formula below)
COST_HEIGHT = 355  # presenter px for step 2's cost chart (its settings above, three notes below)
READOUT_HEIGHT = 420  # students' px for it: its readouts (tokens, metrics) below it stay in view


def notices(v: View, items: list[str]) -> None:
    """The "what to notice" box; in presenter mode one box per item, side by side under a
    wide chart."""
    if not v.presenter:
        v.notice(items)
        return
    for column, item in zip(st.columns(len(items)), items, strict=True):
        with column:
            notice(v.ctx, [item])


def sentence_group(ctx: PageContext, got: Got) -> Sentence:
    """Step 1's sentence and sizes (step 2 does not use the sentence)."""
    return sentence_controls(ctx, native=True)


@st.cache_data(max_entries=64, show_spinner=False)
def _compute(
    x: np.ndarray, tokens: tuple[str, ...], d_model: int, d_k: int, d_v: int, seed: int
) -> KVView:
    w_q, w_k, w_v = core.init_projections(d_model, d_k, d_v, seed)
    q, k, v = core.project_qkv(x, w_q, w_k, w_v)  # (n, d_k), (n, d_k), (n, d_v)
    _, full = core.scaled_dot_product_attention(q, k, v, core.causal_mask(len(tokens)))
    costs = decode_costs(len(tokens), d_model, d_k, d_v)
    return KVView(list(tokens), q, k, v, decode_trace(q, k, v), full, costs)


def compute(sentence: Sentence) -> KVView:
    """Project, decode with the cache and run full causal attention (cached)."""
    s = sentence
    return _compute(s.x, tuple(s.tokens), s.d_model, s.d_k, s.d_v, s.seed)


def step_control(ctx: PageContext, got: Got) -> int:
    """Step 1's decoding step ``t`` (URL key "t"; "step" belongs to the step bar)."""
    n = len(got[SENTENCE].tokens)
    spec = Int("t", min(2, n - 1), 0, n - 1)
    return index_slider(ctx, spec, ctx.t("kv_cache.t"), help=ctx.t("kv_cache.t_help"))


def token_strip(tokens: list[str], t: int) -> str:
    """Markdown: cached tokens, the new one highlighted, later ones not generated yet."""
    done = [f":blue-background[{plain(tok, 20)}]" for tok in tokens[:t]]
    new = f":orange-background[**{plain(tokens[t], 20)}**]"
    return " ".join([*done, new, *["`?`"] * (len(tokens) - t - 1)])


def step_metrics(ctx: PageContext, view: KVView, t: int) -> None:
    """Cache rows, cache-vs-full difference and this step's work, as four metrics (two rows
    of two in presenter mode, in the notes column)."""
    tr = ctx.t
    c1, c2, c3, c4 = [*st.columns(2), *st.columns(2)] if ctx.presenter else st.columns(4)
    c1.metric(tr("kv_cache.rows"), t + 1, delta=tr("kv_cache.rows_delta"), delta_color="off")
    c2.metric(tr("kv_cache.diff"), significant(cached_diff(view, t)))
    c3.metric(tr("kv_cache.work_with"), count(view.costs.with_cache[t]))
    c4.metric(tr("kv_cache.work_without"), count(view.costs.without_cache[t]))


def _grow(cache: np.ndarray, n: int) -> np.ndarray:
    """The cache's rows placed in an ``(n, d)`` grid; rows not cached yet have no value (NaN)
    and are drawn empty."""
    grid = np.full((n, cache.shape[1]), np.nan)  # (n, d)
    grid[: cache.shape[0]] = cache
    return grid


def cache_chart(t: Translator, sentence: Sentence, step: int, presenter: bool) -> dict:
    """q_t | K cache | V cache above the weights (the cached row above row t of the full
    causal matrix), so that the cells and their numbers can be large: rows 0..t filled,
    row t framed, the rest empty. Each panel keeps one colour scale over every step, so
    stepping does not recolour the cached rows."""
    view = compute(sentence)
    rows, n = charts.unique_labels(view.tokens), len(view.tokens)
    d_k, d_v = view.k.shape[1], view.v.shape[1]
    s = view.steps[step]
    w_rows = np.full((2, n), np.nan)  # (2, n): the cached row (keys 0..t only), row t of the full
    w_rows[0, : step + 1], w_rows[1] = s.weights, view.full[step]
    cell = charts.fit_cell(2 * d_k + d_v, width=1000, hi=56)
    font = charts.cell_font(["−0.00"], cell, charts.SLIDE_FONT if presenter else 15)  # signed
    common = {
        "cell": cell,
        "legend": False,
        "blank": EMPTY,
        "max_font": font,
    }
    q_cols, k_cols, v_cols = (charts.dim_labels(d) for d in (d_k, d_k, d_v))
    k_title = charts.shape_title(t("kv_cache.k_title"), (step + 1, d_k))
    v_title = charts.shape_title(t("kv_cache.v_title"), (step + 1, d_v))
    panels = [  # (name: matrix, rows, columns, title, framed row, whole matrix for the colours)
        ({"q_t": s.q[None, :]}, [rows[step]], q_cols, t("kv_cache.q_title"), 0, view.q),
        ({"K": _grow(s.cache.k, n)}, rows, k_cols, k_title, step, view.k),
        ({"V": _grow(s.cache.v, n)}, rows, v_cols, v_title, step, view.v),
    ]
    maps = [
        charts.framed(
            charts.heatmap(
                p,
                r,
                c,
                "values",
                title=title,
                domain=charts.symmetric_domain(m),
                live_domain=True,
                **common,
            ),
            row,
            charts.ACCENT,
        )
        for p, r, c, title, row, m in panels
    ]
    both = [t("kv_cache.row_cache"), t("kv_cache.row_full")]
    w_title = t("kv_cache.w_title")
    maps.append(charts.heatmap({"weights": w_rows}, both, rows, title=w_title, **common))
    return charts.concat([charts.concat(maps[:3], spacing=28), maps[3]], "vconcat", 8)


def cache_arrays(view: KVView, t: int) -> dict[str, np.ndarray]:
    """Every matrix of the step view, for the NPZ export."""
    step = view.steps[t]
    return {
        "q": view.q,
        "k": view.k,
        "v": view.v,
        "full_causal_weights": view.full,
        "q_t": step.q,
        "cache_k": step.cache.k,
        "cache_v": step.cache.v,
        "cached_weights": step.weights,
        "output_t": step.output,
    }


def cached_diff(view: KVView, t: int) -> float:
    """Largest gap between the cached step's weights and row t of the full matrix."""
    return step_vs_full_diff(view.steps[t], view.full)


def count(value: float) -> str:
    """A large count, readable: 1 234 567 -> "1.23 × 10⁶"; small ones in full."""
    if abs(value) < 1e5:
        return charts.thousands(value)
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa} × {power_of_ten(int(exponent))}"


def size(n_bytes: float) -> str:
    """Bytes in binary units: "1.50 MiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n_bytes) < 1024 or unit == "TiB":
            shown = f"{n_bytes:.2f}".rstrip("0").rstrip(".")  # 144 MiB, 1.5 KiB, 3.15 GiB
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{shown} {unit}"
        n_bytes /= 1024
    return f"{n_bytes:.2f} TiB"


def step_notice(ctx: PageContext, view: KVView, t: int) -> list[str]:
    """Live "what to notice" items for the step view."""
    tr, n = ctx.t, len(view.tokens)
    word = plain(view.tokens[t], 20)
    d_k, d_v = view.k.shape[1], view.v.shape[1]
    diff = cached_diff(view, t)
    diff_text = (
        tr("kv_cache.diff_zero") if diff == 0 else tr("kv_cache.diff_rounding", d=significant(diff))
    )
    equal = tr("kv_cache.notice_equal", q=word, diff=diff_text, t=t)
    if t < n - 1:  # later tokens exist in the full matrix, but not in the cache
        equal += tr("kv_cache.notice_after", q=word)
    work = step_work(view.costs, t)
    if not work.saves:  # nothing cached yet: both ways do the same work
        text = tr("kv_cache.notice_work_first", with_=count(work.with_cache))
    else:
        with_, without = count(work.with_cache), count(work.without_cache)
        text = tr("kv_cache.notice_work", with_=with_, without=without, r=f"{work.ratio:.1f}")
    grow = "kv_cache.notice_grow" + ("_first" if t == 0 else "")
    floats = work.cache_floats
    return [tr(grow, t=t, rows=t + 1, q=word, floats=floats, d_k=d_k, d_v=d_v), equal, text]


def cost_controls(ctx: PageContext, got: Got) -> tuple[int, int, int, bool]:
    """Step 2: sequence length, model width, layers and log axes for the cost chart: one row on a
    slide; in the sidebar the sizes side by side under the length slider."""
    tr = ctx.t
    if ctx.presenter:
        c1, c2, c3, c4 = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    else:
        c1, (c2, c3), c4 = st.container(), st.columns(2), st.container()
    with c1:
        n = slider(ctx, N_MAX, tr("kv_cache.n_max"), step=16, help=tr("kv_cache.n_max_help"))
    with c2:
        width = number(ctx, WIDTH, "d_model", help=tr("kv_cache.width_help"))
    with c3:
        layers = number(ctx, LAYERS, tr("kv_cache.layers"))
    with c4:
        log = toggle(ctx, LOG, tr("kv_cache.log"))
    return int(n), int(width), int(layers), bool(log)


@st.cache_data(max_entries=32, show_spinner=False)
def cost_view(n: int, width: int, layers: int) -> CostSummary:
    """Costs of one attention layer with all heads (d_k = d_v = d_model), memory of all
    layers (:func:`core.kv_cache.cost_summary`, cached)."""
    return cost_summary(n, width, layers)


def cost_frame(tr: Translator, cv: CostSummary) -> pd.DataFrame:
    """Sampled points of every curve (at most ~80 per line), one line per point."""
    idx = sample_steps(len(cv.per_step.with_cache), 80)
    length = idx + 1
    parts = [
        (tr("kv_cache.per_step"), tr("kv_cache.with"), cv.per_step.with_cache),
        (tr("kv_cache.per_step"), tr("kv_cache.without"), cv.per_step.without_cache),
        (tr("kv_cache.cumulative"), tr("kv_cache.with"), cv.total.with_cache),
        (tr("kv_cache.cumulative"), tr("kv_cache.without"), cv.total.without_cache),
        (tr("kv_cache.memory"), "float32", cv.bytes32),
        (tr("kv_cache.memory"), "float16", cv.bytes16),
    ]
    return pd.concat(
        [
            pd.DataFrame({"panel": p, "series": s, "tokens": length, "value": y[idx]})
            for p, s, y in parts
        ],
        ignore_index=True,
    )


COST_PANELS = ("per_step", "cumulative", "memory")  # the cost chart's panels (and datasets)


def cost_layout(t: Translator, log: bool, presenter: bool) -> dict:
    """Per step | cumulative (with vs without the cache) | cache memory, without their data
    (:func:`cost_chart` adds it, so a new size only swaps the data in the browser): lines
    with SI-prefixed y labels (1e10 -> "10G") and the same colours in both languages."""
    with_, without = t("kv_cache.with"), t("kv_cache.without")
    panels = []
    for key in COST_PANELS:
        memory = key == "memory"
        panels.append(
            charts.lines(
                key,
                "tokens",
                "value",
                "series",
                title=t(f"kv_cache.{key}"),
                log_x=log,
                log_y=log,
                x_title=t("kv_cache.tokens_axis"),
                y_title=t("kv_cache.bytes" if memory else "kv_cache.madds"),
                width=800 if presenter else 330,  # a slide: wide, as the room is low
                height=340 if presenter else 280,
                color_domain=["float32", "float16"] if memory else [with_, without],
                colors=[charts.VALUE_COLOR, charts.ACCENT]
                if memory
                else [charts.KEY_COLOR, charts.QUERY_COLOR],
                y_format="~s",
            )
        )
    return charts.concat(panels, spacing=30)  # each panel its own colours


def cost_chart(t: Translator, n: int, width: int, layers: int, log: bool, presenter: bool) -> dict:
    """:func:`cost_layout` with the curves of ``n`` tokens at this model size."""
    data = cost_frame(t, cost_view(n, width, layers))
    sets = {k: data[data["panel"] == t(f"kv_cache.{k}")].to_dict("records") for k in COST_PANELS}
    return {**cost_layout(t, log, presenter), "datasets": sets}


def cost_notice(ctx: PageContext, cv: CostSummary, n: int, width: int, layers: int) -> list[str]:
    """Live "what to notice" items for the cost chart."""
    tr = ctx.t
    per_step, total = cv.per_step, cv.total
    step = {"with_": count(per_step.with_cache[-1]), "without": count(per_step.without_cache[-1])}
    whole = {"with_": count(total.with_cache[-1]), "without": count(total.without_cache[-1])}
    floats = count(per_step.cache_floats[-1])
    sizes = {"m32": size(cv.bytes32[-1]), "m16": size(cv.bytes16[-1])}
    return [
        tr("kv_cache.notice_step", n=n, **step, r=f"{cv.step_ratio:.0f}"),
        tr("kv_cache.notice_total", n=n, **whole, r=f"{cv.total_ratio:.0f}"),
        tr("kv_cache.notice_memory", n=n, floats=floats, d=width, layers=layers, **sizes),
    ]


def weights_text(view: KVView) -> str:
    """The full causal weights as a text heatmap (TXT export)."""
    return core.text_heatmap(view.full, charts.unique_labels(view.tokens))


# Step 1: a slide folds the sentence under the step's text and puts t above the chart.
# Step 2: a slide puts its sizes in a row above the chart.
SENTENCE = Controls(sentence_group, box="kv_cache.controls", fold="kv_cache.controls")
T = Controls(step_control, box="kv_cache.s1_controls", slide="above")
COST = Controls(cost_controls, box="kv_cache.s2_controls")
FORMULA = (
    r"\alpha_t=\mathrm{softmax}\!\left(\frac{q_t\,K_{0..t}^\top}{\sqrt{d_k}}\right),\quad "
    r"o_t=\alpha_t V_{0..t}"
)


# The steps -------------------------------------------------------------------------------


def decode_step(v: View) -> None:
    """Step 1: decoding token t with the cache. Students: the chart with its readouts right
    below it. A slide: the tokens, the chart and the formula beside the readouts and notes."""
    t, ctx, sentence, step = v.t, v.ctx, v[SENTENCE], v[T]
    view = compute(sentence)
    v.text("kv_cache.s1_text")
    if not v.presenter:
        v.lead.latex(FORMULA)
    strip = t("kv_cache.strip", strip=token_strip(view.tokens, step))
    if v.presenter:
        v.figure.markdown(strip)
    chart = v.chart(cache_chart, t, sentence, step, v.presenter)
    with v.below:
        if v.presenter:
            st.latex(FORMULA)
        else:  # the chart's readouts right below it
            st.markdown(strip)
            step_metrics(ctx, view, step)
    with v.notes:
        if v.presenter:
            step_metrics(ctx, view, step)
        items = step_notice(ctx, view, step)
        v.notice(items[1:2] if v.presenter else items)  # a slide: the metrics show the rest
        untrained(ctx)
        arrays = cache_arrays(view, step)
        export_panel(ctx, "kv_cache_step", chart, arrays=arrays, text=weights_text(view))


def cost_step(v: View) -> None:
    """Step 2: the cost of decoding with and without the cache, and the cache's memory."""
    t, ctx = v.t, v.ctx
    n, width, layers, log = v[COST]
    v.text("kv_cache.s2_text")
    cv = cost_view(n, width, layers)
    chart = v.chart(cost_chart, t, n, width, layers, log, v.presenter)
    with v.notes:
        notices(v, cost_notice(ctx, cv, n, width, layers))
        with st.container(horizontal=v.presenter, vertical_alignment="center"):  # one row
            export_panel(ctx, "kv_cache_cost", chart)
            link(ctx, "masking")
            link(ctx, "multi_head")


# Ask the class -----------------------------------------------------------------------------
# Decoding ASK_TOKENS tokens one at a time: how many times more key/value projections without
# the cache than with it?
ASK_TOKENS = 9


def _ask_projections_truth() -> Truth:
    # (n + 1) / 2 = 5 exactly for 9 tokens, and a class answers in whole numbers: ±0.25 takes
    # 5 (or 5.0, 5.2) but not the near misses 4.5 (n / 2) or 4 (each step re-projecting only
    # the tokens before the new one, 0 + 1 + … + 8 = 36, over 9)
    return Truth(number=projections(ASK_TOKENS).ratio, tolerance=0.25)


ASK_PROJECTIONS = Question("kv_cache.projections", "number", _ask_projections_truth)
QUESTIONS = (ASK_PROJECTIONS,)
