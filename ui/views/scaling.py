"""Presentation helpers for the scaling page: cached experiments, its charts and readouts."""

import json
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from streamlit import dataframe_util

from core import embed_tokens, saturation_curve, text_heatmap
from core.experiments import (
    SaturationCurve,
    ScoreComparison,
    VarianceExperiment,
    shared_histogram,
    unit_variance_projections,
    variance_experiment,
)
from ui import charts
from ui import sentence as shared
from ui.i18n import Translator
from ui.params import Choice, Flag, Int, number, options_of, select, slider, text, toggle
from ui.sentence import Sentence, sentence_controls, tokens_or_default
from ui.shell import PageContext

D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the d_k axis of every experiment
TRIALS = 300  # random softmax rows averaged per point of the saturation curves
UNIT_QK = Flag("unit_qk", False)  # a toggle: select() would put translated labels in the URL
SAMPLES = Int("samples", 10_000, 1_000, 50_000)
EXP_SEED = Int("exp_seed", 0, 0, 2**32 - 1)
N_KEYS = Int("n_keys", 8, 2, 64)
HIST_DK = Choice("hist_dk", "64", options_of(D_KS))
RAW_COLOR, SCALED_COLOR = charts.QUERY_COLOR, charts.KEY_COLOR


# Workaround for a shared-helper bug: ui.sentence binds the embedding mode to the URL key
# "embed", which Streamlit reserves ("Cannot bind to reserved query parameter 'embed'").
# While that is so, a copy of sentence_controls with the key "embedding" (as the Q, K, V page
# uses) is drawn; once the shared key changes, the shared controls are used unchanged.
_BROKEN = shared.EMBED.key in {"embed", "embed_options"}
EMBED = Choice("embedding", shared.EMBED.default, shared.EMBED.options) if _BROKEN else shared.EMBED


def _load_lesson_example() -> None:
    for key, value in shared.LESSON_SETTINGS.items():
        st.session_state[EMBED.key if key == shared.EMBED.key else key] = value


def _sentence_copy(ctx: PageContext) -> Sentence:
    """``ui.sentence.sentence_controls`` with the embedding mode under :data:`EMBED`'s key."""
    t = ctx.t
    with st.container(border=True):
        raw = text(ctx, shared.TEXT, t("sentence.text"), help=t("sentence.text_help"))
        tokens = tokens_or_default(ctx, raw)
        cols = st.columns(6, vertical_alignment="bottom")
        with cols[0]:
            d_model = int(slider(ctx, shared.D_MODEL, "d_model"))
        with cols[1]:
            d_k = int(slider(ctx, shared.D_K, "d_k"))
        with cols[2]:
            d_v = int(slider(ctx, shared.D_V, "d_v"))
        with cols[3]:
            seed = int(number(ctx, shared.SEED, t("sentence.seed")))
        with cols[4]:
            mode = select(ctx, EMBED, t("sentence.embed"), lambda m: t(f"sentence.mode_{m}"))
            positions = toggle(ctx, shared.POSITIONS, t("sentence.positions"))
        with cols[5]:
            st.button(
                t("sentence.lesson"),
                on_click=_load_lesson_example,
                icon=":material/school:",
                help=t("sentence.lesson_help"),
            )
    x = embed_tokens(tokens, d_model, mode, seed, positions)
    return Sentence(tokens, x, d_model, d_k, d_v, seed, mode, positions)


def sentence(ctx: PageContext) -> Sentence:
    """The shared sentence and size controls (or their twin while the shared ones break)."""
    return _sentence_copy(ctx) if _BROKEN else sentence_controls(ctx)


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
    """Shared-bin counts of q·k and q·k/√d_k at ``D_KS[index]``."""
    return shared_histogram(variance_data(samples, seed).samples[index], D_KS[index])


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
    with st.container(border=True):
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


# Workaround for the shell's presenter CSS: its rule for markdown paragraphs also shrinks
# st.metric values to body size, so the big readouts would look like footnotes on a projector.
PRESENTER_METRIC_CSS = """<style>
.stApp [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 2.1rem; line-height: 1.2;
}
</style>"""


def metrics(ctx: PageContext, items: list[tuple[str, str]]) -> None:
    """A row of ``st.metric`` readouts (kept large in presenter mode)."""
    if ctx.presenter:
        st.html(PRESENTER_METRIC_CSS)
    for col, (label, value) in zip(st.columns(len(items)), items, strict=True):
        col.metric(label, value)


def _heat_facet(name: str, panels: dict[str, np.ndarray], labels: list[str], kind: str) -> dict:
    """Vega-Lite for ``charts.heatmap(panels, labels, labels, kind, columns=2)``, same look.

    Written as a plain dict because building it with Altair (and validating it) costs a few
    hundred ms per d_k step. It also fixes a shared-helper bug: ``charts.heatmap`` leaves the
    full data on the layers inside its facet, so every panel draws every panel's cells.
    """
    values = np.concatenate([np.ravel(m) for m in panels.values()])
    n = len(labels)
    size = int(np.clip(420 / n, 12, 56))
    valid = "isValid(datum.value)"
    if kind == "weights":
        scale, dark = {"domain": [0, 1], "scheme": "blues"}, "datum.value > 0.55"
    else:
        top = float(np.max(np.abs(values[np.isfinite(values)]), initial=0.0)) or 1.0
        scale = {"domain": [-top, top], "scheme": "redblue", "reverse": True}
        dark = f"abs(datum.value) > {0.6 * top}"
    color = {"field": "value", "type": "quantitative", "scale": scale, "title": None}
    tooltip = [
        {"field": f, "type": "nominal", "title": tt}
        for f, tt in (("row", "row"), ("col", "col"), ("text", "value"))
    ]
    layers = [
        {
            "mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5},
            "encoding": {
                "color": {"condition": {"test": valid, **color}, "value": "#d9d9d9"},
                "tooltip": tooltip,
            },
        }
    ]
    if n <= charts.MAX_ANNOTATED:
        text_color = {
            "condition": {"test": f"{valid} && {dark}", "value": "white"},
            "value": "#222",
        }
        layers.append(
            {
                "mark": {"type": "text", "fontSize": max(9, min(14, size // 3))},
                "encoding": {"text": {"field": "text", "type": "nominal"}, "color": text_color},
            }
        )
    axis_x = {"field": "col", "type": "nominal", "sort": labels, "title": None}
    return {
        "data": {"name": name},
        "facet": {"field": "panel", "type": "nominal", "sort": list(panels), "title": None},
        "columns": 2,
        "spec": {
            "width": size * n,
            "height": size * n,
            "encoding": {
                "x": {**axis_x, "axis": {"labelAngle": -45}},
                "y": {"field": "row", "type": "nominal", "sort": labels, "title": None},
            },
            "layer": layers,
        },
        "resolve": {"scale": {"color": "shared"}},
    }


def _score_spec(
    t: Translator, matrices: tuple[np.ndarray, ...], tokens: tuple[str, ...], d_k: int
) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Raw and scaled scores (top, shared diverging scale) above their softmax (bottom)."""
    raw, scaled, raw_w, scaled_w = matrices
    labels = charts.unique_labels(list(tokens))
    scores = {t("scaling.panel_raw"): raw, t("scaling.panel_scaled", d_k=d_k): scaled}
    weights = {t("scaling.panel_raw_w"): raw_w, t("scaling.panel_scaled_w", d_k=d_k): scaled_w}
    frames = {
        key: pd.concat(
            [charts.matrix_frame(m, labels, labels, name) for name, m in panels.items()],
            ignore_index=True,
        )
        for key, panels in (("scores", scores), ("weights", weights))
    }
    body = {
        "vconcat": [
            _heat_facet("scores", scores, labels, "scores"),
            _heat_facet("weights", weights, labels, "weights"),
        ],
        "spacing": 24,
        "resolve": {"scale": {"color": "independent"}},
    }
    return body, frames


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


def _variance_spec(
    t: Translator, presenter: bool, exp: VarianceExperiment, index: int, hist: tuple
) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Histogram of the samples at one d_k (left) and variance vs d_k on log axes (right),
    as Vega-Lite (the histogram's d_k changes often; an Altair rebuild costs ~100 ms)."""
    w, h = _size(presenter, 520)
    raw_name, scaled_name = t("scaling.series_raw"), t("scaling.series_scaled")
    edges, raw_counts, scaled_counts = hist
    bars = pd.DataFrame(
        {
            "start": np.tile(edges[:-1], 2),
            "end": np.tile(edges[1:], 2),
            "count": np.concatenate([raw_counts, scaled_counts]),
            "series": [raw_name] * len(raw_counts) + [scaled_name] * len(scaled_counts),
        }
    )
    m = len(D_KS)
    curve = pd.DataFrame(
        {
            "d_k": np.tile(exp.d_ks, 4),
            "variance": np.concatenate(
                [exp.raw_var, exp.theory_raw, exp.scaled_var, exp.theory_scaled]
            ),
            "series": [raw_name] * (2 * m) + [scaled_name] * (2 * m),
            "theory": np.tile(np.repeat([False, True], m), 2),
        }
    )
    color = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": [raw_name, scaled_name], "range": [RAW_COLOR, SCALED_COLOR]},
        "title": None,
        "legend": {"orient": "bottom"},
    }
    histogram = {
        "title": t("scaling.hist_title", d_k=D_KS[index]),
        "width": w,
        "height": h,
        "data": {"name": "histogram"},
        "mark": {"type": "bar", "opacity": 0.6, "binSpacing": 0},
        "encoding": {
            "x": {"field": "start", "type": "quantitative", "title": t("scaling.hist_x")},
            "x2": {"field": "end"},
            "y": {"field": "count", "type": "quantitative", "title": t("scaling.hist_y")},
            "y2": {"datum": 0},
            "color": color,
            "tooltip": [
                {"field": "series", "type": "nominal"},
                {"field": "start", "type": "quantitative", "format": ".2f"},
                {"field": "count", "type": "quantitative"},
            ],
        },
    }
    log = {"type": "log"}
    lines = {
        "data": {"name": "variance"},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "d_k", "type": "quantitative", "scale": log, "title": "d_k"},
            "y": {
                "field": "variance",
                "type": "quantitative",
                "scale": log,
                "title": t("scaling.var_y"),
            },
            "color": color,
            "strokeDash": {"field": "theory", "type": "nominal", "legend": None},
            "tooltip": [
                {"field": "series", "type": "nominal"},
                {"field": "d_k", "type": "quantitative"},
                {"field": "variance", "type": "quantitative", "format": ".4g"},
            ],
        },
    }
    rule = {
        "data": {"values": [{"d_k": D_KS[index]}]},
        "mark": {"type": "rule", "color": "#888"},
        "encoding": {"x": {"field": "d_k", "type": "quantitative"}},
    }
    variance = {"title": t("scaling.var_title"), "width": w, "height": h, "layer": [lines, rule]}
    body = {
        "hconcat": [histogram, variance],
        "spacing": 36,
        "resolve": {"legend": {"color": "shared"}},
    }
    return body, {"histogram": bars, "variance": curve}


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
    scale = alt.Scale(
        domain=[t("scaling.series_raw_row"), t("scaling.series_scaled_row")],
        range=[RAW_COLOR, SCALED_COLOR],
    )
    return (
        charts.lines(data, "d_k", y, "series", title=title, log_x=True, x_title="d_k", width=w)
        .properties(height=h)
        .encode(
            color=alt.Color("series:N", scale=scale, title=None, legend=alt.Legend(orient="bottom"))
        )
    )


def _saturation_chart(
    t: Translator, presenter: bool, raw: SaturationCurve, scaled: SaturationCurve
) -> tuple[alt.TopLevelMixin, pd.DataFrame]:
    """Mean top weight (left) and mean entropy (right) of a softmax row vs d_k."""
    top = curve_frame(t, "max_weight", raw.max_weight, scaled.max_weight)
    ent = curve_frame(t, "entropy", raw.entropy, scaled.entropy)
    chart = alt.hconcat(
        _row_lines(t, presenter, top, "max_weight", t("scaling.max_title")),
        _row_lines(t, presenter, ent, "entropy", t("scaling.entropy_title")),
        spacing=36,
    ).resolve_legend(color="shared")
    return chart, top.assign(entropy=ent["entropy"])


def _gradient_chart(
    t: Translator, presenter: bool, raw: SaturationCurve, scaled: SaturationCurve
) -> tuple[alt.TopLevelMixin, pd.DataFrame]:
    """Mean softmax Jacobian norm (gradient size) vs d_k."""
    data = curve_frame(t, "jacobian_norm", raw.jacobian_norm, scaled.jacobian_norm)
    title = t("scaling.grad_title")
    return _row_lines(t, presenter, data, "jacobian_norm", title, width=720), data


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


# --- Drawing ------------------------------------------------------------------------------
# Building Altair charts and validating them again in st.altair_chart costs far more than the
# page's budget (a heatmap through ui.charts is ~50 ms of CPU per panel on an idle machine).
# So every chart is frozen once per input into a Vega-Lite dict with the house theme, cached,
# and drawn with st.vega_lite_chart. The curves of the saturation and gradient steps come from
# ui.charts.lines (they only change with the experiment settings); the score heatmaps and the
# variance view, which follow the d_k controls, are written as Vega-Lite directly.


class Drawn:
    """A finished chart frozen as a Vega-Lite spec, with the table behind it.

    ``spec`` has its data inline (for ``to_json``: the PNG/SVG exports); ``display`` carries the
    same data as Arrow bytes, converted once, which Streamlit passes straight through.
    """

    def __init__(self, spec: dict, data: pd.DataFrame) -> None:
        self.spec = spec
        self.data = data
        self.display = {
            **spec,
            "datasets": {
                k: dataframe_util.convert_anything_to_arrow_bytes(pd.DataFrame(v))
                for k, v in spec.get("datasets", {}).items()
            },
        }

    @classmethod
    def from_altair(cls, chart: alt.TopLevelMixin, data: pd.DataFrame, presenter: bool) -> "Drawn":
        """Theme (as ``charts.show`` does) and freeze an Altair chart."""
        return cls(charts.themed(chart, presenter).to_dict(), data)

    @classmethod
    def from_spec(
        cls, theme: dict, body: dict, frames: dict[str, pd.DataFrame], data: pd.DataFrame
    ) -> "Drawn":
        """Join a hand-written spec ``body``, the house ``theme`` and the named datasets."""
        records = {k: json.loads(f.to_json(orient="records")) for k, f in frames.items()}
        return cls({**theme, **body, "datasets": records}, data.reset_index(drop=True))

    def to_json(self) -> str:
        """The spec as JSON, for the PNG/SVG exports."""
        return json.dumps(self.spec)


@st.cache_resource(show_spinner=False)
def theme(presenter: bool) -> dict:
    """The house configuration of ``charts.themed`` as a Vega-Lite dict (schema and config)."""
    probe = charts.themed(alt.Chart(pd.DataFrame({"a": [0]})).mark_point(), presenter)
    spec = probe.to_dict(validate=False)
    return {"$schema": spec["$schema"], "config": spec["config"]}


def draw(drawn: Drawn) -> Drawn:
    """Show a :class:`Drawn` chart at its own size (the counterpart of ``charts.show``)."""
    st.vega_lite_chart(dict(drawn.display), theme=None, width="content")
    return drawn


@st.cache_resource(max_entries=64, show_spinner=False)
def score_view(
    lang: str, presenter: bool, matrices: tuple[np.ndarray, ...], tokens: tuple, d_k: int
) -> Drawn:
    """The score/weight heatmaps of ``matrices`` = (raw, scaled, raw weights, scaled weights)."""
    body, frames = _score_spec(Translator(lang), matrices, tokens, d_k)
    return Drawn.from_spec(theme(presenter), body, frames, pd.concat(frames.values()))


@st.cache_resource(max_entries=64, show_spinner=False)
def variance_view(lang: str, presenter: bool, samples: int, seed: int, index: int) -> Drawn:
    """Histogram at ``D_KS[index]`` and the variance curves."""
    exp, hist = variance_data(samples, seed), histogram_data(samples, seed, index)
    body, frames = _variance_spec(Translator(lang), presenter, exp, index, hist)
    return Drawn.from_spec(theme(presenter), body, frames, frames["variance"])


@st.cache_resource(max_entries=32, show_spinner=False)
def saturation_view(lang: str, presenter: bool, n_keys: int, seed: int) -> Drawn:
    """Top weight and entropy curves."""
    rows = saturation_data(n_keys, seed)
    return Drawn.from_altair(*_saturation_chart(Translator(lang), presenter, *rows), presenter)


@st.cache_resource(max_entries=32, show_spinner=False)
def gradient_view(lang: str, presenter: bool, n_keys: int, seed: int) -> Drawn:
    """Gradient-size curves."""
    rows = saturation_data(n_keys, seed)
    return Drawn.from_altair(*_gradient_chart(Translator(lang), presenter, *rows), presenter)
