"""Attention as a database lookup: a hard lookup is the cold limit of a soft one."""

from ui.steps import Step, run
from ui.views import lookup as view

run(
    "lookup",
    [
        Step("lookup.step_table", view.table_step, short="lookup.step_table_short", stacked=True),
        Step(
            "lookup.step_soft",
            view.soft_step,
            short="lookup.step_soft_short",
            question=view.ASK_BEST,
            height=view.SOFT_HEIGHT,
            student=view.SOFT_HEIGHT,
        ),
        Step(
            "lookup.step_temperature",
            view.sweep_step,
            short="lookup.step_temperature_short",
            height=view.SWEEP_HEIGHT,
            student=view.SWEEP_HEIGHT,
        ),
    ],
    [view.SETTINGS],
)
