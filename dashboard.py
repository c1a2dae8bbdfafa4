"""Home page: why attention, the formula, and the five steps with live shapes."""

from ui.steps import Step, run
from ui.views import home as view

run(
    "home",
    [
        Step("home.why_title", view.why, [view.PATH]),
        Step("home.formula_title", view.formula, stacked=True),
        Step("home.pipeline_title", view.pipeline, [view.SIZES], stacked=True),
    ],
)
