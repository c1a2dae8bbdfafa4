"""Check your homework: download an exercise's exact inputs, upload your result, get told
whether it is right and, if not, which common mistake made it."""

import streamlit as st

from ui import charts
from ui.blocks import fragment, header, intro, link
from ui.context import PageContext
from ui.sentence import settings_box
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import homework as hv

ctx = shell("homework")
t = ctx.t
header(ctx)
titles = [t(f"homework.s{i}_title") for i in range(1, 5)]
steps = stepper(ctx, titles, stacked=True)  # students: every step, one below the other


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: its controls rerun only it). Only the
    step on screen is drawn; the settings (in the URL) and the upload (in this session)
    are drawn on every step, hidden off their own, so they keep their values. Students
    have them in the sidebar, and once something is uploaded its result comes first: the
    upload and its verdict on one screen, the exercise below."""
    first = (1, 2, 3, 0) if not ctx.presenter and hv.has_upload() else (0, 1, 2, 3)
    slots = {k: st.container() for k in first}
    box = t("homework.s2_title")
    with slots[0], steps.section(0) as on_screen:
        if on_screen and ctx.presenter:
            st.subheader(titles[0])
        with settings_box(ctx, t("homework.settings")):
            hw, part = hv.controls(ctx)
            if on_screen and ctx.presenter:
                st.caption(t("homework.settings_note"))
        if on_screen:
            inputs, answers = hv.exercise_data(hw)
            if not ctx.presenter:  # on a projector the shapes matter; the numbers are on paper
                charts.show_cached(ctx, hv.inputs_chart, inputs)
                intro(ctx)
                st.subheader(titles[0])
            st.markdown(t(f"homework.ex{hw.exercise}_task", h=hw.h))
            st.latex(hv.FORMULAS[hw.exercise])
            st.markdown(hv.shapes_table(ctx, hw, {**inputs, **answers}))
            if not ctx.presenter:
                hv.downloads(ctx, hw, inputs)

    with slots[1], steps.section(1) as on_screen:
        if on_screen:
            st.subheader(titles[1])
            task = st.empty()  # what to upload, unless an upload was read
        upload = hv.upload_controls(ctx, on_screen)  # on every step: the upload lives in them
        later = any(steps.show(k) for k in (1, 2, 3))  # the steps that read the upload
        parsed = hv.read_upload(ctx, upload, part, on_screen) if later else None
        if on_screen:
            shape = hv.shape_text(hv.exercise_data(hw)[1][part].shape)
            text = t("homework.s2_text", part=t(f"homework.part_{part}"), shape=shape)
            if ctx.presenter:  # the uploader between the two
                task.markdown(text)
                if parsed is not None:
                    st.markdown(hv.read_summary(t, parsed))
            elif parsed is not None:  # students: the verdict comes next, on the same screen
                task.markdown(hv.read_summary(t, parsed))
            else:
                task.markdown(f"{text} {t('homework.s2_side', box=box)}")
                st.caption(t("homework.upload_pickles"))
            if ctx.presenter or parsed is None:
                st.caption(t("homework.privacy"))

    # checked only for the steps that show it (3 and 4)
    shown = steps.show(2) or steps.show(3)
    checked = hv.check(hw, part, parsed) if parsed is not None and shown else None
    waiting = t("homework.waiting") if ctx.presenter else t("homework.waiting_side", box=box)

    further = ("masking", "multi_head", "softmax")  # the pages behind the diagnosed steps
    for k, show, pages in ((2, hv.verdict, ()), (3, hv.diagnosis, further)):
        with slots[k], steps.section(k) as on_screen:
            if on_screen:
                st.subheader(titles[k])
                if checked is None:
                    st.info(waiting, icon=":material/upload_file:")
                else:
                    show(ctx, checked)
                for page in pages:
                    link(ctx, page)


fragment(ctx, content)
