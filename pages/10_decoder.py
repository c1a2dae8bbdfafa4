"""A real language model: SmolLM2-135M in NumPy — causal attention, attention sinks, next
token, generation and a real KV cache."""

import streamlit as st

from ui import charts
from ui.blocks import link, notice
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
model = dv.model_or_stop(ctx)
sz = dv.sizes(model)
if not ctx.presenter:
    st.markdown(t("decoder.intro", **sz))

with settings_box(ctx, t("decoder.controls")):
    prompt = dv.prompt_input(ctx, dv.PROMPT, t("decoder.prompt"))
    st.markdown(t("decoder.tokens", n=len(prompt.ids), strip=dv.token_strip(prompt)))
dv.chinese_note(ctx, prompt)
result = dv.run(prompt.ids)

with steps.section(0):
    st.subheader(titles[0])
    st.markdown(t("decoder.s1_text", **sz))
    layer, head, query = dv.head_controls(ctx, model, prompt)
    overview = dv.query_rows(result.attention, query)
    title = t("decoder.head_title", layer=layer, head=head)
    chart = charts.show_cached(
        ctx, dv.head_chart, t, prompt.labels, result.attention[layer, head], query, overview,
        title, model.config.n_heads,
    )  # fmt: skip
    notice(ctx, dv.head_notice(ctx, prompt, result, layer, head, query))
    export_panel(ctx, "decoder_head", chart, arrays={"attention": result.attention})

with steps.section(1):
    st.subheader(titles[1])
    st.markdown(t("decoder.s2_text", a=dv.LESSON, b=dv.WIDE))
    adj_layer, adj_head = dv.adjective_controls(ctx, model)
    why = dv.why(layer, head, adj_layer, adj_head)
    rows = [
        t("decoder.row_it", layer=layer, head=head),
        t("decoder.row_adj", layer=adj_layer, head=adj_head),
    ]
    chart = charts.show_cached(ctx, dv.why_chart, t, why, rows)
    notice(ctx, dv.why_notice(ctx, why, layer, head, adj_layer, adj_head, sz))
    link(ctx, "masking")
    link(ctx, "encoder")

with steps.section(2):
    st.subheader(titles[2])
    st.markdown(t("decoder.s3_text"))
    other = dv.prompt_input(ctx, dv.SINK_PROMPT, t("decoder.sink_prompt"))
    pairs = [(p, dv.sink(dv.run(p.ids).attention)) for p in (prompt, other)]
    shares = [(p, s) for p, s in pairs if s is not None]
    if len(shares) < len(pairs):
        st.info(t("decoder.one_token"))
    if shares:
        panels = {t("decoder.sink_title", first=p.labels[0]): s for p, s in shares}
        chart = charts.show_cached(ctx, dv.sink_chart, t, panels)
        notice(ctx, dv.sink_notice(ctx, shares))

with steps.section(3):
    st.subheader(titles[3])
    st.markdown(t("decoder.s4_text", **sz))
    left, right = st.columns([3, 2], gap="large")
    with left:
        temperature = dv.next_controls(ctx)
        frame = dv.next_frame(model, result.logits, temperature)
        space = charts.room(ctx, 0.58)
        chart = charts.show_cached(ctx, dv.next_chart, t, frame, space=space)
        notice(ctx, dv.next_notice(ctx, frame, temperature, sz))
        link(ctx, "softmax", t("decoder.softmax_link"))
    with right:
        settings, use_cache = dv.gen_controls(ctx, prompt, temperature)
        if st.button(t("decoder.generate"), type="primary", icon=":material/play_arrow:"):
            generation = dv.stream(ctx, model, prompt, settings, use_cache)
        else:
            generation = dv.recalled(settings, use_cache)
            if generation is not None:
                st.markdown(dv.generated_markdown(prompt, generation.labels, True))
        if generation is not None:
            notice(ctx, dv.generation_notice(ctx, generation))

with steps.section(4):
    st.subheader(titles[4])
    st.markdown(t("decoder.s5_text", **sz))
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
            st.dataframe(dv.cache_table(ctx, model, on), hide_index=True)
    link(ctx, "kv_cache")
