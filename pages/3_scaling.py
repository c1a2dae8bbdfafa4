"""Scores and scaling: why QKᵀ is divided by √d_k before the softmax."""

import streamlit as st

from ui.blocks import fragment, header
from ui.context import PageContext
from ui.sentence import sentence_controls
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import scaling as view

ctx = shell("scaling")
t = ctx.t
header(ctx)
steps = stepper(ctx, [t(f"scaling.step{i}_short") for i in range(1, 5)])


def scores_step(ctx: PageContext) -> None:
    """Step 1, the sentence's own scores (a fragment: its controls rerun only this step).
    Off screen only its controls are drawn, in its hidden container, so that they stay in
    the URL."""
    on_screen = steps.show(0)
    f = view.scores_frame(ctx, t("scaling.step1_title")) if on_screen else None
    place = f.lead if f else st.container()  # a slide: the settings under the step's heading
    with place, view.controls_box(ctx, on_screen, t("scaling.sentence_box")):
        s = sentence_controls(ctx)
        unit = view.unit_control(ctx)
    if f:
        view.show_scores(ctx, f, s, unit)


def experiment_steps(ctx: PageContext) -> None:
    """Steps 2–4, random experiments with one set of settings, drawn on the step on screen
    (a fragment: the settings rerun only these three steps, not the sentence's). Their
    controls are drawn on every step (hidden off screen); only the step on screen computes."""
    places = [view.step(ctx, steps.section(k), t(f"scaling.step{k + 1}_title")) for k in (1, 2, 3)]
    host = places[steps.host(1, 2, 3) - 1]  # the step on screen, else step 2 (hidden)
    with host.box, view.controls_box(ctx, host.f is not None, t("scaling.settings")):
        cfg = view.experiment_controls(ctx)
        with view.hist_place(ctx, places[0]):  # step 2's own choice
            hist = view.hist_control(ctx)
    with st.spinner(t("scaling.computing")):
        if places[0].f:
            view.variance_step(ctx, places[0], cfg, hist)
        if places[1].f:
            view.saturation_step(ctx, places[1], cfg)
        if places[2].f:
            view.gradient_step(ctx, places[2], cfg)


# Everything below the step bar is these two fragments (no control outside them).
with steps.section(0) as on_screen:
    fragment(ctx, scores_step, on_screen)
fragment(ctx, experiment_steps)
