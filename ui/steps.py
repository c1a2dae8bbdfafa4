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
* **The frame.** Students: one strip with what to try (the step's ``tries`` line) and the
  first thing to notice (the first item ``view.notice`` gets), then the chart, then the
  step's text (the page's introduction on step 1, the heading, what the step's ``show``
  writes), then the rest of its notes, one below the other, so the chart and its point are
  on a laptop's first screen beside the controls that move it. A slide: the
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
  Groups are drawn in the order they are first listed (the page's, then each step's): a
  group's ``draw`` may read the groups listed before it. The groups with ``row`` set at one
  place of a slide go side by side in one row there. A step may also only read a group
  another step lists (``reads``): the control then stays on its own step; and fold, for
  students, a group it shares with other steps (``folded``: its own controls need the
  sidebar's room). Settings the step bar's labels depend on are drawn by ``run``'s
  ``words`` (:func:`settings`), before the bar.
* **Stopping.** A page whose steps cannot run (a model that cannot be loaded) says so in
  its ``words`` and calls :func:`stop`, which keeps the page groups that may mend it.
* **Fragments.** Everything below the step bar is one fragment, so a control never reruns
  the shell, the title or the step bar; the on-screen step's own groups (listed by no other
  step) and its ``show`` are one more fragment inside it: a step's own control reruns only
  that step.
"""

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, NoReturn

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import ask, charts
from ui.blocks import fragment, header, link, notice
from ui.context import PageContext
from ui.exports import export_panel
from ui.i18n import Translator
from ui.questions import Question
from ui.shell import SLIDE_BOX, shell
from ui.stepbar import Steps, stepper

# Where a group of controls sits on a slide: a closed expander ("settings": above the step
# for a page's own groups; a step's group at the end of the settings words drew, if any, else
# below the step), in the step's text ("lead", below what the step writes there), above or
# below its chart, or at the top of its notes.
Place = Literal["settings", "lead", "above", "below", "notes"]
# Where a group of controls may sit in a step for students, instead of the sidebar
Slot = Literal["lead", "above", "below", "notes"]
Words = dict[str, object]
# A step's title: a catalog key (filled in with the page's words), or a function of the
# translator and the words (a title that depends on a setting: /training's snapshots)
Title = str | Callable[[Translator, Words], str]
# While run() asks a page's words: the expander settings() drew a slide's settings in. A
# value of this run's context (its thread), never shared between sessions.
_SETTINGS_BOX: ContextVar[DeltaGenerator | None] = ContextVar("_SETTINGS_BOX", default=None)


@dataclass(frozen=True, eq=False)
class Controls:
    """A group of controls, drawn once a run by ``draw(ctx, got)`` (``got``: the values of
    the groups drawn before it), which returns their values. Compared by identity: the same
    group listed by two steps is one group, shared.

    ``row``: on a slide the groups with ``row`` set at one place go side by side in one row,
    where one below the other would push the slide past one screen (/rope's base and seed,
    /qkv's token and projection pickers: read by different steps, so not one group).
    Students find them one below the other in the sidebar, as usual."""

    draw: Callable[[PageContext, "Got"], Any]
    box: str | None = None  # catalog key of a heading of its own (a page's groups: required)
    slide: Place = "lead"
    fold: str | None = None  # a slide: in a closed expander at its place, under this key's text
    row: bool = False  # a slide: in one row with the other ``row`` groups at its place
    # students: at this place of the step instead of the sidebar (a control too wide for it)
    student: Slot | None = None
    # off screen: drawn hidden, so its value stays in the URL; False: not drawn at all (a
    # button, read only by the steps that list it: nothing to keep)
    keep: bool = True
    # off screen ``hidden(ctx, got)`` is drawn instead of ``draw``: only what keeps the values
    # in the URL, where the step on screen draws more (its Play button, and the slider its
    # timer redraws: /training's snapshots)
    hidden: Callable[[PageContext, "Got"], Any] | None = None


class Got:
    """The values of the control groups drawn so far on this run: ``got[GROUP]``; and the
    page's words (``got.words``: a group's range may depend on settings drawn by ``words``)."""

    def __init__(self, words: Words | None = None) -> None:
        self._values: dict[int, Any] = {}
        self.words: Words = words or {}

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
    # students: the line above the chart that says what to notice first (None on a slide,
    # whose notes are beside the chart); ``told`` holds what it says once said
    head: DeltaGenerator | None = None
    told: list[str] = field(default_factory=list)

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

    def notice(self, items: list[str], place: DeltaGenerator | None = None) -> None:
        """The "what to notice" box, in the notes (or ``place``). For students its first
        item goes above the chart, under what to try, so that the chart's point is on the
        first screen; the box below keeps the rest (none left: no box)."""
        if self.head is not None and not self.told and items:
            self.told.append(items[0])
            self.head.markdown(f":material/lightbulb: {items[0]}")
            items = items[1:]
        if items:
            with place or self.notes:
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
    # groups the step reads without drawing them: they stay with the step that lists them
    # (hidden while it is off screen), so on a slide a control sits on its own step only
    # (/homework's verdict reads the upload of the step before)
    reads: Sequence[Controls] = ()
    # students: the heading and text above the chart (/homework's verdict, then its errors)
    text_first: bool = False
    titled: bool = False  # a slide shows the title as the step's heading too (students always)
    folded: Sequence[Controls] = ()  # students: these groups in a closed expander (their fold)
    # catalog key of what to try on the step, one line above its chart for students
    # (default: the title's key + "_try"; required where the title is a function)
    tries: str | None = None
    # Ask the class: the question a lecturer may ask on this step (ui.questions, ui.ask)
    question: Question | None = None

    def room(self, ctx: PageContext) -> charts.Room:
        """The room of the step's chart: on a slide its column (or ``width``) of the slide
        and at most ``height`` px; for students the page width (less ``aside``), at most
        ``student`` px."""
        if not ctx.presenter:
            return charts.room(ctx, 1.0 - (self.aside or 0.0), self.student)
        width = self.width if self.width is not None else 1.0 if self.stacked else self.share
        return charts.room(ctx, width, self.height)

    def instruction(self, ctx: PageContext, words: Words) -> str:
        """What to try on the step, in the page's language."""
        key = self.tries or (f"{self.title}_try" if isinstance(self.title, str) else None)
        if key is None:
            raise ValueError("a step whose title is a function names its `tries` key")
        return ctx.t(key, **words)

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
    depend on with :func:`settings`: a change of those reruns the whole page); steps read them
    as ``view.words``, groups as ``got.words``. The title and the step bar are drawn above
    whatever ``words`` draws.
    ``stacked``: students see every step, one below the other, with no step bar (a tool
    read top to bottom), in ``order(ctx)`` (default: as listed; asked on every run of the
    page's fragment, so it may follow the page's own controls); a slide still shows one
    step at a time.
    """
    ctx = shell(page)
    head = st.container()  # the title and the step bar, filled in once the words are known
    asked = _SETTINGS_BOX.set(None)
    try:
        filled = words(ctx) if words else {}
        box = _SETTINGS_BOX.get()
    finally:
        _SETTINGS_BOX.reset(asked)
    with head:
        header(ctx, **filled)
        bar = stepper(ctx, [s.label(ctx, filled, short=True) for s in steps], stacked)
    stack = order if bar.current is None else None
    page_ = _Page(list(steps), list(controls), filled, bar, stack, box)
    fragment(ctx, page_.content)


def settings(ctx: PageContext, group: Controls) -> Any:
    """Draw ``group`` at once, under its ``box``, and return its values: for :func:`run`'s
    ``words``, the settings the step bar's labels depend on (/training's run length names its
    snapshot steps). They are drawn outside the page's fragment, so a change of them reruns
    the whole page: students find them in the sidebar, a slide in a closed expander right
    below the step bar, where the steps' groups whose ``slide`` is "settings" join them (the
    slide keeps its room: /training's snapshot slider)."""
    box = _box(ctx, group.box)
    if ctx.presenter:
        _SETTINGS_BOX.set(box)
    with box:
        return group.draw(ctx, Got())


@dataclass(frozen=True)
class _Page:
    """A page being drawn: its steps and groups, its words, the step bar's choice and, for
    students of a stacked page, what orders its steps."""

    steps: list[Step]
    groups: list[Controls]  # the page's own, read by every step
    words: Words
    bar: Steps
    order: Callable[[PageContext], Sequence[int]] | None
    box: DeltaGenerator | None  # a slide's settings drawn by words (settings())

    def content(self, ctx: PageContext) -> None:
        """Everything below the step bar: the page's groups, every other group in its place
        (or hidden), and the step(s) on screen. A step that reads only groups of its own is
        one more fragment (its frame, its groups, its ``show``); one that reads a group
        shared with another step is drawn here, its frame made before the groups that go
        into it (a shared group's ``draw`` may be read by a hidden step's)."""
        got = Got(self.words)
        box = ctx.controls
        for group in self.groups:  # a group without a box joins the one before
            box = _box(ctx, group.box) if group.box else box
            with box:
                got.put(group, group.draw(ctx, got))
        readers = self.readers()
        on = [i for i in range(len(self.steps)) if self.bar.show(i)]
        shown = list(self.order(ctx)) if self.order else on
        places = {i: st.container() for i in shown}
        solo = {i for i in shown if all(len(readers[id(g)]) == 1 for g in self.own(i))}
        frames = {}
        for i in shown:
            if i not in solo:
                with places[i]:
                    frames[i] = _Frame.make(ctx, self.steps[i], i, self.words, i == shown[0])
        hidden: dict[int, DeltaGenerator] = {}
        for group in self.later_groups():
            users = readers[id(group)]
            hosts = [i for i in users if group in self.steps[i].controls] or users
            host = next((i for i in hosts if i in places), hosts[0])
            if host not in solo:  # a solo step draws its groups in its own fragment
                frame = frames.get(host)  # None: off screen
                fold = group in self.steps[host].folded
                _draw(ctx, got, group, frame, lambda h=host: self.hidden(h, hidden), self.box, fold)
        for i in shown:
            with places[i]:
                if i in solo:
                    fragment(ctx, lambda c, i=i: self.solo(c, got, i, i == shown[0]))
                else:
                    self.show(ctx, got, i, frames[i])

    def own(self, index: int) -> list[Controls]:
        """The groups step ``index`` lists or reads that are not the page's."""
        step = self.steps[index]
        return [g for g in (*step.controls, *step.reads) if g not in self.groups]

    def readers(self) -> dict[int, list[int]]:
        """Each group's readers (by the group's id): the steps that list or read it, in order."""
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

    def solo(self, ctx: PageContext, got: Got, index: int, strip: bool = True) -> None:
        """A step that reads only groups of its own, as a fragment: its frame, its groups,
        its ``show`` (a control of its own reruns only this); ``strip``: see _Frame.make."""
        frame = _Frame.make(ctx, self.steps[index], index, self.words, strip)
        for group in self.own(index):
            folded = group in self.steps[index].folded
            _draw(ctx, got, group, frame, st.container, self.box, folded)
        self.show(ctx, got, index, frame)

    def show(self, ctx: PageContext, got: Got, index: int, frame: "_Frame") -> None:
        """Step ``index``'s ``show`` in its frame."""
        step = self.steps[index]
        if step.question is not None and ask.on_step(ctx, step.question, frame.lead):
            return  # the lecturer's round of the step's question stands in for its chart
        places = (frame.lead, frame.figure, frame.below, frame.aside, frame.notes)
        step.show(View(ctx, got, *places, step.room(ctx), index == 0, self.words, frame.head))


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
    settings_box: DeltaGenerator | None = None,
    folded: bool = False,
) -> None:
    """Draw ``group`` where it belongs: for the step on screen (``frame``) in the sidebar
    (students; ``folded``: in a closed expander there, under the group's ``fold`` text; or
    at the group's ``student`` place in the step) or at the group's place on the slide
    (``settings_box``: the settings words drew); off screen in ``hidden()`` (a group not
    kept: not at all)."""
    if frame is None:
        if not group.keep:
            return
        place = hidden()
    elif not ctx.presenter and group.student:
        place = frame.slots[group.student]
    elif not ctx.presenter:
        place = _box(ctx, group.box) if group.box else ctx.controls
        if folded:
            place = place.expander(ctx.t(group.fold or ""), icon=":material/more_horiz:")
    elif group.slide == "settings":
        place = settings_box or _box(ctx, group.box)
    else:
        place = frame.row(group.slide) if group.row else frame.slots[group.slide]
        if group.fold:
            place = _slide_box(place, ctx.t(group.fold))
    draw = group.hidden if frame is None and group.hidden else group.draw
    with place:
        got.put(group, draw(ctx, got))


def _box(ctx: PageContext, key: str | None) -> DeltaGenerator:
    """A box of controls headed by ``key``'s text: for students under that heading in the
    sidebar, beside the chart they move; on a slide a closed expander (the slide keeps its
    room)."""
    label = ctx.t(key) if key else ""
    if ctx.presenter:
        return _slide_box(st.container(), label)
    if label:
        ctx.controls.markdown(f"**{label}**")
    return ctx.controls


def _slide_box(place: DeltaGenerator, label: str) -> DeltaGenerator:
    """A slide's closed box of controls at ``place``, marked (``ui.shell.SLIDE_BOX``) for the
    presenter's style and zoom: opened, its controls stand side by side in rows and the
    slide shrinks as much as it must, so the step's chart stays on the slide."""
    box = place.expander(label, icon=":material/tune:")
    box.html(f'<span class="{SLIDE_BOX}"></span>')
    return box


@dataclass(frozen=True)
class _Frame:
    """The places of a step on screen. Students: the chart (with ``aside`` beside it), the
    text (the page's introduction on the first step, the heading, the step's own), the
    notes, one below the other (``text_first``: the text above the chart). A slide: the
    text, then the chart and the notes side by side (or, ``stacked``, one below the other).
    ``slots`` are where a group's controls go on a slide (``rows``: a horizontal row in a
    slot, made by :meth:`row`)."""

    lead: DeltaGenerator
    figure: DeltaGenerator
    below: DeltaGenerator
    aside: DeltaGenerator
    notes: DeltaGenerator
    slots: dict[str, DeltaGenerator]
    head: DeltaGenerator | None = None  # students: below what to try, above the chart
    rows: dict[str, DeltaGenerator] = field(default_factory=dict)

    def row(self, place: str) -> DeltaGenerator:
        """The one row at ``place`` (made when first asked for) where the groups with
        ``row`` set go side by side."""
        if place not in self.rows:
            self.rows[place] = self.slots[place].container(horizontal=True, gap="medium")
        return self.rows[place]

    @staticmethod
    def make(
        ctx: PageContext, step: Step, index: int, words: Words, strip: bool = True
    ) -> "_Frame":
        """Lay out ``step`` (the page's ``index``-th) and write its heading and, for
        students, the strip with what to try on it (``strip``: the first step on screen;
        a page whose steps stand one below the other, /homework, has one strip, on top)."""
        first, head = index == 0, None
        if ctx.presenter:  # the step bar names the step (``titled``: a heading too); the text
            # is not wrapped (a wrapper of empty places still takes a gap on the slide)
            if step.titled:
                st.subheader(step.label(ctx, words))
            lead, below_lead = st.container(), st.container()
            if step.stacked:
                column, side = st.container(), st.container()
            else:
                column, side = st.columns([step.share, 1 - step.share])
        else:
            if strip:  # what to try, then (View.notice) the first thing to notice
                box = st.container(key=f"step_head_{index}")
                box.markdown(f":material/touch_app: {step.instruction(ctx, words)}")
                head = box.container()
            column, top, side = st.container(), st.container(), st.container()
            if step.text_first:
                top, column = column, top
            if step.box:  # over the step's controls in the sidebar
                ctx.controls.markdown(f"**{ctx.t(step.box)}**")
            with top:
                if first:
                    st.markdown(ctx.t(f"{ctx.page}.intro", **words))
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
        return _Frame(lead, figure, below, beside or top_notes, notes, slots, head)
