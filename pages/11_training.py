"""Watch attention learn: train one attention layer live, scrub its snapshots, and see why
the scores are divided by √d_k."""

import streamlit as st

from core.training import snapshot_steps
from ui import charts
from ui.blocks import fragment, header, link, notice
from ui.context import PageContext
from ui.shell import shell
from ui.steps import stepper
from ui.views import training as tv

ctx = shell("training")
t = ctx.t
header(ctx)
settings = tv.controls(ctx)
cfg, cfgs = settings.config, tv.configs(settings)
marks = snapshot_steps(cfg.steps, cfg.snapshots)
stops = tv.stops(cfg) if ctx.presenter else ()
titles = [
    t("training.s_train"),
    *(t("training.s_at", step=int(marks[i])) for i in stops),
    *(() if ctx.presenter else (t("training.s_scrub"),)),
    t("training.s_why"),
]
steps = stepper(ctx, titles)
tv.check_run(ctx)


def content(ctx: PageContext) -> None:
    """Everything below the step bar (one fragment: the Train, Play and Why buttons rerun
    only it). The settings stay outside: on a slide they name the step bar's steps. Only
    the step on screen is drawn; off screen the snapshot slider alone is (hidden)."""
    with steps.section(0) as on_screen:
        if on_screen:
            st.subheader(titles[0])
            st.markdown(t(f"training.{'short' if ctx.presenter else 'about'}_{cfg.task}"))
            pressed = st.button(
                t("training.train"), type="primary", icon=":material/model_training:"
            )
            bar, slot = st.empty(), st.empty()
            if pressed:  # the finished runs go into the cache, "run=1" into the URL
                runs = tv.train_live_view(ctx, cfgs, slot, bar)
                tv.mark_trained()
            elif tv.is_trained():
                runs = tv.finished_runs(ctx, cfgs)
            else:
                runs = tuple(tv.start(c) for c in cfgs)
            if not pressed:  # a live run has drawn its chart already
                space = tv.chart_room(ctx, runs, snapshot=False)
                charts.show_cached(ctx, tv.run_chart, t, runs, None, ctx.presenter, space=space)
            if tv.is_trained():
                lines = "\n".join(f"- {x}" for x in tv.summary(ctx, runs))
                (st.warning if tv.diverged(runs) else st.markdown)(lines)
            else:
                st.info(t("training.press_train"), icon=":material/touch_app:")
    trained = tv.is_trained()  # a run trained on the first step: every step shows it

    if ctx.presenter:  # one slide per snapshot stop: PageDown walks through the learning
        for k, index in enumerate(stops, start=1):
            with steps.section(k) as on_screen:
                if on_screen:  # the step bar names the snapshot ("2 · Step 0")
                    done = tv.finished_runs(ctx, cfgs)
                    space = tv.chart_room(ctx, done, snapshot=True)
                    charts.show_cached(ctx, tv.run_chart, t, done, index, True, space=space)
                    tv.metrics(ctx, done, index)
                    notice(ctx, tv.snapshot_notice(ctx, done, index))
    else:
        with steps.section(1) as on_screen:
            runs = tv.finished_runs(ctx, cfgs) if on_screen and trained else ()
            if on_screen:
                st.subheader(titles[1])
                st.markdown(t("training.scrub_text"))
                if not trained:
                    st.info(t("training.scrub_first"), icon=":material/info:")
                else:
                    st.button(
                        t("training.pause" if tv.playing() else "training.play"),
                        icon=":material/pause:" if tv.playing() else ":material/play_arrow:",
                        on_click=tv.toggle_play,
                    )
            if trained:

                @st.fragment(run_every=tv.PLAY_S if on_screen and tv.playing() else None)
                def scrub() -> None:
                    if runs and tv.playing():
                        tv.play_step(runs[0])
                    at = tv.at_slider(ctx, cfg)  # off screen too: "?at=" stays in the URL
                    if runs:  # on screen (runs is empty off screen; on_screen is rebound below)
                        index = tv.snapshot_index(runs[0], at)
                        charts.show_cached(ctx, tv.run_chart, t, runs, index, False)
                        tv.metrics(ctx, runs, index)
                        notice(ctx, tv.snapshot_notice(ctx, runs, index))

                scrub()

    last = len(titles) - 1
    with steps.section(last) as on_screen:
        if on_screen:
            st.subheader(titles[last])
            if not ctx.presenter:
                st.markdown(t("training.why_text"))
            if not (ctx.presenter or tv.why_requested(ctx)):
                st.button(t("training.why_button"), icon=":material/compare:", on_click=tv.ask_why)
                st.stop()
            with st.spinner(t("training.why_running")):
                why = tuple(tv.finished(c) for c in tv.why_configs(cfg))
            tv.show_why(ctx, why)
            link(ctx, "scaling")


fragment(ctx, content)
