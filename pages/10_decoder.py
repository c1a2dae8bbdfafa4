"""A real language model: SmolLM2-135M in NumPy — causal attention, attention sinks, next
token, generation and a real KV cache."""

from ui.steps import Step, run
from ui.views import decoder as view

BESIDE = {"aside": 0.42, "width": 0.58}  # students too: the chart at 0.58 of the width

run(
    "decoder",
    [
        Step(
            "decoder.s1_title",
            view.heads_step,
            [view.HEAD],
            box="decoder.s1_controls",
            short="decoder.s1_short",
            question=view.ASK_LAST,
            share=2 / 3,
            width=0.64,
            height=690,
        ),
        Step(
            "decoder.s2_title",
            view.why_step,
            [view.ADJECTIVE],
            reads=[view.HEAD],  # the "it" row of step 1's layer and head
            box="decoder.s2_controls",
            short="decoder.s2_short",
            share=0.5,
            width=0.48,
        ),
        Step(
            "decoder.s3_title",
            view.sink_step,
            [view.SECOND],
            box="decoder.s3_controls",
            short="decoder.s3_short",
            height=720,
            **BESIDE,
        ),
        Step(
            "decoder.s4_title",
            view.next_step,
            [view.NEXT, view.GENERATION, view.SAMPLING, view.GENERATE],
            box="decoder.s4_controls",
            short="decoder.s4_short",
            height=480,
            **BESIDE,
        ),
        Step(
            "decoder.s5_title",
            view.cache_step,
            [view.COMPARE],
            reads=[view.NEXT, view.GENERATION, view.SAMPLING],  # step 4's generation settings
            box="decoder.s5_controls",
            short="decoder.s5_short",
            **BESIDE,
        ),
        Step(
            "decoder.s6_title",
            view.batch_step,
            [view.MEASURE],
            box="decoder.s6_controls",
            short="decoder.s6_short",
            height=400,
            **BESIDE,
        ),
    ],
    [view.SETTINGS],
    words=view.page_words,
)
