"""Rotary positions (RoPE): q and k turned by their positions, so that a score depends only
on how far apart two tokens are; the pairs' wavelengths; the rotation inside SmolLM2."""

import streamlit as st

from ui import charts
from ui import prompt as typed
from ui.blocks import fragment, frame, header, heading, intro, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.sentence import step_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import rope as rv

ctx = shell("rope")
t = ctx.t
header(ctx)
titles = [t(f"rope.s{i}_title") for i in range(1, 5)]
steps = stepper(ctx, [t(f"rope.s{i}_short") for i in range(1, 5)])
ROTATION = (
    r"\begin{pmatrix}q'_{2i}\\ q'_{2i+1}\end{pmatrix}="
    r"\begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\"
    r" \sin m\theta_i & \cos m\theta_i\end{pmatrix}"
    r"\begin{pmatrix}q_{2i}\\ q_{2i+1}\end{pmatrix},\quad \theta_i=b^{-2i/d}"
)
OFFSET = r"(R_{m\theta}\,q)\cdot(R_{n\theta}\,k)=q\cdot R_{(n-m)\theta}\,k"


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the others draw just their controls, hidden, so every control
    stays in the URL. The base belongs to steps 1–3 and the seed to steps 1–2: the step on
    screen draws them if it uses them, else step 1 does, hidden."""
    base_host, seed_host = steps.host(0, 1, 2), steps.host(0, 1)
    cfg = typed.config()

    with steps.section(0) as on_screen:
        f = frame(ctx, rv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("rope.s1_controls"), f and f.chart):
            toy = rv.toy_controls(ctx, base_host == 0, seed_host == 0)
            pair, m, n, shift = rv.pair_controls(ctx)
        if on_screen:
            v = rv.pair_view(toy, pair, m, n, shift)
            with slot:
                panels = rv.pair_panels(t, v)
                args = (t, panels, rv.pair_extent(v), ctx.presenter)
                chart = charts.show_cached(ctx, rv.pair_chart, *args, space=rv.room(ctx, 460))
            with f.lead:
                intro(ctx)
                heading(ctx, titles[0])
                if not ctx.presenter:
                    st.markdown(t("rope.s1_text", i=pair, d=rv.TOY_D))
                st.latex(ROTATION)
            with f.notes:
                notice(ctx, rv.pair_notice(ctx, v, shift))
                export_panel(ctx, "rope_pair", chart, arrays=rv.pair_arrays(toy, v))

    with steps.section(1) as on_screen:
        f = frame(ctx, rv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("rope.s2_controls"), f and f.chart):
            toy = rv.toy_controls(ctx, base_host == 1, seed_host == 1) if on_screen else toy
            size = rv.grid_control(ctx)
        if on_screen:
            g = rv.grids(toy, size)
            with slot:
                chart = charts.show_cached(
                    ctx,
                    rv.grid_chart,
                    t,
                    g.rope,
                    g.absolute,
                    ctx.presenter,
                    space=rv.room(ctx, 520),
                )
            with f.lead:
                heading(ctx, titles[1])
                if not ctx.presenter:
                    st.markdown(t("rope.s2_text", d=rv.TOY_D))
                st.latex(OFFSET)
            with f.notes:
                notice(ctx, rv.grid_notice(ctx, g))
                link(ctx, "qkv", t("rope.qkv_link"))
                arrays = {"rope": g.rope, "absolute": g.absolute}
                export_panel(ctx, "rope_grid", chart, arrays=arrays)

    with steps.section(2) as on_screen:
        f = frame(ctx, rv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("rope.s3_controls"), f and f.chart):
            toy = rv.toy_controls(ctx, base_host == 2, False) if on_screen else toy
        if on_screen and cfg is None:
            typed.missing(ctx)
        elif on_screen:
            w = rv.waves(cfg, toy.base)
            with slot:
                args = (t, rv.wave_series(t, w), w.context, ctx.presenter)
                chart = charts.show_cached(ctx, rv.wave_chart, *args, space=rv.room(ctx, 480))
            with f.lead:
                heading(ctx, titles[2])
                if not ctx.presenter:
                    st.markdown(t("rope.s3_text", **rv.wave_facts(w)))
            with f.notes:
                notice(ctx, rv.wave_notice(ctx, w))
                arrays = {"wavelengths": w.waves, "toy_wavelengths": w.toy_waves}
                export_panel(ctx, "rope_waves", chart, arrays=arrays)

    with steps.section(3) as on_screen:
        if cfg is None:
            if on_screen:
                typed.missing(ctx)
            return
        f = frame(ctx, rv.SHARE) if on_screen else None
        slot = f.chart.container() if f else None  # the chart; on a slide the controls below it
        with step_box(ctx, on_screen, t("rope.s4_controls"), f and f.chart):
            raw, layer, head = rv.model_controls(ctx, cfg)
        if on_screen:
            typed.model_or_stop(ctx)
            prompt = typed.prompt_or_default(ctx, raw, rv.PROMPT.default)
            r = rv.rotation(cfg, rv.queries(prompt.ids)[layer], head)
            labels = charts.unique_labels(list(prompt.labels))
            with slot:
                args = (t, labels, r.cos, r.shift, ctx.presenter)
                chart = charts.show_cached(ctx, rv.model_chart, *args, space=rv.room(ctx, 520))
            with f.lead:
                heading(ctx, titles[3])
                typed.chinese_note(ctx, raw)
                key = "rope.s4_brief" if ctx.presenter else "rope.s4_text"
                st.markdown(t(key, layer=layer, head=head, n=len(prompt.ids)))
            with f.notes:
                notice(ctx, rv.model_notice(ctx, cfg, r, len(prompt.ids)))
                link(ctx, "decoder")
                link(ctx, "gqa")
                caption = t("rope.model_caption", layer=layer, head=head)
                arrays = {"cos": r.cos, "shift": r.shift}
                export_panel(ctx, "rope_model", chart, arrays=arrays, caption=caption)


fragment(ctx, content)
