"""Weighted sum: a query's output is its attention weights mixing the value vectors."""

from ui.steps import Step, run
from ui.views import weighted_sum as view

run(
    "weighted_sum",
    [
        Step("weighted_sum.row_title", view.row_step, height=540),
        Step("weighted_sum.scale_title", view.scale_step, stacked=True, height=540),
        Step("weighted_sum.sum_title", view.sum_step, height=540),
        Step("weighted_sum.matrix_title", view.matrix_step, height=540),
    ],
    [view.SENTENCE, view.TOKEN],
)
