"""Long contexts: a sliding window keeps the cache short, information still travels through
the layers; on SmolLM2, a window alone breaks the model and keeping the first token (an
attention sink) repairs most of it."""

import streamlit as st

from ui import charts
from ui import prompt as typed
from ui.blocks import fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import sinks as sv

ctx = shell("sinks")
t = ctx.t
header(ctx)
titles = [t(f"sinks.s{i}_title") for i in range(1, 4)]
steps = stepper(ctx, titles)
MASK = (
    r"\text{visible}(i, j) = \big[\, j \le i \,\big] \wedge "
    r"\big[\, i - W < j \;\vee\; j < S \,\big]"
)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the others draw just their controls, hidden, so every control
    stays in the URL. The model's window and sinks belong to steps 2 and 3: the step on
    screen draws them if it is one of those, else step 2 does, hidden. The model runs only
    on Run (see ui/views/sinks.py)."""
    model_host = steps.host(1, 2)

    with steps.section(0) as on_screen:
        f = frame(ctx, sv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("sinks.s1_controls"), f and f.notes):
            toy = sv.toy_controls(ctx)
        if on_screen:
            v = sv.mask_view(toy)
            with f.chart:
                chart = charts.show_cached(
                    ctx, sv.mask_chart, t, v, ctx.presenter, space=sv.room(ctx, 470, 600)
                )
            with f.lead:
                intro(ctx)
                heading(ctx, titles[0])
                if not ctx.presenter:
                    st.markdown(t("sinks.s1_text"))
                st.latex(MASK)
            with f.notes:
                notice(ctx, sv.mask_notice(ctx, v))
                arrays = sv.mask_arrays(v)
                caption = t(
                    "sinks.s1_caption", n=toy.n, w=toy.window, s=toy.sinks, layers=toy.layers
                )
                export_panel(ctx, "sinks_mask", chart, arrays=arrays, caption=caption)

    with steps.section(1) as on_screen:
        f = frame(ctx, sv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("sinks.s2_controls"), f and f.notes):
            if model_host == 1:
                window, sinks = sv.model_controls(ctx)
            back = sv.back_control(ctx)
            if on_screen:
                sv.run_button(ctx, window, sinks)
        if on_screen and typed.loaded_model(ctx):
            with f.chart:
                held = sv.runs(ctx, window, sinks)
                p = sv.predictions(t, held, window, sinks, back)
                chart = charts.show_cached(
                    ctx, sv.prediction_chart, t, p, ctx.presenter, space=sv.room(ctx, 470, 600)
                )
            with f.lead:
                heading(ctx, titles[1])
                if not ctx.presenter:
                    st.markdown(t("sinks.s2_text", scored=sv.SCORED, n=len(sv.text_tokens()[0])))
                    st.caption(t("sinks.positions"))
            with f.notes:
                notice(ctx, sv.prediction_notice(ctx, p, window, sinks))
            with f.chart if ctx.presenter else f.notes:  # a slide: below the chart
                sv.text_box(ctx)
                export_panel(
                    ctx,
                    "sinks_perplexity",
                    chart,
                    arrays=lambda: sv.prediction_arrays(held, window, sinks),
                )

    with steps.section(2) as on_screen:
        f = frame(ctx, sv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("sinks.s3_controls"), f and f.notes):
            if model_host == 2:
                window, sinks = sv.model_controls(ctx)
            if on_screen:
                sv.run_button(ctx, window, sinks)
        if on_screen and typed.loaded_model(ctx):
            with f.chart:
                held = sv.runs(ctx, window, sinks)
                s = sv.shares(t, held, window, sinks, sv.layer_count())
                chart = charts.show_cached(
                    ctx, sv.share_chart, t, s, ctx.presenter, space=sv.room(ctx, 470, 560)
                )
            with f.lead:
                heading(ctx, titles[2])
                if not ctx.presenter:
                    st.markdown(t("sinks.s3_text"))
            with f.notes:
                notice(ctx, sv.share_notice(ctx, s))
                link(ctx, "decoder", t("sinks.decoder_link"))
                export_panel(
                    ctx,
                    "sinks_first_share",
                    chart,
                    arrays=lambda: sv.prediction_arrays(held, window, sinks),
                )


fragment(ctx, content)
