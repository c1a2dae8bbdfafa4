"""Softmax: scores become a probability distribution; temperature, stability, masks."""

from ui.steps import Step, run
from ui.views import softmax as view

run(
    "softmax",
    [
        Step(
            "softmax.step_bars",
            view.bars,
            stacked=True,
            height=340,
            student=380,
            question=view.ASK_COLD,
        ),
        Step("softmax.step_matrix", view.matrix, height=560, student=560),
        Step(
            "softmax.step_stable",
            view.stable,
            [view.SCALED],
            box="softmax.stable_controls",
            height=420,
            student=420,
        ),
        Step(
            "softmax.step_mask",
            view.mask,
            [view.MASKED],
            box="softmax.mask_controls",
            height=440,
            student=440,
        ),
    ],
    [view.SETTINGS],
)
