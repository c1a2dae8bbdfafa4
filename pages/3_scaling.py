"""Scores and scaling: why QKᵀ is divided by √d_k before the softmax."""

import streamlit as st

from ui.blocks import fragment, header
from ui.sentence import sentence_controls, settings_box
from ui.shell import PageContext, shell
from ui.steps import stepper
from ui.views import scaling as view

ctx = shell("scaling")
t = ctx.t
header(ctx)
steps = stepper(ctx, [t(f"scaling.step{i}_short") for i in range(1, 5)])


def scores_step(ctx: PageContext) -> None:
    """Step 1, the sentence's own scores (a fragment: its controls rerun only this step)."""
    st.subheader(t("scaling.step1_title"))
    if not ctx.presenter:  # the lecturer says it; on a slide the panels stand in one row
        st.markdown(t("scaling.scores_text"))
    with settings_box(ctx, t("scaling.sentence_box")):
        s = sentence_controls(ctx)
        unit = view.unit_control(ctx)
    view.show_scores(ctx, s, unit)


def experiment_steps(ctx: PageContext) -> None:
    """Steps 2–4, random experiments with one set of settings, drawn on the step on screen
    (a fragment: the settings rerun only these three steps, not the sentence's)."""
    frames = [view.frame(ctx, steps.section(k), t(f"scaling.step{k + 1}_title")) for k in (1, 2, 3)]
    with frames[steps.host(1, 2, 3) - 1].slot:
        cfg = view.experiment_controls(ctx)
    with st.spinner(t("scaling.computing")):
        view.variance_step(ctx, frames[0], cfg)
        view.saturation_step(ctx, frames[1], cfg)
        view.gradient_step(ctx, frames[2], cfg)


# Everything below the step bar is these two fragments (no control outside them).
with steps.section(0):
    fragment(ctx, scores_step)
fragment(ctx, experiment_steps)
