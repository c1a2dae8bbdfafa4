"""Presentation helpers for the rotary-positions page (pages/12_rope.py).

Controls, charts, words and the page's steps (drawn by :func:`ui.steps.run`) only: every
number comes from :mod:`core.rope` (the one RoPE of ``core``, also used by
:mod:`core.llama`), :mod:`core.findings.rope` and, for the real model, :mod:`models.smollm` /
:mod:`models.smollm_probe`. The model's sizes are read from its file
(:func:`ui.prompt.config`), never typed in; without the model, steps 3 and 4 say how to
install it.
"""

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import streamlit as st

import core.llama as llama
from core.findings.rope import PairTurn, Rotation, diagonal_spread, pair_turn, score_depends_on
from core.findings.rope import rotation as rope_rotation
from core.rope import (
    absolute_score_grid,
    rope_score_grid,
    rope_slow_pairs,
    rope_wavelengths,
    toy_qk,
)
from models.smollm_probe import LayerQueries, layer_queries
from ui import charts, loaded
from ui import prompt as typed
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import grouped, num, power_of_ten, sci
from ui.params import Choice, Int, Text, number, select, slider, text
from ui.questions import Question, Truth, choices
from ui.sentence import more_box
from ui.steps import Controls, Got, View
from ui.turns import model_turn

TOY_D = 64  # the toy q and k: as wide as one of SmolLM2's heads (32 pairs)
BASES = ("100", "1000", "10000", "100000")
BASE = Choice("base", "10000", BASES)  # the original RoPE paper's base
SEED = Int("seed", 42, 0, 999_999)
PAIR = Int("pair", 0, 0, TOY_D // 2 - 1)
M = Int("m", 5, 0, 200)
N = Int("n", 2, 0, 200)
SHIFT = Int("shift", 100, 1, 500)
GRID = Int("grid", 12, 4, 24)
LESSON = "The animal didn't cross the street because it was too tired."
PROMPT = Text("prompt", LESSON, max_len=400)
SHARE = 0.62  # presenter mode: the chart column's share of the width
SHOWN_DEGREES = 1  # decimals of the angles in the text
SLIDE_GRID = 420  # px of one score grid on a slide (two side by side in the chart column)
READABLE = 18  # px: the smallest text a slide may carry (the back of the hall)
EVERY_FOURTH = "toNumber(datum.label) % 4 == 0 ? datum.label : ''"  # pair labels 0, 4, 8, …
ROTATION = (
    r"\begin{pmatrix}q'_{2i}\\ q'_{2i+1}\end{pmatrix}="
    r"\begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\"
    r" \sin m\theta_i & \cos m\theta_i\end{pmatrix}"
    r"\begin{pmatrix}q_{2i}\\ q_{2i+1}\end{pmatrix},\quad \theta_i=b^{-2i/d}"
)
OFFSET = r"(R_{m\theta}\,q)\cdot(R_{n\theta}\,k)=q\cdot R_{(n-m)\theta}\,k"


def base_label(raw: str | float) -> str:
    """A base as printed: ``"100000"`` -> ``"100 000"``."""
    return grouped(int(float(raw)))


def base_power(raw: str) -> str:
    """A base of the control as a power of ten: ``"10000"`` -> ``"10⁴"`` (four fit a row)."""
    return power_of_ten(len(raw) - 1)


def speed(value: float) -> str:
    """Radians per token: ``1.0000``, ``0.0750``; the slow pairs' in powers of ten
    (``1.33e−04``), where four decimals would print 0.0001 for all of them."""
    return num(value, 4) if value >= 1e-3 else f"{value:.2e}".replace("-", "−")


def wavelength(value: float) -> str:
    """A wavelength in tokens: 6.3, 1 304, 438 460."""
    return num(value, 1) if value < 100 else grouped(round(value))


# Controls ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Toy:
    """The toy settings of steps 1 and 2 (step 3 reads only the base)."""

    base: float
    seed: int


def base_control(ctx: PageContext, got: Got) -> float:
    """Steps 1–3: the base of the toy's rotation (four powers of ten fit a row)."""
    t = ctx.t
    chosen = select(ctx, BASE, t("rope.base"), format_func=base_power, help=t("rope.base_help"))
    return float(chosen)


def seed_control(ctx: PageContext, got: Got) -> int:
    """Steps 1–2: the seed of the toy q and k (folded)."""
    t = ctx.t
    with more_box(ctx, t("rope.more")):
        return int(number(ctx, SEED, t("rope.seed"), width=200))


def pair_controls(ctx: PageContext, got: Got) -> tuple[int, int, int, int]:
    """Step 1: the pair, the positions m and n side by side, and the shift Δ (on a slide
    beside the pair: the step fits one screen)."""
    t = ctx.t
    first, second = st.columns(2) if ctx.presenter else (nullcontext(), nullcontext())
    with first:
        pair = slider(ctx, PAIR, t("rope.pair"), help=t("rope.pair_help"))
    left, right = st.columns(2)
    with left:
        m = slider(ctx, M, t("rope.m"))
    with right:
        n = slider(ctx, N, t("rope.n"))
    with second:  # students: below m and n
        shift = slider(ctx, SHIFT, t("rope.shift"))
    return int(pair), int(m), int(n), int(shift)


def grid_control(ctx: PageContext, got: Got) -> int:
    """Step 2: how many positions the score grids cover."""
    return int(slider(ctx, GRID, ctx.t("rope.grid")))


def model_controls(ctx: PageContext, got: Got) -> tuple[str, int, int] | None:
    """Step 4: the prompt, and the layer and head side by side (their ranges are the
    model's); None, and nothing drawn, without the model."""
    cfg = typed.config()
    if cfg is None:
        return None
    t = ctx.t
    raw = text(ctx, PROMPT, t("rope.prompt"))
    left, right = st.columns(2)
    with left:
        layer = slider(ctx, Int("layer", 2, 0, cfg.n_layers - 1), t("rope.layer"))
    with right:
        head = slider(ctx, Int("head", 0, 0, cfg.n_heads - 1), t("rope.head"))
    return raw, int(layer), int(head)


# on a slide every step's controls sit below its chart, in the chart's column
BASE_CONTROL = Controls(base_control, slide="below", row=True)  # steps 1–3
# steps 1–2; on a slide right of the base (one row: the step fits one screen)
SEED_CONTROL = Controls(seed_control, slide="below", row=True)
PAIR_CONTROLS = Controls(pair_controls, slide="below")
GRID_CONTROL = Controls(grid_control, slide="below")
MODEL_CONTROLS = Controls(model_controls, slide="below")


# The steps -------------------------------------------------------------------------------


def pair_step(v: View) -> None:
    """Step 1: pair i of the toy q and k turned to positions m and n, after a shift of
    both, and one place on."""
    t, toy = v.t, Toy(v[BASE_CONTROL], v[SEED_CONTROL])
    pair, m, n, shift = v[PAIR_CONTROLS]
    pv = pair_view(toy, pair, m, n, shift)
    chart = v.chart(pair_chart, t, pair_panels(t, pv), pair_extent(pv), v.presenter)
    v.text("rope.s1_text", i=pair, d=TOY_D)
    v.lead.latex(ROTATION)
    v.notice(pair_notice(v.ctx, pv, shift))
    v.export("rope_pair", chart, arrays=pair_arrays(toy, pv))


def grid_step(v: View) -> None:
    """Step 2: the scores at every pair of positions, with RoPE and with absolute positions."""
    t = v.t
    g = grids(Toy(v[BASE_CONTROL], v[SEED_CONTROL]), v[GRID_CONTROL])
    chart = v.chart(grid_chart, t, g.rope, g.absolute, v.presenter)
    v.text("rope.s2_text", d=TOY_D)
    v.lead.latex(OFFSET)
    v.notice(grid_notice(v.ctx, g))
    v.links(("qkv", t("rope.qkv_link")))
    v.export("rope_grid", chart, arrays={"rope": g.rope, "absolute": g.absolute})


def waves_step(v: View) -> None:
    """Step 3: the wavelengths of SmolLM2's pairs, with its base and with the toy's."""
    t, cfg = v.t, typed.config()
    if cfg is None:
        typed.missing(v.ctx)
        return
    w = waves(cfg, v[BASE_CONTROL])
    chart = v.chart(wave_chart, t, wave_series(t, w), w.context, v.presenter)
    v.text("rope.s3_text", **wave_facts(w))
    v.notice(wave_notice(v.ctx, w))
    v.export("rope_waves", chart, arrays={"wavelengths": w.waves, "toy_wavelengths": w.toy_waves})


def model_step(v: View) -> None:
    """Step 4: the rotation inside SmolLM2, on one head of one layer, for the prompt."""
    t, cfg, chosen = v.t, typed.config(), v[MODEL_CONTROLS]
    if cfg is None or chosen is None:
        typed.missing(v.ctx)
        return
    raw, layer, head = chosen
    typed.model_or_stop(v.ctx)
    prompt = typed.prompt_or_default(v.ctx, raw, PROMPT.default)
    r = rotation(cfg, queries(prompt.ids)[layer], head)
    labels = charts.unique_labels(list(prompt.labels))
    chart = v.chart(model_chart, t, labels, r.cos, r.shift, v.presenter)
    with v.lead:
        typed.chinese_note(v.ctx, raw)
    key = "rope.s4_brief" if v.presenter else "rope.s4_text"
    v.lead.markdown(t(key, layer=layer, head=head, n=len(prompt.ids)))
    v.notice(model_notice(v.ctx, cfg, r, len(prompt.ids)))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links("decoder", "gqa")
    caption = t("rope.model_caption", layer=layer, head=head)
    v.export("rope_model", chart, arrays={"cos": r.cos, "shift": r.shift}, caption=caption)


# Step 1: one pair turning ------------------------------------------------------------------


PairView = PairTurn  # step 1's numbers (core.findings.rope)


def pair_view(toy: Toy, pair: int, m: int, n: int, shift: int) -> PairView:
    """Everything step 1 shows, from core."""
    q, k = toy_qk(TOY_D, int(toy.seed))
    return pair_turn(q, k, pair, m, n, shift, float(toy.base))


def pair_panels(t: Translator, v: PairView) -> list[tuple]:
    """The three panels of :func:`pair_chart`: title, subtitle, and rows
    ``(label, role, turned, x, y)``."""
    panels = []
    for (a, b), (qp, kp), score, angle in zip(
        v.positions, v.turned, v.scores, v.angles, strict=True
    ):
        sub_a, sub_b = str(a).translate(charts.SUBSCRIPTS), str(b).translate(charts.SUBSCRIPTS)
        rows = [
            ("q", "q", False, *map(float, v.q0)),
            ("k", "k", False, *map(float, v.k0)),
            (f"q{sub_a}", "q", True, *map(float, qp)),
            (f"k{sub_b}", "k", True, *map(float, kp)),
        ]
        title = t("rope.panel_title", m=a, n=b)
        subtitle = t("rope.panel_sub", score=num(score), angle=num(angle, SHOWN_DEGREES))
        panels.append((title, subtitle, rows))
    return panels


def pair_chart(t: Translator, panels: list[tuple], extent: float, presenter: bool) -> dict:
    """One square panel per pair of positions: pair i of q (red) and k (teal) at position 0
    (faded, dashed) and turned to the panel's positions (solid, named)."""
    data = charts.records(
        {
            "panel": [p for p, (_, _, rows) in enumerate(panels) for _ in rows],
            "label": [r[0] for *_, rows in panels for r in rows],
            "role": [r[1] for *_, rows in panels for r in rows],
            "turned": [r[2] for *_, rows in panels for r in rows],
            "x": [r[3] for *_, rows in panels for r in rows],
            "y": [r[4] for *_, rows in panels for r in rows],
            "shown": [r[0] if r[2] else "" for *_, rows in panels for r in rows],
            "tx": [charts.fmt(r[3], 3) for *_, rows in panels for r in rows],
            "ty": [charts.fmt(r[4], 3) for *_, rows in panels for r in rows],
        }
    )
    side = 280 if presenter else 240
    axis = {
        "field": "x",
        "type": "quantitative",
        "title": None,
        "scale": {"domain": [-extent, extent]},
        "axis": {"tickCount": 5, "grid": True},
    }
    color = {
        "field": "role",
        "type": "nominal",
        "legend": None,
        "scale": {"domain": ["q", "k"], "range": [charts.QUERY_COLOR, charts.KEY_COLOR]},
    }
    faded = {"condition": {"test": "datum.turned", "value": 1}, "value": 0.35}
    tips = [
        {"field": "label", "type": "nominal", "title": t("rope.tip_vector")},
        {"field": "tx", "type": "nominal", "title": "x"},
        {"field": "ty", "type": "nominal", "title": "y"},
    ]

    def label(role: str, dy: int) -> dict:
        return {
            "transform": [{"filter": f"datum.role == '{role}'"}],
            "mark": {
                "type": "text",
                "dy": dy,
                "fontWeight": "bold",
                "fontSize": 20 if presenter else 15,
            },
            "encoding": {"text": {"field": "shown", "type": "nominal"}},
        }

    def panel(index: int, title: str, subtitle: str) -> dict:
        return {
            "title": {
                "text": title,
                "subtitle": subtitle,
                "subtitleFontSize": READABLE + 1 if presenter else 12,
            },
            "width": side,
            "height": side,
            "transform": [{"filter": f"datum.panel == {index}"}],
            "encoding": {
                "x": axis,
                "y": {**axis, "field": "y"},
                "color": color,
                "opacity": faded,
                "tooltip": tips,
            },
            "layer": [
                {
                    "mark": {"type": "rule", "strokeWidth": 3},
                    "encoding": {
                        "x2": {"datum": 0},
                        "y2": {"datum": 0},
                        "strokeDash": {
                            "condition": {"test": "datum.turned", "value": [1, 0]},
                            "value": [5, 4],
                        },
                    },
                },
                {"mark": {"type": "point", "filled": True, "size": 90}},
                label("q", -14),  # q's name above its tip, k's below: close tips stay legible
                label("k", 20),
            ],
        }

    return {
        "datasets": {"pairs": data},
        "data": {"name": "pairs"},
        "hconcat": [panel(i, title, sub) for i, (title, sub, _) in enumerate(panels)],
        "spacing": 24,
    }


def pair_extent(v: PairView) -> float:
    """Half the side of the panels: the longer of the pair of q and of k, plus a margin."""
    return float(max(np.linalg.norm(v.q0), np.linalg.norm(v.k0)) * 1.25) or 1.0


def pair_notice(ctx: PageContext, v: PairView, shift: int) -> list[str]:
    """Step 1's "what to notice": the same score after a shift, another after a step."""
    t = ctx.t
    (m, n), (m2, n2), (m3, n3) = v.positions
    s, s2, s3 = v.scores
    return [
        t(
            "rope.notice_same",
            m=m,
            n=n,
            m2=m2,
            n2=n2,
            s=num(s),
            s2=num(s2),
            diff=sci(v.shift_gap),
            shift=shift,
            rel=num(v.relative),
            offset=m - n,
        ),
        t("rope.notice_other", m=m3, n=n3, s3=num(s3), diff=num(v.step_change)),
        t(
            "rope.notice_pair",
            i=v.pair,
            theta=speed(v.theta),
            wave=wavelength(v.wave),
            a=num(v.angles[0], SHOWN_DEGREES),
            a3=num(v.angles[2], SHOWN_DEGREES),
            part=num(v.part),
            s=num(s),
            others=TOY_D // 2 - 1,
        ),
    ]


def pair_arrays(toy: Toy, v: PairView) -> dict[str, np.ndarray]:
    """Step 1's export: the toy q and k, the positions and their scores."""
    q, k = toy_qk(TOY_D, int(toy.seed))
    return {
        "q": q,
        "k": k,
        "positions": np.array(v.positions),
        "scores": np.array(v.scores),
        "base": np.array(toy.base),
    }


# Step 2: only the offset counts ----------------------------------------------------------


@dataclass(frozen=True)
class Grids:
    """Step 2's score grids (rows m, columns n) and how far apart one diagonal's scores are."""

    rope: np.ndarray  # (N, N)
    absolute: np.ndarray  # (N, N)
    rope_spread: float
    absolute_spread: float


def grids(toy: Toy, size: int) -> Grids:
    """The scores of the toy q at every position with the toy k at every position."""
    q, k = toy_qk(TOY_D, int(toy.seed))
    rope = rope_score_grid(q, k, size, float(toy.base))
    absolute = absolute_score_grid(q, k, size)
    return Grids(rope, absolute, diagonal_spread(rope), diagonal_spread(absolute))


def grid_chart(t: Translator, rope: np.ndarray, absolute: np.ndarray, presenter: bool) -> dict:
    """The two score grids side by side, each on its own colour scale (the absolute one
    spans a wider range: on a shared scale the RoPE grid's diagonals would fade). On a
    slide the cells fill the column and print their numbers only where they can be read
    from the back of the hall: with one decimal, else rounded, else none (the colours and
    the notice carry them)."""
    labels = [str(i) for i in range(rope.shape[0])]
    n = len(labels)
    if presenter:
        cell = SLIDE_GRID / n
        digits = next(
            (d for d in (1, 0) if slide_font([rope, absolute], d, cell) >= READABLE), None
        )
        common = {"cell": round(cell, 1), "max_font": charts.SLIDE_FONT}
        common |= {"digits": digits, "legend": False} if digits is not None else {"annotate": False}
    else:
        cell = charts.fit_cell(n, n, 380, 380, lo=12, hi=40)
        common = {"cell": cell, "digits": 1, "max_font": 14}
    titles = (t("rope.axis_n"), t("rope.axis_m"))
    return charts.concat(
        [
            charts.heatmap(
                {"rope": rope},
                labels,
                labels,
                "scores",
                *titles,
                title=t("rope.grid_rope"),
                **common,
            ),
            charts.heatmap(
                {"absolute": absolute},
                labels,
                labels,
                "scores",
                *titles,
                title=t("rope.grid_absolute"),
                **common,
            ),
        ],
        spacing=30,
    )


def slide_font(grids: list[np.ndarray], digits: int, cell: float) -> float:
    """The px of the cell numbers of ``grids`` printed with ``digits`` decimals in
    ``cell``-px cells on a slide."""
    texts = [x for g in grids for x in charts.fmt_cells(g, digits)]
    return charts.cell_font(texts, cell, charts.SLIDE_FONT)


def grid_notice(ctx: PageContext, g: Grids) -> list[str]:
    """Step 2's "what to notice"."""
    t = ctx.t
    return [
        t("rope.notice_rope_grid", spread=sci(g.rope_spread)),
        t("rope.notice_absolute_grid", spread=num(g.absolute_spread, 2)),
    ]


# Step 3: wavelengths -----------------------------------------------------------------------


@dataclass(frozen=True)
class Waves:
    """Step 3's numbers: each pair's wavelength with SmolLM2's base and with the toy base."""

    d_head: int
    context: int
    base: float  # the model's
    waves: np.ndarray  # (d_head/2,) tokens per turn
    slow: int  # pairs turning less than once over the context
    toy_base: float
    toy_waves: np.ndarray  # (d_head/2,)
    toy_slow: int


def waves(cfg: llama.LlamaConfig, toy_base: float) -> Waves:
    """The wavelengths of the model's pairs, with its base and with ``toy_base``."""
    d, context, base = cfg.d_head, int(cfg.context), float(cfg.rope_base)
    return Waves(
        d,
        context,
        base,
        rope_wavelengths(d, base),
        rope_slow_pairs(d, base, context),
        toy_base,
        rope_wavelengths(d, toy_base),
        rope_slow_pairs(d, toy_base, context),
    )


def wave_chart(
    t: Translator, series: list[tuple[str, list[float]]], context: int, presenter: bool
) -> dict:
    """Each pair's wavelength (tokens per turn, log scale), one line per base, and the
    context length as a horizontal rule: pairs above it turn less than once."""
    names = [name for name, _ in series]
    rows = charts.records(
        {
            "series": [name for name, w in series for _ in w],
            "pair": [i for _, w in series for i in range(len(w))],
            "wave": [float(x) for _, w in series for x in w],
            "text": [wavelength(x) for _, w in series for x in w],
            "slow": [bool(x > context) for _, w in series for x in w],
        }
    )
    last = max(len(w) for _, w in series) - 1
    x = {
        "field": "pair",
        "type": "quantitative",
        "title": t("rope.axis_pair"),
        "scale": {"domain": [0, last], "nice": False},
        "axis": {"tickMinStep": 1},
    }
    y = {
        "field": "wave",
        "type": "quantitative",
        "scale": {"type": "log"},
        "title": t("rope.axis_wave"),
        "axis": {"format": "~s"},
    }
    color = {
        "field": "series",
        "type": "nominal",
        "title": None,
        "sort": names,
        "scale": {"domain": names, "range": [charts.KEY_COLOR, charts.ACCENT]},
        "legend": {"orient": "bottom"},
    }
    tips = [
        {"field": "series", "type": "nominal", "title": t("rope.tip_base")},
        {"field": "pair", "type": "quantitative", "title": t("rope.axis_pair")},
        {"field": "text", "type": "nominal", "title": t("rope.axis_wave")},
    ]
    line = {"mark": {"type": "line", "point": False}, "encoding": {"x": x, "y": y, "color": color}}
    points = {
        "mark": {"type": "point", "filled": True, "size": 70},
        "encoding": {
            "x": x,
            "y": y,
            "color": color,
            "tooltip": tips,
            "shape": {
                "field": "slow",
                "type": "nominal",
                "legend": None,
                "scale": {"domain": [False, True], "range": ["circle", "triangle-up"]},
            },
        },
    }
    rule_data = {
        "values": [{"context": context, "label": t("rope.context_rule", n=grouped(context))}]
    }
    rule = {
        "data": rule_data,
        "mark": {
            "type": "rule",
            "color": charts.QUERY_COLOR,
            "strokeDash": [6, 4],
            "strokeWidth": 2,
        },
        "encoding": {"y": {"field": "context", "type": "quantitative"}},
    }
    label = {
        "data": rule_data,
        "mark": {
            "type": "text",
            "align": "left",
            "baseline": "bottom",
            "dx": 4,
            "dy": -4,
            "color": charts.QUERY_COLOR,
            "fontWeight": "bold",
        },
        "encoding": {
            "x": {"datum": 0},
            "y": {"field": "context", "type": "quantitative"},
            "text": {"field": "label", "type": "nominal"},
        },
    }
    return {
        "datasets": {"waves": rows},
        "data": {"name": "waves"},
        "width": 720 if presenter else 640,
        "height": 330 if presenter else 300,
        "layer": [line, points, rule, label],
    }


def wave_series(t: Translator, w: Waves) -> list[tuple[str, list[float]]]:
    """The chart's lines: the model's base, and the toy base if it is another."""
    series = [(t("rope.series_model", base=base_label(w.base)), w.waves.tolist())]
    if w.toy_base != w.base:
        series.append((t("rope.series_toy", base=base_label(w.toy_base)), w.toy_waves.tolist()))
    return series


def wave_facts(w: Waves) -> dict[str, str]:
    """The model's RoPE facts for running text."""
    return {
        "base": base_label(w.base),
        "d": str(w.d_head),
        "pairs": str(w.d_head // 2),
        "last": str(w.d_head // 2 - 1),
        "context": grouped(w.context),
        "shortest": wavelength(w.waves[0]),
        "longest": wavelength(w.waves[-1]),
        "slow": str(w.slow),
    }


def wave_notice(ctx: PageContext, w: Waves) -> list[str]:
    """Step 3's "what to notice"."""
    t = ctx.t
    facts = wave_facts(w)
    items = [t("rope.notice_waves", **facts)]
    if w.toy_base == w.base:
        items.append(t("rope.notice_same_base", **facts))
    else:
        key = "rope.notice_toy_more" if w.toy_slow > w.slow else "rope.notice_toy_fewer"
        items.append(t(key, toy=base_label(w.toy_base), toy_slow=w.toy_slow, **facts))
    return items


# Step 4: the real model ----------------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def queries(ids: tuple[int, ...]) -> list[LayerQueries]:
    """Every layer's queries before and after RoPE for the prompt (one forward pass, in its
    turn: :mod:`ui.turns`)."""
    m = loaded.smollm2()
    with model_turn(len(ids)):
        return layer_queries(m, ids)


def rotation(cfg: llama.LlamaConfig, lq: LayerQueries, head: int) -> Rotation:
    """The model's rotation of one head's queries, and the check that it is core's."""
    return rope_rotation(lq.before[head], lq.after[head], lq.cos, lq.sin, cfg.rope_base)


def model_chart(
    t: Translator, labels: list[str], cos: np.ndarray, shift: np.ndarray, presenter: bool
) -> dict:
    """The model's cos table (tokens × pairs) beside how far RoPE moved each pair of the
    head's queries."""
    pairs = [str(i) for i in range(cos.shape[1])]
    n = len(labels)
    cell = charts.fit_cell(len(pairs), n, 330, 400, lo=6, hi=22)
    # cells as wide as two panels of 32 pairs allow, and taller where the tokens leave room
    aspect = float(np.clip(min(400 / n, 22) / cell, 1.0, 2.5))
    common = {"x_title": t("rope.axis_pair"), "cell": cell, "annotate": False, "aspect": aspect}
    font = {"max_font": charts.SLIDE_FONT if presenter else 15}
    spec = charts.concat(
        [
            charts.heatmap(
                {"cos": cos},
                labels,
                pairs,
                "scores",
                y_title=t("rope.axis_token"),
                title=t("rope.cos_title"),
                domain=[-1.0, 1.0],
                **common,
                **font,
            ),
            charts.heatmap(
                {"shift": shift},
                labels,
                pairs,
                "weights",
                title=t("rope.shift_title"),
                domain=[0.0, float(np.max(shift)) or 1.0],
                **common,
                **font,
            ),
        ],
        spacing=30,
    )
    for part in spec["hconcat"]:  # every fourth pair named: 32 labels would run together
        part["encoding"]["x"]["axis"] |= {"labelExpr": EVERY_FOURTH, "labelOverlap": False}
    return spec


def model_notice(ctx: PageContext, cfg: llama.LlamaConfig, r: Rotation, n: int) -> list[str]:
    """Step 4's "what to notice"."""
    t = ctx.t
    last = len(r.turns) - 1
    return [
        t("rope.notice_first_row"),
        t(
            "rope.notice_turns",
            n=n,
            t0=num(r.turns[0], 2),
            last=last,
            tl=num(r.turns[last], 5),
            slow=r.slow,
            pairs=len(r.turns),
        ),
        t(
            "rope.notice_same_function",
            same=t("rope.yes" if r.same else "rope.no"),
            diff=sci(r.diff),
            base=base_label(cfg.rope_base),
            d=cfg.d_head,
        ),
    ]


# Ask the class -----------------------------------------------------------------------------
# Step 1's opening settings (the toy q and k, base 10 000, q at 5, k at 2, both shifted by
# 100): does the score depend on the positions themselves or only on how far apart they are?
DEPENDS_OPTIONS = ("offset", "absolute", "neither")


def _ask_depends_truth() -> Truth:
    toy = Toy(float(BASE.default), SEED.default)
    turn = pair_view(toy, PAIR.default, M.default, N.default, SHIFT.default)
    return Truth(right=frozenset({score_depends_on(turn)}))


ASK_DEPENDS = Question(
    "rope.depends", "choice", _ask_depends_truth, choices("rope.ask.depends", DEPENDS_OPTIONS)
)
QUESTIONS = (ASK_DEPENDS,)
