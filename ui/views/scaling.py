"""Presentation helpers for the scaling page: cached experiments, its charts and readouts."""

from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import saturation_curve, text_heatmap
from core.experiments import (
    RowSummary,
    SaturationCurve,
    ScoreComparison,
    VarianceExperiment,
    entry_variance,
    scaled_histograms,
    softmax_jacobian_norm,
    unit_variance_projections,
    variance_experiment,
)
from ui import charts
from ui.i18n import Translator
from ui.params import Choice, Flag, Int, number, options_of, select, slider, toggle
from ui.sentence import Sentence, settings_box
from ui.shell import PageContext

D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the d_k axis of every experiment
TRIALS = 300  # random softmax rows averaged per point of the saturation curves
UNIT_QK = Flag("unit_qk", False)  # a toggle: select() would put translated labels in the URL
SAMPLES = Int("samples", 10_000, 1_000, 20_000)  # 50 000 took 2.8 s a rerun: capped
EXP_SEED = Int("exp_seed", 0, 0, 2**32 - 1)
N_KEYS = Int("n_keys", 8, 2, 64)
HIST_DK = Choice("hist_dk", "64", options_of(D_KS))
RAW_COLOR, SCALED_COLOR = charts.QUERY_COLOR, charts.KEY_COLOR


@dataclass(frozen=True)
class Settings:
    """The experiment controls shared by the variance, saturation and gradient steps."""

    samples: int
    seed: int
    n_keys: int


@st.cache_data(max_entries=16, show_spinner=False)
def variance_data(samples: int, seed: int) -> VarianceExperiment:
    """The variance experiment over :data:`D_KS` (about 0.1 s per 1000 samples)."""
    return variance_experiment(list(D_KS), samples, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def saturation_data(n_keys: int, seed: int) -> tuple[SaturationCurve, SaturationCurve]:
    """Saturation curves over :data:`D_KS`, without and with scaling."""
    return tuple(saturation_curve(list(D_KS), s, n_keys, TRIALS, seed) for s in (False, True))


@st.cache_data(max_entries=64, show_spinner=False)
def histogram_data(samples: int, seed: int, index: int) -> tuple[np.ndarray, ...]:
    """Counts of q·k and of q·k/√d_k at ``D_KS[index]``, each on its own bins."""
    return scaled_histograms(variance_data(samples, seed).samples[index], D_KS[index])


def projections(s: Sentence, unit: bool) -> tuple[np.ndarray, np.ndarray]:
    """W_Q, W_K for the sentence: the lesson's Xavier ones or their unit-variance rescale."""
    if unit:
        return unit_variance_projections(s.d_model, s.d_k, s.seed)
    w_q, w_k, _ = s.projections()
    return w_q, w_k


def unit_control(ctx: PageContext) -> bool:
    """Whether W_Q and W_K are rescaled so that q and k have unit-variance entries."""
    return bool(toggle(ctx, UNIT_QK, ctx.t("scaling.unit_qk"), help=ctx.t("scaling.unit_qk_help")))


def experiment_controls(ctx: PageContext) -> Settings:
    """Sample count, seed and row length of the random experiments (one bordered row)."""
    t = ctx.t
    with settings_box(ctx, t("scaling.settings")) if ctx.presenter else st.container(border=True):
        if not ctx.presenter:
            st.markdown(f"**{t('scaling.settings')}**")
        c1, c2, c3 = st.columns(3)
        with c1:
            samples = slider(ctx, SAMPLES, t("scaling.samples"), step=1000)
        with c2:
            seed = number(ctx, EXP_SEED, t("scaling.exp_seed"))
        with c3:
            n_keys = slider(ctx, N_KEYS, t("scaling.n_keys"))
    return Settings(int(samples), int(seed), int(n_keys))


def hist_control(ctx: PageContext) -> int:
    """Index into :data:`D_KS` of the d_k whose samples the histogram shows."""
    return D_KS.index(int(select(ctx, HIST_DK, ctx.t("scaling.hist_dk"))))


Split = tuple[DeltaGenerator, DeltaGenerator] | None


def split(ctx: PageContext) -> Split:
    """Presenter mode: two equal columns (chart | text) so that a step fits one screen;
    otherwise None (everything in one column, in the order it is written)."""
    return tuple(st.columns(2, gap="large")) if ctx.presenter else None


def place(cols: Split, index: int) -> DeltaGenerator:
    """Column ``index`` of ``cols`` (0 chart, 1 text), or a container right here."""
    return cols[index] if cols else st.container()


def space(ctx: PageContext, cols: Split, height: int = 600) -> charts.Room:
    """The chart's room: half the presenter width in split mode, else the page width."""
    return charts.room(ctx, share=0.5, height=height) if cols else charts.room(ctx)


def metrics(ctx: PageContext, items: list[tuple[str, str]]) -> None:
    """A row of ``st.metric`` readouts; none in presenter mode, where the "what to notice"
    box already names the same numbers."""
    if ctx.presenter:
        return
    for col, (label, value) in zip(st.columns(len(items)), items, strict=True):
        col.metric(label, value)


def score_chart(
    t: Translator, matrices: tuple[np.ndarray, ...], tokens: tuple[str, ...], d_k: int
) -> dict:
    """Raw and scaled scores (top, one shared diverging scale) above their softmax (bottom);
    ``matrices`` = (raw, scaled, raw weights, scaled weights)."""
    raw, scaled, raw_w, scaled_w = matrices
    scores = {t("scaling.panel_raw"): raw, t("scaling.panel_scaled", d_k=d_k): scaled}
    weights = {t("scaling.panel_raw_w"): raw_w, t("scaling.panel_scaled_w", d_k=d_k): scaled_w}
    return charts.concat(
        [
            charts.heatmap(scores, tokens, tokens, "scores", columns=2, name="scores"),
            charts.heatmap(weights, tokens, tokens, "weights", columns=2, name="weights"),
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


def variance_chart(
    t: Translator, presenter: bool, samples: int, seed: int, index: int
) -> alt.HConcatChart:
    """Histogram of the samples at ``D_KS[index]`` (left) and variance vs d_k on log axes,
    theory dashed, that d_k marked (right)."""
    w, h = _size(presenter, 520)
    series = [t("scaling.series_raw"), t("scaling.series_scaled")]
    raw_edges, raw_counts, scaled_edges, scaled_counts = histogram_data(samples, seed, index)
    none = np.zeros_like(raw_counts)  # each layer names both series: one shared colour scale
    title = t("scaling.hist_title", d_k=D_KS[index])
    hist = alt.layer(*(
        charts.histogram(
            edges, dict(zip(series, pair, strict=True)), title, t("scaling.hist_x"),
            t("scaling.hist_y"), colors=[RAW_COLOR, SCALED_COLOR], width=w, height=h,
        )
        for edges, pair in ((raw_edges, (raw_counts, none)), (scaled_edges, (none, scaled_counts)))
    )).properties(title=title)  # fmt: skip
    curves = charts.lines(
        variance_frame(t, variance_data(samples, seed)), "d_k", "variance", "series",
        log_x=True, log_y=True, x_title="d_k", y_title=t("scaling.var_y"), dashed="theory",
        width=w, height=h, color_domain=series, colors=[RAW_COLOR, SCALED_COLOR],
    )  # fmt: skip
    now = alt.Chart(pd.DataFrame({"d_k": [D_KS[index]]})).mark_rule(color="#888").encode(x="d_k:Q")
    variance = alt.layer(curves, now).properties(title=t("scaling.var_title"))
    return alt.hconcat(hist, variance, spacing=36).resolve_legend(color="shared")


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


def _row_lines(
    t: Translator, presenter: bool, data: pd.DataFrame, y: str, title: str, width: int = 560
) -> alt.Chart:
    w, h = _size(presenter, width)
    series = [t("scaling.series_raw_row"), t("scaling.series_scaled_row")]
    return charts.lines(
        data, "d_k", y, "series", title=title, log_x=True, x_title="d_k", width=w, height=h,
        color_domain=series, colors=[RAW_COLOR, SCALED_COLOR],
    )  # fmt: skip


def saturation_frame(t: Translator, raw: SaturationCurve, scaled: SaturationCurve) -> pd.DataFrame:
    """Mean top weight and mean entropy of a softmax row per d_k (the CSV export)."""
    top = curve_frame(t, "max_weight", raw.max_weight, scaled.max_weight)
    return top.assign(entropy=np.concatenate([raw.entropy, scaled.entropy]))


def saturation_chart(t: Translator, presenter: bool, n_keys: int, seed: int) -> alt.HConcatChart:
    """Mean top weight (left) and mean entropy (right) of a softmax row vs d_k."""
    data = saturation_frame(t, *saturation_data(n_keys, seed))
    return alt.hconcat(
        _row_lines(t, presenter, data, "max_weight", t("scaling.max_title")),
        _row_lines(t, presenter, data, "entropy", t("scaling.entropy_title")),
        spacing=36,
    ).resolve_legend(color="shared")


def gradient_frame(t: Translator, raw: SaturationCurve, scaled: SaturationCurve) -> pd.DataFrame:
    """Mean softmax Jacobian norm (gradient size) per d_k (the CSV export)."""
    return curve_frame(t, "jacobian_norm", raw.jacobian_norm, scaled.jacobian_norm)


def gradient_chart(t: Translator, presenter: bool, n_keys: int, seed: int) -> alt.Chart:
    """Mean softmax Jacobian norm (gradient size) vs d_k."""
    data = gradient_frame(t, *saturation_data(n_keys, seed))
    return _row_lines(t, presenter, data, "jacobian_norm", t("scaling.grad_title"), width=720)


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


PEAKED = 0.9  # a row that gives more than this to one key counts as "almost one-hot"


def score_notices(
    t: Translator,
    d_k: int,
    c: ScoreComparison,
    unit: bool,
    raw: RowSummary,
    scaled: RowSummary,
    short: bool = False,
) -> list[str]:
    """The score step's "what to notice", phrased for the numbers on screen (``short``, for
    presenter mode: without the remark on the initialisation switch, folded there)."""
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
        sure = raw.max_weight - scaled.max_weight >= 0.1
        items = [
            t("scaling.n_spread", **std),
            t(f"scaling.n_peak{'' if sure else '_mild'}", **peak),
        ]
    n_raw = int((c.raw_weights.max(axis=-1) > PEAKED).sum())
    n_scaled = int((c.scaled_weights.max(axis=-1) > PEAKED).sum())
    rows = len(c.raw_weights)
    items.append(
        t("scaling.n_onehot", raw=n_raw, n=rows, scaled=n_scaled)
        if n_raw or n_scaled
        else t("scaling.n_onehot_none")
    )
    if short:
        return items
    var = charts.fmt(entry_variance(c.q))
    items.append(t(f"scaling.n_init_{'unit' if unit else 'xavier'}", var=var))
    return items


def variance_notices(t: Translator, exp: VarianceExperiment, index: int, samples: int) -> list[str]:
    """The variance step's "what to notice": "close to the theory" only when it is (10 %)."""
    d_k, var, var_s = D_KS[index], exp.raw_var[index], exp.scaled_var[index]
    close = abs(var / d_k - 1) <= 0.1
    close_s = abs(var_s - 1) <= 0.1
    return [
        t(f"scaling.n_var{'' if close else '_rough'}", d_k=d_k, n=samples, var=charts.fmt(var)),
        t(f"scaling.n_var_scaled{'' if close_s else '_rough'}", var=charts.fmt(var_s, 3)),
        t("scaling.n_var_max", d_k=D_KS[-1], var=charts.fmt(exp.raw_var[-1], 1)),
    ]


def even_row_norms(n_keys: int) -> tuple[float, float]:
    """Softmax Jacobian norm of an even row over ``n_keys`` keys and of a 50/50 row."""
    even = softmax_jacobian_norm(np.full(n_keys, 1.0 / n_keys))
    half = softmax_jacobian_norm(np.array([0.5, 0.5]))
    return float(even), float(half)


def gradient_notices(
    t: Translator, raw: SaturationCurve, scaled: SaturationCurve, n_keys: int, short: bool = False
) -> list[str]:
    """The gradient step's "what to notice", with the even-row value for comparison
    (``short``, for presenter mode: only the comparisons, without the d_k = 1 remark and the
    closing summary)."""
    g_raw, g_scaled = raw.jacobian_norm, scaled.jacobian_norm
    nums = {"d_k": D_KS[-1], "raw": charts.fmt(g_raw[-1], 4), "scaled": charts.fmt(g_scaled[-1], 4)}
    weak = g_raw[-1] < 0.25 * g_scaled[-1]
    items = [t(f"scaling.n_grad{'' if weak else '_mild'}", **nums)]
    if not short:
        items.append(t("scaling.n_grad_one", value=charts.fmt(g_raw[0], 3)))
    even, _ = even_row_norms(n_keys)
    if g_scaled[-1] > even:
        items.append(t("scaling.n_grad_even", scaled=nums["scaled"], uniform=charts.fmt(even, 3)))
    return items if short else [*items, t("scaling.n_grad_story")]
