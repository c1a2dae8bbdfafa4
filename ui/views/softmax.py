"""Presentation helpers for the softmax page: the logits parser, tables and charts.

Parsing what a user typed is UI work, so :func:`parse_logits` lives here. It is pure (no
Streamlit) and returns either the numbers or a reason that the page turns into a translated
warning. What the notes point out (the largest probability, what a mask leaves, where the
naive formula breaks) is computed in :mod:`core.findings.softmax` and
:mod:`core.softmax_numerics`; this module words it.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.findings.softmax import (
    NaiveBreak,
    mask_effect,
    naive_break,
    row_shape,
    temperature_effect,
)
from core.masks import row_sums
from core.softmax_numerics import (
    EXP_OVERFLOW,
    EXP_UNDERFLOW,
    exp_terms,
    largest_exp_argument,
    mask_last,
    scale_sweep,
)
from ui import charts
from ui.blocks import folded
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import untrained
from ui.params import Choice, Float, Int, Text, select, slider, text
from ui.questions import Question, Truth, choices
from ui.safe import plain
from ui.sentence import LESSON_TEXT
from ui.steps import Controls, Got, View

MAX_ENTRIES = 16
MAX_ABS = 1e6
# Lesson 002 prints these weights for the logits [2.1, 0.3, 0.1, 0.8, 0.2] (a quotation, shown
# next to the true, computed values).
LESSON_LOGITS = (2.1, 0.3, 0.1, 0.8, 0.2)
LESSON_PRINTED = (0.52, 0.09, 0.07, 0.14, 0.08)
SCALES = np.arange(1, 1001)  # the "scale up" slider's range, every integer
SWEEP_SCALES = SCALES[::10]  # the scales the naive-vs-stable chart shows
_SEPARATORS = re.compile(r"[,，、]")
_MASK_SPELLINGS = {"-inf", "-infinity", "-∞"}
_POS_INF_SPELLINGS = {"inf", "+inf", "infinity", "+infinity", "∞", "+∞"}


@dataclass(frozen=True)
class Problem:
    """Why a logits text was rejected: a catalog key suffix and its placeholders."""

    reason: str
    values: dict[str, object] = field(default_factory=dict)


def _entry(token: str) -> float | Problem:
    """One typed entry as a number, ``-inf`` for an explicit mask, or the problem with it."""
    word = token.replace("−", "-").replace("＋", "+").replace(" ", "").lower()
    if word in _MASK_SPELLINGS:
        return -math.inf
    if word in _POS_INF_SPELLINGS:
        return Problem("pos_inf")
    try:
        value = float(word)
    except ValueError:
        return Problem("not_number", {"token": token})
    if math.isnan(value):
        return Problem("nan")
    if not math.isfinite(value) or abs(value) > MAX_ABS:
        return Problem("too_large", {"token": token, "limit": f"{MAX_ABS:,.0f}"})
    return value


def parse_logits(raw: str) -> tuple[float, ...] | Problem:
    """Comma-separated logits -> numbers, or the first :class:`Problem` found.

    Accepts ``-inf`` / ``−∞`` as a masked entry; rejects an empty text, empty entries
    (``1,,2``), non-numbers, NaN, +∞, more than :data:`MAX_ENTRIES` entries and |x| above
    :data:`MAX_ABS` (which also catches ``1e999``, read as infinity).
    """
    text = raw.strip()
    if not text:
        return Problem("empty")
    tokens = [s.strip() for s in _SEPARATORS.split(text)]
    if len(tokens) > MAX_ENTRIES:
        return Problem("too_many", {"count": len(tokens), "limit": MAX_ENTRIES})
    values: list[float] = []
    for i, token in enumerate(tokens, start=1):
        if not token:
            return Problem("empty_entry", {"i": i})
        entry = _entry(token)
        if isinstance(entry, Problem):
            return entry
        values.append(entry)
    return tuple(values)


def logits_or_default(ctx: PageContext, raw: str, spec: Text, name: str) -> np.ndarray:
    """Parse ``raw``; on a problem warn (translated) and use the spec's default instead.

    A text longer than ``spec.max_len`` (possible from a URL) was already reported by
    :func:`ui.params.check_url`, which promises the default: keep that promise silently.
    """
    default = spec.default
    parsed = parse_logits(raw) if spec.parse(raw) is not None else parse_logits(default)
    if isinstance(parsed, Problem):
        shown = {k: plain(v, 24) if k == "token" else v for k, v in parsed.values.items()}
        reason = ctx.t(f"softmax.bad_{parsed.reason}", name=name, **shown)
        ctx.warn(f"{reason} {ctx.t('softmax.fallback', default=plain(default))}")
        parsed = parse_logits(default)
    return np.asarray(parsed, dtype=float)


def num(value: float, digits: int = 3, nan: str = "NaN") -> str:
    """A probability or logit for display: ±∞ spelled out, NaN as the translated word."""
    value = float(value)
    if math.isnan(value):
        return nan
    if value == 0.0:
        return "0"  # exactly zero (e.g. a masked entry), unlike a rounded "0.000"
    return charts.fmt(0.0 if round(value, digits) == 0 else value, digits)


def big(value: float, nan: str = "NaN") -> str:
    """A value that may be astronomically large or small (4 significant digits)."""
    value = float(value)
    if math.isnan(value):
        return nan
    if math.isinf(value):
        return charts.fmt(value)
    return f"{value:.4g}".replace("-", "−")


def total(values: np.ndarray) -> float:
    """The sum of a probability row, as shown next to it (:func:`core.masks.row_sums`)."""
    return float(row_sums(values))


def vector(values: np.ndarray) -> str:
    """``0.659, 0.242, 0.099`` (for a line of text)."""
    return ", ".join(num(v) for v in values)


def entry_labels(n: int) -> list[str]:
    """``x₁ … xₙ``."""
    return [f"x{str(i).translate(charts.SUBSCRIPTS)}" for i in range(1, n + 1)]


# ---- step 1: logits next to probabilities ---------------------------------------------------


def bars_frame(
    t: Translator, examples: Sequence[tuple[str, np.ndarray, np.ndarray]]
) -> pd.DataFrame:
    """Long table: one line per (example, entry, logit or probability)."""
    parts = []
    for name, z, p in examples:
        labels = entry_labels(len(z))
        for kind, values in (("logit", z), ("probability", p)):
            finite = np.where(np.isfinite(values), values, np.nan)
            parts.append(
                pd.DataFrame(
                    {
                        "example": name,
                        "kind": t(f"softmax.kind_{kind}"),
                        "entry": labels,
                        "value": finite,
                        "bar": np.nan_to_num(finite, nan=0.0),
                        "text": [num(v) for v in values],
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def _bar_panel(
    data: pd.DataFrame, title: str, symbol: str, color: str, domain: list[float] | None, name: str
) -> dict:
    """Bars of one example's logits or probabilities, each labelled with its value (a plain
    Vega-Lite dict: Altair took ~10× longer to build the same four panels)."""
    order = list(dict.fromkeys(data["entry"]))
    scale = {"domain": domain} if domain else {"zero": True}
    rows = charts.records({k: data[k].tolist() for k in ("entry", "bar", "text")})
    x = {
        "field": "entry",
        "type": "nominal",
        "sort": order,
        "title": None,
        "axis": {"labelAngle": 0},
    }
    y = {"field": "bar", "type": "quantitative", "scale": scale, "title": None}
    return {
        "datasets": {name: rows},
        "data": {"name": name},
        "title": title,
        "width": max(200, 56 * len(order)),
        "height": 260,
        "encoding": {
            "x": x,
            "tooltip": [
                {"field": "entry", "type": "nominal", "title": "i"},
                {"field": "text", "type": "nominal", "title": symbol},
            ],
        },
        "layer": [
            {"mark": {"type": "bar", "color": color}, "encoding": {"y": y}},
            {
                "transform": [{"calculate": "max(datum.bar, 0)", "as": "top"}],
                "mark": {"type": "text", "dy": -8, "color": "#222"},
                "encoding": {
                    "y": {**y, "field": "top"},
                    "text": {"field": "text", "type": "nominal"},
                },
            },
        ],
    }


def bars_chart(
    t: Translator,
    examples: Sequence[tuple[str, np.ndarray, np.ndarray]],
    sums: dict[str, float],
) -> dict:
    """For each example ``(name, logits, probabilities)`` its logits next to its
    probabilities (with their sum), in one row."""
    data = bars_frame(t, examples)
    panels = []
    for name in dict.fromkeys(data["example"]):
        part = data[data["example"] == name]
        z = part[part["kind"] == t("softmax.kind_logit")]
        p = part[part["kind"] == t("softmax.kind_probability")]
        logits_title = t("softmax.panel_logits", name=name)
        panels.append(_bar_panel(z, logits_title, "z", charts.KEY_COLOR, None, f"logits_{name}"))
        probs_title = t("softmax.panel_probs", name=name, s=num(sums[name]))
        panels.append(
            _bar_panel(p, probs_title, "p", charts.VALUE_COLOR, [0.0, 1.0], f"probs_{name}")
        )
    return charts.concat(panels, spacing=36, resolve={})


def lesson_box(t: Translator) -> None:
    """The lesson's printed softmax weights next to the true ones (:func:`lesson_note`)."""
    st.info(lesson_note(t, core.softmax(LESSON_LOGITS)), icon=":material/school:")


def lesson_note(t: Translator, true_values: np.ndarray) -> str:
    """The polite correction of lesson 002's printed weights, with live numbers."""
    printed = ", ".join(f"{v:.2f}" for v in LESSON_PRINTED)
    computed = ", ".join(num(v) for v in true_values)
    return t(
        "softmax.lesson_note",
        logits=", ".join(str(v) for v in LESSON_LOGITS),
        printed=printed,
        printed_sum=f"{sum(LESSON_PRINTED):.2f}",
        true=computed,
        true_sum=num(total(true_values)),
    )


# ---- step 3: naive vs stable ----------------------------------------------------------------


def stability_table(
    t: Translator,
    naive: tuple[np.ndarray, np.ndarray, float],
    stable: tuple[np.ndarray, np.ndarray, float],
    p_naive: np.ndarray,
    p_stable: np.ndarray,
) -> str:
    """Markdown table: what each version feeds to exp, gets back, and returns."""
    nan = t("softmax.nan")
    head = [
        "",
        t("softmax.col_naive_arg"),
        t("softmax.col_naive_exp"),
        t("softmax.col_naive_p"),
        t("softmax.col_stable_arg"),
        t("softmax.col_stable_exp"),
        t("softmax.col_stable_p"),
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * 6]
    for i, label in enumerate(entry_labels(len(p_naive))):
        cells = [
            label,
            big(naive[0][i], nan),
            big(naive[1][i], nan),
            num(p_naive[i], 3, nan),
            big(stable[0][i], nan),
            big(stable[1][i], nan),
            num(p_stable[i], 3, nan),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    sums = [
        f"**{t('softmax.sum')}**",
        "",
        big(naive[2], nan),
        num(total(p_naive), 3, nan),
        "",
        big(stable[2], nan),
        num(total(p_stable), 3, nan),
    ]
    lines.append("| " + " | ".join(sums) + " |")
    return "\n".join(lines)


def exponent_frame(
    t: Translator, scales: np.ndarray, naive: np.ndarray, stable: np.ndarray
) -> pd.DataFrame:
    """Long table of the largest exp argument per scale, for both versions."""
    return pd.concat(
        [
            pd.DataFrame({"scale": scales, "arg": naive, "version": t("softmax.naive")}),
            pd.DataFrame({"scale": scales, "arg": stable, "version": t("softmax.stable")}),
        ],
        ignore_index=True,
    ).replace([np.inf, -np.inf], np.nan)


def _version_color(versions: list[str], colors: list[str]) -> dict:
    """The colour encoding of the two versions a chart compares (naive and stable softmax;
    without and with the mask), in ``colors``, named in a legend below the chart."""
    return {
        "field": "version",
        "type": "nominal",
        "scale": {"domain": versions, "range": colors},
        "title": None,
        "legend": {"orient": "bottom"},
    }


def exponent_chart(
    t: Translator,
    naive: np.ndarray,
    stable: np.ndarray,
    current: int,
    limit: float,
    limit_label: str,
    presenter: bool,
) -> dict:
    """Largest exp argument per scale of :data:`SWEEP_SCALES` for both versions, the float64
    limit as a red rule, the slider as a grey one (wider on a projector, whose room is low
    and wide)."""
    data = exponent_frame(t, SWEEP_SCALES, naive, stable)
    data = data.astype(object).where(data.notna(), None)  # no NaN in JSON (exports)
    versions = [t("softmax.naive"), t("softmax.stable")]
    colors = [charts.QUERY_COLOR, charts.VALUE_COLOR]
    scale_x = {"field": "scale", "type": "quantitative", "title": t("softmax.axis_scale")}
    arg_y = {"field": "arg", "type": "quantitative", "title": t("softmax.axis_arg")}
    limit_rows = [{"arg": limit, "text": limit_label}]
    return {
        "datasets": {
            "curves": charts.records({k: data[k].tolist() for k in data.columns}),
            "limit": limit_rows,
            "now": [{"scale": int(current)}],
        },
        "title": t("softmax.exponent_chart"),
        "width": 900 if presenter else 700,
        "height": 300,
        "layer": [
            {
                "data": {"name": "curves"},
                "mark": {"type": "line", "strokeWidth": 3},
                "encoding": {
                    "x": scale_x,
                    "y": arg_y,
                    "color": _version_color(versions, colors),
                    "tooltip": [
                        {"field": "version", "type": "nominal", "title": charts.SERIES_TIP},
                        {**scale_x},
                        {**arg_y, "format": ".2f"},
                    ],
                },
            },
            {
                "data": {"name": "limit"},
                "mark": {"type": "rule", "color": "#b00020", "strokeDash": [6, 4]},
                "encoding": {"y": {"field": "arg", "type": "quantitative"}},
            },
            {
                "data": {"name": "limit"},
                "mark": {"type": "text", "align": "left", "dx": 4, "dy": -8, "color": "#b00020"},
                "encoding": {
                    "x": {"datum": 1},
                    "y": {"field": "arg", "type": "quantitative"},
                    "text": {"field": "text", "type": "nominal"},
                },
            },
            {
                "data": {"name": "now"},
                "mark": {"type": "rule", "color": "#444"},
                "encoding": {"x": {"field": "scale", "type": "quantitative"}},
            },
        ],
    }


# ---- step 4: masking ------------------------------------------------------------------------


def mask_frame(
    t: Translator, masked: np.ndarray, before: np.ndarray, after: np.ndarray
) -> pd.DataFrame:
    """Long table: each entry's probability without and with the mask."""
    labels = entry_labels(len(before))
    rows = []
    for name, values in ((t("softmax.without_mask"), before), (t("softmax.with_mask"), after)):
        rows.append(
            pd.DataFrame(
                {
                    "entry": labels,
                    "version": name,
                    "p": values,
                    "logit": [num(v) for v in masked],
                    "text": [num(v) for v in values],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def mask_chart(
    t: Translator, masked: np.ndarray, before: np.ndarray, after: np.ndarray, presenter: bool
) -> dict:
    """Grouped bars: probability of each entry before and after masking (wider bars and
    larger numbers on a projector)."""
    data = mask_frame(t, masked, before, after)
    versions = [t("softmax.without_mask"), t("softmax.with_mask")]
    order = list(dict.fromkeys(data["entry"]))
    colors = ["#b0bec5", charts.VALUE_COLOR]
    return {
        "datasets": {"mask": charts.records({k: data[k].tolist() for k in data.columns})},
        "data": {"name": "mask"},
        "title": t("softmax.mask_chart"),
        "width": max(320, (150 if presenter else 90) * len(order)),
        "height": 260,
        "encoding": {
            "x": {
                "field": "entry",
                "type": "nominal",
                "sort": order,
                "title": None,
                "axis": {"labelAngle": 0},
            },
            "xOffset": {"field": "version", "type": "nominal", "sort": versions},
            "y": {
                "field": "p",
                "type": "quantitative",
                "scale": {"domain": [0, 1]},
                "title": t("softmax.kind_probability"),
            },
            "tooltip": [
                {"field": "version", "type": "nominal", "title": charts.SERIES_TIP},
                {"field": "entry", "type": "nominal", "title": "i"},
                {"field": "logit", "type": "nominal", "title": "z"},
                {"field": "text", "type": "nominal", "title": "p"},
            ],
        },
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "color": _version_color(versions, colors),
                },
            },
            {
                "mark": {
                    "type": "text",
                    "dy": -8,
                    "color": "#222",
                    "fontSize": 16 if presenter else 11,
                },
                "encoding": {"text": {"field": "text", "type": "nominal"}},
            },
        ],
    }


def matrix_chart(
    panels: dict[str, np.ndarray],
    tokens: Sequence[str],
    x_title: str,
    y_title: str,
    presenter: bool,
) -> dict:
    """Weight heatmaps side by side, one per panel, titled with their shapes (one 0..1 scale;
    larger numbers on a projector)."""
    font = charts.SLIDE_FONT if presenter else 15  # numbers as large as the cells allow
    maps = [
        charts.heatmap({name: m}, tokens, tokens, x_title=x_title, y_title=y_title, max_font=font)
        for name, m in panels.items()
    ]
    # Each title is read from its panel's data ("weights at T = 0.50 (6 × 6)"), so a new
    # temperature changes only the data (see charts.data_title).
    return charts.concat(maps, spacing=30, resolve={"scale": {"color": "shared"}})


def mask_choice(n: int) -> Choice:
    """How many trailing entries to mask: ``0..n``; masks the last two by default."""
    return Choice("masked", str(min(2, n - 1)), tuple(str(i) for i in range(n + 1)))


def mask_notices(t: Translator, masked: np.ndarray, after: np.ndarray) -> list[str]:
    """The "what to notice" items of the masking step, with live numbers
    (:func:`core.findings.softmax.mask_effect`)."""
    found = mask_effect(masked, after)
    renorm = t("softmax.notice_renorm", s=num(found.total))
    if found.none:
        return [t("softmax.notice_no_mask"), renorm]
    if found.all:
        return [t("softmax.notice_all_masked", s=num(found.total))]
    exact = "softmax.notice_exact_zero" if found.exact_zero else "softmax.notice_not_zero"
    return [t(exact, k=found.count, zero=repr(found.largest_masked)), renorm]


# ---- controls and cached computations ---------------------------------------------------------

LOGITS_A = Text("logits_a", "2.0, 1.0, 0.1", max_len=240)
LOGITS_B = Text("logits_b", "2.1, 0.3, 0.1, 0.8, 0.2", max_len=240)
TEMPERATURE = Float("temp", 1.0, 0.05, 5.0)


@dataclass(frozen=True)
class Logits:
    """The page's settings: the two logit rows and the temperature."""

    a: np.ndarray
    b: np.ndarray
    temperature: float


def controls(ctx: PageContext, got: Got) -> Logits:
    """The two logits boxes and the temperature slider (for students one below the other;
    on a slide side by side); bad logits warn and fall back."""
    t = ctx.t
    c1, c2, c3 = st.columns([2, 3, 2]) if ctx.presenter else [st.container()] * 3
    with c1:
        raw_a = text(ctx, LOGITS_A, t("softmax.logits_a"), help=t("softmax.logits_help"))
    with c2:
        raw_b = text(ctx, LOGITS_B, t("softmax.logits_b"), help=t("softmax.logits_help"))
    with c3:
        temp = slider(ctx, TEMPERATURE, t("softmax.temperature"), step=0.05)
    a = logits_or_default(ctx, raw_a, LOGITS_A, "A")
    b = logits_or_default(ctx, raw_b, LOGITS_B, "B")
    return Logits(a, b, float(temp))


SCALE = Int("scale", 1, 1, 1000)


def scale_control(ctx: PageContext, got: Got) -> int:
    """Step 3's factor the logits are scaled up by."""
    return int(slider(ctx, SCALE, ctx.t("softmax.scale")))


def mask_control(ctx: PageContext, got: Got) -> int:
    """Step 4's number of trailing entries of row B to mask."""
    choice = mask_choice(len(got[SETTINGS].b))
    return int(select(ctx, choice, ctx.t("softmax.masked_count")))


SETTINGS = Controls(controls, box="softmax.settings", slide="settings")
SCALED = Controls(scale_control)
MASKED = Controls(mask_control)


# ---- the steps -----------------------------------------------------------------------------


def bars(v: View) -> None:
    """Step 1: two rows of logits beside their probabilities."""
    t, s = v.t, v[SETTINGS]
    probs_a = core.softmax(s.a, temperature=s.temperature)
    probs_b = core.softmax(s.b, temperature=s.temperature)
    v.text("softmax.bars_text")
    v.lead.latex(r"p_i = \frac{e^{x_i/T}}{\sum_j e^{x_j/T}}")
    sums = {"A": total(probs_a), "B": total(probs_b)}
    chart = v.chart(bars_chart, t, (("A", s.a, probs_a), ("B", s.b, probs_b)), sums)
    if not v.presenter:  # the bars carry the same numbers
        line = t(
            "softmax.probs_line", T=f"{s.temperature:.2f}", a=vector(probs_a), b=vector(probs_b)
        )
        v.notes.markdown(line)
    v.notice(bars_notices(t, sums, s.temperature, probs_a, core.softmax(s.a)))
    with v.notes:
        folded(v.ctx, t("softmax.lesson_fold"), "lesson", lambda: lesson_box(t))
    arrays = {"logits_a": s.a, "probs_a": probs_a, "logits_b": s.b, "probs_b": probs_b}
    v.export("softmax_bars", chart, arrays=arrays)


def matrix(v: View) -> None:
    """Step 2: softmax row by row over the lesson's score matrix, at T = 1 and at T."""
    t, temp = v.t, v[SETTINGS].temperature
    v.lead.markdown(t("softmax.matrix_text"))
    tokens, mats = lesson_trace(temp)
    panels = {
        t("softmax.panel_t1"): mats["weights_t1"],
        t("softmax.panel_t", T=f"{temp:.2f}"): mats["weights_t"],
    }
    axes = (t("softmax.keys"), t("softmax.queries"))
    chart = v.chart(matrix_chart, panels, tokens, *axes, v.presenter)
    v.notice(matrix_notices(t, mats, temp))
    with v.notes:
        untrained(v.ctx)
    text = lambda: core.text_heatmap(mats["weights_t"], tokens)  # noqa: E731
    v.export("softmax_matrix", chart, arrays=mats, text=text)


def stable(v: View) -> None:
    """Step 3: the naive formula against the stable one as the logits grow."""
    t, logits, scale = v.t, v[SETTINGS].a, v[SCALED]
    if v.presenter:
        v.lead.markdown(t("softmax.stable_short", limit=f"{EXP_OVERFLOW:.2f}"))
    else:
        v.lead.markdown(t("softmax.stable_text"))
    naive_p, stable_p = (rows[0] for rows in scale_sweep(logits, [scale]))

    def table() -> None:
        naive_e, stable_e = (exp_terms(logits, scale, stable=s) for s in (False, True))
        st.markdown(stability_table(t, naive_e, stable_e, naive_p, stable_p))

    with v.lead:
        folded(v.ctx, t("softmax.table_fold"), "stability_table", table)
    sweep = stability_sweep(tuple(logits))
    naive, steady = sweep["naive"], sweep["stable"]
    limit = t("softmax.limit", v=f"{EXP_OVERFLOW:.2f}")
    args = (t, naive, steady, scale, EXP_OVERFLOW, limit, v.presenter)
    chart = v.chart(exponent_chart, *args)
    v.notice(stability_notices(t, sweep, stable_p))
    v.export(
        "softmax_stability",
        chart,
        data=lambda: exponent_frame(t, SWEEP_SCALES, naive, steady),
        arrays={"logits": logits, "scale": scale, "naive_p": naive_p, "stable_p": stable_p},
    )


def mask(v: View) -> None:
    """Step 4: masked entries of row B get no probability; the rest still sum to 1."""
    t, s = v.t, v[SETTINGS]
    v.lead.markdown(t("softmax.mask_text"))
    masked = mask_last(s.b, v[MASKED])
    before = core.softmax(s.b, temperature=s.temperature)
    after = core.softmax(masked, temperature=s.temperature)
    chart = v.chart(mask_chart, t, masked, before, after, v.presenter)
    v.notice(mask_notices(t, masked, after))
    arrays = {"masked_logits": masked, "probs_before": before, "probs_after": after}
    v.export("softmax_mask", chart, arrays=arrays)
    v.links(
        ("masking", t("softmax.masking_link")),
        ("weighted_sum", t("softmax.weighted_sum_link")),
        ("lookup", t("softmax.lookup_link")),
    )


@st.cache_data(max_entries=4, show_spinner=False)
def lesson_trace(temperature: float) -> tuple[list[str], dict[str, object]]:
    """Lesson 002's scaled scores for its sentence, and softmax at T = 1 and at ``temperature``."""
    trace = core.self_attention_trace(core.lesson_inputs(6, 8), *core.init_projections(8, 4, 4))
    return core.tokenize(LESSON_TEXT), {
        "scaled_scores": trace.scaled,
        "weights_t1": core.softmax(trace.scaled),
        "weights_t": core.softmax(trace.scaled, temperature=temperature),
    }


@st.cache_data(max_entries=8, show_spinner=False)
def stability_sweep(logits: tuple[float, ...]) -> dict[str, object]:
    """Where the naive softmax of ``logits × s`` first breaks
    (:func:`core.findings.softmax.naive_break`), and the chart's curves."""
    naive_arg, stable_arg = largest_exp_argument(logits, SWEEP_SCALES)
    return {"break": naive_break(logits, SCALES), "naive": naive_arg, "stable": stable_arg}


def bars_notices(
    t: Translator, sums: dict[str, float], temp: float, probs_a: np.ndarray, at_one: np.ndarray
) -> list[str]:
    """The "what to notice" items of the logits -> probabilities step
    (:func:`core.findings.softmax.temperature_effect`)."""
    found = temperature_effect(probs_a, at_one, temp)
    p, p1 = num(found.peak), num(found.peak_at_one)
    if found.flat:  # equal logits: no temperature changes anything
        temperature = t("softmax.notice_temperature_flat", p=p)
    elif found.at_one:
        temperature = t("softmax.notice_temperature_one", p=p)
    else:
        temperature = t("softmax.notice_temperature", T=f"{temp:.2f}", p=p, p1=p1)
    return [t("softmax.notice_sum", a=num(sums["A"]), b=num(sums["B"])), temperature]


def matrix_notices(t: Translator, mats: dict[str, np.ndarray], temp: float) -> list[str]:
    """The "what to notice" items of the score-matrix step
    (:func:`core.findings.softmax.temperature_effect` over the whole matrix)."""
    found = temperature_effect(mats["weights_t"], mats["weights_t1"], temp)
    p1, p = num(found.peak_at_one), num(found.peak)
    first = (
        t("softmax.notice_matrix_same", p1=p1)
        if found.at_one
        else t("softmax.notice_matrix_peak", p1=p1, T=f"{temp:.2f}", p=p)
    )
    return [first, t("softmax.notice_matrix_rows")]


def stability_notices(t: Translator, sweep: dict[str, object], stable_p: np.ndarray) -> list[str]:
    """The "what to notice" items of the naive-vs-stable step: where the naive version first
    breaks (:func:`stability_sweep`), by overflow (large logits) or by underflow (every
    logit very negative)."""
    broken: NaiveBreak = sweep["break"]
    if broken.index < 0:
        broke = t("softmax.notice_never")
    elif broken.overflow:
        broke = t("softmax.notice_breaks", s=int(broken.scale), limit=f"{EXP_OVERFLOW:.2f}")
    else:
        broke = t(
            "softmax.notice_breaks_under",
            s=int(broken.scale),
            top=charts.fmt(broken.top, 2),
            limit=charts.fmt(EXP_UNDERFLOW, 2),
        )
    return [broke, t("softmax.notice_stable", s=num(total(stable_p)), nan=t("softmax.nan"))]


# Ask the class -----------------------------------------------------------------------------
# Cool logits A (their default) to the slider's lowest temperature: what is left of the row?
COLD_OPTIONS = ("one_hot", "uniform", "unchanged", "zero")


def _ask_cold_truth() -> Truth:
    logits = np.asarray(parse_logits(LOGITS_A.default), dtype=float)
    cold = core.softmax(logits, temperature=TEMPERATURE.lo)
    return Truth(right=frozenset({row_shape(cold, core.softmax(logits))}))


ASK_COLD = Question(
    "softmax.cold", "choice", _ask_cold_truth, choices("softmax.ask.cold", COLD_OPTIONS)
)
QUESTIONS = (ASK_COLD,)
