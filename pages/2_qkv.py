"""Q, K, V: three learned projections of every token vector, separate and fused."""

from ui.steps import Step, run
from ui.views import qkv as view

run(
    "qkv",
    [
        Step(
            "qkv.matrices_title",
            view.matrices_step,
            [view.TOKEN, view.PRODUCT],
            share=view.SLIDE_SHARE,
            height=view.STRIP_HEIGHT,
        ),
        Step("qkv.follow_title", view.follow_step, [view.TOKEN], stacked=True),
        Step(
            "qkv.fused_title",
            view.fused_step,
            stacked=True,
            height=view.FUSED_HEIGHT,
            student=view.FUSED_HEIGHT,
        ),
        Step(
            "qkv.lesson_title",
            view.lesson_step,
            short="qkv.lesson_bar",  # the step bar in one row on a 1280 x 720 laptop
            height=view.LESSON_HEIGHT,
            student=view.LESSON_HEIGHT,
        ),
    ],
    [view.SENTENCE],
)
