"""Masks: causal and padding masks on your sentence, generation order, and −∞ versus −1e9."""

import streamlit as st

from ui import charts
from ui.blocks import folded, fragment, frame, header, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import masking as mv

ctx = shell("masking")
t = ctx.t
header(ctx)
titles = [t("masking.s1_title"), t("masking.s2_title"), t("masking.s3_title")]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the other steps keep their controls in the URL off screen."""
    sentence, masks = mv.controls(ctx, steps.current)

    with steps.section(0) as on_screen:
        if masks is None:  # step 2 shows no mask: the switches wait here, out of sight
            masks = mv.mask_controls(ctx)
        view = None if steps.show(1) else mv.compute(sentence, *masks)
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                intro(ctx)
                st.subheader(titles[0])
                main, side = mv.pair(ctx, 0.75)
                main.markdown(mv.mask_intro(ctx))
                side.latex(
                    r"\tilde s_{ij}=\begin{cases}s_{ij}&\text{mask}_{ij}\\"
                    r"-\infty&\text{else}\end{cases}"
                )
            trace = view.masked
            with f.chart:
                args = (t, view.tokens, view.before, trace.scaled, trace.weights, ctx.presenter)
                space = charts.room(ctx, height=340)
                chart = charts.show_cached(ctx, mv.mask_chart, *args, space=space)
            with f.notes:
                main, side = mv.pair(ctx)
            with main:
                notice(ctx, mv.mask_notice(ctx, view))
            with side:
                untrained(ctx)
                export_panel(
                    ctx,
                    "masking",
                    chart,
                    arrays=lambda: mv.mask_arrays(view),
                    text=lambda: mv.weights_text(view),
                )

    def generation_step(ctx: PageContext) -> None:
        """Step 2 (a fragment inside the content: its slider reruns only this step)."""
        if not steps.show(1):  # off screen: only its slider, so it stays in the URL
            mv.generation_control(ctx, len(sentence.tokens))
            return
        f = frame(ctx, mv.SHARE)
        f.lead.subheader(titles[1])
        (f.notes if ctx.presenter else f.lead).markdown(t("masking.s2_text"))
        with step_box(ctx, True, t("masking.s2_controls"), f.chart):
            gen = mv.generation_control(ctx, len(sentence.tokens))
        strip = t("masking.strip", strip=mv.generation_strip(ctx, sentence.tokens, gen))
        with f.chart:
            if ctx.presenter:  # above the chart, below the slider it follows
                st.markdown(strip)
            chart = charts.show_cached(
                ctx, mv.lookahead_chart, t, sentence, gen, ctx.presenter, space=mv.chart_room(ctx)
            )
            if not ctx.presenter:  # right below the chart, while the text follows
                st.markdown(strip)
        with f.notes:
            notice(ctx, mv.lookahead_notice(ctx, sentence, gen))
            export_panel(ctx, "masking_generation", chart)

    def fill_step(ctx: PageContext) -> None:
        """Step 3 (a fragment inside the content: its controls rerun only this step)."""
        n = mv.padded_length(sentence, masks[1])
        if not steps.show(2):  # off screen: only its controls, so they stay in the URL
            mv.fill_controls(ctx, n)
            return
        f = frame(ctx, mv.SHARE)
        f.lead.subheader(titles[2])
        (f.chart if ctx.presenter else f.lead).markdown(t("masking.s3_text"))
        with step_box(ctx, True, None, f.chart):  # below the folded mask switches
            row, dtype, temp = mv.fill_controls(ctx, n)
        fv = mv.fill_view(view, row, dtype, temp)
        with f.chart:
            args = (t, view.tokens, row, fv.weights, fv.blank, ctx.presenter)
            chart = charts.show_cached(ctx, mv.fill_chart, *args, space=mv.chart_room(ctx))
        with f.chart if ctx.presenter else f.notes:
            folded(
                ctx,
                t("masking.details"),
                "fill_details",
                lambda: mv.fill_details(ctx, fv),
                icon=":material/table:",
            )
        with f.notes:
            notice(ctx, mv.fill_notice(ctx, view, fv, dtype, temp))
            export_panel(ctx, "masking_fill", chart, arrays=lambda: mv.fill_arrays(view, fv))
        with f.chart if ctx.presenter else f.notes, st.container(horizontal=True):
            link(ctx, "softmax")
            link(ctx, "kv_cache")

    with steps.section(1) as on_screen:
        fragment(ctx, generation_step, on_screen)
    with steps.section(2) as on_screen:
        fragment(ctx, fill_step, on_screen)


fragment(ctx, content)
