"""Scores and scaling: why QKᵀ is divided by √d_k before the softmax."""

import streamlit as st

from core.experiments import compare_scaling, summarize_rows
from ui import charts
from ui.blocks import header, link, notice
from ui.charts import fmt
from ui.exports import export_panel
from ui.sentence import sentence_controls, settings_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import scaling as view
from ui.views.notes import untrained

ctx = shell("scaling")
t = ctx.t
header(ctx)
titles = [t(f"scaling.step{i}_title") for i in range(1, 5)]
steps = stepper(ctx, [t(f"scaling.step{i}_short") for i in range(1, 5)])
sections = [steps.section(k) for k in range(4)]
d_max = view.D_KS[-1]


@st.fragment
def scores_step() -> None:
    """Step 1, the sentence's own scores: a fragment, so its controls rerun only this step
    (the random experiments of steps 2–4 do not depend on them)."""
    st.subheader(titles[0])
    st.markdown(t("scaling.scores_text"))
    with settings_box(ctx, t("scaling.sentence_box")):
        s = sentence_controls(ctx)
        unit = view.unit_control(ctx)
    w_q, w_k = view.projections(s, unit)
    c = compare_scaling(s.x, w_q, w_k)
    raw, scaled = summarize_rows(c.raw, c.raw_weights), summarize_rows(c.scaled, c.scaled_weights)
    view.metrics(
        ctx,
        [
            (t("scaling.m_std_raw"), fmt(raw.score_std)),
            (t("scaling.m_std_scaled", d_k=s.d_k), fmt(scaled.score_std)),
            (t("scaling.m_max_raw"), fmt(raw.max_weight, 3)),
            (t("scaling.m_max_scaled"), fmt(scaled.max_weight, 3)),
        ],
    )
    matrices = (c.raw, c.scaled, c.raw_weights, c.scaled_weights)
    cols = view.split(ctx)
    with view.place(cols, 0):
        shown = charts.show_cached(
            ctx, view.score_chart, t, matrices, tuple(s.tokens), s.d_k,
            space=view.space(ctx, cols, 460),
        )  # fmt: skip
    with view.place(cols, 1):
        notice(ctx, view.score_notices(t, s.d_k, c, unit, raw, scaled, ctx.presenter))
        untrained(ctx)
    with view.place(cols, 0):
        export_panel(
            ctx,
            "scaling_scores",
            shown,
            arrays=view.score_arrays(s, w_q, w_k, c),
            text=view.weights_text(t, c, s.tokens, s.d_k),
        )
        link(ctx, "qkv", t("scaling.link_qkv"))


with sections[0]:
    scores_step()

# In presenter mode each step is two columns (chart | text) above the folded settings.
with sections[1]:
    st.subheader(titles[1])
    cols1 = view.split(ctx)
    with view.place(cols1, 1):
        st.markdown(t("scaling.variance_text"))
        st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")
with sections[2]:
    st.subheader(titles[2])
    cols2 = view.split(ctx)
with sections[3]:
    st.subheader(titles[3])
    cols3 = view.split(ctx)
    with view.place(cols3, 1):
        gradient_text = st.empty()  # filled below, once the row length n_keys is known
    with view.place(cols3, 0):
        st.latex(r"\frac{\partial p}{\partial s}=\operatorname{diag}(p)-p\,p^\top")
with sections[steps.host(1, 2, 3)]:  # one set of experiment settings, on the step on screen
    cfg = view.experiment_controls(ctx)

with sections[1]:
    with st.spinner(t("scaling.computing")):
        exp = view.variance_data(cfg.samples, cfg.seed)
    with view.place(cols1, 0):
        i = view.hist_control(ctx)
        d_k = view.D_KS[i]
        view.metrics(
            ctx,
            [
                (t("scaling.m_var_raw", d_k=d_k), fmt(exp.raw_var[i])),
                (t("scaling.m_var_theory"), fmt(exp.theory_raw[i], 0)),
                (t("scaling.m_var_scaled", d_k=d_k), fmt(exp.scaled_var[i], 3)),
            ],
        )
        shown = charts.show_cached(
            ctx, view.variance_chart, t, ctx.presenter, cfg.samples, cfg.seed, i,
            space=view.space(ctx, cols1, 560),
        )  # fmt: skip
        st.caption(t("scaling.variance_caption", n=cfg.samples))
    with view.place(cols1, 1):
        notice(ctx, view.variance_notices(t, exp, i, cfg.samples))
        data = view.variance_frame(t, exp)
        export_panel(ctx, "scaling_variance", shown, data, view.variance_arrays(exp, i))

with sections[2]:
    with st.spinner(t("scaling.computing")):
        raw_rows, scaled_rows = view.saturation_data(cfg.n_keys, cfg.seed)
    view.place(cols2, 1).markdown(t("scaling.saturation_text", n=cfg.n_keys, trials=view.TRIALS))
    top, top_s = fmt(raw_rows.max_weight[-1], 3), fmt(scaled_rows.max_weight[-1], 3)
    ent, ent_s = fmt(raw_rows.entropy[-1], 3), fmt(scaled_rows.entropy[-1], 3)
    with view.place(cols2, 0):
        view.metrics(
            ctx,
            [
                (t("scaling.m_top_raw", d_k=d_max), top),
                (t("scaling.m_top_scaled", d_k=d_max), top_s),
                (t("scaling.m_ent_raw", d_k=d_max), ent),
                (t("scaling.m_ent_scaled", d_k=d_max), ent_s),
            ],
        )
        shown = charts.show_cached(
            ctx, view.saturation_chart, t, ctx.presenter, cfg.n_keys, cfg.seed,
            space=view.space(ctx, cols2),
        )  # fmt: skip
    first = fmt(raw_rows.entropy[0], 3)
    with view.place(cols2, 1):
        notice(
            ctx,
            [
                t("scaling.n_top", d_k=d_max, raw=top, scaled=top_s),
                t("scaling.n_entropy", first=first, d_k=d_max, raw=ent, scaled=ent_s),
            ],
        )
        arrays = view.curve_arrays(raw_rows, scaled_rows, "max_weight", "entropy")
        export_panel(ctx, "scaling_saturation", shown, arrays=arrays)
        link(ctx, "softmax", t("scaling.link_softmax"))

with sections[3]:
    with st.spinner(t("scaling.computing")):
        raw_rows, scaled_rows = view.saturation_data(cfg.n_keys, cfg.seed)
    uniform, half = (fmt(v, 3) for v in view.even_row_norms(cfg.n_keys))
    gradient_text.markdown(t("scaling.gradient_text", n=cfg.n_keys, uniform=uniform, half=half))
    g_raw, g_scaled = raw_rows.jacobian_norm, scaled_rows.jacobian_norm
    with view.place(cols3, 0):
        view.metrics(
            ctx,
            [
                (t("scaling.m_grad_raw", d_k=d_max), fmt(g_raw[-1], 4)),
                (t("scaling.m_grad_scaled", d_k=d_max), fmt(g_scaled[-1], 4)),
            ],
        )
        shown = charts.show_cached(
            ctx, view.gradient_chart, t, ctx.presenter, cfg.n_keys, cfg.seed,
            space=view.space(ctx, cols3, 520),
        )  # fmt: skip
    with view.place(cols3, 1):
        notice(ctx, view.gradient_notices(t, raw_rows, scaled_rows, cfg.n_keys, ctx.presenter))
        arrays = view.curve_arrays(raw_rows, scaled_rows, "jacobian_norm")
        export_panel(ctx, "scaling_gradient", shown, arrays=arrays)
