"""Multi-head attention: split d_model into h heads, attend in parallel, merge, project."""

import streamlit as st

from ui import charts
from ui.blocks import beside, fragment, header, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import untrained
from ui.sentence import current_d_model, sentence_controls, settings_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import multi_head as mh

ctx = shell("multi_head")
t = ctx.t
header(ctx)

steps = stepper(ctx, [t(f"multi_head.step_{s}") for s in ("split", "weights", "merge", "check")])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). The
    controls are above the steps; only the step on screen is drawn."""
    settings = settings_box(ctx, t("multi_head.settings"))
    left, right = st.columns([2, 3], vertical_alignment="center")
    with left:
        h = mh.heads_control(ctx, current_d_model())
    with settings:  # d_model moves in steps of h, so h always divides it; d_k = d_v = d_model / h
        sentence = sentence_controls(ctx, key_dims=False, native=True, d_model_step=h)
    tokens = sentence.tokens
    view = mh.compute(sentence.x, sentence.d_model, h, sentence.seed)
    tr = view.trace
    d_k = tr.q_heads.shape[-1]
    with right:
        st.markdown(t("multi_head.derived", d_model=sentence.d_model, h=h, d_k=d_k))
    with steps.section(0) as on_screen:
        if on_screen:
            st.subheader(t("multi_head.split_title"))
            st.markdown(t("multi_head.split_text", d_model=sentence.d_model, h=h, d_k=d_k))
            table_col, heads_col = st.columns([3, 1])
            with table_col:
                st.markdown(mh.stage_table(ctx, tr))
            with heads_col:
                st.markdown(mh.head_columns(ctx, h, d_k))

    with steps.section(1) as on_screen:
        if on_screen:
            st.subheader(t("multi_head.weights_title"))
            chart_col, notes_col = beside(ctx)
            with chart_col:
                if not ctx.presenter:  # on a slide the lecturer says it; the notes keep the numbers
                    st.markdown(t("multi_head.weights_text"))
                weights = charts.show_cached(
                    ctx, mh.weights_chart, t, ctx.presenter, tr.weights, view.average, tokens,
                    space=mh.weights_room(ctx),
                )  # fmt: skip
                if h > mh.MAX_HEAD_PANELS:
                    st.caption(t("multi_head.more_heads", shown=mh.MAX_HEAD_PANELS, h=h))
            with notes_col:
                items = mh.notice_items(ctx, view, tokens)
                notice(
                    ctx, items[1:] if ctx.presenter else items
                )  # a slide: step 1 showed the split
            with mh.shorter(ctx, chart_col, notes_col, h):  # on a slide, below the shorter column
                untrained(ctx)
                text = mh.weights_text(ctx, view, tokens)
                arrays = mh.all_arrays(view)
                export_panel(ctx, "multi_head_weights", weights, arrays=arrays, text=text)

    with steps.section(2) as on_screen:
        if on_screen:
            st.subheader(t("multi_head.merge_title"))
            if not ctx.presenter:  # on a slide the lecturer says it; the strip takes the room
                st.markdown(t("multi_head.merge_text", h=h, d_k=d_k, d_model=sentence.d_model))
            st.latex(
                r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_0,\dots,\mathrm{head}_{h-1})\,W^O,"
                r"\quad \mathrm{head}_i=\mathrm{Attention}(XW^Q_i,\,XW^K_i,\,XW^V_i)"
            )
            strip = (tr.concat, view.weights[3], tr.output, h)  # concat, W_O, output, heads
            room = charts.room(ctx, height=mh.MERGE_HEIGHT) if ctx.presenter else None
            merged = charts.show_cached(
                ctx, mh.output_chart, t, ctx.presenter, *strip, tokens, space=room
            )
            export_panel(ctx, "multi_head_output", merged, arrays=mh.all_arrays(view))

    with steps.section(3) as on_screen:
        if on_screen:  # the torch comparison runs only here, on its own step
            st.subheader(t("multi_head.check_title"))
            st.markdown(t("multi_head.check_text", h=h))
            out_diff, w_diff = mh.loop_differences(view)
            c1, c2 = st.columns(2)
            c1.metric(t("multi_head.loop_output_diff"), mh.sci(out_diff))
            c2.metric(t("multi_head.loop_weights_diff"), mh.sci(w_diff))
            st.markdown(f"#### {t('multi_head.torch_title')}")
            check = mh.torch_check(sentence.x, sentence.d_model, h, sentence.seed)
            st.markdown(t("multi_head.torch_mapping"))
            if check is None:
                st.info(t("multi_head.torch_missing"), icon=":material/extension:")
            else:
                c1, c2, c3 = st.columns(3)
                c1.metric(t("multi_head.torch_output_diff"), mh.sci(check.output_diff))
                c2.metric(t("multi_head.torch_average_diff"), mh.sci(check.average_diff))
                c3.metric(t("multi_head.torch_heads_diff"), mh.sci(check.per_head_diff))
                st.caption(t("multi_head.torch_version", version=check.version))
            link(ctx, "masking")
            link(ctx, "kv_cache")


fragment(ctx, content)
