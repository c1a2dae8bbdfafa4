"""KV cache: decode one token at a time, reuse the cached keys and values, count the savings."""

import streamlit as st

from ui import charts
from ui.blocks import fragment, frame, frame_room, header, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import kv_cache as kv

ctx = shell("kv_cache")
t = ctx.t
header(ctx)
titles = [t("kv_cache.s1_title"), t("kv_cache.s2_title")]
steps = stepper(ctx, titles)
FORMULA = (
    r"\alpha_t=\mathrm{softmax}\!\left(\frac{q_t\,K_{0..t}^\top}{\sqrt{d_k}}\right),\quad "
    r"o_t=\alpha_t V_{0..t}"
)


def decode_step(ctx: PageContext, on_screen: bool) -> None:
    """Step 1. Students: the sentence and t in the sidebar, the cache chart first. Presenter
    mode: the step slider and the cache chart beside the readouts and notes. Off screen:
    only its controls (the sentence and t), so they stay in the URL."""
    sentence = kv.controls(ctx, on_screen)
    if not on_screen:
        kv.step_control(ctx, len(sentence.tokens))
        return
    view = kv.compute(sentence)
    f = frame(ctx, kv.CHART_SHARE)
    with step_box(ctx, on_screen, t("kv_cache.s1_controls"), f.chart):
        step = kv.step_control(ctx, len(view.tokens))
    strip = t("kv_cache.strip", strip=kv.token_strip(view.tokens, step))
    with f.chart:
        if ctx.presenter:
            st.markdown(strip)
        room = frame_room(ctx, kv.CHART_SHARE, kv.CHART_HEIGHT, kv.READOUT_HEIGHT)
        chart = charts.show_cached(
            ctx, kv.cache_chart, t, sentence, step, ctx.presenter, space=room
        )
        if ctx.presenter:
            st.latex(FORMULA)
        else:  # the chart's readouts right below it
            st.markdown(strip)
            kv.step_metrics(ctx, view, step)
    with f.lead:
        intro(ctx)
        kv.heading(ctx, titles[0], "kv_cache.s1_text")
        if not ctx.presenter:
            st.latex(FORMULA)
    with f.notes:
        if ctx.presenter:
            kv.step_metrics(ctx, view, step)
        items = kv.step_notice(ctx, view, step)
        notice(ctx, items[1:2] if ctx.presenter else items)  # presenter: the metrics show the rest
        untrained(ctx)
        export_panel(
            ctx,
            "kv_cache_step",
            chart,
            arrays=kv.cache_arrays(view, step),
            text=kv.weights_text(view),
        )


def cost_step(ctx: PageContext, on_screen: bool) -> None:
    """Step 2. Students: its sizes in the sidebar, the chart first. Off screen: only its
    controls, so they stay in the URL."""
    if not on_screen:
        kv.cost_controls(ctx)
        return
    f = frame(ctx, stacked=True)
    # a slide: the row above the chart
    with step_box(ctx, on_screen, t("kv_cache.s2_controls"), f.lead):
        n, width, layers, log = kv.cost_controls(ctx)
    with f.lead:
        kv.heading(ctx, titles[1], "kv_cache.s2_text")
    cv = kv.cost_view(n, width, layers)
    room = frame_room(ctx, 1.0, kv.COST_HEIGHT)
    with f.chart:
        chart = charts.show_cached(
            ctx, kv.cost_chart, t, n, width, layers, log, ctx.presenter, space=room
        )
    with f.notes:
        kv.notices(ctx, kv.cost_notice(ctx, cv, n, width, layers))
        with st.container(horizontal=ctx.presenter, vertical_alignment="center"):  # one row
            export_panel(ctx, "kv_cache_cost", chart)
            link(ctx, "masking")
            link(ctx, "multi_head")


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the other step's controls are drawn hidden, so a bad value
    of theirs in a link still warns at the top, whichever step is on screen."""
    with steps.section(0) as on_screen:
        decode_step(ctx, on_screen)
    with steps.section(1) as on_screen:
        cost_step(ctx, on_screen)


fragment(ctx, content)
