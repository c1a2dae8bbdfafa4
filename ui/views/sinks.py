"""Presentation helpers for the sliding-window and attention-sink page (pages/15_sinks.py).

Controls, charts, words and the page's steps (drawn by :func:`ui.steps.run`) only: every
number comes from :mod:`core.masks`, :mod:`core.findings.sinks` and, for the real model,
:mod:`models.sinks_probe` (one masked forward pass of SmolLM2 per configuration).

The model runs only when the reader presses Run, and only what this session has not got
yet: full attention (the same for everyone), the window alone and the window with its
sinks, each cached per configuration for every session (:func:`model_run`, bounded). The
press is a callback that leaves a request (:data:`REQUEST_KEY`) for the next run of the
page; a press for a configuration the session already holds is dropped, and Streamlit folds
presses made while a run is going into one rerun, which finds the finished runs in the
cache. The results stay in the session (:data:`RUNS_KEY`, the last :data:`KEPT_RUNS`).
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
import streamlit as st

import core
from core.findings.sinks import (
    ShareSummary,
    WindowFacts,
    mean_over,
    perplexity_times,
    share_summary,
    window_facts,
)
from core.masks import FUTURE, SINK, TOO_FAR, WINDOW
from models import smollm
from models.sinks_probe import SinkRun, sink_run
from ui import charts, loaded, notes
from ui import prompt as typed
from ui.blocks import lazy_box
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.params import Choice, Int, select, slider
from ui.safe import plain
from ui.steps import Controls, Got, View
from ui.turns import model_turn

N = Int("n", 24, 8, 64)  # tokens of the toy mask
WINDOW_SIZE = Int("window", 4, 1, 32)
SINKS = Int("sinks", 1, 0, 4)
LAYERS = Int("layers", 2, 1, 8)
KEEPS = ("32", "64", "128", "256")
KEEP = Choice("keep", "64", KEEPS)  # the real model's window
SINK_TOKENS = Int("sink", 1, 0, 8)  # the real model's sink tokens
SCORED = 200  # the perplexity is over the text's last this many tokens
BACK = Int("back", 8, 0, SCORED)  # which prediction: this many tokens before the end
KEPT_RUNS = 8  # configurations a session keeps
RUNS_KEY = "_sinks_runs"
REQUEST_KEY = "_sinks_request"
SHARE = 0.6  # presenter mode: the chart column's share of the width
CONTEXT_TOKENS = 14  # tokens of text shown before the predicted one
HIGH, LOW = 0.2, 0.01  # a layer gives the first token "much" / "almost no" attention
STATE_KEYS = {WINDOW: "window", SINK: "sink", TOO_FAR: "too_far", FUTURE: "future"}
STATE_COLORS = {
    WINDOW: charts.KEY_COLOR,
    SINK: charts.ACCENT,
    TOO_FAR: "#bdbdbd",
    FUTURE: "#f1f1f1",
}
RUN_COLORS = ["#444444", charts.QUERY_COLOR, charts.KEY_COLOR]  # full, window, window + sinks
MASK = (
    r"\text{visible}(i, j) = \big[\, j \le i \,\big] \wedge "
    r"\big[\, i - W < j \;\vee\; j < S \,\big]"
)


# Small helpers ---------------------------------------------------------------------------


def num(value: float, digits: int = 1) -> str:
    """A number in running text (:func:`ui.notes.num`), by default to one decimal: the
    perplexities."""
    return notes.num(value, digits)


def pct(value: float) -> str:
    """A share as a percentage: ``0.391`` -> ``"39.1 %"``."""
    return f"{100 * float(value):.1f}\u00a0%"  # no line break before the sign


def span(runs: list[tuple[int, int]]) -> str:
    """Layer runs as read: ``[(0, 1), (11, 11)]`` -> ``"0–1, 11"``."""
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


# Step 1: the toy mask --------------------------------------------------------------------


@dataclass(frozen=True)
class Toy:
    """Step 1's settings."""

    n: int
    window: int
    sinks: int
    layers: int


def toy_controls(ctx: PageContext, got: Got) -> Toy:
    """n and the window side by side, the sinks and the layers side by side."""
    t = ctx.t
    a, b = st.columns(2)
    with a:
        n = slider(ctx, N, t("sinks.n"))
    with b:
        window = slider(ctx, WINDOW_SIZE, t("sinks.window"), help=t("sinks.window_help"))
    c, d = st.columns(2)
    with c:
        sinks = slider(ctx, SINKS, t("sinks.sinks"), help=t("sinks.sinks_help"))
    with d:
        layers = slider(ctx, LAYERS, t("sinks.layers"), help=t("sinks.layers_help"))
    return Toy(int(n), int(window), int(sinks), int(layers))


@dataclass(frozen=True)
class MaskView(WindowFacts):
    """Step 1's numbers: the toy's settings and :class:`core.findings.sinks.WindowFacts`."""

    toy: Toy


@st.cache_data(max_entries=64, show_spinner=False)
def mask_view(toy: Toy) -> MaskView:
    """The mask, its reach through the layers and the facts the page states (cached)."""
    f = window_facts(toy.n, toy.window, toy.sinks, toy.layers)
    return MaskView(**vars(f), toy=toy)


def mask_chart(t: Translator, v: MaskView, presenter: bool) -> dict:
    """Left: the mask, each cell coloured by why it is visible or hidden. Right: after how
    many layers each query can draw on each token (the last row framed)."""
    n = v.toy.n
    labels = [str(i) for i in range(n)]
    i, j = np.divmod(np.arange(n * n), n)
    names = [t(f"sinks.state_{STATE_KEYS[s]}") for s in (WINDOW, SINK, TOO_FAR, FUTURE)]
    depth = v.depth.ravel()
    cells = charts.records(
        {
            "i": i,
            "j": j,
            "row": [labels[x] for x in i],
            "col": [labels[x] for x in j],
            "state": [names[s] for s in v.states.ravel()],
            "depth": [int(d) if d else None for d in depth],
            "text": [str(int(d)) if d else "–" for d in depth],
            "last": (i == n - 1).tolist(),  # the framed row
        }
    )
    # two n-cell panels in the room less their axes, titles and gap (students: so that fit
    # need not shrink them again, and a step of n keeps the spec while the cells keep their
    # size on the ladder)
    cell = charts.fit_cell(2 * n, n, 700 if presenter else 640, 380, lo=6, hi=26)
    crowded = charts.SKIP_TOUCHING if cell < charts.CROWDED_STEP else {}
    # the axes in the order of the index fields, the frame on a field of the data: another n
    # leaves the spec as it is (while the cells keep their size), the chart swaps its data
    x = {
        "field": "col",
        "type": "ordinal",
        "sort": charts.by_index("j"),
        "title": t("sinks.axis_key"),
        "axis": {"labelAngle": 0, **crowded},
    }
    y = {
        "field": "row",
        "type": "ordinal",
        "sort": charts.by_index("i"),
        "title": t("sinks.axis_query"),
        "axis": crowded,
    }
    mask_view_ = {
        "title": t("sinks.mask_title", w=v.toy.window, s=v.toy.sinks),
        "width": {"step": cell},
        "height": {"step": cell},
        "mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5 if cell >= 8 else 0},
        "encoding": {
            "x": x,
            "y": y,
            "color": {
                "field": "state",
                "type": "nominal",
                "title": None,
                "scale": {
                    "domain": names,
                    "range": [STATE_COLORS[s] for s in (WINDOW, SINK, TOO_FAR, FUTURE)],
                },
                "legend": {"orient": "bottom", "direction": "horizontal", "columns": 2},
            },
            "tooltip": [
                {"field": "row", "type": "nominal", "title": t("sinks.axis_query")},
                {"field": "col", "type": "nominal", "title": t("sinks.axis_key")},
                {"field": "state", "type": "nominal", "title": t("sinks.tip_state")},
            ],
        },
    }
    layers = v.toy.layers
    depth_view = {
        "title": t("sinks.reach_title", layers=layers),
        "width": {"step": cell},
        "height": {"step": cell},
        "encoding": {"x": {**x, "title": t("sinks.axis_source")}, "y": y},
        "layer": [
            {
                "mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5 if cell >= 8 else 0},
                "encoding": {
                    "color": {
                        "condition": {"test": "datum.depth === null", "value": "#f1f1f1"},
                        "field": "depth",
                        "type": "quantitative",
                        "title": t("sinks.depth"),
                        "scale": {"scheme": "blues", "domain": [0, layers], "reverse": False},
                        "legend": {
                            "orient": "bottom",
                            "direction": "horizontal",
                            "tickCount": min(layers, 8),
                            "format": "d",
                        },
                    },
                    "tooltip": [
                        {"field": "row", "type": "nominal", "title": t("sinks.axis_query")},
                        {"field": "col", "type": "nominal", "title": t("sinks.axis_source")},
                        {"field": "text", "type": "nominal", "title": t("sinks.depth")},
                    ],
                },
            },
            {
                "transform": [{"filter": "datum.last"}],
                "mark": {
                    "type": "rect",
                    "fillOpacity": 0,
                    "stroke": charts.FRAME,
                    "strokeWidth": 2,
                },
                "encoding": {"x": {"value": 0}, "x2": {"value": "width"}},
            },
        ],
    }
    return {
        "datasets": {"cells": cells},
        "data": {"name": "cells"},
        "hconcat": [mask_view_, depth_view],
        "spacing": 28,
        "resolve": {"scale": {"color": "independent"}},
    }


def mask_notice(ctx: PageContext, v: MaskView) -> list[str]:
    """Step 1's "what to notice"."""
    t, toy = ctx.t, v.toy
    items = [t("sinks.notice_cache", kept=v.kept, w=toy.window, s=toy.sinks, n=toy.n)]
    key = "sinks.notice_reach" if v.full_reach else "sinks.notice_reach_start"
    items.append(
        t(
            key,
            layers=toy.layers,
            w1=toy.window - 1,
            reach=v.reach,
            last=toy.n - 1,
            first=v.first,
            back=v.back,
        )
    )
    if toy.sinks:
        key = "sinks.notice_toy_sink" if toy.sinks == 1 else "sinks.notice_toy_sinks"
        items.append(t(key, s=toy.sinks, last=toy.sinks - 1))
    return items


def mask_arrays(v: MaskView) -> dict[str, np.ndarray]:
    """Step 1's export."""
    toy = v.toy
    mask = core.sliding_window_mask(toy.n, toy.window, toy.sinks)
    return {
        "mask": mask,
        "states": v.states,
        "reach_depth": v.depth,
        "n": np.array(toy.n),
        "window": np.array(toy.window),
        "sinks": np.array(toy.sinks),
        "layers": np.array(toy.layers),
    }


# Steps 2 and 3: the real model -----------------------------------------------------------


def model_controls(ctx: PageContext, got: Got) -> tuple[int, int]:
    """The window W and the sink tokens S of the real model (steps 2 and 3)."""
    t = ctx.t
    window = select(ctx, KEEP, t("sinks.keep"), help=t("sinks.keep_help"))
    sinks = slider(ctx, SINK_TOKENS, t("sinks.sink_tokens"), help=t("sinks.sink_tokens_help"))
    return int(window), int(sinks)


def back_control(ctx: PageContext, got: Got) -> int:
    """Step 2: which prediction, counted back from the end of the text."""
    t = ctx.t
    return int(slider(ctx, BACK, t("sinks.back"), help=t("sinks.back_help", scored=SCORED)))


Config = tuple[int | None, int]  # (window, sinks); (None, 0) is full attention


def configs(window: int, sinks: int) -> list[Config]:
    """What the chart compares: full attention, the window alone, and with its sinks."""
    return [(None, 0), (window, 0)] + ([(window, sinks)] if sinks else [])


def config_label(t: Translator, c: Config) -> str:
    """A configuration as the chart names it."""
    window, sinks = c
    if window is None:
        return t("sinks.cfg_full")
    return t("sinks.cfg_sinks", w=window, s=sinks) if sinks else t("sinks.cfg_window", w=window)


def run_button(ctx: PageContext, got: Got) -> None:
    """The Run button (steps 2 and 3, below the window and sinks it runs): its press leaves
    a request for the page's next run (:func:`runs`)."""
    window, sinks = got[MODEL_CONTROLS]
    st.button(
        ctx.t("sinks.run"),
        type="primary",
        icon=":material/play_arrow:",
        key="sinks_run",
        on_click=_request,
        args=(window, sinks),
        help=ctx.t("sinks.run_help"),
    )


def _request(window: int, sinks: int) -> None:
    """Button callback: ask for the configurations this session does not hold yet."""
    held = st.session_state.get(RUNS_KEY, {})
    if any(c not in held for c in configs(window, sinks)):
        st.session_state[REQUEST_KEY] = (window, sinks)


@st.cache_data(max_entries=4, show_spinner=False)
def text_tokens() -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The shipped English text as the model reads it: ids and readable token texts."""
    m = loaded.smollm2()
    ids = smollm.encode(m, smollm.sinks_text())
    return tuple(ids), tuple(smollm.token_labels(m, ids))


@st.cache_data(max_entries=16, show_spinner=False)
def model_run(window: int | None, sinks: int) -> SinkRun:
    """One configuration on the shipped text (~3 s on 2 cores; cached for every session), in
    its turn (:mod:`ui.turns`)."""
    ids, _ = text_tokens()  # before the turn, as the model
    m = loaded.smollm2()
    with model_turn(len(ids)):
        return sink_run(m, ids, window, sinks, SCORED)


@st.cache_data(max_entries=64, show_spinner=False)
def token_texts(ids: tuple[int, ...]) -> tuple[str, ...]:
    """Readable texts of predicted tokens."""
    return tuple(smollm.token_labels(loaded.smollm2(), list(ids)))


def runs(ctx: PageContext, window: int, sinks: int) -> dict[Config, SinkRun]:
    """This session's runs, after doing the pending request (if any) behind a spinner."""
    held = dict(st.session_state.get(RUNS_KEY, {}))
    request = st.session_state.pop(REQUEST_KEY, None)
    if request is not None:
        todo = [c for c in configs(*request) if c not in held]
        with st.spinner(ctx.t("sinks.running", count=len(todo))):
            for c in todo:
                held[c] = model_run(*c)
                held = dict(list(held.items())[-KEPT_RUNS:])  # the newest ones
                st.session_state[RUNS_KEY] = held
    return held


@dataclass(frozen=True)
class Predictions:
    """Step 2's numbers: each configuration's perplexity and its guesses at one position."""

    labels: list[str]  # configuration names, in chart order
    done: list[bool]  # whether this session has run each
    perplexity: list[float | None]
    position: int  # the predicted token's index (n: after the text)
    target: str | None  # the token that really comes there (None after the text)
    context: str  # the text just before it
    tops: list[list[tuple[str, float]]]  # per configuration, its top tokens and probabilities
    target_prob: list[float | None]  # per configuration, the probability of the real token


def predictions(
    t: Translator, held: dict[Config, SinkRun], window: int, sinks: int, back: int
) -> Predictions:
    """What step 2 shows for ``back`` tokens before the end of the text."""
    ids, labels = text_tokens()
    n = len(ids)
    position = n - back
    wanted = configs(window, sinks)
    got = [held.get(c) for c in wanted]
    tops, target_prob = [], []
    for r in got:
        if r is None:
            tops.append([])
            target_prob.append(None)
            continue
        row = r.row(position)
        words = token_texts(tuple(int(i) for i in r.top_ids[row]))
        tops.append(list(zip(words, map(float, r.top_probs[row]), strict=True)))
        target_prob.append(float(r.target_prob[row]) if position < n else None)
    return Predictions(
        labels=[config_label(t, c) for c in wanted],
        done=[r is not None for r in got],
        perplexity=[None if r is None else r.perplexity for r in got],
        position=position,
        target=labels[position] if position < n else None,
        context="".join(labels[max(0, position - CONTEXT_TOKENS) : position]),
        tops=tops,
        target_prob=target_prob,
    )


def prediction_chart(t: Translator, p: Predictions, presenter: bool) -> dict:
    """Top: the perplexity of the text's last tokens per configuration (a bar per run, a
    note where the session has not run it). Below: each configuration's five most likely
    next tokens at the chosen position, the token that really comes there highlighted."""
    pending = t("sinks.not_run")
    ppl = charts.records(
        {
            "config": p.labels,
            "ppl": [x for x in p.perplexity],
            "text": [num(x) if x is not None else pending for x in p.perplexity],
            "x": [x if x is not None else 0.0 for x in p.perplexity],
        }
    )
    colors = RUN_COLORS[: len(p.labels)]
    color = {
        "field": "config",
        "type": "nominal",
        "title": None,
        "legend": None,
        "scale": {"domain": p.labels, "range": colors},
    }
    y = {
        "field": "config",
        "type": "nominal",
        "sort": p.labels,
        "title": None,
        "axis": {"labelLimit": 260},
    }
    top = max([x for x in p.perplexity if x is not None], default=1.0)
    bars = {
        "title": notes.subtitled(
            t("sinks.ppl_title"), t("sinks.ppl_sub", scored=SCORED), presenter
        ),
        "width": 560,
        "height": {"step": 26},
        "data": {"name": "ppl"},
        "encoding": {"y": y},
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "x": {
                        "field": "ppl",
                        "type": "quantitative",
                        "title": None,
                        "scale": {"domain": [0, top * 1.2]},
                    },
                    "color": color,
                    "tooltip": [
                        {"field": "config", "type": "nominal", "title": t("sinks.tip_cfg")},
                        {"field": "text", "type": "nominal", "title": t("sinks.tip_ppl")},
                    ],
                },
            },
            {
                "mark": {"type": "text", "align": "left", "dx": 5, "fontWeight": "bold"},
                "encoding": {
                    "x": {"field": "x", "type": "quantitative"},
                    "text": {"field": "text", "type": "nominal"},
                },
            },
        ],
    }
    rows = []
    for label, done, top5 in zip(p.labels, p.done, p.tops, strict=True):
        if not done:
            rows.append(
                {
                    "config": label,
                    "rank": 0,
                    "token": "",
                    "prob": None,
                    "text": pending,
                    "hit": False,
                }
            )
            continue
        for rank, (word, prob) in enumerate(top5):
            rows.append(
                {
                    "config": label,
                    "rank": rank,
                    "token": _shown(word),
                    "prob": prob,
                    "text": pct(prob),
                    "hit": p.target is not None and word == p.target,
                }
            )
    guess = charts.records({k: [r[k] for r in rows] for k in rows[0]})

    def panel(index: int, label: str) -> dict:
        hit = p.target_prob[index]
        sub = (
            t("sinks.real_prob", token=_shown(p.target), p=pct(hit))
            if hit is not None
            else t("sinks.after_text")
            if p.done[index]
            else pending
        )
        return {
            "title": notes.subtitled(label, sub, presenter),
            "width": 150,
            "height": {"step": 20},
            "data": {"name": "guess"},
            "transform": [{"filter": {"field": "config", "equal": label}}],
            "encoding": {
                "y": {
                    "field": "token",
                    "type": "nominal",
                    "title": None,
                    "sort": {"field": "rank", "op": "min", "order": "ascending"},
                    "axis": {"labelLimit": 110},
                }
            },
            "layer": [
                {
                    "mark": {"type": "bar"},
                    "encoding": {
                        "x": {
                            "field": "prob",
                            "type": "quantitative",
                            "title": None,
                            "scale": {"domain": [0, 1]},
                            "axis": {"format": "%", "tickCount": 3},
                        },
                        "color": {
                            "condition": {"test": "datum.hit", "value": charts.ACCENT},
                            "value": colors[index],
                        },
                        "tooltip": [
                            {"field": "token", "type": "nominal", "title": t("sinks.tip_token")},
                            {"field": "text", "type": "nominal", "title": t("sinks.tip_prob")},
                        ],
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "dx": 3},
                    "encoding": {
                        "x": {"field": "prob", "type": "quantitative"},
                        "text": {"field": "text", "type": "nominal"},
                    },
                },
            ],
        }

    where = (
        t("sinks.guess_title", token=_shown(p.target))
        if p.target is not None
        else t("sinks.guess_after")
    )
    context = "…" + " ".join(p.context.split())[-70:]
    return {
        "datasets": {"ppl": ppl, "guess": guess},
        "vconcat": [
            bars,
            {
                "title": notes.subtitled(where, context, presenter),
                "hconcat": [panel(k, label) for k, label in enumerate(p.labels)],
                "spacing": 22,
            },
        ],
        "spacing": 26,
        "resolve": {"scale": {"color": "independent", "x": "independent", "y": "independent"}},
    }


def _shown(token: str | None) -> str:
    """A token in a chart: quoted, so that a leading space shows (“ boats”)."""
    return "" if token is None else f"“{token}”"


def prediction_notice(ctx: PageContext, p: Predictions, window: int, sinks: int) -> list[str]:
    """Step 2's "what to notice" (only what this session has run)."""
    t = ctx.t
    if not p.done[0]:
        return [t("sinks.notice_press")]
    full = p.perplexity[0]
    items = []
    if len(p.done) > 1 and p.done[1]:
        items.append(
            t(
                "sinks.notice_window",
                full=num(full),
                w=window,
                win=num(p.perplexity[1]),
                times=num(perplexity_times(p.perplexity[1], full)),
            )
        )
    if len(p.done) > 2 and p.done[2]:
        items.append(
            t(
                "sinks.notice_sinks",
                w=window,
                s=sinks,
                both=num(p.perplexity[2]),
                win=num(p.perplexity[1]),
                full=num(full),
            )
        )
    elif sinks == 0 and p.done[1]:
        items.append(t("sinks.notice_no_sinks"))
    if p.target is not None and all(p.done):
        probs = t("sinks.list_sep").join(
            f"{label} {pct(x)}" for label, x in zip(p.labels, p.target_prob, strict=True)
        )
        items.append(t("sinks.notice_token", token=plain(_shown(p.target)), probs=probs))
    return items


def prediction_arrays(
    held: dict[Config, SinkRun], window: int, sinks: int
) -> dict[str, np.ndarray]:
    """Step 2's export: per configuration its perplexity, each scored token's negative
    log-likelihood and the text's token ids."""
    ids, _ = text_tokens()
    out: dict[str, np.ndarray] = {"ids": np.array(ids), "scored": np.array(SCORED)}
    for c in configs(window, sinks):
        r = held.get(c)
        if r is None:
            continue
        name = "full" if c[0] is None else f"window{c[0]}_sinks{c[1]}"
        out[f"{name}_perplexity"] = np.array(r.perplexity)
        out[f"{name}_token_nll"] = r.token_nll
        out[f"{name}_first_share"] = r.first_share
    return out


def text_box(ctx: PageContext) -> None:
    """The shipped text, to read: a closed box, drawn only once it is opened."""

    def draw() -> None:
        for part in smollm.sinks_text().split("\n\n"):
            st.markdown(plain(part, 100_000))

    lazy_box(ctx.t("sinks.text_box"), "sinks_text", draw, icon=":material/article:")


# Step 3: where attention goes ------------------------------------------------------------


@dataclass(frozen=True)
class Shares:
    """Step 3's numbers: each configuration's attention on the first token, per layer."""

    labels: list[str]
    done: list[bool]
    shares: list[np.ndarray | None]  # (L,) each
    summary: ShareSummary | None  # of full attention
    layers: int


def shares(
    t: Translator, held: dict[Config, SinkRun], window: int, sinks: int, layers: int
) -> Shares:
    """What step 3 shows."""
    wanted = configs(window, sinks)
    got = [held.get(c) for c in wanted]
    full = got[0]
    summary = None if full is None else share_summary(full.first_share, HIGH, LOW)
    return Shares(
        [config_label(t, c) for c in wanted],
        [r is not None for r in got],
        [None if r is None else r.first_share for r in got],
        summary,
        layers,
    )


def share_chart(t: Translator, s: Shares, presenter: bool) -> dict:
    """Each layer's mean attention weight on the first token, one line per configuration
    this session has run."""
    rows = [
        {"layer": layer, "config": label, "share": float(x), "text": pct(x)}
        for label, values in zip(s.labels, s.shares, strict=True)
        if values is not None
        for layer, x in enumerate(values)
    ]
    if not rows:
        rows = [{"layer": 0, "config": s.labels[0], "share": None, "text": ""}]
    data = charts.records({k: [r[k] for r in rows] for k in rows[0]})
    colors = RUN_COLORS[: len(s.labels)]
    x = {
        "field": "layer",
        "type": "quantitative",
        "title": t("sinks.axis_layer"),
        "scale": {"domain": [0, s.layers - 1], "nice": False},
        "axis": {"tickMinStep": 1},
    }
    y = {
        "field": "share",
        "type": "quantitative",
        "title": None,
        "scale": {"domain": [0, 1]},
        "axis": {"format": "%"},
    }
    layers = [
        {
            "data": {"name": "shares"},
            "mark": {"type": "line", "point": {"filled": True, "size": 40}},
            "encoding": {
                "x": x,
                "y": y,
                "color": {
                    "field": "config",
                    "type": "nominal",
                    "title": None,
                    "scale": {"domain": s.labels, "range": colors},
                    "legend": {"orient": "bottom", "direction": "horizontal"},
                },
                "tooltip": [
                    {"field": "config", "type": "nominal", "title": t("sinks.tip_cfg")},
                    {"field": "layer", "type": "quantitative", "title": t("sinks.axis_layer")},
                    {"field": "text", "type": "nominal", "title": t("sinks.tip_share")},
                ],
            },
        },
    ]
    if not any(s.done):
        layers.append(
            {
                "data": {"values": [{"label": t("sinks.not_run")}]},
                "mark": {"type": "text", "fontSize": 16, "color": "#777"},
                "encoding": {
                    "x": {"datum": (s.layers - 1) / 2},
                    "y": {"datum": 0.5},
                    "text": {"field": "label", "type": "nominal"},
                },
            }
        )
    return {
        "title": notes.subtitled(t("sinks.share_title"), t("sinks.share_sub"), presenter),
        "datasets": {"shares": data},
        "width": 700,
        "height": 280,
        "layer": layers,
    }


def share_notice(ctx: PageContext, s: Shares) -> list[str]:
    """Step 3's "what to notice": the finding, stated from this run."""
    t = ctx.t
    if s.summary is None:
        return [t("sinks.notice_press")]
    sm = s.summary
    items = []
    if sm.high is not None:
        items.append(
            t(
                "sinks.notice_high",
                a=sm.high[0],
                b=sm.high[1],
                lo=pct(sm.high_range[0]),
                hi=pct(sm.high_range[1]),
                high=pct(HIGH),
            )
        )
    if sm.low:
        items.append(t("sinks.notice_low", layers=span(sm.low), top=pct(sm.low_max), low=pct(LOW)))
    if len(s.done) > 2 and s.done[2] and s.done[1]:
        sink, win, full = (pct(mean_over(x, sm.high)) for x in s.shares)
        items.append(
            t(
                "sinks.notice_kept_sink",
                cfg=s.labels[2],
                win_cfg=s.labels[1],
                sink=sink,
                win=win,
                full=full,
            )
        )
    return items


def layer_count() -> int:
    """The model's number of layers (from its config)."""
    return loaded.smollm2().config.n_layers


# The steps -------------------------------------------------------------------------------

# on a slide every step's controls sit at the top of its notes, beside the chart
TOY_CONTROLS = Controls(toy_controls, slide="notes")
MODEL_CONTROLS = Controls(model_controls, slide="notes")  # steps 2 and 3
BACK_CONTROL = Controls(back_control, slide="notes")
RUN_BUTTON = Controls(run_button, slide="notes")  # steps 2 and 3: below the window and sinks


def mask_step(v: View) -> None:
    """Step 1: the toy's sliding-window mask and its reach through the layers."""
    t, toy = v.t, v[TOY_CONTROLS]
    mv = mask_view(toy)
    chart = v.chart(mask_chart, t, mv, v.presenter)
    v.text("sinks.s1_text")
    v.lead.latex(MASK)
    v.notice(mask_notice(v.ctx, mv))
    caption = t("sinks.s1_caption", n=toy.n, w=toy.window, s=toy.sinks, layers=toy.layers)
    v.export("sinks_mask", chart, arrays=mask_arrays(mv), caption=caption)


def predictions_step(v: View) -> None:
    """Step 2: SmolLM2's perplexity with full attention, a window, and the window with its
    sinks, and their guesses at one position (the model runs only on Run)."""
    t, (window, sinks), back = v.t, v[MODEL_CONTROLS], v[BACK_CONTROL]
    if not typed.loaded_model(v.ctx):
        return
    with v.figure:  # a run's spinner where its chart comes
        held = runs(v.ctx, window, sinks)
    p = predictions(t, held, window, sinks, back)
    chart = v.chart(prediction_chart, t, p, v.presenter)
    if not v.presenter:
        v.lead.markdown(t("sinks.s2_text", scored=SCORED, n=len(text_tokens()[0])))
        v.lead.caption(t("sinks.positions"))
    v.notice(prediction_notice(v.ctx, p, window, sinks))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    with v.below if v.presenter else v.notes:  # a slide: below the chart
        text_box(v.ctx)
        arrays = partial(prediction_arrays, held, window, sinks)  # built when asked for
        export_panel(v.ctx, "sinks_perplexity", chart, arrays=arrays)


def shares_step(v: View) -> None:
    """Step 3: each layer's attention on the first token, per configuration run."""
    t, (window, sinks) = v.t, v[MODEL_CONTROLS]
    if not typed.loaded_model(v.ctx):
        return
    with v.figure:  # a run's spinner where its chart comes
        held = runs(v.ctx, window, sinks)
    s = shares(t, held, window, sinks, layer_count())
    chart = v.chart(share_chart, t, s, v.presenter)
    v.text("sinks.s3_text")
    v.notice(share_notice(v.ctx, s))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links(("decoder", t("sinks.decoder_link")))
    v.export("sinks_first_share", chart, arrays=partial(prediction_arrays, held, window, sinks))
