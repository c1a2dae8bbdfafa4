"""FlashAttention's online softmax: attention over tiles of keys with a running maximum and
sum, the same answer as ordinary attention, and what it saves in memory and traffic."""

import streamlit as st

from ui import charts
from ui.blocks import fragment, frame, header, heading, intro, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import flash as fv

ctx = shell("flash")
t = ctx.t
header(ctx)
titles = [t(f"flash.s{i}_title") for i in range(1, 4)]
steps = stepper(ctx, titles)
UPDATE = (
    r"m' = \max\big(m,\ \max_{j \in \text{tile}} s_j\big),\quad "
    r"\ell' = e^{m-m'}\,\ell + \sum_{j \in \text{tile}} e^{s_j-m'},\quad "
    r"a' = e^{m-m'}\,a + \sum_{j \in \text{tile}} e^{s_j-m'}\,v_j,\quad o = a/\ell"
)
TRAFFIC = (
    r"\text{IO}_{\text{standard}} = 4Td + 4T^2,\qquad "
    r"\text{IO}_{\text{flash}} = 3Td + 2T + \lceil T/B_c \rceil\,(3Td + 4T)"
    r"\approx \frac{(12d^2+16d)\,T^2}{M}"
)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the others draw just their controls, hidden, so every control
    stays in the URL. The toy head's settings belong to steps 1 and 2: the step on screen
    draws them if it is one of those, else step 1 does, hidden."""
    toy_host = steps.host(0, 1)

    with steps.section(0) as on_screen:
        f = frame(ctx, fv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("flash.s1_controls"), f and f.notes):
            toy = fv.toy_controls(ctx) if toy_host == 0 else fv.peeked_toy()
            row, tile = fv.row_controls(ctx, toy)
        if on_screen:
            tl = fv.tiles(toy)
            v = fv.row_view(tl, toy, row, tile)
            with f.chart:
                space = fv.room(ctx, 470, 600)
                chart = charts.show_cached(ctx, fv.tile_chart, t, v, ctx.presenter, space=space)
            with f.lead:
                intro(ctx, **fv.intro_values())
                heading(ctx, titles[0])
                if not ctx.presenter:
                    st.markdown(t("flash.s1_text", n=toy.n, d=fv.D, block=toy.block))
                st.latex(UPDATE)
            with f.notes:
                notice(ctx, fv.row_notice(ctx, v, toy))
                arrays = fv.row_arrays(tl, v)
                caption = t("flash.s1_caption", n=toy.n, block=toy.block, i=row, t=tile)
                export_panel(ctx, "flash_tiles", chart, arrays=arrays, caption=caption)

    with steps.section(1) as on_screen:
        f = frame(ctx, fv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("flash.s2_controls"), f and f.notes):
            if toy_host == 1:
                toy = fv.toy_controls(ctx)
            factor = fv.factor_control(ctx)
        if on_screen:
            a = fv.agreement(toy, factor)
            with f.chart:
                space = fv.room(ctx, 470, 560)
                chart = charts.show_cached(
                    ctx, fv.agreement_chart, t, a, ctx.presenter, space=space
                )
            with f.lead:
                heading(ctx, titles[1])
                if not ctx.presenter:
                    st.markdown(t("flash.s2_text", n=toy.n, d=fv.D, count=len(fv.BLOCKS)))
            with f.notes:
                notice(ctx, fv.agreement_notice(ctx, a, toy))
                export_panel(ctx, "flash_agreement", chart, arrays=fv.agreement_arrays(a))

    with steps.section(2) as on_screen:
        f = frame(ctx, fv.SHARE) if on_screen else None
        with step_box(ctx, on_screen, t("flash.s3_controls"), f and f.notes):
            d, sram = fv.traffic_controls(ctx)
        if on_screen:
            v = fv.traffic(d, sram)
            with f.chart:
                space = fv.room(ctx, 470, 560)
                chart = charts.show_cached(ctx, fv.traffic_chart, t, v, ctx.presenter, space=space)
            with f.lead:
                heading(ctx, titles[2])
                if not ctx.presenter:
                    st.markdown(t("flash.s3_text"))
                st.latex(TRAFFIC)
            with f.chart if ctx.presenter else f.lead:  # a slide: below the chart
                st.caption(t("flash.assumptions"))
            with f.notes:
                notice(ctx, fv.traffic_notice(ctx, v))
            with f.chart if ctx.presenter else f.notes:  # a slide: below the chart
                export_panel(ctx, "flash_traffic", chart, arrays=fv.traffic_arrays(v))


fragment(ctx, content)
