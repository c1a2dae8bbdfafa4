"""KV cache: decode one token at a time, reuse the cached keys and values, count the savings."""

import streamlit as st

from ui import charts
from ui.blocks import header, link, notice
from ui.exports import export_panel
from ui.shell import shell
from ui.steps import stepper
from ui.views import kv_cache as kv
from ui.views.notes import untrained

ctx = shell("kv_cache")
t = ctx.t
header(ctx)
titles = [t("kv_cache.s1_title"), t("kv_cache.s2_title")]
steps = stepper(ctx, titles)


@st.fragment
def decode_step() -> None:
    """Step 1 (a fragment: its controls rerun only this step)."""
    st.subheader(titles[0])
    st.markdown(t("kv_cache.s1_text"))
    sentence = kv.controls(ctx)
    view = kv.compute(sentence)
    step = kv.step_control(ctx, len(view.tokens))
    st.markdown(t("kv_cache.strip", strip=kv.token_strip(view.tokens, step)))
    kv.step_metrics(ctx, view, step)
    st.latex(
        r"\alpha_t=\mathrm{softmax}\!\left(\frac{q_t\,K_{0..t}^\top}{\sqrt{d_k}}\right),\quad "
        r"o_t=\alpha_t V_{0..t}"
    )
    chart = charts.show_cached(ctx, kv.cache_chart, t, sentence, step, ctx.presenter)
    notice(ctx, kv.step_notice(ctx, view, step))
    untrained(ctx)
    export_panel(
        ctx,
        "kv_cache_step",
        chart,
        arrays=kv.cache_arrays(view, step),
        text=kv.weights_text(view),
    )


@st.fragment
def cost_step() -> None:
    """Step 2 (a fragment: its controls rerun only this step)."""
    st.subheader(titles[1])
    st.markdown(t("kv_cache.s2_text"))
    n, width, layers, log = kv.cost_controls(ctx)
    cv = kv.cost_view(n, width, layers)
    chart = charts.show_cached(ctx, kv.cost_chart, t, n, width, layers, log, ctx.presenter)
    notice(ctx, kv.cost_notice(ctx, cv, n, width, layers))
    export_panel(ctx, "kv_cache_cost", chart)
    link(ctx, "masking")
    link(ctx, "multi_head")


with steps.section(0):
    decode_step()
with steps.section(1):
    cost_step()
