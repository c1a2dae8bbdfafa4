"""Watch attention learn: train one attention layer live, walk through its snapshots, and see
why the scores are divided by √d_k."""

from ui.steps import Step, run
from ui.views import training as view

SNAPSHOTS = [
    Step(
        view.at_title(k),
        view.snapshot(k),
        stacked=True,
        student=420,  # the strip and the curves over the attention row fit 1280 x 720
        tries="training.snapshot_try",
    )
    for k in range(view.SNAPSHOTS)
]

run(
    "training",
    [
        Step("training.s_train", view.train, stacked=True),
        *SNAPSHOTS,  # PageDown walks through the learning
        Step(
            "training.s_scrub",
            view.scrub,
            [view.SCRUB],
            short=view.at_title(view.SNAPSHOTS),
            stacked=True,
            student=420,  # as the snapshots: the strip and the chart fit 1280 x 720
        ),
        Step("training.s_why", view.why, width=0.58, height=560),
    ],
    words=view.words,
)
