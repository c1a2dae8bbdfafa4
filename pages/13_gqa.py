"""Grouped-query attention: fewer key/value heads than query heads — who shares what, what it
saves in the KV cache, the classic expansion bug, and SmolLM2's 9 query heads in their groups."""

from ui.steps import Step, run
from ui.views import gqa as view

ROOM = {"share": view.SHARE, "height": 480, "student": 480}

run(
    "gqa",
    [
        Step(
            "gqa.s1_title",
            view.toy_step,
            [view.TOY_CONTROLS],
            box="gqa.s1_controls",
            short="gqa.s1_short",
            **ROOM,
        ),
        Step(
            "gqa.s2_title",
            view.memory_step,
            [view.MEMORY_CONTROLS],
            box="gqa.s2_controls",
            short="gqa.s2_short",
            question=view.ASK_SMALLER,
            **ROOM,
        ),
        Step(
            "gqa.s3_title",
            view.trap_step,
            [view.MODEL_CONTROLS],
            box="gqa.s3_controls",
            short="gqa.s3_short",
            **ROOM,
        ),
        Step(  # students: the notice right of the tall rows of groups
            "gqa.s4_title",
            view.heads_step,
            [view.MODEL_CONTROLS],
            box="gqa.s4_controls",
            short="gqa.s4_short",
            share=view.SHARE,
            height=620,
            aside=view.GROUPS_ASIDE,
        ),
    ],
)
