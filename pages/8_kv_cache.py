"""KV cache: decode one token at a time, reuse the cached keys and values, count the savings."""

from ui.steps import Step, run
from ui.views import kv_cache as view

run(
    "kv_cache",
    [
        Step(
            "kv_cache.s1_title",
            view.decode_step,
            [view.SENTENCE, view.T],
            share=view.CHART_SHARE,
            height=view.CHART_HEIGHT,
            student=view.READOUT_HEIGHT,
        ),
        Step(
            "kv_cache.s2_title",
            view.cost_step,
            [view.COST],
            stacked=True,
            height=view.COST_HEIGHT,
            question=view.ASK_PROJECTIONS,
        ),
    ],
)
