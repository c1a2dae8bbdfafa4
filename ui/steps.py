"""Presenter steps: reveal a page one idea at a time, driven by clicker keys.

In presenter mode a page shows only its current step. Prev/Next buttons answer the keys a
presentation clicker sends (PageUp/PageDown) and the arrow keys; the step lives in the URL
(``?step=3``) so a prepared link opens on the right slide. Outside presenter mode every
step is shown, one below the other, for a student reading alone.
"""

from dataclasses import dataclass

import streamlit as st

from ui.params import Choice, select
from ui.shell import PageContext

STEP_KEY = "step"


def _move(delta: int, count: int) -> None:
    current = int(st.session_state.get(STEP_KEY) or 1)
    st.session_state[STEP_KEY] = str(min(max(current + delta, 1), count))


@dataclass(frozen=True)
class Steps:
    """Which of a page's steps to draw on this run."""

    current: int  # 0-based index of the step on screen (presenter mode)
    presenter: bool

    def show(self, index: int) -> bool:
        """Whether the step ``index`` (0-based) is drawn on this run."""
        return not self.presenter or index == self.current


def stepper(ctx: PageContext, titles: list[str]) -> Steps:
    """Draw the step bar (presenter mode only) and return which steps to show."""
    if not ctx.presenter:
        return Steps(0, presenter=False)
    count = len(titles)
    spec = Choice(STEP_KEY, "1", tuple(str(i) for i in range(1, count + 1)))
    prev_col, bar_col, next_col = st.columns([1, 6, 1], vertical_alignment="bottom")
    with prev_col:
        st.button(
            ctx.t("steps.prev"),
            on_click=_move,
            args=(-1, count),
            shortcut="PageUp",
            icon=":material/chevron_left:",
            width="stretch",
        )
    with next_col:
        st.button(
            ctx.t("steps.next"),
            on_click=_move,
            args=(1, count),
            shortcut="PageDown",
            icon=":material/chevron_right:",
            icon_position="right",
            width="stretch",
            type="primary",
        )
    with bar_col:
        current = int(select(ctx, spec, ctx.t("steps.label"), label_visibility="collapsed")) - 1
    with st.container(key="arrow_keys"):  # hidden by CSS; only their shortcuts matter
        st.button("←", on_click=_move, args=(-1, count), shortcut="Left")
        st.button("→", on_click=_move, args=(1, count), shortcut="Right")
    st.markdown(f"#### {ctx.t('steps.heading', i=current + 1, n=count, title=titles[current])}")
    return Steps(current, presenter=True)
