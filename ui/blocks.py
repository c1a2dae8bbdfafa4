"""Small repeated page elements: the page header, the "what to notice" box, links to other
pages, the two-column step layout and its chart's room, folded secondary material and
fragments."""

from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import charts
from ui.context import PageContext
from ui.pages import available_pages, page_info


def header(ctx: PageContext, **values: object) -> None:
    """The page title (``<page>.title``, with ``values`` filled in). The introduction comes
    below the first step's chart: :func:`intro`."""
    st.title(ctx.t(f"{ctx.page}.title", **values))


def notice(ctx: PageContext, items: list[str]) -> None:
    """The "what to notice" box: the two or three things a lecturer would point at."""
    with st.container(border=True):
        st.markdown(f"**:material/lightbulb: {ctx.t('blocks.notice')}**")
        st.markdown("\n".join(f"- {item}" for item in items))


def link(ctx: PageContext, page_id: str, label: str | None = None) -> None:
    """A link to another page that keeps the language and presenter mode; nothing if that
    page does not exist yet."""
    info = page_info(page_id)
    if info not in available_pages():
        return
    st.page_link(
        info.file,
        label=label or ctx.t(f"nav.{page_id}"),
        icon=info.icon,
        query_params=carried(ctx.lang, ctx.presenter),
    )


def carried(lang: str, presenter: bool) -> dict[str, str]:
    """What a link to another page carries in its URL: the language and presenter mode."""
    return {"lang": lang, **({"present": "1"} if presenter else {})}


def beside(ctx: PageContext, share: float = 0.6) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Where a step's chart and its notes go: side by side in presenter mode (the chart
    column ``share`` of the width; the slide keeps to one screen), one below the other for
    students."""
    if ctx.presenter:
        chart_col, notes_col = st.columns([share, 1 - share])
        return chart_col, notes_col
    return st.container(), st.container()


def heading(ctx: PageContext, title: str) -> None:
    """A step's heading, for students; in presenter mode the step bar already names it."""
    if not ctx.presenter:
        st.subheader(title)


def folded(
    ctx: PageContext, label: str, key: str, draw: Callable[[], None], icon: str | None = None
) -> None:
    """Secondary material of a step (a table, a long formula, a side note): ``draw()`` in
    place for students; on the projector in a closed expander whose content is drawn only
    once it is opened (:func:`lazy_box`), so a slide pays nothing for it."""
    if not ctx.presenter:
        draw()
        return
    lazy_box(label, key, draw, icon)


def lazy_box(label: str, key: str, draw: Callable[[], None], icon: str | None = None) -> None:
    """A closed expander whose content is drawn only once it is opened (opening it reruns
    the page): what it holds costs a page nothing until a reader asks for it, including the
    frontend code it needs (the code viewer alone is 1.5 MB of JavaScript to load).

    Never for controls: a widget inside a closed lazy box is not drawn, so it would drop out
    of the URL.
    """
    box = st.expander(label, icon=icon, key=f"fold_{key}", on_change="rerun")
    if box.open:
        with box:
            draw()


def fragment(ctx: PageContext, draw: Callable[[PageContext], None], on_screen: bool = True) -> None:
    """Run ``draw(ctx)`` as a fragment: a control inside it reruns only ``draw``.

    A page runs its whole content (everything below the step bar) this way, so a slider
    never reruns the shell, the header and the step bar; a step with a control of its own
    can be one more fragment inside it. ``draw`` gets its own slot for warnings at its top
    (``ctx.notices``): a fragment rerun may not write into the shell's, so a bad value typed
    into a box inside still shows its warning, once, above the content.

    A step's fragment off screen (``on_screen=False``) sits in a hidden container, and its
    hidden controls cannot rerun it: it runs only as part of a larger run, which may write
    to the enclosing slot. So it keeps ``ctx.notices``, and a bad URL value of one of its
    controls is reported where the reader looks instead of inside the hidden step.
    """
    _fragment(ctx, draw, on_screen)


@st.fragment
def _fragment(ctx: PageContext, draw: Callable[[PageContext], None], on_screen: bool) -> None:
    draw(replace(ctx, notices=st.container()) if on_screen else ctx)


@dataclass(frozen=True)
class Frame:
    """Where a step's parts go. On a slide: its lead text on top, then the chart and its
    notes side by side (the step fits one screen). For students, chart first: the chart,
    then the lead text, then the notes, one below the other, so the chart is on the first
    screen with the sidebar's controls that change it."""

    lead: DeltaGenerator  # the step's explanation
    chart: DeltaGenerator
    notes: DeltaGenerator  # what to notice, captions, exports


def frame(ctx: PageContext, share: float = 0.6, stacked: bool = False) -> Frame:
    """The :class:`Frame` of a step. Presenter mode gives the chart ``share`` of the width,
    its notes beside it; ``stacked``: on a slide too the lead, the chart (at the full width,
    for a chart that needs it) and the notes one below the other."""
    if ctx.presenter:
        lead = st.container()
        if stacked:
            return Frame(lead, st.container(), st.container())
        chart, notes = st.columns([share, 1 - share])
        return Frame(lead, chart, notes)
    chart = st.container()
    lead = st.container()
    return Frame(lead, chart, st.container())


def frame_room(
    ctx: PageContext, share: float, height: int | None = None, student: int | None = None
) -> charts.Room:
    """The room of the chart in a step's :func:`frame` (``frame(ctx, share)``): on a slide
    its column, ``share`` of the width and at most ``height`` px tall; for students the
    page width, at most ``student`` px tall (default :data:`ui.charts.PAGE_HEIGHT`)."""
    if ctx.presenter:
        return charts.room(ctx, share, height)
    return charts.room(ctx, 1.0, student)


def intro(ctx: PageContext, **values: object) -> None:
    """The page's one-paragraph introduction (``<page>.intro``), for students on the first
    step, below its chart (the title and the chart come first on a laptop's screen)."""
    if not ctx.presenter:
        st.markdown(ctx.t(f"{ctx.page}.intro", **values))
