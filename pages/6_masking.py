"""Masks: causal and padding masks on your sentence, generation order, and −∞ versus −1e9."""

import streamlit as st

from ui import charts
from ui.blocks import folded, fragment, header, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.shell import shell
from ui.steps import stepper
from ui.views import masking as mv

ctx = shell("masking")
t = ctx.t
header(ctx)
titles = [t("masking.s1_title"), t("masking.s2_title"), t("masking.s3_title")]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; steps 2 and 3 keep their sliders in the URL off screen."""
    sentence, causal, n_pad, pad_side = mv.controls(ctx)
    # step 2 follows the sentence without padding: no masked view to compute
    view = None if steps.show(1) else mv.compute(sentence, causal, n_pad, pad_side)

    with steps.section(0) as on_screen:
        if on_screen:
            st.subheader(titles[0])
            main, side, _ = mv.beside(ctx, wide=True)
            main.markdown(mv.mask_intro(ctx))
            side.latex(
                r"\tilde s_{ij}=\begin{cases}s_{ij}&\text{mask}_{ij}\\"
                r"-\infty&\text{else}\end{cases}"
            )
            trace = view.masked
            chart = charts.show_cached(
                ctx, mv.mask_chart, t, view.tokens, view.before, trace.scaled, trace.weights,
                ctx.presenter, space=charts.room(ctx, height=340),
            )  # fmt: skip
            main, side, _ = mv.beside(ctx)
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
        st.subheader(titles[1])
        main, side, space = mv.beside(ctx)
        side.markdown(t("masking.s2_text"))
        with main:
            gen = mv.generation_control(ctx, len(sentence.tokens))
            st.markdown(t("masking.strip", strip=mv.generation_strip(ctx, sentence.tokens, gen)))
            chart = charts.show_cached(
                ctx, mv.lookahead_chart, t, sentence, gen, ctx.presenter, space=space
            )
        with side:
            notice(ctx, mv.lookahead_notice(ctx, sentence, gen))
            export_panel(ctx, "masking_generation", chart)

    def fill_step(ctx: PageContext) -> None:
        """Step 3 (a fragment inside the content: its controls rerun only this step)."""
        n = mv.padded_length(sentence, n_pad)
        if not steps.show(2):  # off screen: only its controls, so they stay in the URL
            mv.fill_controls(ctx, n)
            return
        st.subheader(titles[2])
        main, side, space = mv.beside(ctx)
        with main:
            st.markdown(t("masking.s3_text"))
            row, dtype, temp = mv.fill_controls(ctx, n)
            fv = mv.fill_view(view, row, dtype, temp)
            chart = charts.show_cached(
                ctx, mv.fill_chart, t, view.tokens, row, fv.weights, fv.blank, ctx.presenter,
                space=space,
            )  # fmt: skip
            folded(
                ctx,
                t("masking.details"),
                "fill_details",
                lambda: mv.fill_details(ctx, fv),
                icon=":material/table:",
            )
        with side:
            notice(ctx, mv.fill_notice(ctx, view, fv, dtype, temp))
            export_panel(ctx, "masking_fill", chart, arrays=lambda: mv.fill_arrays(view, fv))
        with main, st.container(horizontal=True):
            link(ctx, "softmax")
            link(ctx, "kv_cache")

    with steps.section(1) as on_screen:
        fragment(ctx, generation_step, on_screen)
    with steps.section(2) as on_screen:
        fragment(ctx, fill_step, on_screen)


fragment(ctx, content)
