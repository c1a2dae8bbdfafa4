"""Attention as a database lookup: a hard lookup is the cold limit of a soft one."""

import streamlit as st

from core import text_heatmap
from core.lookup import (
    capital_table,
    hard_lookup,
    lookup_scores,
    polar_query,
    soft_lookup,
    temperature_sweep,
    uniform_weight,
)
from ui import charts
from ui.blocks import fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import lookup as views

ctx = shell("lookup")
t = ctx.t
header(ctx)
steps = stepper(ctx, [t(f"lookup.step_{s}_short") for s in ("table", "soft", "temperature")])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). The query
    controls serve every step (students: in the sidebar); only the step on screen is drawn."""
    ids, keys, values = capital_table()
    countries = views.names(t, ids, "country")
    capitals = views.names(t, ids, "capital")

    angle, length, log_t = views.controls(ctx, countries)
    temperature = views.temperature_of(log_t)
    query = polar_query(angle, length)
    scores = lookup_scores(query, keys)
    hard_index, hard_value = hard_lookup(query, keys, values)
    weights, blended = soft_lookup(query, keys, values, temperature)
    if not ctx.presenter:  # under the controls; a slide shows the query in its cards and notes
        x, y = views.num(query[0]), views.num(query[1])
        ctx.controls.caption(t("lookup.query_now", x=x, y=y, T=f"{temperature:.3g}"))
    arrays = {"keys": keys, "values": values, "query": query, "scores": scores, "weights": weights}

    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)  # a slide: the table has the whole width
            with f.lead:
                intro(ctx)
                heading(ctx, t("lookup.step_table"))
                st.markdown(t("lookup.table_text"))
            rows = (countries, capitals, keys, values, scores, weights, hard_index)
            f.chart.table(views.table_styled(t, *rows))
            f.notes.caption(t("lookup.table_caption"))

    with steps.section(1) as on_screen:
        if on_screen:
            f = frame(ctx, views.CHART_SHARE)
            with f.lead:
                heading(ctx, t("lookup.step_soft"))
                if not ctx.presenter:
                    st.markdown(t("lookup.soft_text"))
            cards = (t, countries, capitals, hard_value, hard_index, blended, weights)
            answers = (weights, blended, hard_index)
            with f.chart:
                args = (t, countries, capitals, keys, values, query, *answers, ctx.presenter)
                space = views.chart_room(ctx, views.SOFT_HEIGHT)
                chart = charts.show_cached(ctx, views.soft_chart, *args, space=space)
            notes = views.soft_notices(
                t, capitals, weights, hard_index, blended, length, temperature
            )
            with f.notes:  # a slide: the answers beside the charts, one below the other
                views.result_cards(*cards, stacked=ctx.presenter)
                # a slide keeps the blend note: its cards state the hard answer and the weight
                notice(ctx, notes[1:2] if ctx.presenter else notes)
                export_panel(
                    ctx,
                    "lookup",
                    chart,
                    lambda: views.table_frame(
                        t, countries, capitals, keys, values, scores, weights
                    ),
                    {**arrays, "blended": blended, "hard_value": hard_value},
                    lambda: text_heatmap(weights[None, :], ["q"], countries),
                )
            with f.chart if ctx.presenter else st.container():  # a slide: under the charts
                untrained(ctx)

    with steps.section(2) as on_screen:
        if on_screen:
            f = frame(ctx, views.CHART_SHARE)
            temps, sweep = temperature_sweep(query, keys)
            with f.lead:
                heading(ctx, t("lookup.step_temperature"))
                m, u = len(ids), views.num(uniform_weight(len(ids)), 3)
                st.markdown(t("lookup.sweep_text", m=m, u=u))
            with f.chart:
                args = (t, countries, temps, sweep, temperature)
                space = views.chart_room(ctx, 440)
                chart = charts.show_cached(ctx, views.sweep_chart, *args, space=space)
            with f.notes:
                notice(ctx, views.sweep_notices(t, countries, temps, sweep, hard_index))
            export_panel(
                ctx,
                "lookup_temperature",
                chart,
                lambda: views.sweep_frame(countries, temps, sweep),
                {**arrays, "temperatures": temps, "sweep_weights": sweep},
                lambda: text_heatmap(*views.sweep_text_rows(temps, sweep), countries),
            )
            link(ctx, "softmax", t("lookup.softmax_link"))
            link(ctx, "qkv", t("lookup.qkv_link"))


fragment(ctx, content)
