"""FlashAttention's online softmax: attention over tiles of keys with a running maximum and
sum, the same answer as ordinary attention, and what it saves in memory and traffic."""

from ui.steps import Step, run
from ui.views import flash as view

ROOM = {"share": view.SHARE, "student": 470}
TILES = [view.TOY, view.ROW]
AGREE = [view.TOY, view.FACTOR_CONTROL]

run(
    "flash",
    [
        Step("flash.s1_title", view.tiles_step, TILES, box="flash.s1_controls", height=600, **ROOM),
        Step(
            "flash.s2_title",
            view.agreement_step,
            AGREE,
            box="flash.s2_controls",
            height=560,
            **ROOM,
        ),
        Step(
            "flash.s3_title",
            view.traffic_step,
            [view.TRAFFIC],
            box="flash.s3_controls",
            height=560,
            **ROOM,
        ),
    ],
    words=lambda ctx: view.intro_values(),
)
