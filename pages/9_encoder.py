"""Inside a real encoder: every head of all-MiniLM-L6-v2 (English) or multilingual-e5-small
(about 100 languages, Chinese included), computed by core's own attention."""

import numpy as np
import streamlit as st

from ui import charts
from ui.blocks import fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import settings_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import encoder as ev

ctx = shell("encoder")
t = ctx.t
model = ev.current_model(ctx)  # the step bar and the texts name its sizes
try:
    with st.spinner(t("encoder.loading")):  # the texts name the model's sizes: its first load
        words = ev.words(ctx, model)
except ev.LOAD_ERRORS as error:  # not installed, or its file unreadable
    ev.unavailable(ctx, model, error)
TEXT, COMPARE_TEXT = ev.texts(model, ctx.lang)
header(ctx, **words)
names = ("head", "grid", "search", "compare", "explain")
titles = [t(f"encoder.step_{s}", **words) for s in names]  # the headings
steps = stepper(ctx, [t(f"encoder.bar_{s}", **words) for s in names])
COMPARE = 3  # the step that reads sentence B


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the controls are in the settings box (for students the
    sidebar) on every step. Sentence B is in the settings box on a slide; for a student it
    stands above the comparison it changes (the sidebar has no room left on a 1280 × 720
    laptop), and on other steps in that step's hidden container, so it stays in the URL.
    The model reads sentence B only on that step."""
    here = ctx.presenter  # sentence B in the settings box
    with settings_box(ctx, t("encoder.settings")):  # a closed expander in presenter mode
        ev.model_switch(ctx, model)
        with st.spinner(t("encoder.loading")):
            a = ev.sentence(ctx, model, TEXT, t("encoder.text"))
        raw_b = ev.sentence_box(ctx, model, COMPARE_TEXT, t("encoder.compare")) if here else None
        c = ev.controls(ctx, a)
    for merged in ev.merged_notice(ctx, a):  # a word of the question inside a larger piece
        ctx.notices.info(merged, icon=":material/join:")
    sa = ev.shown(a, c.hide)
    head = ev.head_name(c.layer, c.head)
    rows = sa.rows(c.queries)
    weights = sa.attention[c.layer, c.head]  # (m, m) the selected head as drawn

    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, 0.6)
            with f.lead:
                intro(ctx, **words)
                heading(ctx, titles[0])  # a slide: the step bar names the step
                if not ctx.presenter:
                    st.markdown(ev.model_line(ctx, model))
            # its readout beside the chart (students too: a square chart leaves the room)
            left, right = (f.chart, f.notes) if ctx.presenter else f.chart.columns([3, 2])
            if ctx.presenter:  # what the model is, in a line above the readout
                right.caption(ev.model_line(ctx, model))
            with left:
                title = t("encoder.head_title", head=head)
                space = charts.room(ctx, ev.SIDE_SHARE, ev.HEAD_HEIGHT)
                args = (t, sa.tokens, weights, rows, title, ctx.presenter)
                chart = charts.show_cached(ctx, ev.head_chart, *args, space=space)
            metric = ev.head_metric(sa, c)
            if metric:
                right.metric(*metric)
            with f.notes:
                notice(ctx, ev.head_notice(ctx, a, sa, c))
                arrays = {"tokens": np.array(a.tokens), "attention": a.attention}
                export_panel(ctx, "encoder_head", chart, arrays=arrays)

    with steps.section(1) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                heading(ctx, titles[1])  # a slide: the step bar names the step
                ev.step_text(ctx, "grid", shown=ev.MAX_GRID_QUERIES, **words)
            grid = ev.grid_rows(sa, c.queries)
            if len(grid):
                names = [charts.unique_labels(sa.tokens)[i] for i in rows[: ev.MAX_GRID_QUERIES]]
                space = charts.room(ctx, height=ev.grid_height(words["layers"]))
                head_picked = (c.layer, c.head)
                args = (t, sa.tokens, grid, names, head_picked, ctx.presenter)
                with f.chart:
                    chart = charts.show_cached(ctx, ev.grid_chart, *args, space=space)
            with f.notes:
                notice(ctx, ev.average_notice(ctx, a, sa, c))
                if len(grid):
                    export_panel(ctx, "encoder_grid", chart)

    with steps.section(2) as on_screen:
        if on_screen:
            f = frame(ctx, 0.6)
            with f.lead:
                heading(ctx, titles[2])  # a slide: the step bar names the step
                ev.step_text(ctx, "search", **words)
            found = ev.search(sa, c)
            if found is None:
                f.chart.info(t("encoder.hidden_pick", **words), icon=":material/visibility_off:")
            else:
                # the top heads pick a head from the chart: beside it (students too)
                left, right = (f.chart, f.notes) if ctx.presenter else f.chart.columns([3, 2])
                with left:
                    title = ev.search_title(ctx, sa, c)
                    space = charts.room(ctx, ev.SIDE_SHARE, ev.SEARCH_HEIGHT)
                    chart = charts.show_cached(
                        ctx, ev.search_chart, t, found.weights, title, ctx.presenter, space=space
                    )
                with right:
                    ev.top_heads(ctx, found, c)  # buttons that pick a head for every step
                with f.notes:
                    notice(ctx, ev.search_notice(ctx, found))

    with steps.section(COMPARE) as on_screen:
        if not here:  # sentence B off screen: kept in the URL
            raw_b = ev.sentence_box(ctx, model, COMPARE_TEXT, t("encoder.compare"))
        if on_screen:
            with st.spinner(t("encoder.loading")):
                b = ev.read(ctx, model, COMPARE_TEXT, raw_b)
            sb = ev.shown(b, c.hide)
            f = frame(ctx, 0.6)
            with f.lead:
                heading(ctx, titles[3])  # a slide: the step bar names the step
                ev.step_text(ctx, "compare", **{**words, "head": head})
            with f.chart:
                chart = ev.show_comparison(ctx, sa, sb, c, head)
            with f.notes:
                notice(ctx, ev.compare_notice(ctx, sa, sb, c, a, b))
            export_panel(ctx, "encoder_compare", chart)  # below both columns on a slide

    with steps.section(4) as on_screen:
        if on_screen:
            ex = ev.explain(a, c)
            q = charts.unique_labels(a.tokens)[ex.i]
            f = frame(ctx, 0.6)
            with f.lead:
                heading(ctx, titles[4])  # a slide: the step bar names the step
                ev.step_text(ctx, "explain", **{**words, "head": head})
                st.latex(ev.explain_latex(ex))
            with f.chart:
                args = (t, a.tokens, ex.scores, ex.weights, ex.parts, q, ctx.presenter)
                space = ev.side_room(ctx, ev.EXPLAIN_HEIGHT)
                chart = charts.show_cached(ctx, ev.explain_chart, *args, space=space)
            with f.notes:
                notice(ctx, ev.explain_notice(ctx, a, ex))
                link(ctx, "multi_head")
                link(ctx, "softmax")


fragment(ctx, content)
