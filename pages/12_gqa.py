"""Grouped-query attention: fewer key/value heads than query heads — who shares what, what it
saves in the KV cache, the classic expansion bug, and SmolLM2's 9 query heads in their groups."""

import streamlit as st

from ui import charts
from ui import prompt as typed
from ui.blocks import fragment, frame, header, heading, intro, lazy_box, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import gqa as gv

ctx = shell("gqa")
t = ctx.t
header(ctx)
titles = [t(f"gqa.s{i}_title") for i in range(1, 5)]
steps = stepper(ctx, [t(f"gqa.s{i}_short") for i in range(1, 5)])


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the others draw just their controls, hidden, so every control
    stays in the URL. The prompt and the layer belong to steps 3 and 4: the step on screen
    draws them if it is one of those, else step 3 does, hidden."""
    cfg = typed.config()
    model_host = steps.host(2, 3)

    with steps.section(0) as on_screen:
        f = frame(ctx, gv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("gqa.s1_controls"), f and f.chart):
            h_kv, seed = gv.toy_controls(ctx)
        toy = gv.toy(h_kv, seed)
        if on_screen:
            with slot:
                chart = charts.show_cached(
                    ctx, gv.toy_chart, t, h_kv, toy.weights, ctx.presenter, space=gv.room(ctx, 480)
                )
            with f.lead:
                intro(ctx)
                heading(ctx, titles[0])
                if not ctx.presenter:
                    st.markdown(t("gqa.s1_text", h=gv.TOY_H, n=gv.TOY_N, d=gv.TOY_D))
            with f.notes:
                notice(ctx, gv.toy_notice(ctx, toy))
                export_panel(ctx, "gqa_toy", chart, arrays=gv.toy_arrays(toy))

    if cfg is None:  # the other steps need the real model's sizes
        if not steps.show(0):
            typed.missing(ctx)
        return

    with steps.section(1) as on_screen:
        f = frame(ctx, gv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("gqa.s2_controls"), f and f.chart):
            dtype, tokens = gv.memory_controls(ctx, cfg)
        if on_screen:
            m = gv.memory(cfg, dtype, tokens)
            names = gv.design_names(t, m)
            with slot:
                args = (t, m.curve_tokens, m.curves, m.tokens, m.at_tokens, names, ctx.presenter)
                chart = charts.show_cached(ctx, gv.memory_chart, *args, space=gv.room(ctx, 480))
            with f.lead:
                heading(ctx, titles[1])
                if not ctx.presenter:
                    st.markdown(t("gqa.s2_text", **gv.sizes(cfg)))
                st.latex(gv.memory_formula(t))
            with f.notes:
                notice(ctx, gv.memory_notice(ctx, cfg, m))
                link(ctx, "kv_cache")
                export_panel(ctx, "gqa_memory", chart, arrays=gv.memory_arrays(m))

    with steps.section(2) as on_screen:
        f = frame(ctx, gv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("gqa.s3_controls"), f and f.chart):
            raw, layer = gv.model_controls(ctx, cfg) if model_host == 2 else ("", 0)
        if on_screen:
            typed.model_or_stop(ctx)
            prompt = typed.prompt_or_default(ctx, raw, gv.PROMPT.default)
            tr = gv.trap(cfg, gv.qkv(prompt.ids)[layer], layer)
            with slot:
                args = (t, tr.h, tr.h_kv, tr.gaps, gv.trap_titles(t, layer), ctx.presenter)
                chart = charts.show_cached(ctx, gv.trap_chart, *args, space=gv.room(ctx, 480))
            with f.lead:
                heading(ctx, titles[2])
                typed.chinese_note(ctx, raw)
                if not ctx.presenter:
                    st.markdown(t("gqa.s3_text", **gv.sizes(cfg)))
                st.code(gv.expansion_code(cfg.n_heads // cfg.n_kv_heads), language="python")
            with f.notes:
                notice(ctx, gv.trap_notice(ctx, tr, toy))
                lazy_box(
                    t("gqa.torch_title"),
                    "gqa_torch",
                    lambda: gv.torch_box(ctx, prompt.ids),
                    icon=":material/verified:",
                )
                caption = t("gqa.model_caption", layer=layer)
                export_panel(ctx, "gqa_trap", chart, arrays={"gaps": tr.gaps}, caption=caption)

    with steps.section(3) as on_screen:
        f = frame(ctx, gv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("gqa.s4_controls"), f and f.chart):
            if model_host == 3:
                raw, layer = gv.model_controls(ctx, cfg)
        if on_screen:
            typed.model_or_stop(ctx)
            prompt = typed.prompt_or_default(ctx, raw, gv.PROMPT.default)
            weights = gv.layer_weights(prompt.ids, layer)
            labels = charts.unique_labels(list(prompt.labels))
            place, beside = gv.beside(ctx, f, slot)  # students: the notice right of the tall chart
            with place:
                args = (t, labels, weights, cfg.n_kv_heads, ctx.presenter)
                chart = charts.show_cached(ctx, gv.model_chart, *args, space=gv.groups_room(ctx))
            with f.lead:
                heading(ctx, titles[3])
                typed.chinese_note(ctx, raw)
                if not ctx.presenter:
                    st.markdown(t("gqa.s4_text", layer=layer, n=len(prompt.ids), **gv.sizes(cfg)))
            with beside:
                notice(ctx, gv.model_notice(ctx, cfg, weights, layer))
            with f.notes:
                link(ctx, "decoder")
                link(ctx, "rope")
                caption = t("gqa.model_caption", layer=layer)
                export_panel(ctx, "gqa_heads", chart, arrays={"weights": weights}, caption=caption)


fragment(ctx, content)
