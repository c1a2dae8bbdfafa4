"""Home page: why attention, the formula, and the five steps with live shapes."""

import pandas as pd
import streamlit as st

import core
from core.experiments import path_lengths
from core.masks import row_sums
from ui import charts, stepbar
from ui.blocks import frame, header, intro, link, notice
from ui.exports import export_panel
from ui.notes import untrained
from ui.pages import in_section
from ui.params import Int, slider
from ui.sentence import settings_box
from ui.shell import shell

ctx = shell("home")
t = ctx.t
header(ctx)
titles = [t("home.why_title"), t("home.formula_title"), t("home.pipeline_title")]
steps = stepbar.stepper(ctx, titles)


@st.fragment
def why(on_screen: bool) -> None:
    """Step 1 (a fragment: its slider reruns only this step); off screen, just its slider."""
    f = frame(ctx, 0.6) if on_screen else None
    # students: the sidebar; a slide: beside the chart, where the lecturer drags it
    place = (f.notes if ctx.presenter else settings_box(ctx, t("home.why_settings"))) if f else None
    with place or st.container():
        distance_max = slider(ctx, Int("distance", 50, 2, 200), t("home.distance"))
    if f is None:
        return
    distance, rnn, attn = path_lengths(distance_max)
    data = pd.concat(
        [
            pd.DataFrame({"distance": distance, "steps": rnn, "model": t("home.rnn")}),
            pd.DataFrame({"distance": distance, "steps": attn, "model": t("home.attention")}),
        ]
    )
    with f.lead:
        intro(ctx)
        if not ctx.presenter:  # the step bar names the step
            st.subheader(t("home.why_title"))
    with f.chart:
        chart = charts.show_cached(
            ctx,
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
            space=charts.room(ctx, 0.6 if ctx.presenter else 1.0),
        )
    with f.notes:
        st.markdown(t("home.why_text"))
        notice(ctx, [t("home.notice_rnn", d=distance_max), t("home.notice_attention")])
        export_panel(ctx, "path_lengths", chart=chart, data=data)


with steps.section(0) as on_screen:
    why(on_screen)

with steps.section(1) as on_screen:
    if on_screen and not ctx.presenter:  # the step bar names the step
        st.subheader(t("home.formula_title"))
    if on_screen:
        st.latex(
            r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
        )
        st.markdown(t("home.formula_text"))
        link(ctx, "lookup", t("home.lookup_link"))


@st.fragment
def pipeline(on_screen: bool) -> None:
    """Step 3 (a fragment: its sliders rerun only this step); off screen, just its sliders."""
    with settings_box(ctx, t("home.settings")) if on_screen else st.container():
        c1, c2 = st.columns(2)
        c3, c4 = st.columns(2)
        with c1:
            n = slider(ctx, Int("n", 6, 2, 32), t("home.n"))
        with c2:
            d_model = slider(ctx, Int("d_model", 8, 2, 64), "d_model")
        with c3:
            d_k = slider(ctx, Int("d_k", 4, 1, 64), "d_k")
        with c4:
            d_v = slider(ctx, Int("d_v", 4, 1, 64), "d_v")
    if not on_screen:
        return
    trace = core.self_attention_trace(
        core.lesson_inputs(n, d_model), *core.init_projections(d_model, d_k, d_v)
    )
    stages = [
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
    ]  # each stage's shapes, labelled: input → outputs
    cols = st.columns(len(stages))
    for i, (col, (name, formula, shapes, target)) in enumerate(zip(cols, stages, strict=True)):
        with col, st.container(border=True, height="stretch"):
            st.markdown(f"**{i + 1}. {t(f'home.step_{name}')}**")
            st.latex(formula)
            st.markdown(
                " →  \n".join("  \n".join(f"`{a} {m.shape}`" for a, m in g) for g in shapes)
            )
            st.caption(t(f"home.step_{name}_text"))
            link(ctx, target)
    row_sum = float(row_sums(trace.weights)[0])  # the first query's weights
    notice(
        ctx,
        [
            t("home.notice_shapes", n=n, d_v=d_v),
            t("home.notice_rowsum", s=f"{row_sum:.3f}", d_v=d_v),
        ],
    )
    untrained(ctx)
    start = stepbar.neighbours("home")[1]
    if start is not None and not ctx.presenter:  # where a first-time student goes next
        st.markdown(t("home.start_here"))
        link(ctx, start.id, t("home.start_link", page=t(f"nav.{start.id}")))
        st.markdown(t("home.today"))
        with st.container(horizontal=True):
            for info in in_section("today"):
                link(ctx, info.id)


with steps.section(2) as on_screen:
    pipeline(on_screen)
