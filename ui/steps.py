"""The skeleton every page is drawn by: a page is a list of steps.

A page file declares its steps and calls :func:`run`::

    SETTINGS = Controls(view.controls, box="softmax.settings", slide="settings")
    SCALE = Controls(view.scale_control, box="softmax.stable_controls")

    run("softmax", [
        Step("softmax.step_bars", view.bars, [SETTINGS], stacked=True, student=380),
        Step("softmax.step_stable", view.stable, [SETTINGS, SCALE], height=420),
    ])

A :class:`Step` is data: its title, the control groups it reads, the one function that
computes and draws what it shows (``show(view)``, in the page's view module), and where its
chart goes (the room). The skeleton does the rest, the same way on every page:

* **The step bar** (:mod:`ui.stepbar`): one step on screen at a time, ``?step=k`` in the
  URL, Next/Back and the clicker across pages.
* **The frame.** Students: the chart first, then the step's text (the page's introduction on
  step 1, the heading, what the step's ``show`` writes), then its notes, one below the other,
  so the chart is on a laptop's first screen beside the controls that move it. A slide: the
  text on top, then the chart and its notes side by side (``share`` of the width for the
  chart) or one below the other (``stacked``). ``view.chart`` draws into the room this
  gives the chart (:func:`ui.charts.room`).
* **The controls.** A :class:`Controls` group is drawn once a run by its ``draw(ctx, got)``
  and its values read by every step that lists it (``view[GROUP]``). Students find the
  groups of the step on screen in the sidebar, under the group's ``box`` heading (or, with
  ``student``, at that place in the step: a control too wide for the sidebar); a slide
  shows them at the group's ``slide`` place in the step (``"settings"``: a closed expander
  above the step). A group no step on screen reads is drawn hidden, by the first step that
  lists it, so its value stays in the URL: a link copied on any step restores every control
  (a button, ``keep=False``, is not drawn off screen).
  Groups are drawn in the order they are first listed (the page's, then each step's), after
  the groups their ``draw`` reads from ``got``. A step may also read a group it does not
  list, without showing it: off its own step (one step on screen) that group is drawn
  hidden before any step's ``show``.
* **Stopping.** A page whose steps cannot run (a model that cannot be loaded) says so in
  its ``words`` and calls :func:`stop`, which keeps the page groups that may mend it.
* **Fragments.** Everything below the step bar is one fragment, so a control never reruns
  the shell, the title or the step bar; the on-screen step's own groups (listed by no other
  step) and its ``show`` are one more fragment inside it: a step's own control reruns only
  that step.
"""

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, NoReturn

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import charts
from ui.blocks import fragment, header, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.shell import shell
from ui.stepbar import Steps, stepper

# Where a group of controls sits on a slide: a closed expander above the step ("settings"),
# in the step's text ("lead", below what the step writes there), above or below its chart,
# or at the top of its notes.
Place = Literal["settings", "lead", "above", "below", "notes"]
# Where a group of controls may sit in a step for students, instead of the sidebar
Slot = Literal["lead", "above", "below", "notes"]
Words = dict[str, object]
# A step's title: a catalog key (filled in with the page's words), or a function of the
# translator and the words (a title that depends on a setting: /training's snapshots)
Title = str | Callable[[Translator, Words], str]


@dataclass(frozen=True, eq=False)
class Controls:
    """A group of controls, drawn once a run by ``draw(ctx, got)`` (``got``: the values of
    the groups drawn before it), which returns their values. Compared by identity: the same
    group listed by two steps is one group, shared."""

    draw: Callable[[PageContext, "Got"], Any]
    box: str | None = None  # catalog key of a heading of its own (a page's groups: required)
    slide: Place = "lead"
    fold: str | None = None  # a slide: in a closed expander at its place, under this key's text
    # students: at this place of the step instead of the sidebar (a control too wide for it)
    student: Slot | None = None
    # off screen: drawn hidden, so its value stays in the URL; False: not drawn at all (a
    # button, read only by the steps that list it: nothing to keep)
    keep: bool = True


class Got:
    """The values of the control groups drawn so far on this run: ``got[GROUP]``."""

    def __init__(self) -> None:
        self._values: dict[int, Any] = {}

    def __getitem__(self, group: Controls) -> Any:
        return self._values[id(group)]

    def __contains__(self, group: Controls) -> bool:
        return id(group) in self._values

    def put(self, group: Controls, value: Any) -> None:
        """Keep ``group``'s values."""
        self._values[id(group)] = value


@dataclass(frozen=True)
class View:
    """What a step's ``show`` draws with: the page's context, every group's values
    (``view[GROUP]``), the places of the step's frame and its chart's room."""

    ctx: PageContext
    got: Got
    lead: DeltaGenerator  # the step's text (students: below the chart)
    figure: DeltaGenerator  # the chart
    below: DeltaGenerator  # right below the chart (a slide: in the chart's column)
    aside: DeltaGenerator  # beside the chart (students: a step's ``aside``; a slide: the notes)
    notes: DeltaGenerator  # what to notice, captions, exports, links
    room: charts.Room
    first: bool  # the page's first step (it carries the page's introduction)
    words: Words = field(default_factory=dict)

    def __getitem__(self, group: Controls) -> Any:
        return self.got[group]

    @property
    def t(self) -> Translator:
        """The page's translator."""
        return self.ctx.t

    @property
    def presenter(self) -> bool:
        """Whether this is a slide."""
        return self.ctx.presenter

    def chart(self, builder: Callable[..., dict], *args: object, **options: object) -> dict:
        """Draw ``builder(*args, **options)``'s chart in the step's chart place and room
        (:func:`ui.charts.show_cached`; ``space=`` overrides the room); returns the spec."""
        options.setdefault("space", self.room)
        with self.figure:
            return charts.show_cached(self.ctx, builder, *args, **options)

    def text(self, key: str, **values: object) -> None:
        """The step's explanation (``key`` in the catalog), for students only: on a slide
        the lecturer says it."""
        if not self.presenter:
            self.lead.markdown(self.t(key, **values))

    def notice(self, items: list[str]) -> None:
        """The "what to notice" box, in the notes."""
        with self.notes:
            notice(self.ctx, items)

    def export(self, name: str, chart: dict | None = None, **kw: Any) -> None:
        """The step's export box (:func:`ui.exports.export_panel`), in the notes."""
        with self.notes:
            export_panel(self.ctx, name, chart, **kw)

    def links(self, *pages: str, place: DeltaGenerator | None = None) -> None:
        """Links to other pages (``page`` ids, or ``(id, label)`` pairs), in the notes."""
        with place or self.notes:
            for page in pages:
                link(self.ctx, *page) if isinstance(page, tuple) else link(self.ctx, page)


@dataclass(frozen=True)
class Step:
    """One step of a page: its title, the control groups it reads, what it shows, and the
    room of its chart."""

    title: Title  # the step's heading and, without ``short``, its label in the step bar
    show: Callable[[View], None]
    controls: Sequence[Controls] = ()
    _: KW_ONLY
    box: str | None = None  # catalog key: students' heading over its controls in the sidebar
    short: Title | None = None  # a shorter label for the step bar
    share: float = 0.6  # a slide: the chart column's share of the width, its notes beside it
    stacked: bool = False  # a slide: text, chart and notes one below the other
    width: float | None = None  # a slide: the chart's share of the width (default: its column)
    height: int | None = None  # a slide: the chart's height at most (ui.charts.room)
    student: int | None = None  # students: the chart's height at most (ui.charts.PAGE_HEIGHT)
    aside: float | None = None  # students: this share of the width beside the chart (view.aside)

    def room(self, ctx: PageContext) -> charts.Room:
        """The room of the step's chart: on a slide its column (or ``width``) of the slide
        and at most ``height`` px; for students the page width (less ``aside``), at most
        ``student`` px."""
        if not ctx.presenter:
            return charts.room(ctx, 1.0 - (self.aside or 0.0), self.student)
        width = self.width if self.width is not None else 1.0 if self.stacked else self.share
        return charts.room(ctx, width, self.height)

    def label(self, ctx: PageContext, words: Words, short: bool = False) -> str:
        """The step's title (``short``: its step bar label), in the page's language."""
        title = (self.short or self.title) if short else self.title
        return ctx.t(title, **words) if isinstance(title, str) else title(ctx.t, words)


def run(
    page: str,
    steps: Sequence[Step],
    controls: Sequence[Controls] = (),
    *,
    words: Callable[[PageContext], Words] | None = None,
    stacked: bool = False,
    order: Callable[[PageContext], Sequence[int]] | None = None,
) -> None:
    """Draw the page ``page`` (an id of :mod:`ui.pages`): the shell, its title, the step bar
    and the step on screen.

    ``controls``: the page's own groups, read by every step (on a slide in the closed
    settings expander above the step, whatever their ``slide``). ``words(ctx)``: what the
    page knows before its steps, as values its title, introduction and step titles fill in
    (a model's sizes; it may stop the page, or draw settings that the step bar's labels
    depend on: a change of those reruns the whole page); steps read them as ``view.words``.
    ``stacked``: students see every step, one below the other, with no step bar (a tool
    read top to bottom), in ``order(ctx)`` (default: as listed); a slide still shows one
    step at a time.
    """
    ctx = shell(page)
    filled = words(ctx) if words else {}
    header(ctx, **filled)
    bar = stepper(ctx, [s.label(ctx, filled, short=True) for s in steps], stacked)
    shown = list(order(ctx)) if order and bar.current is None else None
    page_ = _Page(list(steps), list(controls), filled, bar, shown)
    fragment(ctx, page_.content)


@dataclass(frozen=True)
class _Page:
    """A page being drawn: its steps and groups, its words, the step bar's choice and, for
    students of a stacked page, the order of its steps."""

    steps: list[Step]
    groups: list[Controls]  # the page's own, read by every step
    words: Words
    bar: Steps
    order: list[int] | None

    def content(self, ctx: PageContext) -> None:
        """Everything below the step bar: the page's groups, every other group in its place
        (or hidden), and the step(s) on screen. A step that reads only groups of its own is
        one more fragment (its frame, its groups, its ``show``); one that reads a group
        shared with another step is drawn here, its frame made before the groups that go
        into it (a shared group's ``draw`` may be read by a hidden step's)."""
        got = Got()
        box = ctx.controls
        for group in self.groups:  # a group without a box joins the one before
            box = _box(ctx, group.box) if group.box else box
            with box:
                got.put(group, group.draw(ctx, got))
        readers = self.readers()
        shown = self.order or [i for i in range(len(self.steps)) if self.bar.show(i)]
        places = {i: st.container() for i in shown}
        solo = {i for i in shown if all(len(readers[id(g)]) == 1 for g in self.own(i))}
        frames = {}
        for i in shown:
            if i not in solo:
                with places[i]:
                    frames[i] = _Frame.make(ctx, self.steps[i], i == 0, self.words)
        hidden: dict[int, DeltaGenerator] = {}
        for group in self.later_groups():
            users = readers[id(group)]
            host = next((i for i in users if i in places), users[0])
            if host not in solo:  # a solo step draws its groups in its own fragment
                _draw(ctx, got, group, frames.get(host), lambda h=host: self.hidden(h, hidden))
        for i in shown:
            with places[i]:
                if i in solo:
                    fragment(ctx, lambda c, i=i: self.solo(c, got, i))
                else:
                    self.show(ctx, got, i, frames[i])

    def own(self, index: int) -> list[Controls]:
        """The groups step ``index`` lists that are not the page's."""
        return [g for g in self.steps[index].controls if g not in self.groups]

    def readers(self) -> dict[int, list[int]]:
        """Each group's readers (by the group's id): the steps that list it, in order."""
        readers: dict[int, list[int]] = {}
        for i in range(len(self.steps)):
            for group in self.own(i):
                readers.setdefault(id(group), []).append(i)
        return readers

    def later_groups(self) -> list[Controls]:
        """The steps' groups in the order they are first listed."""
        seen: dict[int, Controls] = {}
        for i in range(len(self.steps)):
            for group in self.own(i):
                seen.setdefault(id(group), group)
        return list(seen.values())

    def hidden(self, index: int, made: dict[int, DeltaGenerator]) -> DeltaGenerator:
        """Step ``index``'s hidden container (made once): where its groups wait off screen,
        for students in the sidebar (the main area holds only what is seen)."""
        if index not in made:
            made[index] = (self.bar.hidden_in or st).container(key=f"hidden_step_{index}")
        return made[index]

    def solo(self, ctx: PageContext, got: Got, index: int) -> None:
        """A step that reads only groups of its own, as a fragment: its frame, its groups,
        its ``show`` (a control of its own reruns only this)."""
        frame = _Frame.make(ctx, self.steps[index], index == 0, self.words)
        for group in self.own(index):
            _draw(ctx, got, group, frame, st.container)
        self.show(ctx, got, index, frame)

    def show(self, ctx: PageContext, got: Got, index: int, frame: "_Frame") -> None:
        """Step ``index``'s ``show`` in its frame."""
        step = self.steps[index]
        places = (frame.lead, frame.figure, frame.below, frame.aside, frame.notes)
        step.show(View(ctx, got, *places, step.room(ctx), index == 0, self.words))


def stop(ctx: PageContext, controls: Sequence[Controls] = ()) -> NoReturn:
    """Stop the page before its title (from :func:`run`'s ``words``, once the page has said
    why: a model that cannot be loaded), after drawing ``controls``: page groups that may
    mend it (a switch to another model), in their boxes as :func:`run` draws them."""
    got, box = Got(), ctx.controls
    for group in controls:  # a group without a box joins the one before
        box = _box(ctx, group.box) if group.box else box
        with box:
            got.put(group, group.draw(ctx, got))
    st.stop()


def _draw(
    ctx: PageContext,
    got: Got,
    group: Controls,
    frame: "_Frame | None",
    hidden: Callable[[], DeltaGenerator],
) -> None:
    """Draw ``group`` where it belongs: for the step on screen (``frame``) in the sidebar
    (students; or at the group's ``student`` place in the step) or at the group's place on
    the slide; off screen in ``hidden()`` (a group not kept: not at all)."""
    if frame is None:
        if not group.keep:
            return
        place = hidden()
    elif not ctx.presenter and group.student:
        place = frame.slots[group.student]
    elif not ctx.presenter:
        place = _box(ctx, group.box) if group.box else ctx.controls
    elif group.slide == "settings":
        place = _box(ctx, group.box)
    else:
        place = frame.slots[group.slide]
        if group.fold:
            place = place.expander(ctx.t(group.fold), icon=":material/tune:")
    with place:
        got.put(group, group.draw(ctx, got))


def _box(ctx: PageContext, key: str | None) -> DeltaGenerator:
    """A box of controls headed by ``key``'s text: for students under that heading in the
    sidebar, beside the chart they move; on a slide a closed expander (the slide keeps its
    room)."""
    label = ctx.t(key) if key else ""
    if ctx.presenter:
        return st.expander(label, icon=":material/tune:")
    if label:
        ctx.controls.markdown(f"**{label}**")
    return ctx.controls


@dataclass(frozen=True)
class _Frame:
    """The places of a step on screen. Students: the chart (with ``aside`` beside it), the
    text (the page's introduction on the first step, the heading, the step's own), the
    notes, one below the other. A slide: the text, then the chart and the notes side by
    side (or, ``stacked``, one below the other). ``slots`` are where a group's controls go
    on a slide."""

    lead: DeltaGenerator
    figure: DeltaGenerator
    below: DeltaGenerator
    aside: DeltaGenerator
    notes: DeltaGenerator
    slots: dict[str, DeltaGenerator]

    @staticmethod
    def make(ctx: PageContext, step: Step, first: bool, words: Words) -> "_Frame":
        """Lay out ``step`` (the page's ``first``) and write its heading."""
        if ctx.presenter:
            top = st.container()
            if step.stacked:
                column, side = st.container(), st.container()
            else:
                column, side = st.columns([step.share, 1 - step.share])
        else:
            column, top, side = st.container(), st.container(), st.container()
            if step.box:  # over the step's controls in the sidebar
                ctx.controls.markdown(f"**{ctx.t(step.box)}**")
        with top:
            if first and not ctx.presenter:
                st.markdown(ctx.t(f"{ctx.page}.intro", **words))
            if not ctx.presenter:  # a slide: the step bar names the step
                st.subheader(step.label(ctx, words))
            lead, below_lead = st.container(), st.container()
        with column:
            above = st.container()
            if step.aside and not ctx.presenter:
                chart_col, beside = st.columns([1 - step.aside, step.aside])
                figure, below = chart_col.container(), chart_col.container()
            else:
                figure, below, beside = st.container(), st.container(), None
        with side:
            top_notes, notes = st.container(), st.container()
        slots = {"lead": below_lead, "above": above, "below": below, "notes": top_notes}
        return _Frame(lead, figure, below, beside or top_notes, notes, slots)
