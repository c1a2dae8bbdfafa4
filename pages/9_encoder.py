"""Inside a real encoder: every head of all-MiniLM-L6-v2, computed by core's own attention."""

import numpy as np
import streamlit as st

from ui import charts
from ui.blocks import fragment, header, heading, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import settings_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import encoder as ev

ctx = shell("encoder")
t = ctx.t
with st.spinner(t("encoder.loading")):  # the texts name the model's sizes: its first load
    sizes = ev.sizes()
header(ctx, **sizes)
titles = [t(f"encoder.step_{s}", **sizes) for s in ("head", "grid", "search", "compare", "explain")]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the controls are all in the settings box, on every step, and
    the model reads sentence B only on the step that compares it."""
    with settings_box(ctx, t("encoder.settings")):  # a closed expander in presenter mode
        with st.spinner(t("encoder.loading")):
            a = ev.sentence(ctx, ev.TEXT, t("encoder.text"))
        raw_b = ev.sentence_box(ctx, ev.COMPARE, t("encoder.compare"))
        c = ev.controls(ctx, a)
    sa = ev.shown(a, c.hide)
    head = ev.head_name(c.layer, c.head)
    rows = sa.rows(c.queries)
    weights = sa.attention[c.layer, c.head]  # (m, m) the selected head as drawn

    with steps.section(0) as on_screen:
        if on_screen:
            heading(ctx, titles[0])  # a slide: the step bar names the step
            if not ctx.presenter:
                st.markdown(
                    t(
                        "encoder.model",
                        params=ev.parameter_amount(ctx.lang, ev.parameter_count()),
                        **sizes,
                    )
                )
            left, right = st.columns([3, 2])
            with left:
                title = t("encoder.head_title", head=head)
                space = charts.room(ctx, ev.SIDE_SHARE, ev.HEAD_HEIGHT)
                chart = charts.show_cached(
                    ctx, ev.head_chart, t, sa.tokens, weights, rows, title, ctx.presenter,
                    space=space,
                )  # fmt: skip
            with right:
                metric = ev.head_metric(sa, c)
                if metric:
                    st.metric(*metric)
                notice(ctx, ev.head_notice(ctx, a, sa, c))
            with right if ctx.presenter else st.container():  # a slide: the chart takes the height
                arrays = {"tokens": np.array(a.tokens), "attention": a.attention}
                export_panel(ctx, "encoder_head", chart, arrays=arrays)

    with steps.section(1) as on_screen:
        if on_screen:
            heading(ctx, titles[1])  # a slide: the step bar names the step
            ev.step_text(ctx, "grid", shown=ev.MAX_GRID_QUERIES)
            grid = ev.grid_rows(sa, c.queries)
            if len(grid):
                names = [charts.unique_labels(sa.tokens)[i] for i in rows[: ev.MAX_GRID_QUERIES]]
                chart = charts.show_cached(
                    ctx, ev.grid_chart, t, sa.tokens, grid, names, (c.layer, c.head),
                    ctx.presenter, space=charts.room(ctx, height=ev.GRID_HEIGHT),
                )  # fmt: skip
                export_panel(ctx, "encoder_grid", chart)
            notice(ctx, ev.average_notice(ctx, a, sa, c))

    with steps.section(2) as on_screen:
        if on_screen:
            heading(ctx, titles[2])  # a slide: the step bar names the step
            ev.step_text(ctx, "search")
            found = ev.search(sa, c)
            if found is None:
                st.info(t("encoder.hidden_pick"), icon=":material/visibility_off:")
            else:
                left, right = st.columns([3, 2])
                with left:
                    title = ev.search_title(ctx, sa, c)
                    space = charts.room(ctx, ev.SIDE_SHARE)
                    chart = charts.show_cached(
                        ctx, ev.search_chart, t, found.weights, title, ctx.presenter, space=space
                    )
                with right:
                    ev.top_heads(ctx, found, c)  # buttons that pick a head for every step
                    notice(ctx, ev.search_notice(ctx, found))

    with steps.section(3) as on_screen:
        if on_screen:
            heading(ctx, titles[3])  # a slide: the step bar names the step
            with st.spinner(t("encoder.loading")):
                b = ev.read(ctx, ev.COMPARE, raw_b)
            sb = ev.shown(b, c.hide)
            ev.step_text(ctx, "compare", head=head)
            left, right = ev.beside(ctx)
            with left:
                chart = ev.show_comparison(ctx, sa, sb, c, head)
            with right:
                notice(ctx, ev.compare_notice(ctx, sa, sb, c, a, b))
            export_panel(ctx, "encoder_compare", chart)

    with steps.section(4) as on_screen:
        if on_screen:
            heading(ctx, titles[4])  # a slide: the step bar names the step
            ev.step_text(ctx, "explain", head=head)
            ex = ev.explain(a, c)
            st.latex(ev.explain_latex(ex))
            q = charts.unique_labels(a.tokens)[ex.i]
            left, right = ev.beside(ctx)
            with left:
                chart = charts.show_cached(
                    ctx, ev.explain_chart, t, a.tokens, ex.scores, ex.weights, ex.parts, q,
                    ctx.presenter, space=ev.side_room(ctx, ev.EXPLAIN_HEIGHT),
                )  # fmt: skip
            with right:
                notice(ctx, ev.explain_notice(ctx, a, ex))
                link(ctx, "multi_head")
                link(ctx, "softmax")


fragment(ctx, content)
