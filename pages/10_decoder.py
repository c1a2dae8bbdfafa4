"""A real language model: SmolLM2-135M in NumPy — causal attention, attention sinks, next
token, generation and a real KV cache."""

import streamlit as st

from ui import charts
from ui import prompt as typed
from ui.blocks import Frame, folded, fragment, frame, header, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import settings_box, step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import decoder as dv

ctx = shell("decoder")
t = ctx.t
header(ctx)
titles = [t(f"decoder.s{i}_title") for i in range(1, 6)]
steps = stepper(ctx, [t(f"decoder.s{i}_short") for i in range(1, 6)])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn and runs the model; the others draw just their controls, hidden,
    so every control stays in the URL. A step's text names where its chart's parts went, so
    it is written (into the lead above or below the chart) once the chart is drawn."""
    model = typed.model_or_stop(ctx)
    sz = dv.sizes(model)
    with settings_box(ctx, t("decoder.controls")):
        prompt = dv.prompt_input(ctx, dv.PROMPT, t("decoder.prompt"))
        dv.token_box(ctx, prompt)

    def lead(f: Frame, step: int) -> None:
        """The top of a step's text: what this model can read, the heading."""
        with f.lead:
            if step == 1:
                intro(ctx, **sz)
            dv.chinese_note(ctx, prompt)
            st.subheader(titles[step - 1])

    with steps.section(0) as on_screen:
        if not on_screen:  # also the "it" row of step 2
            layer, head, query = dv.head_controls(ctx, model, prompt)
        else:
            f = frame(ctx, 2 / 3)
            lead(f, 1)
            with step_box(ctx, True, t("decoder.s1_controls"), f.notes):
                layer, head, query = dv.head_controls(ctx, model, prompt)
            result = dv.run(prompt.ids)
            overview = dv.query_rows(result.attention, query)
            # The chart's title does not name the layer and head (the sliders do): a new
            # layer or head then only swaps the chart's data. The exports name them.
            caption = t("decoder.head_title", layer=layer, head=head)
            with f.chart:
                weights = result.attention[layer, head]
                shown_as = (t("decoder.head_weights"), model.config.n_heads, ctx.presenter)
                args = (t, prompt.labels, weights, query, overview, *shown_as)
                space = charts.room(ctx, 0.64 if ctx.presenter else 1.0, 690)
                chart = charts.show_cached(ctx, dv.head_chart, *args, space=space)
            with f.lead:
                dv.step_text(ctx, 1, **dv.places(ctx, chart), **sz)
            with f.notes:
                notice(ctx, dv.head_notice(ctx, prompt, result, layer, head, query))
                arrays = {"attention": result.attention}
                export_panel(ctx, "decoder_head", chart, arrays=arrays, caption=caption)

    with steps.section(1) as on_screen:
        if not on_screen:
            dv.adjective_controls(ctx, model)
        else:
            f = frame(ctx, 0.5)
            lead(f, 2)
            with f.lead:
                dv.step_text(ctx, 2, a=dv.LESSON, b=dv.WIDE)
                dv.fixed_pair_note(ctx, prompt)
            with step_box(ctx, True, t("decoder.s2_controls"), f.lead):  # a slide: above the chart
                adj_layer, adj_head = dv.adjective_controls(ctx, model)
            why = dv.why(layer, head, adj_layer, adj_head)
            rows = [
                t("decoder.row_it", layer=layer, head=head),
                t("decoder.row_adj", layer=adj_layer, head=adj_head),
            ]
            with f.chart:
                space = charts.room(ctx, 0.48 if ctx.presenter else 1.0)
                chart = charts.show_cached(
                    ctx, dv.why_chart, t, why, rows, ctx.presenter, space=space
                )
            with f.notes:
                notice(ctx, dv.why_notice(ctx, why, layer, head, adj_layer, adj_head, sz))
            with f.chart if ctx.presenter else f.notes:  # the projector: room below the chart
                link(ctx, "masking")
                link(ctx, "encoder")

    with steps.section(2) as on_screen:
        if not on_screen:
            dv.prompt_input(ctx, dv.SINK_PROMPT, t("decoder.sink_prompt"))
        else:
            f = frame(ctx, 0.6)
            lead(f, 3)
            with step_box(ctx, True, t("decoder.s3_controls"), f.notes):
                other = dv.prompt_input(ctx, dv.SINK_PROMPT, t("decoder.sink_prompt"))
            pairs = [(p, dv.sink(dv.run(p.ids).attention)) for p in (prompt, other)]
            shares = [(p, s) for p, s in pairs if s is not None]
            if len(shares) < len(pairs):
                f.notes.info(t("decoder.one_token"))
            if shares:
                panels = {t("decoder.sink_title", first=p.labels[0]): s for p, s in shares}
                with f.chart:
                    space = charts.room(ctx, 0.58, 720)
                    chart = charts.show_cached(ctx, dv.sink_chart, t, panels, space=space)
                with f.notes:
                    notice(ctx, dv.sink_notice(ctx, shares))
            one = "_one" if len(shares) == 1 else ""  # a one-token prompt draws no chart
            with f.lead:
                dv.step_text(ctx, 3, one, **dv.places(ctx, chart if shares else {}))

    with steps.section(3) as on_screen:
        if not on_screen:  # the generation settings: also step 5's
            temperature = dv.next_controls(ctx)
            settings, use_cache = dv.gen_controls(ctx, prompt, temperature)
        else:
            f = frame(ctx, 0.6)
            lead(f, 4)
            with f.lead:
                dv.step_text(ctx, 4, **sz)
            with step_box(ctx, True, t("decoder.s4_controls"), f.chart):
                temperature = dv.next_controls(ctx)
            with step_box(ctx, True, None, f.notes):  # students: the same box
                settings, use_cache = dv.gen_controls(ctx, prompt, temperature)
                pressed = st.button(
                    t("decoder.generate"), type="primary", icon=":material/play_arrow:"
                )
            frame_ = dv.next_frame(model, dv.run(prompt.ids).logits, temperature)
            with f.chart:
                space = charts.room(ctx, 0.58, 480)
                chart = charts.show_cached(ctx, dv.next_chart, t, frame_, space=space)
            with f.notes if ctx.presenter else f.chart:  # students: the text below the chart
                generation = dv.generation(ctx, model, prompt, settings, use_cache, pressed)
            with f.notes:
                if generation is not None:
                    notice(ctx, dv.generation_notice(ctx, generation))
                notice(ctx, dv.next_notice(ctx, frame_, temperature, sz))
                link(ctx, "softmax", t("decoder.softmax_link"))

    with steps.section(4) as on_screen:
        if on_screen:
            f = frame(ctx, 0.6)
            lead(f, 5)
            with f.lead:
                dv.step_text(ctx, 5, **sz)
            with step_box(ctx, True, t("decoder.s5_controls"), f.lead):
                pressed = st.button(t("decoder.compare"), icon=":material/timer:")
            with f.lead if ctx.presenter else f.chart:  # students: above the chart
                on, off = dv.timed_runs(ctx, model, prompt, settings, pressed)
            done = [g for g in (on, off) if g is not None]
            if not ctx.presenter or len(done) == 2:  # students: the chart's place kept
                with f.chart:
                    frame_ = dv.timing_frame(t, done)
                    space = charts.room(ctx, 0.58)
                    chart = charts.show_cached(ctx, dv.timing_chart, t, frame_, space=space)
            if on is None or off is None:
                f.lead.caption(t("decoder.compare_hint"))
            else:
                with f.chart if ctx.presenter else f.notes:  # a slide: below the chart
                    notice(ctx, dv.compare_notice(ctx, model, on, off))
                with f.notes:
                    folded(
                        ctx,
                        t("decoder.cache_table"),
                        "cache_table",
                        lambda: dv.cache_box(ctx, model, on),
                        icon=":material/table:",
                    )
            link(ctx, "kv_cache")


fragment(ctx, content)
