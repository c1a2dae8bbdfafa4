"""Small repeated page elements: the page header, the "what to notice" box, links to other
pages, folded secondary material and fragments (ui/steps.py lays out a page's steps)."""

from collections.abc import Callable
from dataclasses import replace

import streamlit as st

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
