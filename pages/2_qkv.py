"""Q, K, V: three learned projections of every token vector, separate and fused."""

import streamlit as st

import core
from core.findings.qkv import fused_check
from ui import charts
from ui.blocks import fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.notes import short_list, untrained
from ui.safe import plain
from ui.sentence import sentence_controls, settings_box, token_picker
from ui.shell import shell
from ui.steps import stepper
from ui.views import qkv as view

ctx = shell("qkv")
t = ctx.t
header(ctx)
titles = [
    t("qkv.matrices_title"),
    t("qkv.follow_title"),
    t("qkv.fused_title"),
    t("qkv.lesson_title"),
]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the token and projection pickers stay in the URL on every step."""
    with settings_box(ctx, t("qkv.settings")):
        s = sentence_controls(ctx)
    w_q, w_k, w_v = s.projections()
    tr = core.self_attention_trace(s.x, w_q, w_k, w_v)
    check = fused_check(s.x, w_q, w_k, w_v)  # the fused projection against the separate ones
    # new values: data swapped, no redraw; a slide: numbers, 1 decimal
    live = view.strip_options(ctx)
    matrices, follow, fused, lesson = (steps.section(k) for k in range(4))

    with matrices as on_screen:
        f1 = frame(ctx, view.SLIDE_SHARE) if on_screen else None
        hidden = st.container()  # off screen: the pickers of steps 1 and 2, not drawn
    with follow as on_screen:
        f2 = frame(ctx, stacked=True) if on_screen else None
    with view.pickers_place(ctx, f1, f2, hidden):
        i = token_picker(ctx, s.tokens, t("qkv.token"))
        with st.container() if f1 else hidden:  # step 1's own: hidden on the other steps
            which = view.projection_picker(ctx)

    if f1:
        w, out = {"q": (w_q, tr.q), "k": (w_k, tr.k), "v": (w_v, tr.v)}[which]
        shapes = view.shapes_tex(tr.x, w, out, which)
        with f1.lead:
            intro(ctx)
            heading(ctx, titles[0])  # a slide: the step bar names the step
            if not ctx.presenter:  # a slide has the text's formula beside the chart
                st.markdown(t("qkv.matrices_text"))
                st.latex(shapes)
        with f1.chart:
            panels = view.matrix_panels(s, tr.x, w, out, which)
            framed = {"X": i, which.upper(): i}
            room = view.strip_room(ctx)
            shown = charts.show_cached(
                ctx, view.projection_strip, panels, frames=framed, space=room, **live
            )
        notes = view.matrix_notes(ctx, s, out, i, which, check)
        arrays = {"x": tr.x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "q": tr.q, "k": tr.k, "v": tr.v}
        with f1.notes:
            if ctx.presenter:  # the text is what the lecturer says; the slide keeps the formulas
                st.latex(r"\small " + shapes)  # smaller than the body text: the notes fit below
                notice(ctx, notes[:2])  # a slide: the two main points
                untrained(ctx)
                export_panel(ctx, "qkv_matrices", shown, arrays=arrays)
            else:
                name = which.upper()
                st.caption(t("qkv.matrices_caption", token=plain(s.tokens[i]), i=i, name=name))
                export_panel(ctx, "qkv_matrices", shown, arrays=arrays)
                notice(ctx, notes)
                untrained(ctx)

    if f2:
        with f2.lead:
            heading(ctx, titles[1])  # a slide: the step bar names the step
            st.markdown(t(f"qkv.follow_text_{s.mode}", token=plain(s.tokens[i]), i=i))
            st.latex(view.follow_tex(i, tr.x[i], tr.q[i], tr.k[i], tr.v[i]))
        with f2.chart:
            shown = charts.show_cached(ctx, view.stack, view.follow_panels(s, tr, i))
        arrays = {"x_i": tr.x[i], "q_i": tr.q[i], "k_i": tr.k[i], "v_i": tr.v[i]}
        with f2.notes:
            export_panel(ctx, "qkv_follow", shown, arrays=arrays)

    with fused as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                heading(ctx, titles[2])  # a slide: the step bar names the step
                st.markdown(t("qkv.fused_text", width=2 * s.d_k + s.d_v, d_k=s.d_k))
                st.latex(
                    r"W^{QKV}=\left[\,W^Q\;\middle|\;W^K\;\middle|\;W^V\,\right],\qquad"
                    r"\left[\,Q\;\middle|\;K\;\middle|\;V\,\right]=X\,W^{QKV}"
                )
            panels, fused_arrays = view.fused_view(s, tr.x, (w_q, w_k, w_v))
            with f.chart:
                shown = charts.show_cached(
                    ctx, charts.matrix_strip, panels, space=view.fused_room(ctx), **live
                )
            with f.notes:
                cols = st.columns(3)
                for col, name, value in zip(cols, "QKV", (check.q, check.k, check.v), strict=True):
                    col.metric(t("qkv.fused_metric", name=name), view.difference_text(value))
                if not ctx.presenter:  # the metrics above say it on a slide
                    st.caption(t("qkv.fused_caption", diff=view.difference_text(check.largest)))
                export_panel(ctx, "qkv_fused", shown, arrays=fused_arrays)

    with lesson as on_screen:
        if on_screen:
            f = frame(ctx)
            with f.lead:
                heading(ctx, titles[3])  # a slide: the step bar names the step
            panels, kinds = view.lesson_panels(t, s, tr)
            with f.chart:  # square cells, the lesson's 3 decimals
                frames = {p[0]: 0 for p in panels}
                space = view.lesson_room(ctx)
                style = {"kinds": kinds, "frames": frames, "largest": view.lesson_cell(ctx)}
                style |= {**live, "digits": 3, "aspect": 1.0}
                shown = charts.show_cached(ctx, charts.matrix_strip, panels, space=space, **style)
            with f.notes:
                if view.is_lesson(s):
                    st.success(t("qkv.lesson_match"), icon=":material/check_circle:")
                else:
                    st.info(t("qkv.lesson_differs"), icon=":material/info:")
                st.markdown(
                    t(
                        "qkv.first_rows",
                        token=plain(s.tokens[0]),
                        weights=short_list(tr.weights[0]),
                        output=short_list(tr.output[0]),
                    )
                )
                text = core.text_heatmap(tr.weights, charts.unique_labels(s.tokens))
                export_panel(
                    ctx,
                    "qkv_lesson",
                    shown,
                    arrays={"weights": tr.weights, "output": tr.output},
                    text=text,
                )
                link(ctx, "scaling", t("qkv.next_link"))
                link(ctx, "weighted_sum")


fragment(ctx, content)
