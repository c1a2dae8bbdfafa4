"""Presentation helpers for the masks page (pages/6_masking.py).

Only wiring, charts and formatting live here; every number comes from :mod:`core`.
"""

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.masks import (
    LARGE_NEGATIVE,
    MASK_FILL,
    SMALL_NEGATIVE,
    combine_masks,
    fill_comparison,
    fully_masked_rows,
    lookahead_weight,
    masked_weight_max,
    max_row_spread,
    overflow_temperature,
    pad_rows,
    padded_valid,
    row_sums,
    stored_fill,
    undefined_rows,
    vector_norms,
)
from ui import charts
from ui.params import Choice, Flag, Float, Int, check_url, select, slider, toggle
from ui.safe import plain
from ui.sentence import Sentence, sentence_controls
from ui.shell import PageContext

PAD = "[PAD]"
MASKED = "#d9d9d9"  # grey of a −∞ (hidden) cell
CAUSAL = Flag("causal", True)
PAD_COUNT = Int("pad", 0, 0, 8)
PAD_SIDE = Choice("pad_side", "right", ("right", "left"))
DTYPE = Choice("dtype", "float32", ("float64", "float32", "float16"))
TEMPERATURE = Float("temp", 1.0, 0.05, 4.0)
FILLS = (MASK_FILL, LARGE_NEGATIVE, SMALL_NEGATIVE)
FILL_LABELS = ("−∞", "−1e9", "−1e4")


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


def controls(ctx: PageContext) -> tuple[Sentence, bool, int, str]:
    """Sentence controls and the mask switches (in an expander in presenter mode)."""
    t = ctx.t
    box = (
        st.expander(t("masking.controls"), icon=":material/tune:")
        if ctx.presenter
        else nullcontext()
    )
    with box:
        sentence = sentence_controls(ctx)
        c1, c2, c3 = st.columns([2, 3, 2], vertical_alignment="bottom")
        with c1:
            causal = toggle(ctx, CAUSAL, t("masking.causal"), help=t("masking.causal_help"))
        with c2:
            n_pad = slider(ctx, PAD_COUNT, t("masking.pad"), help=t("masking.pad_help"))
        with c3:
            side = select(ctx, PAD_SIDE, t("masking.pad_side"), lambda s: t(f"masking.side_{s}"))
    return sentence, causal, int(n_pad), side


@st.cache_data(max_entries=64, show_spinner=False)
def _compute(
    x: np.ndarray, tokens: tuple[str, ...], d_model: int, d_k: int, d_v: int, seed: int,
    causal: bool, n_pad: int, side: str,
) -> MaskView:  # fmt: skip
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


def records(frame: pd.DataFrame) -> list[dict]:
    """Chart rows as JSON-ready dicts (a missing value, NaN, becomes null)."""
    rows = frame.to_dict("records")
    for row in rows:
        for name, value in row.items():
            if isinstance(value, float) and value != value:  # NaN is the only x != x
                row[name] = None
    return rows


def heatmap_spec(
    frame: pd.DataFrame, rows: list[str], cols: list[str], title: str, domain: list[float],
    cell: int, weights: bool = True, legend: bool = True, x_title: str = "", y_title: str = "",
    blank: str = MASKED,
) -> dict:  # fmt: skip
    """An annotated heatmap as a plain Vega-Lite layer spec, drawn like ``charts.heatmap``.

    ``frame`` comes from ``charts.matrix_frame``: cells without a value (−∞, or not there
    yet) are drawn in ``blank`` grey and keep their label (e.g. "−∞"); rows flagged in an
    optional ``new`` column are outlined. Written as a dict because building the same
    charts from Altair objects cost several hundred ms per slider step (object copies and
    schema checks); this takes a few ms. ``charts.show`` adds the house theme.
    """
    xy = {
        "x": {"field": "col", "type": "nominal", "sort": cols, "title": x_title or None,
              "axis": {"labelAngle": -45}},
        "y": {"field": "row", "type": "nominal", "sort": rows, "title": y_title or None},
    }  # fmt: skip
    scale = {"domain": domain, "scheme": "blues" if weights else "redblue", "reverse": not weights}
    color = {"field": "value", "type": "quantitative", "scale": scale, "title": None}
    valid = "isValid(datum.value)"
    layers = [
        {"mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5},
         "transform": [{"filter": valid}],
         "encoding": {**xy, "color": color if legend else {**color, "legend": None},
                      "tooltip": [{"field": "row"}, {"field": "col"},
                                  {"field": "text", "title": "value"}]}},
        {"mark": {"type": "rect", "color": blank, "stroke": "white", "strokeWidth": 0.5},
         "transform": [{"filter": f"!{valid}"}], "encoding": xy},
    ]  # fmt: skip
    if "new" in frame:
        layers.append(
            {"mark": {"type": "rect", "fill": None, "stroke": charts.ACCENT, "strokeWidth": 3},
             "transform": [{"filter": "datum.new"}], "encoding": xy}
        )  # fmt: skip
    if max(len(rows), len(cols)) <= charts.MAX_ANNOTATED:
        top = 0.55 if weights else 0.6 * domain[1]
        dark = {"test": f"{valid} && abs(datum.value) > {top}", "value": "white"}
        layers.append(
            {"mark": {"type": "text", "fontSize": max(9, min(14, cell // 3))},
             "encoding": {**xy, "text": {"field": "text"},
                          "color": {"condition": dark, "value": "#222"}}}
        )  # fmt: skip
    return {
        "data": {"values": records(frame)},
        "title": title,
        "width": cell * len(cols),
        "height": cell * len(rows),
        "layer": layers,
    }


def symmetric_domain(*matrices: np.ndarray) -> list[float]:
    """A colour domain centred on 0 that holds every finite entry (for scores)."""
    finite = [np.abs(m[np.isfinite(m)]) for m in matrices]
    top = max((float(f.max()) for f in finite if f.size), default=1.0) or 1.0
    return [-top, top]


def mask_chart(ctx: PageContext, view: MaskView) -> dict:
    """Scores before and after masking (one diverging scale) next to the weights."""
    t, names = ctx.t, charts.unique_labels(view.tokens)
    cell, n = cell_size(ctx, len(names)), len(names)
    domain = symmetric_domain(view.before, view.masked.scaled)
    common = {"rows": names, "cols": names, "cell": cell, "x_title": t("masking.keys")}
    panels = [
        heatmap_spec(charts.matrix_frame(view.before, names, names, t("masking.before")),
                     title=charts.shape_title(t("masking.before"), (n, n)), domain=domain,
                     weights=False, legend=False, y_title=t("masking.queries"), **common),
        heatmap_spec(charts.matrix_frame(view.masked.scaled, names, names, t("masking.after")),
                     title=charts.shape_title(t("masking.after"), (n, n)), domain=domain,
                     weights=False, **common),
        heatmap_spec(charts.matrix_frame(view.masked.weights, names, names, t("masking.weights")),
                     title=charts.shape_title(t("masking.weights"), (n, n)), domain=[0, 1],
                     **common),
    ]  # fmt: skip
    return {"hconcat": panels, "spacing": 24, "resolve": {"scale": {"color": "independent"}}}


def cell_size(ctx: PageContext, n: int) -> int:
    """Heatmap cell size: larger on a projector."""
    return int(np.clip((440 if ctx.presenter else 420) / max(n, 1), 12, 70))


def mask_frame(ctx: PageContext, view: MaskView) -> pd.DataFrame:
    """The data behind the mask chart, one line per cell and panel (for the CSV export)."""
    rows = charts.unique_labels(view.tokens)
    panels = {
        "scores_before": view.before,
        "scores_after": view.masked.scaled,
        "weights": view.masked.weights,
    }
    return pd.concat([charts.matrix_frame(m, rows, rows, p) for p, m in panels.items()])


def mask_arrays(view: MaskView) -> dict[str, np.ndarray]:
    """Every matrix of the mask view, for the NPZ export."""
    tr = view.masked
    return {
        "x": tr.x, "q": tr.q, "k": tr.k, "v": tr.v, "mask": view.mask,
        "scores_before": view.before, "scores_after": tr.scaled,
        "weights": tr.weights, "output": tr.output,
    }  # fmt: skip


def row_list(labels: list[str], rows: np.ndarray) -> str:
    """The labels of the selected rows, made safe for markdown: "[PAD]₀, [PAD]₁"."""
    names = charts.unique_labels(labels)
    return ", ".join(plain(names[i], 20) for i in np.flatnonzero(rows))


def mask_notice(ctx: PageContext, view: MaskView) -> list[str]:
    """Live "what to notice" items for the mask view."""
    t, w = ctx.t, view.masked.weights
    sums = row_sums(w)[~view.empty]
    items = [
        t(
            "masking.notice_masked",
            top=charts.fmt(masked_weight_max(w, view.mask), 3),
            lo=f"{sums.min():.6f}" if sums.size else "—",
            hi=f"{sums.max():.6f}" if sums.size else "—",
        )
    ]
    if view.causal:
        items.append(t("masking.notice_causal"))
    if view.n_pad:
        items.append(t("masking.notice_pad", p=view.n_pad))
    if view.empty.any():
        items.append(t("masking.notice_empty", rows=row_list(view.tokens, view.empty)))
    return items


def generation_strip(ctx: PageContext, tokens: list[str], step: int) -> str:
    """Markdown line: tokens 0..step generated (the last one highlighted), later ones hidden."""
    done = [plain(tok, 20) for tok in tokens[:step]]
    current = f":orange-background[**{plain(tokens[step], 20)}**]"
    hidden = ["`?`"] * (len(tokens) - step - 1)
    return " ".join([*done, current, *hidden])


def lookahead_frame(ctx: PageContext, sentence: Sentence, step: int) -> pd.DataFrame:
    """Row ``step`` of the weights with and without the causal mask, one line per key."""
    t = ctx.t
    free, causal = _generation(sentence)
    labels = charts.unique_labels(sentence.tokens)
    when = [t("masking.seen") if j <= step else t("masking.future") for j in range(len(labels))]
    series = ((t("masking.with_mask"), causal), (t("masking.without_mask"), free))
    return pd.concat(
        [pd.DataFrame({"key": labels, "weight": w[step], "series": name, "when": when})
         for name, w in series]
    )  # fmt: skip


def lookahead_chart(ctx: PageContext, data: pd.DataFrame) -> dict:
    """Two bar panels (with / without the causal mask); later tokens in a second colour
    (the same colours in every language). Drawn like ``charts.bars``, as a plain spec."""
    t = ctx.t
    labels = list(dict.fromkeys(data["key"]))
    domain = [t("masking.seen"), t("masking.future")]
    panels = []
    for name in dict.fromkeys(data["series"]):
        part = data[data["series"] == name]
        panels.append(
            {"data": {"values": records(part)}, "title": name,
             "width": max(260, (70 if ctx.presenter else 46) * len(labels)),
             "height": 340 if ctx.presenter else 260,
             "encoding": {
                 "x": {"field": "key", "type": "nominal", "sort": labels,
                       "title": t("masking.keys"), "axis": {"labelAngle": 0}},
                 "y": {"field": "weight", "type": "quantitative", "scale": {"domain": [0, 1]},
                       "title": t("masking.weight_axis")}},
             "layer": [
                 {"mark": "bar",
                  "encoding": {"color": {"field": "when", "type": "nominal", "title": None,
                                         "scale": {"domain": domain,
                                                   "range": [charts.KEY_COLOR, charts.ACCENT]},
                                         "legend": {"orient": "bottom"}},
                               "tooltip": [{"field": "key"},
                                           {"field": "weight", "type": "quantitative",
                                            "format": ".4f"}]}},
                 {"mark": {"type": "text", "dy": -8, "color": "#222"},
                  "encoding": {"text": {"field": "weight", "type": "quantitative",
                                        "format": ".3f"}}}]}
        )  # fmt: skip
    return {"hconcat": panels, "spacing": 30}


def lookahead_notice(ctx: PageContext, sentence: Sentence, step: int) -> list[str]:
    """Live "what to notice" items: the weight the unmasked query ``step`` puts on later
    tokens, and why the causal row equals the generation-time row."""
    free, _ = _generation(sentence)
    later = len(sentence.tokens) - step - 1
    leak = float(lookahead_weight(free)[step])
    word = plain(sentence.tokens[step], 20)
    return [
        ctx.t("masking.notice_leak", q=word, leak=f"{leak:.1%}", later=later),
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


@dataclass(frozen=True)
class FillView:
    """One query under the three fill values, with its own mask and with every key masked."""

    row: int
    weights: np.ndarray  # (3, n) with the page's mask
    blank: np.ndarray  # (3, n) with every key masked
    blank_out: np.ndarray  # (3,) output norms with every key masked
    masked_max: list[float]  # per fill, largest weight on a masked key (page's mask)
    stored: list[float]  # per fill, the masked score as the softmax sees it
    undefined: np.ndarray  # (3,) bool, textbook softmax would compute 0/0 (every key masked)
    spread: float  # largest difference between fills with the page's mask
    overflow: float  # temperature below which −1e4 overflows in this dtype


def fill_view(view: MaskView, row: int, dtype: str, temperature: float) -> FillView:
    """Compare −∞, −1e9 and −1e4 for query ``row`` in ``dtype`` at ``temperature``."""
    tr, fills = view.masked, list(FILLS)
    scores = view.before[row]  # (n,)
    mask_row, none = view.mask[row], np.zeros_like(view.mask[row])
    w, _ = fill_comparison(scores, mask_row, tr.v, fills, temperature, dtype)
    blank, blank_out = fill_comparison(scores, none, tr.v, fills, temperature, dtype)
    return FillView(
        row,
        w,
        blank,
        vector_norms(blank_out),
        [masked_weight_max(wi, mask_row) for wi in w],
        [stored_fill(f, dtype, temperature) for f in fills],
        np.array([undefined_rows(scores, none, f, temperature, dtype) for f in fills]),
        max_row_spread(w),
        overflow_temperature(SMALL_NEGATIVE, dtype),
    )


def fill_frame(ctx: PageContext, view: MaskView, fv: FillView) -> pd.DataFrame:
    """The comparison's weights, one line per (panel, fill, key)."""
    t, cols = ctx.t, charts.unique_labels(view.tokens)
    name = cols[fv.row]
    panels = {
        t("masking.panel_yours", q=name): fv.weights,
        t("masking.panel_blank", q=name): fv.blank,
    }
    return pd.concat([charts.matrix_frame(m, FILL_LABELS, cols, p) for p, m in panels.items()])


def fill_chart(ctx: PageContext, view: MaskView, fv: FillView) -> dict:
    """Weights of one query under each fill: with the page's mask | with every key masked."""
    t = ctx.t
    cols, fills = charts.unique_labels(view.tokens), list(FILL_LABELS)
    name = cols[fv.row]
    cell = max(26, cell_size(ctx, len(cols)))
    panels = [
        heatmap_spec(
            charts.matrix_frame(w, fills, cols, title), fills, cols,
            charts.shape_title(title, w.shape), [0, 1], cell, legend=i == 1,
            x_title=t("masking.keys"), y_title=t("masking.fill_axis") if i == 0 else "",
        )
        for i, (title, w) in enumerate(
            ((t("masking.panel_yours", q=name), fv.weights),
             (t("masking.panel_blank", q=name), fv.blank))
        )
    ]  # fmt: skip
    return {"hconcat": panels, "spacing": 30}


def sci(value: float) -> str:
    """Short scientific form, −∞ spelled out: "−1e+09", "0", "3.2e−17"."""
    if not np.isfinite(value):
        return charts.fmt(value)
    return f"{value:.3g}".replace("-", "−")


def _spread_text(ctx: PageContext, w: np.ndarray) -> str:
    if not w.any():
        return ctx.t("masking.all_zero")
    lo, hi = float(w.min()), float(w.max())
    return ctx.t("masking.each", w=f"{hi:.4f}") if lo == hi else f"{lo:.4f} … {hi:.4f}"


def fill_table(ctx: PageContext, fv: FillView) -> pd.DataFrame:
    """One line per fill value: how it is stored and what the softmax makes of it."""
    t = ctx.t
    blank_sums = row_sums(fv.blank)
    return pd.DataFrame(
        {
            t("masking.col_fill"): FILL_LABELS,
            t("masking.col_stored"): [sci(v) for v in fv.stored],
            t("masking.col_leak"): [sci(v) for v in fv.masked_max],
            t("masking.col_blank"): [_spread_text(ctx, w) for w in fv.blank],
            t("masking.col_sum"): [f"{s:.4f}" for s in blank_sums],
            t("masking.col_out"): [f"{o:.4f}" for o in fv.blank_out],
            t("masking.col_textbook"): [
                t("masking.undefined") if u else t("masking.defined") for u in fv.undefined
            ],
        }
    )


def fill_notice(ctx: PageContext, view: MaskView, fv: FillView, dtype: str) -> list[str]:
    """Live "what to notice" items for the −∞ / −1e9 comparison."""
    t, n = ctx.t, len(view.tokens)
    name = plain(charts.unique_labels(view.tokens)[fv.row], 20)
    if fv.blank[1].any():  # −1e9 still finite in this dtype: a uniform row
        first = t(
            "masking.notice_blank",
            n=n,
            u=f"{fv.blank[1].max():.4f}",
            norm_inf=f"{fv.blank_out[0]:.4f}",
            norm_big=f"{fv.blank_out[1]:.4f}",
        )
    else:  # −1e9 overflowed to −∞: only the guard keeps the row defined
        first = t("masking.notice_blank_overflow", dtype=dtype, norm_inf=f"{fv.blank_out[0]:.4f}")
    if view.empty[fv.row]:
        second = t("masking.notice_same_empty", q=name)
    else:
        second = t("masking.notice_same", q=name, spread=sci(fv.spread))
    items = [first, second]
    top = np.finfo(dtype).max
    threshold = "∞" if not np.isfinite(fv.overflow) else f"{fv.overflow:.3g}"
    items.append(
        t(
            "masking.notice_dtype",
            dtype=dtype,
            top=f"{top:.4g}",
            big=sci(fv.stored[1]),
            tau=threshold,
        )
    )
    return items


def fill_arrays(view: MaskView, fv: FillView) -> dict[str, np.ndarray]:
    """The comparison's matrices for the NPZ export (rows: −inf, −1e9, −1e4)."""
    return {
        "fills": np.array(FILLS),
        "scores_row": view.before[fv.row],
        "mask_row": view.mask[fv.row],
        "weights_with_mask": fv.weights,
        "weights_every_key_masked": fv.blank,
        "v": view.masked.v,
    }


def fill_controls(ctx: PageContext, n: int) -> tuple[int, str, float]:
    """Query row, dtype and temperature for the fill comparison."""
    t = ctx.t
    c1, c2, c3 = st.columns([3, 2, 3], vertical_alignment="bottom")
    with c1:
        row = index_slider(ctx, Int("row", min(2, n - 1), 0, n - 1), t("masking.row"))
    with c2:
        dtype = select(ctx, DTYPE, t("masking.dtype"), help=t("masking.dtype_help"))
    with c3:
        temp = slider(ctx, TEMPERATURE, t("masking.temp"), step=0.05, help=t("masking.temp_help"))
    return int(row), dtype, float(temp)


def generation_control(ctx: PageContext, n: int) -> int:
    """Which generation step to show: tokens 0..t exist."""
    spec = Int("gen", min(2, n - 1), 0, n - 1)
    return index_slider(ctx, spec, ctx.t("masking.gen"), help=ctx.t("masking.gen_help"))


def index_slider(ctx: PageContext, spec: Int, label: str, **kw: object) -> int:
    """A URL-bound position slider; with a single position (no range to slide) just 0."""
    if spec.hi <= spec.lo:
        check_url(ctx, spec)
        return spec.lo
    return int(slider(ctx, spec, label, **kw))


def weights_text(view: MaskView) -> str:
    """The masked weights as a text heatmap (TXT export)."""
    labels = charts.unique_labels(view.tokens)
    return core.text_heatmap(view.masked.weights, labels)


@st.cache_data(max_entries=96, show_spinner=False)
def cached_spec(
    name: str, lang: str, presenter: bool, key: tuple, _build: Callable[[], dict]
) -> dict:
    """A chart spec built once per (chart, language, presenter mode, data ``key``): a rerun
    caused by another control on the page does not rebuild charts whose data is unchanged."""
    return _build()


def draw_mask(ctx: PageContext, view: MaskView) -> dict:
    """Draw :func:`mask_chart`; returns the spec for the exports."""
    key = (tuple(view.tokens), view.before, view.masked.scaled, view.masked.weights)
    spec = cached_spec("mask", ctx.lang, ctx.presenter, key, lambda: mask_chart(ctx, view))
    return charts.show(ctx, spec)


def draw_lookahead(ctx: PageContext, data: pd.DataFrame) -> dict:
    """Draw :func:`lookahead_chart`; returns the spec for the exports."""
    spec = cached_spec(
        "ahead", ctx.lang, ctx.presenter, (data,), lambda: lookahead_chart(ctx, data)
    )
    return charts.show(ctx, spec)


def draw_fill(ctx: PageContext, view: MaskView, fv: FillView) -> dict:
    """Draw :func:`fill_chart`; returns the spec for the exports."""
    key = (tuple(view.tokens), fv.row, fv.weights, fv.blank)
    spec = cached_spec("fill", ctx.lang, ctx.presenter, key, lambda: fill_chart(ctx, view, fv))
    return charts.show(ctx, spec)
