"""Weighted sum: a query's output is its attention weights mixing the value vectors."""

import streamlit as st

import core
from core.attention import mix_row
from ui import charts
from ui.blocks import folded, fragment, frame, header, heading, intro, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import short_list, untrained
from ui.safe import plain
from ui.sentence import sentence_controls, settings_box, token_picker
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import weighted_sum as view

ctx = shell("weighted_sum")
t = ctx.t
header(ctx)
titles = [
    t("weighted_sum.row_title"),
    t("weighted_sum.scale_title"),
    t("weighted_sum.sum_title"),
    t("weighted_sum.matrix_title"),
]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn: the page's controls (settings, token) are above the steps."""
    with settings_box(ctx, t("weighted_sum.settings")):
        s = sentence_controls(ctx)
        i = token_picker(ctx, s.tokens, t("weighted_sum.token"))
    tr = core.self_attention_trace(s.x, *s.projections())
    labels = charts.unique_labels(s.tokens)
    v_cols = charts.dim_labels(s.d_v, "v")
    n = len(s.tokens)
    live = {"presenter": ctx.presenter, "live_domain": True}  # new values: data swapped, no redraw
    # On a slide the strips print their numbers in cells large enough for 18 px type, and a
    # colour legend would only repeat them.
    strip = {**live, "largest": view.SLIDE_CELL, "legends": False} if ctx.presenter else live
    room = view.chart_room(ctx, 540)  # presenter mode: beside the step's notes
    mix = mix_row(tr.weights[i], tr.v)
    token = plain(s.tokens[i])
    notes = view.what_to_notice(ctx, s.tokens, i, mix)

    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, view.PRESENTER_SHARE)
            with f.lead:
                intro(ctx)
                heading(ctx, titles[0])
                st.markdown(t("weighted_sum.row_text", token=token, i=i, n=n))
            title = t("weighted_sum.row_chart", token=labels[i])
            left, right = f.chart, f.notes
            with left:
                shown = charts.show_cached(
                    ctx, view.weight_bars, mix.weights, labels, title, ctx.presenter, space=room
                )
            right.caption(t("weighted_sum.row_caption", total=f"{mix.weight_total:.3f}"))
            with right:
                view.step_notice(ctx, notes, 0)
            export_panel(ctx, "weighted_sum_row", shown, arrays={"weights_row": mix.weights})

    with steps.section(1) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)  # a slide: the four panels need its whole width
            with f.lead:
                heading(ctx, titles[1])
                st.markdown(t("weighted_sum.scale_text", i=i))
            alpha = f"α_{i}"
            panels = [
                ("V", tr.v, s.tokens, v_cols),
                (alpha, view.column(mix.weights), s.tokens, [alpha]),
                (t("weighted_sum.contributions"), mix.contributions, s.tokens, v_cols),
                (t("weighted_sum.running"), mix.running, s.tokens, v_cols),
            ]
            framed, kinds = {panels[3][0]: n - 1}, {alpha: "weights"}
            wide = charts.room(ctx, height=540)  # the whole width: its one note goes below
            with f.chart:
                style = {"kinds": kinds, "frames": framed, **strip}
                shown = charts.show_cached(ctx, charts.matrix_strip, panels, space=wide, **style)
            with f.notes:
                st.caption(t("weighted_sum.scale_caption", i=i, last=plain(s.tokens[-1])))
                arrays = {"v": tr.v, "weights_row": mix.weights}
                arrays |= {"contributions": mix.contributions, "running": mix.running}
                export_panel(ctx, "weighted_sum_scaled", shown, arrays=arrays)

    with steps.section(2) as on_screen:
        if on_screen:
            f = frame(ctx, view.PRESENTER_SHARE)
            with f.lead:
                heading(ctx, titles[2])
                st.markdown(t("weighted_sum.sum_text", token=token, i=i))
            title = t("weighted_sum.sum_chart", i=i, token=labels[i])
            left, right = f.chart, f.notes
            with left:
                args = (mix.contributions, mix.output, labels, f"o_{i}", title, ctx.presenter)
                shown = charts.show_cached(ctx, view.stacked, *args, space=room)
            with right:
                st.caption(t("weighted_sum.sum_caption", i=i))
                folded(
                    ctx,
                    t("weighted_sum.sum_terms"),
                    "sum_terms",
                    lambda: st.latex(view.sum_tex(i, mix, tr.v)),
                )
                rest = view.rest_of_sum(mix, tr.v)
                if rest is not None:
                    st.caption(
                        t("weighted_sum.rest_caption", count=rest[0], weight=f"{rest[1]:.3f}")
                    )
                view.step_notice(ctx, notes, 1)
            export_panel(
                ctx,
                "weighted_sum_stack",
                shown,
                arrays={"contributions": mix.contributions, "output_row": mix.output},
            )

    with steps.section(3) as on_screen:
        if on_screen:
            f = frame(ctx, view.PRESENTER_SHARE)
            with f.lead:
                heading(ctx, titles[3])
                st.markdown(t("weighted_sum.matrix_text", n=n, d_v=s.d_v))
            left, right = f.chart, f.notes
            right.latex(
                r"\underbrace{O}_{n\times d_v} = "
                r"\underbrace{A}_{n\times n}\,\underbrace{V}_{n\times d_v}"
            )
            weights_title = t("weighted_sum.weights")
            output_title = t("weighted_sum.output")
            panels = [
                (weights_title, tr.weights, s.tokens, s.tokens),
                ("V", tr.v, s.tokens, v_cols),
                (output_title, tr.output, s.tokens, v_cols),
            ]
            framed, kinds = {weights_title: i, output_title: i}, {weights_title: "weights"}
            with left:
                style = {"kinds": kinds, "frames": framed, **strip}
                shown = charts.show_cached(ctx, charts.matrix_strip, panels, space=room, **style)
            right.markdown(
                t("weighted_sum.output_row", token=token, i=i, row=short_list(tr.output[i]))
            )
            with right:
                view.step_notice(ctx, notes, 2)
                if ctx.presenter:  # beside the chart: below it the step would not fit one screen
                    view.next_links(ctx)
            export_panel(
                ctx,
                "weighted_sum_matrix",
                shown,
                arrays={"weights": tr.weights, "v": tr.v, "output": tr.output},
                text=lambda: core.text_heatmap(tr.weights, labels),
            )

    if not ctx.presenter:  # presenter mode shows them beside each step's chart
        notice(ctx, notes)
        untrained(ctx)
        view.next_links(ctx)


fragment(ctx, content)
