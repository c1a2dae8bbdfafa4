"""Presentation helpers and steps of the training page (pages/16_training.py).

Controls, the cached and the live runs, one concatenated chart per view, metrics and
"what to notice" lines, and the step functions. Every number comes from :mod:`core.training`.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.findings.training import (
    learns_slower,
    nearest_snapshot,
    probe_correct,
    scaling_effect,
    sharpening,
    snapshot_at,
)
from core.training import (
    TASKS,
    History,
    Snapshot,
    TrainConfig,
    loss_at,
    run,
    steps_to,
    train_live,
)
from core.training import snapshot_steps as snapshot_marks
from ui import charts
from ui.context import PageContext
from ui.i18n import Translator
from ui.params import Choice, Flag, Int, check_url, number, select, slider, toggle
from ui.sentence import more_box
from ui.steps import Controls, Got, View, Words, settings

TASK = Choice("task", "recall", TASKS)
D_K = Choice("d_k", "16", ("4", "16", "64", "256"))
SCALED = Flag("scaled", True)
LR = Choice("lr", "0.003", ("0.0003", "0.001", "0.003", "0.01", "0.03", "0.1", "1"))
STEPS = Int("steps", 300, 30, 900)
SEED = Int("seed", 0, 0, 9999)
TWIN = Flag("twin", False)
RUN = Choice("run", "0", ("0", "1"))  # 1: the link shows the finished run
AT = "at"  # the snapshot step on screen (student mode), in the URL
PLAY = "_training_play"
UPDATES = 30  # live redraws per run (and snapshots per run)
FRAME_S = 0.1  # a live run takes at least UPDATES × FRAME_S seconds, so the class sees it
# After every frame the run pauses at least this long: the server sends the frame then,
# even when a frame's training takes longer than FRAME_S on a busy machine (else the
# frames leave in bursts and a browser shows only some of them)
GAP_S = 0.03
PLAY_S = 0.6  # seconds per snapshot while playing
WHY_D_KS = (256, 16)
SNAPSHOTS = 3  # snapshot steps before the last one (start, early, a third of the way)
# presenter mode: px for the run chart, by task (and number of runs on a snapshot step; the
# max task's two probes side by side are then too small for numbers)
SNAPSHOT_HEIGHTS = {("recall", 1): 560, ("recall", 2): 380, ("max", 1): 410, ("max", 2): 322}
FIRST_HEIGHTS = {"recall": 520, "max": 480}
LETTERS = "ABCDEFGHIJKLMNOP"
SCALED_COLOR, UNSCALED_COLOR = charts.KEY_COLOR, charts.QUERY_COLOR


@dataclass(frozen=True)
class Settings:
    """The page's controls."""

    config: TrainConfig
    twin: bool


def controls(ctx: PageContext, got: Got) -> Settings:
    """Task, d_k, scaling, learning rate, steps, seed and the twin switch (URL-bound).
    Students: one below the other (learning rate, steps, seed folded), with the Train button
    under them on every step; on a slide: two rows, and Train on the first step
    (:func:`train_button`)."""
    t = ctx.t
    if ctx.presenter:
        c1, c2, c3 = st.columns([3, 3, 2], vertical_alignment="bottom")
        c4, c5, c6, c7 = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
    else:  # the order on screen: task, d_k, scaling, twin, then the folded three
        c1, c2, c3, c7 = (st.container() for _ in range(4))
        with more_box(ctx, t("training.more")):
            c4, c5, c6 = st.container(), st.container(), st.container()
    widget = "segmented" if ctx.presenter else "select"  # a sidebar: one row, not two
    with c1:
        task = select(
            ctx, TASK, t("training.task"), lambda s: t(f"training.task_{s}"), widget=widget
        )
    with c2:
        d_k = select(ctx, D_K, t("training.d_k"), help=t("training.d_k_help"))
    with c3:
        scaled = toggle(ctx, SCALED, t("training.scaled"), help=t("training.scaled_help"))
    with c4:
        lr = select(ctx, LR, t("training.lr"), widget="select", help=t("training.lr_help"))
    with c5:
        steps = slider(ctx, STEPS, t("training.steps"), step=30)
    with c6:
        seed = number(ctx, SEED, t("training.seed"))
    with c7:
        twin = toggle(ctx, TWIN, t("training.twin"), help=t("training.twin_help"))
    if not ctx.presenter:
        train_button(ctx)
    config = TrainConfig(
        task=task,
        d_k=int(d_k),
        scaled=bool(scaled),
        lr=float(lr),
        steps=int(steps),
        seed=int(seed),
        snapshots=UPDATES,
    )
    return Settings(config, bool(twin))


# drawn before the step bar (its labels name the snapshots' steps): :func:`words`
SETTINGS = Controls(controls, box="training.settings", slide="settings")


def words(ctx: PageContext) -> Words:
    """What the page knows before its steps: the settings (drawn here, before the step bar,
    whose labels name the steps the snapshots are taken at) and those steps."""
    chosen = settings(ctx, SETTINGS)
    check_run(ctx)
    marks = snapshot_marks(chosen.config.steps, chosen.config.snapshots)
    return {"settings": chosen, "marks": tuple(int(marks[i]) for i in stops(chosen.config))}


def settings_of(words: Words) -> Settings:
    """The page's settings, from its words."""
    chosen = words["settings"]
    assert isinstance(chosen, Settings)
    return chosen


def at_title(stop: int) -> Callable[[Translator, Words], str]:
    """The title of the ``stop``-th snapshot step (0: the start, 3: the end): the step its
    snapshot is taken at under the settings ("Step 100")."""

    def title(t: Translator, words: Words) -> str:
        marks = words["marks"]
        assert isinstance(marks, tuple)
        return t("training.s_at", step=marks[stop])

    return title


_TRAIN = "_training_train"  # set by the Train button, taken by the next run of the page


def train_button(ctx: PageContext) -> None:
    """Train: the next run trains live where the student looks (:func:`train_here`)."""
    st.button(
        ctx.t("training.train"),
        type="primary",
        icon=":material/model_training:",
        key="train",
        on_click=_ask_train,
        width="stretch" if not ctx.presenter else "content",
    )


def _ask_train() -> None:
    st.session_state[_TRAIN] = True


def take_train() -> bool:
    """Whether Train was pressed for this run (once: a later run does not train again)."""
    return bool(st.session_state.pop(_TRAIN, False))


def train_here(
    ctx: PageContext, cfgs: tuple[TrainConfig, ...], place: DeltaGenerator
) -> tuple[History, ...]:
    """Train ``cfgs`` live in ``place`` (a progress bar and the growing chart), then clear
    both for the step's own chart, drawn after them; "run=1" goes into the URL. (The two
    are elements in empties of their own: an empty holding a container of them, emptied,
    kept the live chart on screen above the step's own after a fragment run.)"""
    bar, chart = place.empty(), place.empty()
    runs = train_live_view(ctx, cfgs, chart, bar)
    mark_trained()
    chart.empty()
    return runs


def configs(chosen: Settings) -> tuple[TrainConfig, ...]:
    """The run, and its unscaled (or scaled) twin when the comparison is on."""
    c = chosen.config
    return (c, replace(c, scaled=not c.scaled)) if chosen.twin else (c,)


def run_label(t: Translator, config: TrainConfig) -> str:
    """ "d_k 16, ÷√d_k" / "d_k 16, no scaling"."""
    return t(
        "training.scaled_label" if config.scaled else "training.unscaled_label", d_k=config.d_k
    )


def run_color(config: TrainConfig) -> str:
    return SCALED_COLOR if config.scaled else UNSCALED_COLOR


@st.cache_data(max_entries=48, show_spinner=False)
def finished(config: TrainConfig, _live: History | None = None) -> History:
    """A finished run, once per config (a live run hands its result in as ``_live``)."""
    return _live if _live is not None else run(config)


def finished_runs(ctx: PageContext, cfgs: tuple[TrainConfig, ...]) -> tuple[History, ...]:
    """The finished runs of ``cfgs`` (trained here, with a spinner, if they are not cached)."""
    with st.spinner(ctx.t("training.running")):
        return tuple(finished(c) for c in cfgs)


@st.cache_data(max_entries=48, show_spinner=False)
def start(config: TrainConfig) -> History:
    """The untrained model: the run's step-0 snapshot (same weights and example), no curves."""
    h = run(replace(config, steps=1, snapshots=1))
    return replace(
        h,
        config=config,
        loss=h.loss[:0],
        accuracy=h.accuracy[:0],
        focus=h.focus[:0],
        snapshots=h.snapshots[:1],
        done=False,
    )


def is_trained() -> bool:
    """Whether the URL asks for the finished run."""
    return st.query_params.get(RUN.key) == "1"


def check_run(ctx: PageContext) -> None:
    """Warn about a bad ``run`` value in the URL."""
    check_url(ctx, RUN)


def mark_trained() -> None:
    st.query_params[RUN.key] = "1"


# ---- labels ---------------------------------------------------------------------------------


def token_labels(h: History) -> list[str]:
    """The probe's tokens: "C=7" for a pair, "C=?" for the query (recall); "11" (max)."""
    p = h.probe
    if h.config.task == "max":
        return [str(int(s)) for s in p.symbols[0]]
    return [
        f"{LETTERS[int(k)]}={'?' if v < 0 else int(v)}"
        for k, v in zip(p.symbols[0], p.values[0], strict=True)
    ]


def row_labels(t: Translator, h: History) -> list[str]:
    labels = token_labels(h)
    return [t("training.query_row")] if h.config.task == "recall" else labels


def probe_title(t: Translator, h: History, snap: Snapshot) -> str:
    """What the probe asks and what the model answers at this snapshot."""
    p = h.probe
    if h.config.task == "recall":
        right = int(p.right[0, 0])
        return t(
            "training.probe_recall",
            sym=LETTERS[int(p.symbols[0, -1])],
            answer=int(p.y[0, 0]),
            pos=right + 1,
            pred=int(snap.probe_pred[0]),
        )
    return t("training.probe_max", ok=probe_correct(h, snap), n=h.config.n)


# ---- charts ---------------------------------------------------------------------------------


def _curve(
    t: Translator,
    series: Sequence[tuple[str, str, np.ndarray]],
    y_title: str,
    total: int,
    y_top: float,
    marker: int | None,
    presenter: bool,
    name: str,
) -> dict:
    """One line per (label, colour, values) over steps 0 … ``total`` (fixed axes, so a live
    curve grows into them), with a rule at ``marker``; the axes' ends are the dataset
    ``name``."""
    thin = max(1, total // 150)  # at most ~150 points a line
    frame = pd.concat(
        [
            pd.DataFrame({"step": np.arange(len(v))[::thin], "y": v[::thin], "run": label})
            for label, _, v in series
        ]
    )
    w, h = (370, 270) if presenter else (330, 230)
    spec = charts.lines(
        frame,
        "step",
        "y",
        "run",
        x_title=t("training.step_axis"),
        y_title=y_title,
        width=w,
        height=h,
        color_domain=[s[0] for s in series],
        colors=[s[1] for s in series],
    )
    enc = spec.pop("encoding")
    if len(series) == 1:  # one run: its label is in the example's title, no legend needed
        enc["color"]["legend"] = None
    # The axes end at (total, y_top): an invisible point from the data, not a domain in the
    # spec, so other totals give the same spec and the chart on screen only swaps its data.
    fixed = {"zero": True, "nice": False}
    enc["x"]["scale"] = {**enc["x"].get("scale", {}), **fixed}
    enc["y"]["scale"] = {**enc["y"].get("scale", {}), **fixed}
    corner = {
        "x": {"field": "step", "type": "quantitative"},
        "y": {"field": "y", "type": "quantitative"},
    }
    layers = [
        {"mark": {"type": "line", "strokeWidth": 2.5}, "encoding": enc},
        {"data": {"name": name}, "mark": {"type": "point", "opacity": 0}, "encoding": corner},
    ]
    if marker is not None:
        rule = {"type": "rule", "color": "#111", "strokeDash": [4, 3], "strokeWidth": 1.5}
        layers.append({"mark": rule, "encoding": {"x": {"datum": marker}}})
    spec.pop("mark", None)
    datasets = {**spec.get("datasets", {}), name: [{"step": total, "y": y_top}]}
    return {**spec, "datasets": datasets, "layer": layers}


def _probe_heatmap(
    t: Translator, runs: Sequence[tuple[str, History, Snapshot]], presenter: bool
) -> dict:
    """The probe's attention, one heatmap per run (stacked for the one-row recall task, side
    by side for the max task) titled on two lines: the run, then what the model answers."""
    h0 = runs[0][1]
    cols = token_labels(h0)
    rows = row_labels(t, h0)
    recall = h0.config.task == "recall"
    cell = (54 if presenter else 48) if recall else (34 if presenter else 30)
    numbers = None if recall or len(runs) == 1 or not presenter else False  # see SNAPSHOT_HEIGHTS
    maps = []
    for k, (label, h, s) in enumerate(runs):
        one = charts.heatmap(
            {label: s.probe_weights},
            rows,
            cols,
            x_title=t("training.keys_axis"),
            y_title="" if recall or k else t("training.rows_axis"),
            title=[label, probe_title(t, h, s)],
            cell=cell,
            legend=k == len(runs) - 1,
            name=f"probe{k}",
            annotate=numbers,
            max_font=charts.SLIDE_FONT if presenter else 15,
        )
        maps.append(one)
    if len(maps) == 1:
        return maps[0]
    shared = {"scale": {"color": "shared"}}
    return charts.concat(maps, "vconcat" if recall else "hconcat", spacing=20, resolve=shared)


def run_chart(
    t: Translator,
    runs: tuple[History, ...],
    index: int | None,
    presenter: bool,
) -> dict:
    """Loss | accuracy | the probe's attention, one spec. ``index``: the snapshot to show
    (None: the latest), marked on the curves."""
    total = runs[0].config.steps
    labels = [run_label(t, h.config) for h in runs]
    snaps = [h.snapshots[-1] if index is None else snapshot_at(h, index) for h in runs]
    marker = None if index is None else snaps[0].step
    top = max(
        [np.log(runs[0].config.n_symbols) * 1.15, *(h.loss.max() for h in runs if h.completed)]
    )
    loss = [(lab, run_color(h.config), h.loss) for lab, h in zip(labels, runs, strict=True)]
    acc = [(lab, run_color(h.config), h.accuracy) for lab, h in zip(labels, runs, strict=True)]
    curves = [
        _curve(t, loss, t("training.loss_axis"), total, top, marker, presenter, "loss_end"),
        _curve(t, acc, t("training.acc_axis"), total, 1.0, marker, presenter, "acc_end"),
    ]
    probe = _probe_heatmap(t, list(zip(labels, runs, snaps, strict=True)), presenter)
    if presenter:  # one row on a projector; curves above the example on a laptop
        return charts.concat([*curves, probe], spacing=28)
    return charts.concat([charts.concat(curves, spacing=28), probe], "vconcat", spacing=16)


def draw(ctx: PageContext, spec: dict, slot, space: charts.Room) -> None:
    """Draw a spec into ``slot`` (a live redraw), themed and fitted like :func:`charts.show`."""
    fitted = charts.fit(charts.to_spec(spec, ctx.presenter), space)
    slot.vega_lite_chart(spec=fitted, theme=None, width="content")


# ---- live training --------------------------------------------------------------------------


def train_live_view(
    ctx: PageContext, cfgs: tuple[TrainConfig, ...], slot, bar
) -> tuple[History, ...]:
    """Train ``cfgs`` side by side, redrawing the chart in ``slot`` and the progress ``bar``
    about :data:`UPDATES` times; the finished runs go into the cache."""
    t = ctx.t
    every = max(1, cfgs[0].steps // UPDATES)
    live = [train_live(c, every=every) for c in cfgs]
    latest: list[History] = [next(g) for g in live]
    while True:
        tick = time.perf_counter()
        done = latest[0].completed
        bar.progress(
            min(done / cfgs[0].steps, 1.0),
            text=t("training.progress", step=done, total=cfgs[0].steps),
        )
        space = charts.room(ctx, height=run_height(tuple(latest), snapshot=False))
        draw(ctx, run_chart(t, tuple(latest), None, ctx.presenter), slot, space)
        if all(h.done for h in latest):
            break
        latest = [h if h.done else next(g) for h, g in zip(latest, live, strict=True)]
        time.sleep(max(GAP_S, FRAME_S - (time.perf_counter() - tick)))
    bar.empty()
    return tuple(finished(c, _live=h) for c, h in zip(cfgs, latest, strict=True))


# ---- snapshots ------------------------------------------------------------------------------


def snapshot_steps(h: History) -> list[int]:
    return [s.step for s in h.snapshots]


def stops(config: TrainConfig) -> tuple[int, ...]:
    """The presenter's snapshot slides: start, early, a third of the way, end (as snapshot
    indices)."""
    k = config.snapshots
    return tuple(dict.fromkeys((0, max(1, round(k / 10)), round(k / 3), k)))


def at_slider(ctx: PageContext, config: TrainConfig) -> int:
    """The URL-bound snapshot slider (``?at=120``): the step picked (:func:`snapshot_index`
    finds its snapshot); a bad value falls back to the last step. It needs the run's
    settings only, so a step off screen keeps it in the URL without training the run."""
    total, every = config.steps, max(1, config.steps // UPDATES)
    spec = Int(AT, total, 0, total)
    raw = st.query_params.get(AT)
    if raw is not None and spec.parse(raw) is None:
        ctx.warn(ctx.t("params.invalid", name=AT, value=raw[:24], default=total))
        st.session_state[AT] = total
    if st.session_state.get(AT) is not None and st.session_state[AT] > total:
        st.session_state[AT] = total
    start = {} if AT in st.session_state else {"value": total}  # set by play: no default
    label, tip = ctx.t("training.at"), ctx.t("training.at_help")
    value = st.slider(label, 0, total, step=every, key=AT, bind="query-params", help=tip, **start)
    return int(value)


def play_button(ctx: PageContext) -> None:
    """Play (Pause while playing): the slider walks through the snapshots by itself."""
    st.button(
        ctx.t("training.pause" if playing() else "training.play"),
        icon=":material/pause:" if playing() else ":material/play_arrow:",
        on_click=toggle_play,
        key="play",
    )


def toggle_play() -> None:
    st.session_state[PLAY] = not st.session_state.get(PLAY, False)


def playing() -> bool:
    return bool(st.session_state.get(PLAY, False))


def play_step(h: History) -> None:
    """While playing: move the slider one snapshot on; at the end, stop (a full rerun drops
    the fragment's timer). From the end, play starts again at step 0."""
    marks = snapshot_steps(h)
    current = int(st.session_state.get(AT, marks[-1]))
    later = [m for m in marks if m > current]
    if current >= marks[-1] and not st.session_state.get("_training_played"):
        later = marks  # pressed Play at the end: start over
    st.session_state["_training_played"] = True
    if later:
        st.session_state[AT] = later[0]
    else:
        st.session_state[PLAY] = False
        st.session_state["_training_played"] = False
        st.rerun()


def metrics(ctx: PageContext, runs: tuple[History, ...], index: int) -> None:
    """Loss, accuracy, weight on the right position, entropy and score spread at a snapshot,
    one row of metrics per run (on a projector two runs share one compact table)."""
    t = ctx.t
    snaps = [snapshot_at(h, index) for h in runs]
    rows = [
        (
            (t("training.m_loss"), f"{s.loss:.3f}"),
            (t("training.m_acc"), f"{s.accuracy:.0%}"),
            (t("training.m_focus"), f"{s.focus:.2f}"),
            (t("training.m_entropy"), f"{s.entropy:.2f}"),
            (t("training.m_std"), f"{s.score_std:.2f}"),
        )
        for s in snaps
    ]
    if ctx.presenter and len(runs) > 1:  # a slide: both runs in one compact table
        head = [t("training.at_step", step=snaps[0].step), *(label for label, _ in rows[0])]
        lines = [head, ["---"] * len(head)]
        lines += [
            [f"**{run_label(t, h.config)}**", *(v for _, v in r)]
            for h, r in zip(runs, rows, strict=True)
        ]
        st.markdown("\n".join("| " + " | ".join(line) + " |" for line in lines))
        return
    for h, s, items in zip(runs, snaps, rows, strict=True):
        cols = st.columns(6)
        cols[0].markdown(f"**{run_label(t, h.config)}**  \n{t('training.at_step', step=s.step)}")
        for col, (label, value) in zip(cols[1:], items, strict=True):
            col.metric(label, value)


def run_height(runs: tuple[History, ...], snapshot: bool) -> int:
    """The height of the run chart on a projector, by what else its step holds (measured at
    1920 x 1080): a snapshot step has a row of metrics per run and "what to notice" below
    it (one more item for the max task, whose probe is also taller); the first step, the
    train button and a line of text. It depends on the task and the twin, so the steps pass
    it to ``view.chart`` (a :class:`ui.steps.Step`'s height is fixed)."""
    task = runs[0].config.task
    return SNAPSHOT_HEIGHTS[task, len(runs)] if snapshot else FIRST_HEIGHTS[task]


def snapshot_notice(ctx: PageContext, runs: tuple[History, ...], index: int) -> list[str]:
    """What to notice at a snapshot (shorter on a projector: the metrics row is above)."""
    t, h = ctx.t, runs[0]
    short = "_short" if ctx.presenter else ""
    found = sharpening(h, index)
    first, s = found.first, found.now
    items = [
        t(
            f"training.notice_sharpen{short}",
            step=s.step,
            f0=f"{first.focus:.2f}",
            f=f"{s.focus:.2f}",
            e0=f"{first.entropy:.2f}",
            e=f"{s.entropy:.2f}",
            uniform=f"{found.uniform:.2f}",
        ),
        t(f"training.notice_spread{short}", s0=f"{first.score_std:.2f}", s=f"{s.score_std:.2f}"),
    ]
    if h.config.task == "max":
        items.append(t("training.notice_causal"))
    return items


# ---- summary, divergence --------------------------------------------------------------------


def summary(ctx: PageContext, runs: tuple[History, ...]) -> list[str]:
    """One line per run: where it reached 95 %, its final loss; or where it diverged."""
    t, lines = ctx.t, []
    for h in runs:
        label = run_label(t, h.config)
        if h.diverged_at is not None:
            lines.append(t("training.diverged", run=label, step=h.diverged_at, lr=h.config.lr))
            continue
        hit = steps_to(h)
        final = h.snapshots[-1]
        reach = t("training.never") if hit is None else t("training.reached", step=hit)
        loss, acc, focus = f"{final.loss:.3f}", f"{final.accuracy:.0%}", f"{final.focus:.2f}"
        lines.append(t("training.summary", run=label, reach=reach, loss=loss, acc=acc, focus=focus))
    return lines


def diverged(runs: tuple[History, ...]) -> bool:
    return any(h.diverged_at is not None for h in runs)


# ---- why √d_k -------------------------------------------------------------------------------


def why_configs(config: TrainConfig) -> tuple[TrainConfig, ...]:
    """Scaled and unscaled at d_k 256 and at d_k 16, the page's other settings."""
    return tuple(replace(config, d_k=d, scaled=s) for d in WHY_D_KS for s in (True, False))


def why_chart(t: Translator, runs: tuple[History, ...], presenter: bool) -> dict:
    """Accuracy of scaled vs unscaled, one panel per d_k, one spec."""
    parts = []
    for d in WHY_D_KS:
        pair = [h for h in runs if h.config.d_k == d]
        series = [(run_label(t, h.config), run_color(h.config), h.accuracy) for h in pair]
        total = pair[0].config.steps
        chart = _curve(t, series, t("training.acc_axis"), total, 1.0, None, presenter, f"end{d}")
        parts.append({**chart, "title": t("training.why_panel", d_k=d)})
    return charts.concat(parts, spacing=36)


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def why_table(t: Translator, runs: tuple[History, ...]) -> pd.DataFrame:
    """The measured numbers, one column per run."""
    rows = {
        t("training.w_steps95"): [
            t("training.never") if steps_to(h) is None else str(steps_to(h)) for h in runs
        ],
        t("training.w_loss100"): [_num(loss_at(h, 100), 3) for h in runs],
        t("training.w_entropy0"): [f"{h.snapshots[0].entropy:.2f}" for h in runs],
        t("training.w_std0"): [f"{h.snapshots[0].score_std:.2f}" for h in runs],
        t("training.w_grad0"): [f"{h.snapshots[0].grad_median:.2f}" for h in runs],
    }
    frame = pd.DataFrame(rows, index=[run_label(t, h.config) for h in runs]).T
    return frame.rename_axis(t("training.w_measure")).reset_index()


_learns_slower = learns_slower  # its old name here (tests/app/test_training.py)


def why_notice(ctx: PageContext, runs: tuple[History, ...]) -> list[str]:
    """What to notice in the comparison (shorter on a projector, beside the chart), said
    the way the four measured runs came out: less gradient or not, slower or not."""
    t = ctx.t
    big_s, big_u, small_s, small_u = runs
    short = "_short" if ctx.presenter else ""

    def reach(h: History) -> str:
        hit = steps_to(h)
        if hit is None:
            return t("training.reach_never", steps=h.config.steps)
        return t("training.reach_at", step=hit)

    effect = scaling_effect(big_s, big_u)
    g_s, g_u = effect.grad_scaled, effect.grad_unscaled
    gradient = "why_gradient" if effect.less_gradient else "why_gradient_not_less"
    pct = "—" if effect.grad_percent is None else f"{effect.grad_percent:.0f}"
    return [
        t(
            f"training.why_saturated{short}",
            std_u=f"{big_u.snapshots[0].score_std:.1f}",
            std_s=f"{big_s.snapshots[0].score_std:.2f}",
            e_u=f"{big_u.snapshots[0].entropy:.2f}",
            e_s=f"{big_s.snapshots[0].entropy:.2f}",
        ),
        t(
            f"training.{gradient}{short}",
            g_s=f"{g_s:.2f}",
            g_u=f"{g_u:.2f}",
            pct=pct,
        ),
        t(
            f"training.why_{effect.slower}{short}",
            s=reach(big_s),
            u=reach(big_u),
            steps=big_s.config.steps,
        ),
        t(f"training.why_control{short}", s=reach(small_s), u=reach(small_u)),
    ]


# ---- the steps ------------------------------------------------------------------------------


def scrub_controls(ctx: PageContext, got: Got) -> DeltaGenerator:
    """The last snapshot step's box on screen: the place of the slider through every snapshot
    (drawn by the step's own timer, :func:`scrub`, which moves it while playing) and Play
    beside it."""
    with st.container(horizontal=True, vertical_alignment="bottom"):
        place = st.container()
        play_button(ctx)
    return place


def at_control(ctx: PageContext, got: Got) -> int:
    """The last snapshot step off screen: its slider alone, which keeps "?at=" in the URL."""
    return at_slider(ctx, settings_of(got.words).config)


# a slide: at the end of the settings, so the step keeps its room
SCRUB = Controls(scrub_controls, box="training.s_scrub", slide="settings", hidden=at_control)


def train_if_asked(v: View, cfgs: tuple[TrainConfig, ...]) -> tuple[History, ...] | None:
    """Train, when it was pressed (students: in the side panel, on any step): the run
    trains live where the step's chart goes; its result, or None."""
    return train_here(v.ctx, cfgs, v.figure) if take_train() else None


def train(v: View) -> None:
    """Step 1: the run's curves and the example's attention, before and after Train (a slide
    keeps the step's heading, and Train under its text)."""
    t, chosen = v.t, settings_of(v.words)
    cfgs = configs(chosen)
    if v.presenter:
        v.lead.subheader(t("training.s_train"))
    v.lead.markdown(t(f"training.{'short' if v.presenter else 'about'}_{chosen.config.task}"))
    if v.presenter:
        with v.lead:
            train_button(v.ctx)
    live = train_if_asked(v, cfgs)
    trained = is_trained()
    runs = live or (finished_runs(v.ctx, cfgs) if trained else tuple(map(start, cfgs)))
    space = charts.room(v.ctx, height=run_height(runs, snapshot=False))
    v.chart(run_chart, t, runs, None, v.presenter, space=space)
    if trained:
        lines = "\n".join(f"- {x}" for x in summary(v.ctx, runs))
        (v.notes.warning if diverged(runs) else v.notes.markdown)(lines)
    else:
        press = "press_train" if v.presenter else "press_train_side"
        v.notes.info(t(f"training.{press}"), icon=":material/touch_app:")


def snapshot(stop: int) -> Callable[[View], None]:
    """The ``stop``-th snapshot step (0: the start): the finished run at that snapshot, its
    metrics and what to notice."""

    def show(v: View) -> None:
        chosen = settings_of(v.words)
        cfgs = configs(chosen)
        train_if_asked(v, cfgs)
        index = stops(chosen.config)[stop]
        v.text("training.snap_text", total=chosen.config.steps)
        done = finished_runs(v.ctx, cfgs)
        # a slide: the height its step holds; students: the step's room (below its strip)
        space = (
            charts.room(v.ctx, height=run_height(done, snapshot=True)) if v.presenter else v.room
        )
        v.chart(run_chart, v.t, done, index, v.presenter, space=space)
        with v.notes:
            metrics(v.ctx, done, index)
        v.notice(snapshot_notice(v.ctx, done, index))

    return show


def scrub(v: View) -> None:
    """The last snapshot step: the end of the run, and the slider (and Play) through every
    snapshot. The slider, the chart and the notes are one more fragment, whose timer walks
    the slider on while playing (Play, beside the slider, reruns this step: the timer starts;
    Pause stops it)."""
    chosen = settings_of(v.words)
    cfg, cfgs = chosen.config, configs(chosen)
    train_if_asked(v, cfgs)
    v.text("training.scrub_text")
    runs = finished_runs(v.ctx, cfgs)
    place = v[SCRUB]
    # a slide: the height its step holds; students: the step's room (below its strip)
    space = charts.room(v.ctx, height=run_height(runs, snapshot=True)) if v.presenter else v.room

    @st.fragment(run_every=PLAY_S if playing() else None)
    def walk() -> None:
        if playing():
            play_step(runs[0])
        with place:
            at = at_slider(v.ctx, cfg)
        index = nearest_snapshot(runs[0], at)
        v.chart(run_chart, v.t, runs, index, v.presenter, space=space)
        with v.notes:
            metrics(v.ctx, runs, index)
        v.notice(snapshot_notice(v.ctx, runs, index))

    walk()


def why(v: View) -> None:
    """The last step: scaled against unscaled at d_k 256 and 16, the measured numbers and
    what to notice. A slide keeps the step's heading, the notice beside the chart and the
    table folded below it, so it fits one screen; students find the table and the notice
    below the chart."""
    t, chosen = v.t, settings_of(v.words)
    train_if_asked(v, configs(chosen))
    if v.presenter:
        v.lead.subheader(t("training.s_why"))
    v.text("training.why_text")
    with v.figure, st.spinner(t("training.why_running")):
        runs = tuple(finished(c) for c in why_configs(chosen.config))
    v.chart(why_chart, t, runs, v.presenter)
    if v.presenter:
        v.notice(why_notice(v.ctx, runs))
        with v.below.expander(t("training.w_measure"), icon=":material/table:"):
            st.table(why_table(t, runs), hide_index=True)
        v.links("scaling", place=v.below)
        return
    with v.notes:
        left, right = st.columns([5, 6])
        with left:
            st.table(why_table(t, runs), hide_index=True)
        v.notice(why_notice(v.ctx, runs), place=right)
    v.links("scaling")
