"""Inside the block: one token's journey through SmolLM2 (the block with its arrays' shapes,
the residual stream, the logit lens) and whether a head matters (ablation beside attention)."""

from ui.steps import Step, run
from ui.views import block as view

run(
    "block",
    [
        Step(
            "block.s1_title",
            view.block_step,
            [],
            short="block.s1_short",
            share=0.6,
            height=700,
            student=520,
        ),
        Step(
            "block.s2_title",
            view.stream_step,
            [view.POSITION],
            box="block.s2_controls",
            short="block.s2_short",
            share=0.6,
            height=560,
        ),
        Step(
            "block.s3_title",
            view.lens_step,
            [view.POSITION],
            box="block.s3_controls",
            short="block.s3_short",
            share=0.55,
            height=760,
            student=520,
        ),
        Step(
            "block.s4_title",
            view.heads_step,
            [view.HEADS, view.COMPARED],
            box="block.s4_controls",
            short="block.s4_short",
            question=view.ASK_MATTERS,
            share=0.6,
            height=420,
        ),
    ],
    [view.SETTINGS],
    words=view.page_words,
)
