"""A real language model: SmolLM2-135M in NumPy — causal attention, attention sinks, next
token, generation and a real KV cache."""

import streamlit as st

from ui import charts
from ui.blocks import folded, fragment, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import settings_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import decoder as dv

ctx = shell("decoder")
t = ctx.t
st.title(t("decoder.title"))
titles = [t(f"decoder.s{i}_title") for i in range(1, 6)]
steps = stepper(ctx, [t(f"decoder.s{i}_short") for i in range(1, 6)])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn and runs the model; the others draw just their controls, hidden,
    so every control stays in the URL."""
    model = dv.model_or_stop(ctx)
    sz = dv.sizes(model)
    if not ctx.presenter:
        st.markdown(t("decoder.intro", **sz))

    with settings_box(ctx, t("decoder.controls")):
        prompt = dv.prompt_input(ctx, dv.PROMPT, t("decoder.prompt"))
        st.markdown(t("decoder.tokens", n=len(prompt.ids), strip=dv.token_strip(prompt)))
    dv.chinese_note(ctx, prompt)

    with steps.section(0) as on_screen:
        if on_screen:
            st.subheader(titles[0])
            intro = st.empty()  # the text names where the second chart went: drawn after it
        box = dv.layout(ctx, (2, 1))
        with box.controls:  # also the "it" row of step 2
            layer, head, query = dv.head_controls(ctx, model, prompt)
        if on_screen:
            result = dv.run(prompt.ids)
            overview = dv.query_rows(result.attention, query)
            # The chart's title does not name the layer and head (the sliders beside it do): a
            # new layer or head then only swaps the chart's data. The exports name them.
            caption = t("decoder.head_title", layer=layer, head=head)
            with box.chart:
                chart = charts.show_cached(
                    ctx, dv.head_chart, t, prompt.labels, result.attention[layer, head], query,
                    overview, t("decoder.head_weights"), model.config.n_heads, ctx.presenter,
                    space=charts.room(ctx, 0.64, 720),
                )  # fmt: skip
            dv.step_text(ctx, 1, intro, **dv.places(ctx, chart), **sz)
            with box.side:
                notice(ctx, dv.head_notice(ctx, prompt, result, layer, head, query))
                arrays = {"attention": result.attention}
                export_panel(ctx, "decoder_head", chart, arrays=arrays, caption=caption)

    with steps.section(1) as on_screen:
        if on_screen:
            st.subheader(titles[1])
            dv.step_text(ctx, 2, a=dv.LESSON, b=dv.WIDE)
        adj_layer, adj_head = dv.adjective_controls(ctx, model)
        if on_screen:
            why = dv.why(layer, head, adj_layer, adj_head)
            rows = [
                t("decoder.row_it", layer=layer, head=head),
                t("decoder.row_adj", layer=adj_layer, head=adj_head),
            ]
            box = dv.layout(ctx, (1, 1))
            with box.chart:
                space = charts.room(ctx, 0.48)
                chart = charts.show_cached(
                    ctx, dv.why_chart, t, why, rows, ctx.presenter, space=space
                )
            with box.side:
                notice(ctx, dv.why_notice(ctx, why, layer, head, adj_layer, adj_head, sz))
            with box.chart if ctx.presenter else box.side:  # the projector: room below the chart
                link(ctx, "masking")
                link(ctx, "encoder")

    with steps.section(2) as on_screen:
        if on_screen:
            st.subheader(titles[2])
            intro = st.empty()  # the text names where each prompt's chart went: drawn after it
        box = dv.layout(ctx)
        with box.controls:
            other = dv.prompt_input(ctx, dv.SINK_PROMPT, t("decoder.sink_prompt"))
        if on_screen:
            pairs = [(p, dv.sink(dv.run(p.ids).attention)) for p in (prompt, other)]
            shares = [(p, s) for p, s in pairs if s is not None]
            if len(shares) < len(pairs):
                box.side.info(t("decoder.one_token"))
            if shares:
                panels = {t("decoder.sink_title", first=p.labels[0]): s for p, s in shares}
                with box.chart:
                    space = charts.room(ctx, 0.58, 720)
                    chart = charts.show_cached(ctx, dv.sink_chart, t, panels, space=space)
                with box.side:
                    notice(ctx, dv.sink_notice(ctx, shares))
            one = "_one" if len(shares) == 1 else ""  # a one-token prompt draws no chart
            dv.step_text(ctx, 3, intro, one, **dv.places(ctx, chart if shares else {}))

    with steps.section(3) as on_screen:
        if on_screen:
            st.subheader(titles[3])
            dv.step_text(ctx, 4, **sz)
        left, right = st.columns([3, 2], gap="large")
        with left:
            temperature = dv.next_controls(ctx)
            if on_screen:
                frame = dv.next_frame(model, dv.run(prompt.ids).logits, temperature)
                space = charts.room(ctx, 0.58, 480)
                chart = charts.show_cached(ctx, dv.next_chart, t, frame, space=space)
        with right:  # the generation settings: also step 5's
            settings, use_cache = dv.gen_controls(ctx, prompt, temperature)
            if on_screen:
                if st.button(t("decoder.generate"), type="primary", icon=":material/play_arrow:"):
                    generation = dv.stream(ctx, model, prompt, settings, use_cache)
                else:
                    generation = dv.recalled(settings, use_cache)
                    if generation is not None:
                        st.markdown(dv.generated_markdown(prompt, generation.labels, True))
                if generation is not None:
                    notice(ctx, dv.generation_notice(ctx, generation))
        if on_screen:
            with right if ctx.presenter else left:  # the projector: below the short right column
                notice(ctx, dv.next_notice(ctx, frame, temperature, sz))
                link(ctx, "softmax", t("decoder.softmax_link"))

    with steps.section(4) as on_screen:
        if on_screen:
            st.subheader(titles[4])
            dv.step_text(ctx, 5, **sz)
            if st.button(t("decoder.compare"), icon=":material/timer:"):
                with st.status(t("decoder.comparing"), expanded=True) as box:
                    runs = [dv.stream(ctx, model, prompt, settings, c) for c in (True, False)]
                    box.update(label=t("decoder.compared"), state="complete", expanded=False)
            else:
                runs = [dv.recalled(settings, c) for c in (True, False)]
            on, off = runs
            if on is None or off is None:
                st.caption(t("decoder.compare_hint"))
            else:
                left, right = st.columns([3, 2], gap="large")
                with left:
                    frame = dv.timing_frame(t, [on, off])
                    space = charts.room(ctx, 0.58)
                    chart = charts.show_cached(ctx, dv.timing_chart, t, frame, space=space)
                    notice(ctx, dv.compare_notice(ctx, model, on, off))
                with right:
                    folded(
                        ctx,
                        t("decoder.cache_table"),
                        "cache_table",
                        lambda: dv.cache_box(ctx, model, on),
                        icon=":material/table:",
                    )
            link(ctx, "kv_cache")


fragment(ctx, content)
