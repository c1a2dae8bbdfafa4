"""Scores and scaling: why QKᵀ is divided by √d_k before the softmax."""

import streamlit as st

from ui.blocks import fragment, header
from ui.context import PageContext
from ui.sentence import sentence_controls, settings_box
from ui.shell import shell
from ui.steps import stepper
from ui.views import scaling as view

ctx = shell("scaling")
t = ctx.t
header(ctx)
steps = stepper(ctx, [t(f"scaling.step{i}_short") for i in range(1, 5)])


def scores_step(ctx: PageContext) -> None:
    """Step 1, the sentence's own scores (a fragment: its controls rerun only this step).
    Off screen only its controls are drawn, so that they stay in the URL."""
    if steps.show(0):
        st.subheader(t("scaling.step1_title"))
        if not ctx.presenter:  # the lecturer says it; on a slide the panels stand in one row
            st.markdown(t("scaling.scores_text"))
    with settings_box(ctx, t("scaling.sentence_box")):
        s = sentence_controls(ctx)
        unit = view.unit_control(ctx)
    if steps.show(0):
        view.show_scores(ctx, s, unit)


def experiment_steps(ctx: PageContext) -> None:
    """Steps 2–4, random experiments with one set of settings, drawn on the step on screen
    (a fragment: the settings rerun only these three steps, not the sentence's). Their
    controls are drawn on every step (hidden off screen); only the step on screen computes."""
    frames = [view.frame(ctx, steps.section(k), t(f"scaling.step{k + 1}_title")) for k in (1, 2, 3)]
    with frames[steps.host(1, 2, 3) - 1].slot:
        cfg = view.experiment_controls(ctx)
    with frames[0].main:  # step 2's own choice, above its chart
        hist = view.hist_control(ctx)
    with st.spinner(t("scaling.computing")):
        if steps.show(1):
            view.variance_step(ctx, frames[0], cfg, hist)
        if steps.show(2):
            view.saturation_step(ctx, frames[1], cfg)
        if steps.show(3):
            view.gradient_step(ctx, frames[2], cfg)


# Everything below the step bar is these two fragments (no control outside them).
with steps.section(0) as on_screen:
    fragment(ctx, scores_step, on_screen)
fragment(ctx, experiment_steps)
