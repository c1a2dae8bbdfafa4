"""Watch attention learn: train one attention layer live, walk through its snapshots, and see
why the scores are divided by √d_k."""

import streamlit as st

from core.findings.training import nearest_snapshot
from core.training import snapshot_steps
from ui import charts
from ui.blocks import fragment, frame, header, intro, link, notice
from ui.context import PageContext
from ui.shell import shell
from ui.stepbar import stepper
from ui.views import training as tv

ctx = shell("training")
t = ctx.t
header(ctx)
bar = st.container()  # the step bar, drawn once the settings have named its steps
settings = tv.controls(ctx)  # students: the sidebar; a slide: an expander below the bar
cfg, cfgs = settings.config, tv.configs(settings)
marks = snapshot_steps(cfg.steps, cfg.snapshots)
stops = tv.stops(cfg)  # snapshot steps: start, early, a third of the way, the end
titles = [
    t("training.s_train"),
    *(t("training.s_at", step=int(marks[i])) for i in stops),
    t("training.s_why"),
]
with bar:
    steps = stepper(ctx, titles)
tv.check_run(ctx)
SCRUB = len(stops)  # the end of the run, with the slider (and Play) through all its snapshots


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: Play and the snapshot slider rerun only
    it). Only the step on screen is drawn; off screen the snapshot slider alone is (hidden).
    Train (students: in the sidebar, on every step) trains live where the step's chart is;
    the snapshot and comparison steps train what they show themselves (cached per setting)."""
    pressed = tv.take_train()
    with steps.section(0) as on_screen:
        if on_screen:
            f = frame(ctx, stacked=True)
            with f.lead:
                intro(ctx)
                st.subheader(titles[0])
                st.markdown(t(f"training.{'short' if ctx.presenter else 'about'}_{cfg.task}"))
                if ctx.presenter:
                    tv.train_button(ctx)
            live = tv.train_here(ctx, cfgs, f.chart) if pressed else None
            trained = tv.is_trained()
            runs = live or (tv.finished_runs(ctx, cfgs) if trained else tuple(map(tv.start, cfgs)))
            space = tv.chart_room(ctx, runs, snapshot=False)
            with f.chart:
                charts.show_cached(ctx, tv.run_chart, t, runs, None, ctx.presenter, space=space)
            with f.notes:
                if trained:
                    lines = "\n".join(f"- {x}" for x in tv.summary(ctx, runs))
                    (st.warning if tv.diverged(runs) else st.markdown)(lines)
                else:
                    press = "press_train" if ctx.presenter else "press_train_side"
                    st.info(t(f"training.{press}"), icon=":material/touch_app:")

    for k, index in enumerate(stops, start=1):  # PageDown walks through the learning
        with steps.section(k) as on_screen:
            if on_screen and pressed:
                tv.train_here(ctx, cfgs, st.container())
            if k == SCRUB:
                scrub(ctx, on_screen)
            elif on_screen:
                f = frame(ctx, stacked=True)
                with f.lead:
                    tv.snapshot_heading(ctx, titles[k], cfg)
                done = tv.finished_runs(ctx, cfgs)
                space = tv.chart_room(ctx, done, snapshot=True)
                with f.chart:
                    charts.show_cached(
                        ctx, tv.run_chart, t, done, index, ctx.presenter, space=space
                    )
                with f.notes:
                    tv.metrics(ctx, done, index)
                    notice(ctx, tv.snapshot_notice(ctx, done, index))

    last = len(titles) - 1
    with steps.section(last) as on_screen:
        if on_screen:
            if pressed:
                tv.train_here(ctx, cfgs, st.container())
            f = frame(ctx, stacked=True)
            with f.lead:
                st.subheader(titles[last])
                if not ctx.presenter:
                    st.markdown(t("training.why_text"))
            with st.spinner(t("training.why_running")):
                why = tuple(tv.finished(c) for c in tv.why_configs(cfg))
            tv.show_why(ctx, why, f)
            with st.container() if ctx.presenter else f.notes:  # last, below the chart
                link(ctx, "scaling")


def scrub(ctx: PageContext, on_screen: bool) -> None:
    """The last snapshot step: the end of the run, and a slider (and Play) through every
    snapshot, in the step's own box in the sidebar (a slide: in its settings expander). Off
    screen the slider alone, hidden, so that "?at=" stays in the URL."""
    runs = tv.finished_runs(ctx, cfgs) if on_screen else ()
    with tv.step_controls(ctx, settings, on_screen):
        place = st.container()  # the slider's, filled by the fragment below
        if on_screen:  # outside it: Play starts (Pause stops) the fragment's timer
            tv.play_button(ctx)

    @st.fragment(run_every=tv.PLAY_S if on_screen and tv.playing() else None)
    def walk() -> None:
        if runs and tv.playing():
            tv.play_step(runs[0])
        with place:
            at = tv.at_slider(ctx, cfg)
        if not on_screen:
            return
        f = frame(ctx, stacked=True)
        with f.lead:
            if not ctx.presenter:
                st.subheader(t("training.s_scrub"))
                st.markdown(t("training.scrub_text"))
        index = nearest_snapshot(runs[0], at)
        space = tv.chart_room(ctx, runs, snapshot=True)
        with f.chart:
            charts.show_cached(ctx, tv.run_chart, t, runs, index, ctx.presenter, space=space)
        with f.notes:
            tv.metrics(ctx, runs, index)
            notice(ctx, tv.snapshot_notice(ctx, runs, index))

    walk()


fragment(ctx, content)
