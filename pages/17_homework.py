"""Check your homework: download an exercise's exact inputs, upload your result, get told
whether it is right and, if not, which common mistake made it."""

from ui.steps import Step, run
from ui.views import homework as view

READ = [view.SETTINGS, view.UPLOAD]  # the verdict and the diagnosis read the upload
VERDICT_ROOM = {"width": 0.58, "height": view.VERDICT_CHART_HEIGHT}  # the notice beside it
STUDENT_ROOM = {"aside": 1 - view.STUDENT_SHARE, "student": view.STUDENT_CHART_HEIGHT}

run(
    "homework",
    [
        Step("homework.s1_title", view.exercise, [view.SETTINGS], stacked=True),
        Step("homework.s2_title", view.upload, [view.UPLOAD], reads=[view.SETTINGS], stacked=True),
        Step(
            "homework.s3_title",
            view.verdict_step,
            reads=READ,
            text_first=True,  # students: the verdict, then the chart of its errors
            **VERDICT_ROOM,
            **STUDENT_ROOM,
        ),
        Step("homework.s4_title", view.diagnosis_step, reads=READ, stacked=True),
    ],
    stacked=True,  # students: one screen, read top to bottom (a slide: a step at a time)
    order=view.order,
)
