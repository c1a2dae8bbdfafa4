"""Multi-head attention: split d_model into h heads, attend in parallel, merge, project."""

import streamlit as st

from ui import charts
from ui.blocks import fragment, frame, header, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import multi_head as mh

ctx = shell("multi_head")
t = ctx.t
header(ctx)

steps = stepper(ctx, [t(f"multi_head.step_{s}") for s in ("split", "weights", "merge", "check")])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). The
    controls come first (students: the sidebar); only the step on screen is drawn."""
    h, sentence, line = mh.controls(ctx)
    tokens = sentence.tokens
    view = mh.compute(sentence.x, sentence.d_model, h, sentence.seed)
    tr = view.trace
    d_k = tr.q_heads.shape[-1]
    mh.derived(ctx, line, sentence.d_model, h, d_k)
    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, 0.75)
            with f.lead:
                intro(ctx)
                st.subheader(t("multi_head.split_title"))
                st.markdown(t("multi_head.split_text", d_model=sentence.d_model, h=h, d_k=d_k))
            f.chart.table(mh.stage_table(ctx, tr), hide_index=True)
            f.notes.markdown(mh.head_columns(ctx, h, d_k))

    with steps.section(1) as on_screen:
        if on_screen:
            f = frame(ctx, mh.WEIGHTS_SHARE)
            with f.lead:
                st.subheader(t("multi_head.weights_title"))
                if not ctx.presenter:  # on a slide the lecturer says it; the notes keep the numbers
                    st.markdown(t("multi_head.weights_text"))
            with f.chart:
                args = (t, ctx.presenter, tr.weights, view.average, tokens)
                space = mh.weights_room(ctx)
                weights = charts.show_cached(ctx, mh.weights_chart, *args, space=space)
                if h > mh.MAX_HEAD_PANELS:
                    st.caption(t("multi_head.more_heads", shown=mh.MAX_HEAD_PANELS, h=h))
            with f.notes:
                items = mh.notice_items(ctx, view, tokens)
                notice(
                    ctx, items[1:] if ctx.presenter else items
                )  # a slide: step 1 showed the split
            with mh.shorter(ctx, f.chart, f.notes, h):  # on a slide, below the shorter column
                untrained(ctx)
                text = mh.weights_text(ctx, view, tokens)
                arrays = mh.all_arrays(view)
                export_panel(ctx, "multi_head_weights", weights, arrays=arrays, text=text)

    with steps.section(2) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                st.subheader(t("multi_head.merge_title"))
                if not ctx.presenter:  # on a slide the lecturer says it; the strip takes the room
                    st.markdown(t("multi_head.merge_text", h=h, d_k=d_k, d_model=sentence.d_model))
                st.latex(
                    r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_0,\dots,\mathrm{head}_{h-1})\,W^O,"
                    r"\quad \mathrm{head}_i=\mathrm{Attention}(XW^Q_i,\,XW^K_i,\,XW^V_i)"
                )
            strip = (tr.concat, view.weights[3], tr.output, h)  # concat, W_O, output, heads
            room = charts.room(ctx, height=mh.MERGE_HEIGHT)
            with f.chart:
                merged = charts.show_cached(
                    ctx, mh.output_chart, t, ctx.presenter, *strip, tokens, space=room
                )
            with f.notes:
                export_panel(ctx, "multi_head_output", merged, arrays=mh.all_arrays(view))

    with steps.section(3) as on_screen:
        if on_screen:  # the torch comparison runs only here, on its own step
            f = frame(ctx, stacked=True)
            with f.lead:
                st.subheader(t("multi_head.check_title"))
                st.markdown(t("multi_head.check_text", h=h))
            loop = mh.loop_differences(view)
            check = mh.torch_check(sentence.x, sentence.d_model, h, sentence.seed)
            if not ctx.presenter:  # every difference in one table, first on the screen
                f.chart.table(mh.check_table(ctx, loop, check), hide_index=True)
            else:  # large numbers for the back of the hall, each under its heading
                c1, c2 = f.lead.columns(2)
                c1.metric(t("multi_head.loop_output_diff"), mh.sci(loop[0]))
                c2.metric(t("multi_head.loop_weights_diff"), mh.sci(loop[1]))
            with f.lead if ctx.presenter else f.notes:
                st.markdown(f"#### {t('multi_head.torch_title')}")
                st.markdown(t("multi_head.torch_mapping"))
                if check is None:
                    st.info(t("multi_head.torch_missing"), icon=":material/extension:")
                elif ctx.presenter:
                    c1, c2, c3 = st.columns(3)
                    c1.metric(t("multi_head.torch_output_diff"), mh.sci(check.output_diff))
                    c2.metric(t("multi_head.torch_average_diff"), mh.sci(check.average_diff))
                    c3.metric(t("multi_head.torch_heads_diff"), mh.sci(check.per_head_diff))
                if check is not None:
                    st.caption(t("multi_head.torch_version", version=check.version))
                link(ctx, "masking")
                link(ctx, "kv_cache")


fragment(ctx, content)
