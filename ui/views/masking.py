"""The masks page (pages/6_masking.py): its controls, charts, words and steps.

Only wiring, charts and formatting live here; every number comes from :mod:`core`.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import core
from core.findings.masking import (
    FillComparison,
    compare_fills,
    lookahead,
    mask_findings,
    visible_keys,
)
from core.masks import (
    LARGE_NEGATIVE,
    MASK_FILL,
    SMALL_NEGATIVE,
    combine_masks,
    fully_masked_rows,
    pad_rows,
    padded_valid,
    row_sums,
)
from ui import charts
from ui.blocks import folded, link
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.notes import significant, untrained
from ui.params import Choice, Flag, Float, Int, index_slider, select, slider, toggle
from ui.questions import Question, Truth
from ui.safe import plain
from ui.sentence import LESSON_TEXT, Sentence, sentence_controls
from ui.steps import Controls, Got, View

PAD = "[PAD]"
CAUSAL = Flag("causal", True)
PAD_COUNT = Int("pad", 0, 0, 8)
PAD_SIDE = Choice("pad_side", "right", ("right", "left"))
DTYPE = Choice("dtype", "float32", ("float64", "float32", "float16"))
TEMPERATURE = Float("temp", 1.0, 0.05, 4.0)
FILLS = (MASK_FILL, LARGE_NEGATIVE, SMALL_NEGATIVE)
FILL_LABELS = ("−∞", "−1e9", "−1e4")
SHARE = 0.6  # a slide: steps 2 and 3's chart column (Step.share)


@dataclass(frozen=True)
class MaskView:
    """The padded sentence, its mask and attention with and without the mask."""

    tokens: list[str]  # n_real + n_pad labels
    mask: np.ndarray  # (n, n) bool, True = may attend
    before: np.ndarray  # (n, n) scaled scores, no mask
    masked: core.AttentionTrace  # trace with the mask (scores −∞ where masked)
    empty: np.ndarray  # (n,) bool, queries with no visible key
    n_pad: int
    causal: bool


def pair(ctx: PageContext, share: float = SHARE) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Two parts of a step side by side on a slide (the left ``share`` of the width), so
    the step fits one screen; for students one below the other, in the order written."""
    if ctx.presenter:
        left, right = st.columns([share, 1 - share], gap="large")
        return left, right
    box = st.container()
    return box, box


def sentence_group(ctx: PageContext, got: Got) -> Sentence:
    """The sentence and its sizes (every step; a sentence in the reader's language)."""
    return sentence_controls(ctx, native=True)


def mask_controls(ctx: PageContext, got: Got) -> tuple[bool, int, str]:
    """The mask switches of steps 1 and 3: causal, how many [PAD] tokens and on which side
    (side by side on a slide, one below the other in the sidebar)."""
    t = ctx.t
    c1, c2, c3 = (
        st.columns([2, 3, 2], vertical_alignment="bottom")
        if ctx.presenter
        else [st.container()] * 3
    )
    with c1:
        causal = toggle(ctx, CAUSAL, t("masking.causal"), help=t("masking.causal_help"))
    with c2:
        n_pad = slider(ctx, PAD_COUNT, t("masking.pad"), help=t("masking.pad_help"))
    with c3:
        side = select(ctx, PAD_SIDE, t("masking.pad_side"), lambda s: t(f"masking.side_{s}"))
    return causal, int(n_pad), side


@st.cache_data(max_entries=64, show_spinner=False)
def _compute(
    x: np.ndarray,
    tokens: tuple[str, ...],
    d_model: int,
    d_k: int,
    d_v: int,
    seed: int,
    causal: bool,
    n_pad: int,
    side: str,
) -> MaskView:
    w_q, w_k, w_v = core.init_projections(d_model, d_k, d_v, seed)
    xp = pad_rows(x, n_pad, side)  # (n, d_model)
    valid = padded_valid(len(tokens), n_pad, side)  # (n,)
    mask = combine_masks(len(valid), causal, valid if n_pad else None)  # (n, n)
    plain_trace = core.self_attention_trace(xp, w_q, w_k, w_v)
    masked = core.self_attention_trace(xp, w_q, w_k, w_v, mask)
    labels = [PAD] * n_pad
    padded = list(tokens) + labels if side == "right" else labels + list(tokens)
    return MaskView(
        padded, mask, plain_trace.scaled, masked, fully_masked_rows(mask), n_pad, causal
    )


def compute(sentence: Sentence, causal: bool, n_pad: int, side: str) -> MaskView:
    """Pad, mask and attend (cached)."""
    s = sentence
    return _compute(s.x, tuple(s.tokens), s.d_model, s.d_k, s.d_v, s.seed, causal, n_pad, side)


def padded_length(sentence: Sentence, n_pad: int) -> int:
    """How many tokens the padded sentence has (:func:`compute`'s rows), without computing it."""
    return len(sentence.tokens) + n_pad


def mask_chart(
    t: Translator,
    tokens: list[str],
    before: np.ndarray,
    after: np.ndarray,
    weights: np.ndarray,
    presenter: bool,
) -> dict:
    """Scores before and after masking (one diverging scale, masked cells grey) next to the
    weights."""
    names, n = charts.unique_labels(tokens), len(tokens)
    cell = charts.fit_cell(n, n, 440 if presenter else 420, hi=70)
    scores = {
        "domain": charts.symmetric_domain(before, after),
        "kind": "scores",
        "live_domain": True,
    }
    common = {"cell": cell, "x_title": t("masking.keys")}
    y_title = t("masking.queries")
    return charts.concat(
        [
            charts.heatmap(
                {t("masking.before"): before},
                names,
                names,
                y_title=y_title,
                legend=False,
                **scores,
                **common,
            ),
            charts.heatmap({t("masking.after"): after}, names, names, **scores, **common),
            charts.heatmap({t("masking.weights"): weights}, names, names, **common),
        ],
        spacing=24,
    )


def mask_arrays(view: MaskView) -> dict[str, np.ndarray]:
    """Every matrix of the mask view, for the NPZ export."""
    tr = view.masked
    return {
        "x": tr.x,
        "q": tr.q,
        "k": tr.k,
        "v": tr.v,
        "mask": view.mask,
        "scores_before": view.before,
        "scores_after": tr.scaled,
        "weights": tr.weights,
        "output": tr.output,
    }


def row_list(labels: list[str], rows: np.ndarray) -> str:
    """The labels of the selected rows, made safe for markdown: "[PAD]₀, [PAD]₁"."""
    names = charts.unique_labels(labels)
    return ", ".join(plain(names[i], 20) for i in np.flatnonzero(rows))


def mask_intro(ctx: PageContext) -> str:
    """Step 1's explanation, naming the three panels by their titles, not by where they
    stand (a narrow screen may wrap them into rows)."""
    t = ctx.t
    return t(
        "masking.s1_text",
        before=t("masking.before"),
        after=t("masking.after"),
        weights=t("masking.weights"),
    )


def mask_notice(ctx: PageContext, view: MaskView) -> list[str]:
    """Live "what to notice" items for the mask view, worded from
    :func:`core.findings.masking.mask_findings`."""
    t = ctx.t
    found = mask_findings(view.masked.weights, view.mask)
    if not found.hidden:  # no hidden cell (no causal mask and no [PAD], or a single token)
        items = [t("masking.notice_none")]
    else:
        top = found.leak
        items = [t("masking.notice_masked", top="0" if top == 0 else significant(top))]
    if found.row_sum_error is not None:
        dev = found.row_sum_error
        items.append(
            t("masking.notice_rowsum", dev=significant(dev))
            if dev
            else t("masking.notice_rowsum_exact")
        )
    if view.causal:  # the simple picture holds only without padding
        items.append(t("masking.notice_causal" if not view.n_pad else "masking.notice_causal_pad"))
    if view.n_pad:  # the [PAD] tokens: keys that no query may see
        key = "masking.notice_pad_empty" if found.unseen_keys_blind else "masking.notice_pad"
        items.append(t(key, p=view.n_pad))
    if found.blind.any():
        items.append(t("masking.notice_empty", rows=row_list(view.tokens, found.blind)))
    return items


def generation_strip(ctx: PageContext, tokens: list[str], step: int) -> str:
    """Markdown line: tokens 0..step generated (the last one highlighted), later ones hidden."""
    done = [plain(tok, 20) for tok in tokens[:step]]
    current = f":orange-background[**{plain(tokens[step], 20)}**]"
    hidden = ["`?`"] * (len(tokens) - step - 1)
    return " ".join([*done, current, *hidden])


def lookahead_frame(t: Translator, sentence: Sentence, step: int) -> pd.DataFrame:
    """Row ``step`` of the weights with and without the causal mask, one line per key."""
    free, causal = _generation(sentence)
    labels = charts.unique_labels(sentence.tokens)
    when = [t("masking.seen") if j <= step else t("masking.future") for j in range(len(labels))]
    series = ((t("masking.with_mask"), causal), (t("masking.without_mask"), free))
    return pd.concat(
        [
            pd.DataFrame({"key": labels, "weight": w[step], "series": name, "when": when})
            for name, w in series
        ]
    )


def lookahead_chart(t: Translator, sentence: Sentence, step: int, presenter: bool) -> dict:
    """Row ``step`` of the weights in two bar panels (with / without the causal mask); later
    tokens in a second colour (the same colours in every language)."""
    data = lookahead_frame(t, sentence, step)
    n = len(sentence.tokens)
    return charts.bars(
        data,
        "key",
        "weight",
        color="when",
        column="series",
        y_domain=(0, 1),
        sort=list(dict.fromkeys(data["key"])),
        x_title=t("masking.keys"),
        y_title=t("masking.weight_axis"),
        width=max(260, (70 if presenter else 46) * n),
        height=340 if presenter else 260,
        color_domain=[t("masking.seen"), t("masking.future")],
        colors=[charts.KEY_COLOR, charts.ACCENT],
    )


def lookahead_notice(ctx: PageContext, sentence: Sentence, step: int) -> list[str]:
    """Live "what to notice" items: the weight the unmasked query ``step`` puts on later
    tokens, and why the causal row equals the generation-time row."""
    free, _ = _generation(sentence)
    ahead = lookahead(free, step)
    later, leak = ahead.later, ahead.leak
    word = plain(sentence.tokens[step], 20)
    if later == 0:
        first = ctx.t("masking.notice_leak_last", q=word)
    elif later == 1:
        first = ctx.t("masking.notice_leak_one", q=word, leak=f"{leak:.1%}")
    else:
        first = ctx.t("masking.notice_leak", q=word, leak=f"{leak:.1%}", later=later)
    return [
        first,
        ctx.t("masking.notice_train"),
    ]


@st.cache_data(max_entries=64, show_spinner=False)
def _generation_cached(
    x: np.ndarray, d_model: int, d_k: int, d_v: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    w_q, w_k, w_v = core.init_projections(d_model, d_k, d_v, seed)
    free = core.self_attention_trace(x, w_q, w_k, w_v).weights
    causal = core.self_attention_trace(x, w_q, w_k, w_v, core.causal_mask(len(x))).weights
    return free, causal


def _generation(sentence: Sentence) -> tuple[np.ndarray, np.ndarray]:
    s = sentence
    return _generation_cached(s.x, s.d_model, s.d_k, s.d_v, s.seed)


def fill_view(view: MaskView, row: int, dtype: str, temperature: float) -> FillComparison:
    """Compare −∞, −1e9 and −1e4 for query ``row`` in ``dtype`` at ``temperature``."""
    tr = view.masked
    return compare_fills(view.before, view.mask, tr.v, row, FILLS, dtype, temperature)


def fill_chart(
    t: Translator,
    tokens: list[str],
    row: int,
    weights: np.ndarray,
    blank: np.ndarray,
    presenter: bool,
) -> dict:
    """Weights of query ``row`` under each fill (rows −∞, −1e9, −1e4): with the page's mask |
    with every key masked."""
    cols, fills = charts.unique_labels(tokens), list(FILL_LABELS)
    cell = max(26, charts.fit_cell(len(cols), len(cols), 440 if presenter else 420, hi=70))
    yours = t("masking.panel_yours", q=cols[row])
    every = t("masking.panel_blank", q=cols[row])
    font = charts.SLIDE_FONT if presenter else 15  # numbers as large as the cells allow
    common = {"x_title": t("masking.keys"), "cell": cell, "max_font": font}
    y_title = t("masking.fill_axis")
    return charts.concat(
        [
            charts.heatmap({yours: weights}, fills, cols, y_title=y_title, legend=False, **common),
            charts.heatmap({every: blank}, fills, cols, **common),
        ],
        spacing=30,
    )


def _spread_text(ctx: PageContext, w: np.ndarray) -> str:
    if not w.any():
        return ctx.t("masking.all_zero")
    lo, hi = float(w.min()), float(w.max())
    return ctx.t("masking.each", w=f"{hi:.4f}") if lo == hi else f"{lo:.4f} … {hi:.4f}"


def fill_details(ctx: PageContext, fv: FillComparison) -> None:
    """Step 3's secondary details: the row's numbers (:func:`fill_table`) and the app's
    policy for a fully masked row."""
    st.table(fill_table(ctx, fv), hide_index=True)
    st.markdown(ctx.t("masking.app_policy"))


def fill_table(ctx: PageContext, fv: FillComparison) -> pd.DataFrame:
    """One line per fill value: how it is stored and what the softmax makes of it."""
    t = ctx.t
    blank_sums = row_sums(fv.blank)
    return pd.DataFrame(
        {
            t("masking.col_fill"): FILL_LABELS,
            t("masking.col_stored"): [significant(v) for v in fv.stored],
            t("masking.col_leak"): [significant(v) for v in fv.masked_max],
            t("masking.col_blank"): [_spread_text(ctx, w) for w in fv.blank],
            t("masking.col_sum"): [f"{s:.4f}" for s in blank_sums],
            t("masking.col_out"): [f"{o:.4f}" for o in fv.blank_out],
            t("masking.col_textbook"): [
                t("masking.undefined") if u else t("masking.defined") for u in fv.undefined
            ],
        }
    )


def fill_notice(
    ctx: PageContext, view: MaskView, fv: FillComparison, dtype: str, temp: float
) -> list[str]:
    """Live "what to notice" items for the −∞ / −1e9 comparison."""
    t, n = ctx.t, len(view.tokens)
    name = plain(charts.unique_labels(view.tokens)[fv.row], 20)
    if fv.blank_weight[1]:  # −1e9 still finite in this dtype: a uniform row
        first = t(
            "masking.notice_blank",
            n=n,
            u=f"{fv.blank_weight[1]:.4f}",
            norm_inf=f"{fv.blank_out[0]:.4f}",
            norm_big=f"{fv.blank_out[1]:.4f}",
        )
    else:  # −1e9 overflowed to −∞: only the guard keeps the row defined
        first = t("masking.notice_blank_overflow", dtype=dtype, norm_inf=f"{fv.blank_out[0]:.4f}")
    if view.empty[fv.row]:
        second = t("masking.notice_same_empty", q=name)
    else:
        same = "masking.notice_same" if fv.agree else "masking.notice_differ"
        second = t(same, q=name, spread=significant(fv.spread))
    facts = {"dtype": dtype, "top": f"{fv.dtype_max:.5g}", "big": significant(fv.stored[1])}
    tau = significant(fv.overflow)
    if fv.overflow < TEMPERATURE.lo:  # no temperature on the slider can make −1e4 overflow
        third = t("masking.notice_dtype", tau=tau, **facts)
    else:
        state = t("masking.overflowed" if fv.overflows(temp) else "masking.finite")
        third = t("masking.notice_dtype_near", tau=tau, T=f"{temp:.2f}", state=state, **facts)
    return [first, second, third]


def fill_arrays(view: MaskView, fv: FillComparison) -> dict[str, np.ndarray]:
    """The comparison's matrices for the NPZ export (rows: −inf, −1e9, −1e4)."""
    return {
        "fills": np.array(FILLS),
        "scores_row": view.before[fv.row],
        "mask_row": view.mask[fv.row],
        "weights_with_mask": fv.weights,
        "weights_every_key_masked": fv.blank,
        "v": view.masked.v,
    }


def fill_controls(ctx: PageContext, got: Got) -> tuple[int, str, float]:
    """Step 3: query row (of the padded sentence), dtype and temperature for the fill
    comparison."""
    t, n = ctx.t, padded_length(got[SENTENCE], got[MASKS][1])
    if ctx.presenter:  # the middle column holds all three number formats side by side (2/8
        # of the width cut "float64" and hid "float16")
        c1, c2, c3 = st.columns([3, 4, 3], vertical_alignment="bottom")
    else:  # the sidebar: the two sliders side by side (as d_k and d_v), the formats below
        c1, c3 = st.columns(2)
        c2 = st.container()
    with c1:
        row = index_slider(ctx, Int("row", min(2, n - 1), 0, n - 1), t("masking.row"))
    with c2:
        dtype = select(ctx, DTYPE, t("masking.dtype"), help=t("masking.dtype_help"))
    with c3:
        temp = slider(ctx, TEMPERATURE, t("masking.temp"), step=0.05, help=t("masking.temp_help"))
    return int(row), dtype, float(temp)


def generation_control(ctx: PageContext, got: Got) -> int:
    """Step 2: which generation step to show: tokens 0..t exist."""
    n = len(got[SENTENCE].tokens)
    spec = Int("gen", min(2, n - 1), 0, n - 1)
    return index_slider(ctx, spec, ctx.t("masking.gen"), help=ctx.t("masking.gen_help"))


def weights_text(view: MaskView) -> str:
    """The masked weights as a text heatmap (TXT export)."""
    labels = charts.unique_labels(view.tokens)
    return core.text_heatmap(view.masked.weights, labels)


# Every step reads the sentence. A slide folds it and the mask switches under the step's
# text; students find the switches in the sidebar on the steps that show a mask (step 2 shows
# none: they wait there, out of sight), folded on step 3, where its own controls need the
# room. Steps 2 and 3's own controls sit above their chart on a slide.
SENTENCE = Controls(sentence_group, fold="masking.sentence_controls")
MASKS = Controls(mask_controls, fold="masking.masks_fold")
GENERATION = Controls(generation_control, box="masking.s2_controls", slide="above")
FILL = Controls(fill_controls, slide="above")


# The steps -------------------------------------------------------------------------------


def masks_step(v: View) -> None:
    """Step 1: the scores before and after the mask, and the weights."""
    t, ctx = v.t, v.ctx
    view = compute(v[SENTENCE], *v[MASKS])
    with v.lead:
        main, side = pair(ctx, 0.75)
    main.markdown(mask_intro(ctx))
    side.latex(
        r"\tilde s_{ij}=\begin{cases}s_{ij}&\text{mask}_{ij}\\-\infty&\text{else}\end{cases}"
    )
    trace = view.masked
    args = (t, view.tokens, view.before, trace.scaled, trace.weights, v.presenter)
    chart = v.chart(mask_chart, *args)
    with v.notes:
        main, side = pair(ctx)
    v.notice(mask_notice(ctx, view), place=main)
    with side:
        untrained(ctx)
        export_panel(
            ctx,
            "masking",
            chart,
            arrays=lambda: mask_arrays(view),
            text=lambda: weights_text(view),
        )


def generation_step(v: View) -> None:
    """Step 2: one row of the weights with and without the causal mask, as generated."""
    t, ctx, sentence, gen = v.t, v.ctx, v[SENTENCE], v[GENERATION]
    (v.notes if v.presenter else v.lead).markdown(t("masking.s2_text"))
    strip = t("masking.strip", strip=generation_strip(ctx, sentence.tokens, gen))
    if v.presenter:  # above the chart, below the slider it follows
        v.figure.markdown(strip)
    chart = v.chart(lookahead_chart, t, sentence, gen, v.presenter)
    if not v.presenter:  # right below the chart, while the text follows
        v.below.markdown(strip)
    v.notice(lookahead_notice(ctx, sentence, gen))
    v.export("masking_generation", chart)


def fill_step(v: View) -> None:
    """Step 3: −∞, −1e9 and −1e4 as the masked score, for one query row (a slide: the
    details and links below the chart)."""
    t, ctx = v.t, v.ctx
    view = compute(v[SENTENCE], *v[MASKS])
    row, dtype, temp = v[FILL]
    (v.figure if v.presenter else v.lead).markdown(t("masking.s3_text"))
    fv = fill_view(view, row, dtype, temp)
    chart = v.chart(fill_chart, t, view.tokens, row, fv.weights, fv.blank, v.presenter)
    after = v.below if v.presenter else v.notes
    with after:
        details = lambda: fill_details(ctx, fv)  # noqa: E731
        folded(ctx, t("masking.details"), "fill_details", details, icon=":material/table:")
    v.notice(fill_notice(ctx, view, fv, dtype, temp))
    v.export("masking_fill", chart, arrays=lambda: fill_arrays(view, fv))
    with after, st.container(horizontal=True):
        link(ctx, "softmax")
        link(ctx, "kv_cache")


# Ask the class -----------------------------------------------------------------------------
# The lesson's sentence (6 tokens, as the Chinese page's opening one) with the causal mask and
# no [PAD]: how many keys may the query at position ASK_QUERY (counted from 0) see?
ASK_QUERY = 3


def _ask_visible_truth() -> Truth:
    mask = combine_masks(len(core.tokenize(LESSON_TEXT)), causal=True)  # (n, n), no padding
    # a count: only the exact number is right
    return Truth(number=float(visible_keys(mask, ASK_QUERY)), tolerance=0.0)


ASK_VISIBLE = Question("masking.visible", "number", _ask_visible_truth)
QUESTIONS = (ASK_VISIBLE,)
