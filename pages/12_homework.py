"""Check your homework: download an exercise's exact inputs, upload your result, get told
whether it is right and, if not, which common mistake made it."""

import streamlit as st

from ui import charts
from ui.blocks import fragment, header, link
from ui.sentence import settings_box
from ui.shell import PageContext, shell
from ui.steps import stepper
from ui.views import homework as hv

ctx = shell("homework")
t = ctx.t
header(ctx)
titles = [t(f"homework.s{i}_title") for i in range(1, 5)]
steps = stepper(ctx, titles)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it)."""
    with steps.section(0):
        st.subheader(titles[0])
        with settings_box(ctx, t("homework.settings")):
            hw, part = hv.controls(ctx)
            st.caption(t("homework.settings_note"))
        inputs, answers = hv.exercise_data(hw)
        st.markdown(t(f"homework.ex{hw.exercise}_task", h=hw.h))
        st.latex(hv.FORMULAS[hw.exercise])
        st.markdown(hv.shapes_table(ctx, hw, {**inputs, **answers}))
        if not ctx.presenter:  # on a projector the shapes are the point; the numbers are on paper
            charts.show_cached(ctx, hv.inputs_chart, inputs)
            hv.downloads(ctx, hw, inputs)

    with steps.section(1):
        st.subheader(titles[1])
        st.markdown(t("homework.s2_text", part=t(f"homework.part_{part}"), shape=hv.shape_text(
            answers[part].shape)))  # fmt: skip
        parsed = hv.upload_controls(ctx, part)
        if parsed is not None:
            st.markdown(hv.read_summary(t, parsed))
        st.caption(t("homework.privacy"))

    checked = None if parsed is None else hv.check(hw, part, parsed)

    with steps.section(2):
        st.subheader(titles[2])
        if checked is None:
            st.info(t("homework.waiting"), icon=":material/upload_file:")
        else:
            hv.verdict(ctx, checked)
            if checked.comparison is not None:
                hv.details(ctx, checked)

    with steps.section(3):
        st.subheader(titles[3])
        if checked is None:
            st.info(t("homework.waiting"), icon=":material/upload_file:")
        else:
            hv.diagnosis(ctx, checked)
        link(ctx, "masking")
        link(ctx, "multi_head")
        link(ctx, "softmax")


fragment(ctx, content)
