"""Masks: causal and padding masks on your sentence, generation order, and −∞ versus −1e9."""

from ui.steps import Step, run
from ui.views import masking as view

MASKED = [view.SENTENCE, view.MASKS]

run(
    "masking",
    [
        Step(
            "masking.s1_title",
            view.masks_step,
            MASKED,
            box="masking.controls",
            stacked=True,
            question=view.ASK_VISIBLE,
            height=340,
            student=340,
        ),
        Step(
            "masking.s2_title",
            view.generation_step,
            [view.SENTENCE, view.GENERATION],
            box="masking.sentence_controls",
            share=view.SHARE,
        ),
        Step(
            "masking.s3_title",
            view.fill_step,
            [*MASKED, view.FILL],
            box="masking.controls",
            folded=[view.MASKS],
            share=view.SHARE,
        ),
    ],
)
