"""Words, charts and steps of the home page (dashboard.py): why attention, the formula, and
the five steps with live shapes. Every number comes from :mod:`core`."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.experiments import path_lengths
from core.masks import row_sums
from ui import charts, stepbar
from ui.blocks import link
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import untrained
from ui.pages import in_section
from ui.params import Int, slider
from ui.sentence import D_K, D_MODEL, D_V
from ui.steps import Controls, Got, View

DISTANCE = Int("distance", 50, 2, 200)
N = Int("n", 6, 2, 32)
FORMULA = r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"


# Controls --------------------------------------------------------------------------------


def distance_control(ctx: PageContext, got: Got) -> int:
    """Step 1: the longest distance between two tokens."""
    return int(slider(ctx, DISTANCE, ctx.t("home.distance")))


@dataclass(frozen=True)
class Sizes:
    """Step 3's sizes: tokens and the widths of the model and of the projections."""

    n: int
    d_model: int
    d_k: int
    d_v: int


def size_controls(ctx: PageContext, got: Got) -> Sizes:
    """Step 3: n and d_model, then d_k and d_v, two a row."""
    c1, c2 = st.columns(2)
    c3, c4 = st.columns(2)
    with c1:
        n = slider(ctx, N, ctx.t("home.n"))
    with c2:
        d_model = slider(ctx, D_MODEL, "d_model")
    with c3:
        d_k = slider(ctx, D_K, "d_k")
    with c4:
        d_v = slider(ctx, D_V, "d_v")
    return Sizes(int(n), int(d_model), int(d_k), int(d_v))


# a slide: the distance beside the chart, where the lecturer drags it; the sizes folded above
# the five cards
PATH = Controls(distance_control, box="home.why_settings", slide="notes")
SIZES = Controls(size_controls, box="home.settings", slide="lead", fold="home.settings")


# Words and charts ------------------------------------------------------------------------


def path_data(
    t: Translator, distance: np.ndarray, rnn: np.ndarray, attention: np.ndarray
) -> pd.DataFrame:
    """The two path-length lines, one row per distance and model."""
    return pd.concat(
        [
            pd.DataFrame({"distance": distance, "steps": rnn, "model": t("home.rnn")}),
            pd.DataFrame({"distance": distance, "steps": attention, "model": t("home.attention")}),
        ]
    )


Stage = tuple[str, str, list[list[tuple[str, np.ndarray]]], str]


def stages(trace: core.AttentionTrace) -> list[Stage]:
    """The five steps: name, formula, each one's shapes labelled (input → outputs) and the
    page that explains it."""
    return [
        (
            "project",
            r"\begin{aligned}Q&=XW^Q\\K&=XW^K\\V&=XW^V\end{aligned}",
            [[("X", trace.x)], [("Q, K", trace.q), ("V", trace.v)]],
            "qkv",
        ),
        ("score", r"QK^\top", [[("QKᵀ", trace.scores)]], "scaling"),
        ("scale", r"QK^\top/\sqrt{d_k}", [[("QKᵀ/√d_k", trace.scaled)]], "scaling"),
        ("softmax", r"\mathrm{softmax}(\cdot)", [[("α", trace.weights)]], "softmax"),
        ("mix", r"\alpha V", [[("αV", trace.output)]], "weighted_sum"),
    ]


def stage_cards(ctx: PageContext, found: list[Stage]) -> None:
    """One bordered card per step, side by side: its name, formula, shapes and link."""
    t = ctx.t
    cols = st.columns(len(found))
    for i, (col, (name, formula, shapes, target)) in enumerate(zip(cols, found, strict=True)):
        with col, st.container(border=True, height="stretch"):
            st.markdown(f"**{i + 1}. {t(f'home.step_{name}')}**")
            st.latex(formula)
            st.markdown(
                " →  \n".join("  \n".join(f"`{a} {m.shape}`" for a, m in g) for g in shapes)
            )
            st.caption(t(f"home.step_{name}_text"))
            link(ctx, target)


def where_to_start(ctx: PageContext) -> None:
    """For a first-time student: the first concept page, then today's attention pages."""
    start = stepbar.neighbours("home")[1]
    if start is None:
        return
    t = ctx.t
    st.markdown(t("home.start_here"))
    link(ctx, start.id, t("home.start_link", page=t(f"nav.{start.id}")))
    st.markdown(t("home.today"))
    with st.container(horizontal=True):
        for info in in_section("today"):
            link(ctx, info.id)


# The steps -------------------------------------------------------------------------------


def why(v: View) -> None:
    """Step 1: how many sequential steps separate two tokens, in an RNN and in attention."""
    t, longest = v.t, v[PATH]
    data = path_data(t, *path_lengths(longest))
    chart = v.chart(
        charts.lines,
        data,
        "distance",
        "steps",
        "model",
        title=t("home.path_chart"),
        x_title=t("home.distance_axis"),
        y_title=t("home.steps_axis"),
        color_domain=[t("home.rnn"), t("home.attention")],
        width=620,
        height=300,
    )
    v.notes.markdown(t("home.why_text"))
    v.notice([t("home.notice_rnn", d=longest), t("home.notice_attention")])
    v.export("path_lengths", chart, data=data)


def formula(v: View) -> None:
    """Step 2: the formula, and where it reads as a database lookup."""
    v.lead.latex(FORMULA)
    v.lead.markdown(v.t("home.formula_text"))
    v.links(("lookup", v.t("home.lookup_link")))


def pipeline(v: View) -> None:
    """Step 3: the five steps as cards with the live shapes of their matrices."""
    t, s = v.t, v[SIZES]
    x = core.lesson_inputs(s.n, s.d_model)
    trace = core.self_attention_trace(x, *core.init_projections(s.d_model, s.d_k, s.d_v))
    with v.figure:
        stage_cards(v.ctx, stages(trace))
    row_sum = float(row_sums(trace.weights)[0])  # the first query's weights
    v.notice(
        [
            t("home.notice_shapes", n=s.n, d_v=s.d_v),
            t("home.notice_rowsum", s=f"{row_sum:.3f}", d_v=s.d_v),
        ]
    )
    with v.notes:
        untrained(v.ctx)
        if not v.presenter:  # where a first-time student goes next
            where_to_start(v.ctx)
