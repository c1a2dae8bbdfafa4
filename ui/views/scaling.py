"""The scaling page (pages/3_scaling.py): cached experiments, its charts, readouts and
steps."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import text_heatmap
from core.experiments import (
    SaturationCurve,
    ScoreComparison,
    VarianceExperiment,
    compare_scaling,
    even_row_norms,
    saturation_curves,
    scaled_histograms,
    unit_variance_projections,
    variance_experiment,
)
from core.findings.scaling import (
    RowSummary,
    gradient_finding,
    saturation_trend,
    score_finding,
    summarize_rows,
    variance_finding,
)
from ui import charts
from ui.blocks import link
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.notes import untrained
from ui.params import Choice, Flag, Int, number, options_of, select, slider, toggle
from ui.questions import Question, Truth, choices
from ui.sentence import Sentence, sentence_controls
from ui.steps import Controls, Got, View

D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the d_k axis of every experiment
TRIALS = 200  # random softmax rows averaged per point of the saturation curves
UNIT_QK = Flag("unit_qk", False)  # a toggle: select() would put translated labels in the URL
# Samples per d_k: 2000 estimate a variance within ~3 % (6 % at d_k = 1) and fill the
# histogram's bins; 20 000 (within 1-2 %) cost ~20 ms of CPU (core.experiments.prefix_scores).
SAMPLES = Int("samples", 2_000, 1_000, 20_000)
EXP_SEED = Int("exp_seed", 0, 0, 2**32 - 1)
N_KEYS = Int("n_keys", 8, 2, 64)
HIST_DK = Choice("hist_dk", "64", options_of(D_KS))
BINS = 40  # per series: ~50 samples a bin on average at the default sample count
RAW_COLOR, SCALED_COLOR = charts.QUERY_COLOR, charts.KEY_COLOR
SHARED_LEGEND = {"legend": {"color": "shared"}}  # two charts side by side, one colour legend
SHARE = 0.6  # a slide: the chart column's share of the width in steps 2-4 (Step.share)
SCORES_HEIGHT = 400  # presenter px for step 1's four heatmaps (the notes go below them)


@dataclass(frozen=True)
class Settings:
    """The experiment controls shared by the variance, saturation and gradient steps."""

    samples: int
    seed: int
    n_keys: int


@st.cache_data(max_entries=16, show_spinner=False)
def variance_data(samples: int, seed: int) -> VarianceExperiment:
    """The variance experiment over :data:`D_KS` (~1 ms of CPU per 1000 samples)."""
    return variance_experiment(list(D_KS), samples, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def saturation_data(n_keys: int, seed: int) -> tuple[SaturationCurve, SaturationCurve]:
    """Saturation curves over :data:`D_KS`, without and with scaling."""
    return saturation_curves(list(D_KS), n_keys, TRIALS, seed)


@st.cache_data(max_entries=64, show_spinner=False)
def histogram_data(samples: int, seed: int, index: int) -> tuple[np.ndarray, ...]:
    """Counts of q·k and of q·k/√d_k at ``D_KS[index]``, each on its own bins."""
    return scaled_histograms(variance_data(samples, seed).samples[index], D_KS[index], BINS)


def projections(s: Sentence, unit: bool) -> tuple[np.ndarray, np.ndarray]:
    """W_Q, W_K for the sentence: the lesson's Xavier ones or their unit-variance rescale."""
    if unit:
        return unit_variance_projections(s.d_model, s.d_k, s.seed)
    w_q, w_k, _ = s.projections()
    return w_q, w_k


@dataclass(frozen=True)
class Scoring:
    """Step 1's settings: the sentence and whether q and k have unit-variance entries."""

    sentence: Sentence
    unit: bool


def scores_controls(ctx: PageContext, got: Got) -> Scoring:
    """Step 1: the sentence and its sizes, then whether W_Q and W_K are rescaled so that q
    and k have unit-variance entries."""
    t = ctx.t
    sentence = sentence_controls(ctx)
    unit = toggle(ctx, UNIT_QK, t("scaling.unit_qk"), help=t("scaling.unit_qk_help"))
    return Scoring(sentence, bool(unit))


def experiment_controls(ctx: PageContext, got: Got) -> Settings:
    """Sample count, seed and row length of the random experiments (a slide: one row)."""
    t = ctx.t
    c1, c2, c3 = st.columns(3) if ctx.presenter else (st.container(),) * 3
    with c1:
        samples = slider(
            ctx,
            SAMPLES,
            t("scaling.samples"),
            step=1000,
            help=t("scaling.samples_help", d_max=D_KS[-1]),
        )
    with c2:
        seed = number(ctx, EXP_SEED, t("scaling.exp_seed"))
    with c3:
        n_keys = slider(ctx, N_KEYS, t("scaling.n_keys"))
    return Settings(int(samples), int(seed), int(n_keys))


def hist_control(ctx: PageContext, got: Got) -> int:
    """Step 2: index into :data:`D_KS` of the d_k whose samples the histogram shows."""
    return D_KS.index(int(select(ctx, HIST_DK, ctx.t("scaling.hist_dk"))))


# a slide: step 1's settings folded under its text; the experiments' (steps 2-4) in a closed
# box; step 2's d_k choice above the histogram (students: in the sidebar with the settings)
SCORING = Controls(scores_controls, box="scaling.sentence_box", fold="scaling.sentence_box")
EXPERIMENTS = Controls(experiment_controls, box="scaling.settings", slide="settings")
HIST = Controls(hist_control, slide="above")


def metrics(ctx: PageContext, items: list[tuple[str, str]]) -> None:
    """A row of ``st.metric`` readouts; none in presenter mode, where the "what to notice"
    box already names the same numbers."""
    if ctx.presenter:
        return
    for col, (label, value) in zip(st.columns(len(items)), items, strict=True):
        col.metric(label, value)


def score_chart(
    t: Translator,
    matrices: tuple[np.ndarray, ...],
    tokens: tuple[str, ...],
    d_k: int,
    presenter: bool = False,
) -> dict:
    """Raw and scaled scores (top, one shared diverging scale) above their softmax (bottom;
    on a projector :func:`charts.fit` puts the four panels in one row, numbers readable from
    the back); ``matrices`` = (raw, scaled, raw weights, scaled weights)."""
    raw, scaled, raw_w, scaled_w = matrices
    scores = {t("scaling.panel_raw"): raw, t("scaling.panel_scaled", d_k=d_k): scaled}
    weights = {t("scaling.panel_raw_w"): raw_w, t("scaling.panel_scaled_w", d_k=d_k): scaled_w}
    cell = charts.fit_cell(len(tokens), len(tokens), 420, 420)  # the heatmaps' own default
    # the size of a signed score, as the live scores heatmap sizes its numbers, for all four
    font = charts.cell_font(["−0.00"], cell, charts.SLIDE_FONT if presenter else 15)
    common = {"columns": 2, "cell": cell, "max_font": font}
    return charts.concat(
        [
            charts.heatmap(
                scores, tokens, tokens, "scores", name="scores", live_domain=True, **common
            ),
            charts.heatmap(weights, tokens, tokens, "weights", name="weights", **common),
        ],
        direction="vconcat",
        spacing=24,
    )


def score_arrays(s: Sentence, w_q: np.ndarray, w_k: np.ndarray, c: ScoreComparison) -> dict:
    """Every matrix of the score view, for the NPZ export."""
    return {
        "x": s.x,
        "w_q": w_q,
        "w_k": w_k,
        "q": c.q,
        "k": c.k,
        "scores": c.raw,
        "scaled_scores": c.scaled,
        "weights_unscaled": c.raw_weights,
        "weights_scaled": c.scaled_weights,
    }


def weights_text(t: Translator, c: ScoreComparison, tokens: list[str], d_k: int) -> str:
    """Text heatmaps of both weight matrices, one under the other."""
    return "\n\n".join(
        f"{title}\n{text_heatmap(w, tokens)}"
        for title, w in (
            (t("scaling.panel_raw_w"), c.raw_weights),
            (t("scaling.panel_scaled_w", d_k=d_k), c.scaled_weights),
        )
    )


def variance_frame(t: Translator, exp: VarianceExperiment) -> pd.DataFrame:
    """Measured and theoretical variance per d_k, without and with scaling (one line each)."""
    m = len(exp.d_ks)
    raw, scaled = t("scaling.series_raw"), t("scaling.series_scaled")
    return pd.DataFrame(
        {
            "d_k": np.tile(exp.d_ks, 4),
            "variance": np.concatenate(
                [exp.raw_var, exp.theory_raw, exp.scaled_var, exp.theory_scaled]
            ),
            "series": [raw] * (2 * m) + [scaled] * (2 * m),
            "theory": np.tile(np.repeat([False, True], m), 2),
        }
    )


def variance_layout(t: Translator, presenter: bool) -> dict:
    """The variance chart without its data: histogram of the samples (dataset "hist", left;
    :func:`variance_chart` titles it) and variance vs d_k on log axes (dataset "variance"),
    theory dashed, the histogram's d_k marked (dataset "now", right). The data change with
    every setting, this layout does not: the browser only swaps the data."""
    w, h = _size(presenter, 520)
    series = [t("scaling.series_raw"), t("scaling.series_scaled")]
    look = {"colors": [RAW_COLOR, SCALED_COLOR], "width": w, "height": h}
    titles = (t("scaling.hist_title", d_k="d_k"), t("scaling.hist_x"), t("scaling.hist_y"))
    hist = charts.histogram("hist", series, *titles, **look)
    log = {"log_x": True, "log_y": True, "x_title": "d_k", "y_title": t("scaling.var_y")}
    curves = charts.lines(
        "variance", "d_k", "variance", "series", dashed="theory", color_domain=series, **log, **look
    )
    now = {
        "data": {"name": "now"},
        "mark": {"type": "rule", "color": "#888"},
        "encoding": {"x": {"field": "d_k", "type": "quantitative"}},
    }
    variance = charts.layer([curves, now], title=t("scaling.var_title"))
    return charts.concat([hist, variance], spacing=36, resolve=SHARED_LEGEND)


def variance_chart(t: Translator, presenter: bool, samples: int, seed: int, index: int) -> dict:
    """:func:`variance_layout` with the samples at ``D_KS[index]`` (each series on its own
    bins) and the variance at every d_k."""
    raw, scaled = t("scaling.series_raw"), t("scaling.series_scaled")
    raw_edges, raw_counts, scaled_edges, scaled_counts = histogram_data(samples, seed, index)
    bars = pd.concat(
        [
            charts.histogram_rows(raw_edges, {raw: raw_counts}),
            charts.histogram_rows(scaled_edges, {scaled: scaled_counts}),
        ]
    )
    data = {
        "hist": bars.to_dict("records"),
        "variance": variance_frame(t, variance_data(samples, seed)).to_dict("records"),
        "now": [{"d_k": D_KS[index]}],
    }
    spec = variance_layout(t, presenter)
    spec["hconcat"][0]["title"] = t("scaling.hist_title", d_k=D_KS[index])  # the histogram
    return {**spec, "datasets": data}


def curve_frame(t: Translator, name: str, unscaled: np.ndarray, scaled: np.ndarray) -> pd.DataFrame:
    """Long table of one statistic per d_k, without and with scaling."""
    return pd.DataFrame(
        {
            "d_k": np.tile(np.asarray(D_KS), 2),
            name: np.concatenate([unscaled, scaled]),
            "series": [t("scaling.series_raw_row")] * len(D_KS)
            + [t("scaling.series_scaled_row")] * len(D_KS),
        }
    )


def _size(presenter: bool, width: int) -> tuple[int, int]:
    """Chart width and height: larger in presenter mode, where the page is wider."""
    return (int(width * 1.4), 380) if presenter else (width, 280)


def _row_lines(t: Translator, presenter: bool, y: str, title: str, width: int = 560) -> dict:
    """One statistic of the saturation curves vs d_k (dataset "curves")."""
    w, h = _size(presenter, width)
    series = [t("scaling.series_raw_row"), t("scaling.series_scaled_row")]
    look = {"color_domain": series, "colors": [RAW_COLOR, SCALED_COLOR], "width": w, "height": h}
    return charts.lines("curves", "d_k", y, "series", title, log_x=True, x_title="d_k", **look)


def saturation_frame(t: Translator, raw: SaturationCurve, scaled: SaturationCurve) -> pd.DataFrame:
    """Mean top weight and mean entropy of a softmax row per d_k (the CSV export)."""
    top = curve_frame(t, "max_weight", raw.max_weight, scaled.max_weight)
    return top.assign(entropy=np.concatenate([raw.entropy, scaled.entropy]))


def saturation_layout(t: Translator, presenter: bool) -> dict:
    """Mean top weight (left) and mean entropy (right) of a softmax row vs d_k, without
    their data (dataset "curves")."""
    return charts.concat(
        [
            _row_lines(t, presenter, "max_weight", t("scaling.max_title")),
            _row_lines(t, presenter, "entropy", t("scaling.entropy_title")),
        ],
        spacing=36,
        resolve=SHARED_LEGEND,
    )


def saturation_chart(t: Translator, presenter: bool, n_keys: int, seed: int) -> dict:
    """:func:`saturation_layout` with the curves for ``n_keys`` keys per row."""
    data = saturation_frame(t, *saturation_data(n_keys, seed))
    return {
        **saturation_layout(t, presenter),
        "datasets": {"curves": data.to_dict("records")},
    }


def gradient_frame(t: Translator, raw: SaturationCurve, scaled: SaturationCurve) -> pd.DataFrame:
    """Mean softmax Jacobian norm (gradient size) per d_k (the CSV export)."""
    return curve_frame(t, "jacobian_norm", raw.jacobian_norm, scaled.jacobian_norm)


def gradient_layout(t: Translator, presenter: bool) -> dict:
    """Mean softmax Jacobian norm (gradient size) vs d_k, without its data."""
    return _row_lines(t, presenter, "jacobian_norm", t("scaling.grad_title"), width=720)


def gradient_chart(t: Translator, presenter: bool, n_keys: int, seed: int) -> dict:
    """:func:`gradient_layout` with the curves for ``n_keys`` keys per row."""
    data = gradient_frame(t, *saturation_data(n_keys, seed))
    return {
        **gradient_layout(t, presenter),
        "datasets": {"curves": data.to_dict("records")},
    }


def curve_arrays(raw: SaturationCurve, scaled: SaturationCurve, *fields: str) -> dict:
    """Some statistics of both saturation curves, for the NPZ export."""
    arrays = {"d_k": raw.d_ks}
    for field in fields:
        arrays[f"{field}_unscaled"] = getattr(raw, field)
        arrays[f"{field}_scaled"] = getattr(scaled, field)
    return arrays


def variance_arrays(exp: VarianceExperiment, index: int) -> dict:
    """The variance curves and the histogram's samples, for the NPZ export."""
    return {
        "d_k": exp.d_ks,
        "var_raw": exp.raw_var,
        "var_scaled": exp.scaled_var,
        f"samples_d_k_{D_KS[index]}": exp.samples[index],
    }


def score_notices(
    t: Translator,
    d_k: int,
    c: ScoreComparison,
    unit: bool,
    raw: RowSummary,
    scaled: RowSummary,
    short: bool = False,
) -> list[str]:
    """The score step's "what to notice", phrased for the numbers on screen
    (:func:`core.findings.scaling.score_finding`; ``short``, for presenter mode: without the
    remark on the initialisation switch, folded there, nor the one that no row is one-hot
    yet)."""
    found = score_finding(c, raw, scaled)
    std = {"d_k": d_k, "raw": charts.fmt(raw.score_std), "scaled": charts.fmt(scaled.score_std)}
    peak = {
        "raw": charts.fmt(raw.max_weight, 3),
        "raw_h": charts.fmt(raw.entropy),
        "scaled": charts.fmt(scaled.max_weight, 3),
        "scaled_h": charts.fmt(scaled.entropy),
    }
    if d_k == 1:
        items = [t("scaling.n_spread_one", raw=std["raw"]), t("scaling.n_peak_one", **peak)]
    else:
        items = [
            t("scaling.n_spread", **std),
            t(f"scaling.n_peak{'' if found.surer else '_mild'}", **peak),
        ]
    if found.peaked_raw or found.peaked_scaled:
        counts = {"raw": found.peaked_raw, "n": found.rows, "scaled": found.peaked_scaled}
        items.append(t("scaling.n_onehot", **counts))
    elif not short:  # a slide names only what there is to see
        items.append(t("scaling.n_onehot_none"))
    if short:
        return items
    var = charts.fmt(found.q_variance)
    items.append(t(f"scaling.n_init_{'unit' if unit else 'xavier'}", var=var))
    return items


def variance_notices(t: Translator, exp: VarianceExperiment, index: int, samples: int) -> list[str]:
    """The variance step's "what to notice": "close to the theory" only when it is
    (:func:`core.findings.scaling.variance_finding`)."""
    found = variance_finding(exp, index)
    rough, rough_s = ("" if close else "_rough" for close in (found.close, found.close_scaled))
    return [
        t(f"scaling.n_var{rough}", d_k=D_KS[index], n=samples, var=charts.fmt(found.raw)),
        t(f"scaling.n_var_scaled{rough_s}", var=charts.fmt(found.scaled, 3)),
        t("scaling.n_var_max", d_k=D_KS[-1], var=charts.fmt(found.widest, 1)),
    ]


def gradient_notices(
    t: Translator, raw: SaturationCurve, scaled: SaturationCurve, n_keys: int, short: bool = False
) -> list[str]:
    """The gradient step's "what to notice", with the even-row value for comparison
    (:func:`core.findings.scaling.gradient_finding`; ``short``, for presenter mode: only the
    comparisons, without the d_k = 1 remark and the closing summary)."""
    found = gradient_finding(raw, scaled, n_keys)
    nums = {"d_k": D_KS[-1], "raw": charts.fmt(found.raw, 4), "scaled": charts.fmt(found.scaled, 4)}
    items = [t(f"scaling.n_grad{'' if found.weak else '_mild'}", **nums)]
    if not short:
        items.append(t("scaling.n_grad_one", value=charts.fmt(found.first, 3)))
    if found.above_even:
        even = charts.fmt(found.even, 3)
        items.append(t("scaling.n_grad_even", scaled=nums["scaled"], uniform=even))
    return items if short else [*items, t("scaling.n_grad_story")]


# The steps -------------------------------------------------------------------------------


def explained(v: View) -> DeltaGenerator:
    """Where an experiment step's explanation goes: beside the chart on a slide (its notes),
    below it for students (its text)."""
    return v.notes if v.presenter else v.lead


def scores(v: View) -> None:
    """Step 1: the sentence's scores and weights, unscaled and scaled, their readouts, "what
    to notice" and exports (a slide: the four panels in one row, the whole width)."""
    t, ctx, s, unit = v.t, v.ctx, v[SCORING].sentence, v[SCORING].unit
    v.text("scaling.scores_text")
    w_q, w_k = projections(s, unit)
    c = compare_scaling(s.x, w_q, w_k)
    raw, scaled = summarize_rows(c.raw, c.raw_weights), summarize_rows(c.scaled, c.scaled_weights)
    matrices = (c.raw, c.scaled, c.raw_weights, c.scaled_weights)
    shown = v.chart(score_chart, t, matrices, tuple(s.tokens), s.d_k, v.presenter)
    with v.notes:
        metrics(
            ctx,
            [
                (t("scaling.m_std_raw"), charts.fmt(raw.score_std)),
                (t("scaling.m_std_scaled", d_k=s.d_k), charts.fmt(scaled.score_std)),
                (t("scaling.m_max_raw"), charts.fmt(raw.max_weight, 3)),
                (t("scaling.m_max_scaled"), charts.fmt(scaled.max_weight, 3)),
            ],
        )
        # a slide: the notice, exports and link beside a narrow column for the note
        main, side = st.columns([0.7, 0.3]) if v.presenter else (st.container(),) * 2
    with main:
        v.notice(score_notices(t, s.d_k, c, unit, raw, scaled, v.presenter), place=main)
    with side:
        untrained(ctx)
    with main, st.container(horizontal=v.presenter, vertical_alignment="center"):
        arrays = score_arrays(s, w_q, w_k, c)
        export_panel(
            ctx, "scaling_scores", shown, arrays=arrays, text=weights_text(t, c, s.tokens, s.d_k)
        )
        link(ctx, "qkv", t("scaling.link_qkv"))


def variance(v: View) -> None:
    """Step 2: the histogram of q·k at the chosen d_k (:func:`hist_control`, a slide: above
    the chart) and the variance at every d_k."""
    t, ctx, cfg, i = v.t, v.ctx, v[EXPERIMENTS], v[HIST]
    with explained(v):
        st.markdown(t("scaling.variance_text"))
        st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")
    with st.spinner(t("scaling.computing")):
        exp = variance_data(cfg.samples, cfg.seed)
        shown = v.chart(variance_chart, t, v.presenter, cfg.samples, cfg.seed, i)
    d_k = D_KS[i]
    (v.below if v.presenter else v.notes).caption(t("scaling.variance_caption", n=cfg.samples))
    with v.notes:
        metrics(
            ctx,
            [
                (t("scaling.m_var_raw", d_k=d_k), charts.fmt(exp.raw_var[i])),
                (t("scaling.m_var_theory"), charts.fmt(exp.theory_raw[i], 0)),
                (t("scaling.m_var_scaled", d_k=d_k), charts.fmt(exp.scaled_var[i], 3)),
            ],
        )
    v.notice(variance_notices(t, exp, i, cfg.samples))
    v.export("scaling_variance", shown, data=variance_frame(t, exp), arrays=variance_arrays(exp, i))


def saturation(v: View) -> None:
    """Step 3: mean top weight and entropy of a softmax row vs d_k."""
    t, ctx, cfg, d_max = v.t, v.ctx, v[EXPERIMENTS], D_KS[-1]
    explained(v).markdown(t("scaling.saturation_text", n=cfg.n_keys, trials=TRIALS))
    with st.spinner(t("scaling.computing")):
        raw, scaled = saturation_data(cfg.n_keys, cfg.seed)
        shown = v.chart(saturation_chart, t, v.presenter, cfg.n_keys, cfg.seed)
    top, top_s = charts.fmt(raw.max_weight[-1], 3), charts.fmt(scaled.max_weight[-1], 3)
    ent, ent_s = charts.fmt(raw.entropy[-1], 3), charts.fmt(scaled.entropy[-1], 3)
    first = charts.fmt(raw.entropy[0], 3)
    with v.notes:
        metrics(
            ctx,
            [
                (t("scaling.m_top_raw", d_k=d_max), top),
                (t("scaling.m_top_scaled", d_k=d_max), top_s),
                (t("scaling.m_ent_raw", d_k=d_max), ent),
                (t("scaling.m_ent_scaled", d_k=d_max), ent_s),
            ],
        )
    v.notice(
        [
            t("scaling.n_top", d_k=d_max, raw=top, scaled=top_s),
            t("scaling.n_entropy", first=first, d_k=d_max, raw=ent, scaled=ent_s),
        ]
    )
    v.export("scaling_saturation", shown, arrays=curve_arrays(raw, scaled, "max_weight", "entropy"))
    v.links(("softmax", t("scaling.link_softmax")))


def gradient(v: View) -> None:
    """Step 4: the size of the softmax Jacobian (the gradient that reaches W_Q, W_K) vs d_k."""
    t, ctx, cfg, d_max = v.t, v.ctx, v[EXPERIMENTS], D_KS[-1]
    uniform, half = (charts.fmt(x, 3) for x in even_row_norms(cfg.n_keys))
    jacobian = r"\frac{\partial p}{\partial s}=\operatorname{diag}(p)-p\,p^\top"
    with explained(v):
        st.markdown(t("scaling.gradient_text", n=cfg.n_keys, uniform=uniform, half=half))
        if not v.presenter:
            st.latex(jacobian)
    if v.presenter:  # the formula above the chart
        v.figure.latex(jacobian)
    with st.spinner(t("scaling.computing")):
        raw, scaled = saturation_data(cfg.n_keys, cfg.seed)
        shown = v.chart(gradient_chart, t, v.presenter, cfg.n_keys, cfg.seed)
    with v.notes:
        metrics(
            ctx,
            [
                (t("scaling.m_grad_raw", d_k=d_max), charts.fmt(raw.jacobian_norm[-1], 4)),
                (t("scaling.m_grad_scaled", d_k=d_max), charts.fmt(scaled.jacobian_norm[-1], 4)),
            ],
        )
    v.notice(gradient_notices(t, raw, scaled, cfg.n_keys, v.presenter))
    v.export("scaling_gradient", shown, arrays=curve_arrays(raw, scaled, "jacobian_norm"))


# Ask the class -----------------------------------------------------------------------------
# Without ÷√d_k, what does a softmax row of the page's N_KEYS random scores do as d_k grows
# from D_KS[0] to D_KS[-1]? Asked on the experiments' default seed and row length (the
# saturation curves of step 3), whatever the sliders show.
SATURATION_OPTIONS = ("same", "flatter", "peakier")


def _ask_saturation_truth() -> Truth:
    raw, _ = saturation_data(N_KEYS.default, EXP_SEED.default)
    return Truth(right=frozenset({saturation_trend(raw)}))


ASK_SATURATION = Question(
    "scaling.saturation",
    "choice",
    _ask_saturation_truth,
    choices("scaling.ask.saturation", SATURATION_OPTIONS),
)
QUESTIONS = (ASK_SATURATION,)
