"""Long contexts: a sliding window keeps the cache short, information still travels through
the layers; on SmolLM2, a window alone breaks the model and keeping the first token (an
attention sink) repairs most of it."""

from ui.steps import Step, run
from ui.views import sinks as view

ROOM = {"share": view.SHARE, "student": 470}

run(
    "sinks",
    [
        Step(
            "sinks.s1_title",
            view.mask_step,
            [view.TOY_CONTROLS],
            box="sinks.s1_controls",
            height=600,
            **ROOM,
        ),
        Step(  # the model runs only on Run (ui/views/sinks.py)
            "sinks.s2_title",
            view.predictions_step,
            [view.MODEL_CONTROLS, view.BACK_CONTROL, view.RUN_BUTTON],
            box="sinks.s2_controls",
            height=600,
            **ROOM,
        ),
        Step(
            "sinks.s3_title",
            view.shares_step,
            [view.MODEL_CONTROLS, view.RUN_BUTTON],
            box="sinks.s3_controls",
            height=560,
            **ROOM,
        ),
    ],
)
