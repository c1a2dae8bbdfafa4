"""Rotary positions (RoPE): q and k turned by their positions, so that a score depends only
on how far apart two tokens are; the pairs' wavelengths; the rotation inside SmolLM2."""

from ui.steps import Step, run
from ui.views import rope as view

ROOM = {"share": view.SHARE}
TOY = [view.BASE_CONTROL, view.SEED_CONTROL]  # the base: steps 1–3; the seed: steps 1–2

run(
    "rope",
    [
        Step(
            "rope.s1_title",
            view.pair_step,
            [*TOY, view.PAIR_CONTROLS],
            box="rope.s1_controls",
            short="rope.s1_short",
            question=view.ASK_DEPENDS,
            height=460,
            student=460,
            **ROOM,
        ),
        Step(
            "rope.s2_title",
            view.grid_step,
            [*TOY, view.GRID_CONTROL],
            box="rope.s2_controls",
            short="rope.s2_short",
            height=520,
            student=520,
            **ROOM,
        ),
        Step(
            "rope.s3_title",
            view.waves_step,
            [view.BASE_CONTROL],
            box="rope.s3_controls",
            short="rope.s3_short",
            height=480,
            student=480,
            **ROOM,
        ),
        Step(
            "rope.s4_title",
            view.model_step,
            [view.MODEL_CONTROLS],
            box="rope.s4_controls",
            short="rope.s4_short",
            height=520,
            student=520,
            **ROOM,
        ),
    ],
)
