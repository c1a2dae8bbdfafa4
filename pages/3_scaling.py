"""Scores and scaling: why QKᵀ is divided by √d_k before the softmax."""

from ui.steps import Step, run
from ui.views import scaling as view

# the experiments (steps 2-4) share one set of settings; a slide names every step in full
EXPERIMENT = {"share": view.SHARE, "titled": True}

run(
    "scaling",
    [
        Step(
            "scaling.step1_title",
            view.scores,
            [view.SCORING],
            short="scaling.step1_short",
            stacked=True,  # a slide: the four panels in one row, the whole width
            height=view.SCORES_HEIGHT,
            student=view.SCORES_HEIGHT,
            titled=True,
        ),
        Step(
            "scaling.step2_title",
            view.variance,
            [view.EXPERIMENTS, view.HIST],
            short="scaling.step2_short",
            question=view.ASK_SATURATION,
            height=560,
            **EXPERIMENT,
        ),
        Step(
            "scaling.step3_title",
            view.saturation,
            [view.EXPERIMENTS],
            short="scaling.step3_short",
            height=600,
            **EXPERIMENT,
        ),
        Step(
            "scaling.step4_title",
            view.gradient,
            [view.EXPERIMENTS],
            short="scaling.step4_short",
            height=520,
            **EXPERIMENT,
        ),
    ],
)
