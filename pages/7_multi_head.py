"""Multi-head attention: split d_model into h heads, attend in parallel, merge, project."""

from ui.steps import Step, run
from ui.views import multi_head as view

# Every step reads h and the sentence; a slide heads each with its full title (the step bar
# shows the short ones).
MODEL = [view.HEADS, view.MODEL]

run(
    "multi_head",
    [
        Step(
            "multi_head.split_title",
            view.split_step,
            MODEL,
            short="multi_head.step_split",
            share=0.75,
            titled=True,
        ),
        Step(
            "multi_head.weights_title",
            view.weights_step,
            MODEL,
            short="multi_head.step_weights",
            question=view.ASK_AGREE,
            share=view.WEIGHTS_SHARE,
            height=view.WEIGHTS_HEIGHT,
            titled=True,
        ),
        Step(
            "multi_head.merge_title",
            view.merge_step,
            MODEL,
            short="multi_head.step_merge",
            stacked=True,
            height=view.MERGE_HEIGHT,
            titled=True,
        ),
        Step(
            "multi_head.check_title",
            view.check_step,
            MODEL,
            short="multi_head.step_check",
            stacked=True,
            titled=True,
        ),
    ],
)
