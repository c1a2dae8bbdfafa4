"""Softmax: scores become a probability distribution; temperature, stability, masks."""

import streamlit as st

import core
from core.softmax_numerics import EXP_OVERFLOW, exp_terms, mask_last, scale_sweep
from ui import charts
from ui.blocks import folded, fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.params import Int, select, slider
from ui.sentence import step_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import softmax as views

SCALE = Int("scale", 1, 1, 1000)

ctx = shell("softmax")
t = ctx.t
header(ctx)
steps = stepper(
    ctx,
    [
        t("softmax.step_bars"),
        t("softmax.step_matrix"),
        t("softmax.step_stable"),
        t("softmax.step_mask"),
    ],
)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; steps 3 and 4 draw their own control on every step."""
    logits_a, logits_b, temp = views.controls(ctx)
    probs_a = core.softmax(logits_a, temperature=temp)
    probs_b = core.softmax(logits_b, temperature=temp)

    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                intro(ctx)
                heading(ctx, t("softmax.step_bars"))
                if not ctx.presenter:
                    st.markdown(t("softmax.bars_text"))
                st.latex(r"p_i = \frac{e^{x_i/T}}{\sum_j e^{x_j/T}}")
            sums = {"A": views.total(probs_a), "B": views.total(probs_b)}
            examples = (("A", logits_a, probs_a), ("B", logits_b, probs_b))
            # a slide keeps the step on one screen below a step bar of two rows
            room = views.chart_room(ctx, 340 if ctx.presenter else 380, share=1.0)
            with f.chart:
                chart = charts.show_cached(ctx, views.bars_chart, t, examples, sums, space=room)
            with f.notes:
                if not ctx.presenter:  # the bars carry the same numbers
                    st.markdown(
                        t(
                            "softmax.probs_line",
                            T=f"{temp:.2f}",
                            a=views.vector(probs_a),
                            b=views.vector(probs_b),
                        )
                    )
                notice(ctx, views.bars_notices(t, sums, temp, probs_a, core.softmax(logits_a)))
                folded(ctx, t("softmax.lesson_fold"), "lesson", lambda: views.lesson_box(t))
                arrays = {
                    "logits_a": logits_a,
                    "probs_a": probs_a,
                    "logits_b": logits_b,
                    "probs_b": probs_b,
                }
                export_panel(ctx, "softmax_bars", chart, arrays=arrays)

    with steps.section(1) as on_screen:
        if on_screen:
            f = frame(ctx)
            with f.lead:
                heading(ctx, t("softmax.step_matrix"))
                st.markdown(t("softmax.matrix_text"))
            tokens, mats = views.lesson_trace(temp)
            panels = {
                t("softmax.panel_t1"): mats["weights_t1"],
                t("softmax.panel_t", T=f"{temp:.2f}"): mats["weights_t"],
            }
            with f.chart:
                chart = charts.show_cached(
                    ctx,
                    views.matrix_chart,
                    panels,
                    tokens,
                    t("softmax.keys"),
                    t("softmax.queries"),
                    ctx.presenter,
                    space=views.chart_room(ctx, 560),
                )
            with f.notes:
                notice(ctx, views.matrix_notices(t, mats, temp))
                untrained(ctx)
                export_panel(
                    ctx,
                    "softmax_matrix",
                    chart,
                    arrays=mats,
                    text=lambda: core.text_heatmap(mats["weights_t"], tokens),
                )

    def stable_step(ctx: PageContext) -> None:
        """Step 3 (a fragment inside the content: its slider reruns only this step). Off
        screen it draws only its slider, which keeps the URL's scale."""
        if not steps.show(2):
            slider(ctx, SCALE, t("softmax.scale"))
            return
        f = frame(ctx)
        with f.lead:
            heading(ctx, t("softmax.step_stable"))
            if ctx.presenter:
                st.markdown(t("softmax.stable_short", limit=f"{EXP_OVERFLOW:.2f}"))
            else:
                st.markdown(t("softmax.stable_text"))
        with step_box(ctx, True, t("softmax.stable_controls"), f.lead):
            scale = slider(ctx, SCALE, t("softmax.scale"))
        naive_p, stable_p = (rows[0] for rows in scale_sweep(logits_a, [scale]))

        def table() -> None:
            naive_e, stable_e = (exp_terms(logits_a, scale, stable=s) for s in (False, True))
            st.markdown(views.stability_table(t, naive_e, stable_e, naive_p, stable_p))

        with f.lead:
            folded(ctx, t("softmax.table_fold"), "stability_table", table)
        sweep = views.stability_sweep(tuple(logits_a))
        naive, stable = sweep["naive"], sweep["stable"]
        limit = t("softmax.limit", v=f"{EXP_OVERFLOW:.2f}")
        with f.chart:
            chart = charts.show_cached(
                ctx,
                views.exponent_chart,
                t,
                naive,
                stable,
                scale,
                EXP_OVERFLOW,
                limit,
                ctx.presenter,
                space=views.chart_room(ctx, 420),
            )
        with f.notes:
            notice(ctx, views.stability_notices(t, sweep, stable_p))
            export_panel(
                ctx,
                "softmax_stability",
                chart,
                lambda: views.exponent_frame(t, views.SWEEP_SCALES, naive, stable),
                {"logits": logits_a, "scale": scale, "naive_p": naive_p, "stable_p": stable_p},
            )

    def mask_step(ctx: PageContext) -> None:
        """Step 4 (a fragment inside the content: its choice reruns only this step). Off
        screen it draws only its choice, which keeps the URL's count."""
        choice = views.mask_choice(len(logits_b))
        if not steps.show(3):
            select(ctx, choice, t("softmax.masked_count"))
            return
        f = frame(ctx)
        with f.lead:
            heading(ctx, t("softmax.step_mask"))
            st.markdown(t("softmax.mask_text"))
        with step_box(ctx, True, t("softmax.mask_controls"), f.lead):
            count = int(select(ctx, choice, t("softmax.masked_count")))
        masked = mask_last(logits_b, count)
        after = core.softmax(masked, temperature=temp)
        with f.chart:
            room = views.chart_room(ctx, 440)
            chart = charts.show_cached(
                ctx, views.mask_chart, t, masked, probs_b, after, ctx.presenter, space=room
            )
        with f.notes:
            notice(ctx, views.mask_notices(t, masked, after))
            arrays = {"masked_logits": masked, "probs_before": probs_b, "probs_after": after}
            export_panel(ctx, "softmax_mask", chart, arrays=arrays)
            link(ctx, "masking", t("softmax.masking_link"))
            link(ctx, "weighted_sum", t("softmax.weighted_sum_link"))
            link(ctx, "lookup", t("softmax.lookup_link"))

    with steps.section(2) as on_screen:
        fragment(ctx, stable_step, on_screen)
    with steps.section(3) as on_screen:
        fragment(ctx, mask_step, on_screen)


fragment(ctx, content)
