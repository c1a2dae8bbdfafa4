"""Inside a real encoder: every head of all-MiniLM-L6-v2 (English) or multilingual-e5-small
(about 100 languages, Chinese included), computed by core's own attention, and where the
attention goes across the layers (attention rollout)."""

from ui.steps import Step, run
from ui.views import encoder as view

BESIDE = {"width": view.SIDE_SHARE}  # a slide: the chart's column, its notes beside it
READOUT = {**BESIDE, "aside": 1 - view.SIDE_SHARE}  # students too: its readout beside it

run(
    "encoder",
    [
        Step(
            "encoder.step_head",
            view.head_step,
            short="encoder.bar_head",
            **READOUT,
            height=view.HEAD_HEIGHT,
            question=view.ASK_IT,
        ),
        Step(
            "encoder.step_grid",
            view.grid_step,
            short="encoder.bar_grid",
            stacked=True,
            question=view.ASK_IT_ZH,
        ),
        Step(
            "encoder.step_search",
            view.search_step,
            short="encoder.bar_search",
            **READOUT,
            height=view.SEARCH_HEIGHT,
        ),
        Step(
            "encoder.step_compare",
            view.compare_step,
            [view.SENTENCE_B],
            short="encoder.bar_compare",
            **BESIDE,
            height=view.COMPARE_HEIGHT,
        ),
        Step(
            "encoder.step_explain",
            view.explain_step,
            short="encoder.bar_explain",
            **BESIDE,
            height=view.EXPLAIN_HEIGHT,
        ),
        Step(
            "encoder.step_rollout",
            view.rollout_step,
            [view.ROLLOUT],
            short="encoder.bar_rollout",
            **BESIDE,
            height=view.FLOW_HEIGHT,
        ),
    ],
    [view.MODEL, view.SETTINGS],
    words=view.page_words,
)
