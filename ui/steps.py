"""Presenter steps: reveal a page one idea at a time, driven by clicker keys.

In presenter mode a page shows only its current step (the others are drawn hidden, so
their controls stay in the URL). Prev/Next buttons answer the keys a presentation clicker
sends (PageUp/PageDown) and the arrow keys; the step lives in the URL (``?step=3``) so a
prepared link opens on the right slide. Outside presenter mode every step is shown, one
below the other, for a student reading alone.

The clicker keys are caught by a small script (:data:`CLICKER_JS`) before any widget sees
them: a slider the lecturer just dragged keeps its focus (and its arrow keys), but
PageDown/PageUp still turn the step. A step taller than the screen is scrolled first:
PageDown shows the rest of it, then moves on. Escape gives the focus back to the page.

The URL is the single source of truth for the step: the buttons' callbacks write
``st.query_params`` directly and the step bar is redrawn from it on every run.
"""

from contextlib import AbstractContextManager
from dataclasses import dataclass

import streamlit as st

from ui.params import Int, check_url
from ui.shell import PageContext

STEP_KEY = "step"
_CHOICE_KEY = "_step_choice"
# Runs once per browser tab (a flag on window), acts only while a presenter step bar is on
# screen. Capture phase on window: it sees the key before the focused widget does.
CLICKER_JS = """
<script>
(() => {
  if (window.__attentionLabClicker) return;
  window.__attentionLabClicker = true;
  const doc = window.document;
  const main = () => doc.querySelector('[data-testid="stMain"]');
  const press = (name) => {
    const button = doc.querySelector(`.st-key-step_${name} button`);
    if (!button || button.disabled) return;
    const area = main();
    if (area) area.scrollTop = 0;
    button.click();
  };
  window.addEventListener("keydown", (event) => {
    if (!doc.querySelector(".st-key-step_next")) return;  // not presenting
    if (event.key === "Escape") {
      if (doc.activeElement && doc.activeElement !== doc.body) doc.activeElement.blur();
      return;
    }
    if (event.key !== "PageDown" && event.key !== "PageUp") return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (doc.activeElement && doc.activeElement !== doc.body) doc.activeElement.blur();
    const area = main();
    const down = event.key === "PageDown";
    if (area) {
      const page = Math.max(area.clientHeight - 120, 200);
      const rest = area.scrollHeight - area.clientHeight - area.scrollTop;
      if (down && rest > 4) { area.scrollBy({ top: Math.min(page, rest) }); return; }
      if (!down && area.scrollTop > 4) { area.scrollBy({ top: -page }); return; }
    }
    press(down ? "next" : "prev");
  }, true);
})();
</script>
"""


def _go(step: int) -> None:
    st.query_params[STEP_KEY] = str(step)


def _move(delta: int, count: int) -> None:
    current = Int(STEP_KEY, 1, 1, count).parse(st.query_params.get(STEP_KEY, "1")) or 1
    _go(min(max(current + delta, 1), count))


def _picked() -> None:
    _go(int(st.session_state[_CHOICE_KEY]))


@dataclass(frozen=True)
class Steps:
    """Which of a page's steps to draw on this run."""

    current: int  # 0-based index of the step on screen (presenter mode)
    presenter: bool

    def show(self, index: int) -> bool:
        """Whether the step ``index`` (0-based) is the one on screen (always, for students)."""
        return not self.presenter or index == self.current

    def host(self, *indices: int) -> int:
        """Of the steps ``indices`` that share a control, the one that draws it: the step on
        screen when it is one of them (presenter mode), else the first."""
        return self.current if self.presenter and self.current in indices else indices[0]

    def section(self, index: int) -> AbstractContextManager:
        """The container for step ``index``: ``with steps.section(1): ...``.

        In presenter mode the other steps are still drawn, inside hidden containers, so
        their controls stay bound to the URL: a link copied on any step restores them all.
        """
        if self.show(index):
            return st.container()
        return st.container(key=f"hidden_step_{index}")


def stepper(ctx: PageContext, titles: list[str]) -> Steps:
    """Draw the step bar (presenter mode only) and return which steps to show."""
    if not ctx.presenter:
        return Steps(0, presenter=False)
    count = len(titles)
    spec = Int(STEP_KEY, 1, 1, count)
    check_url(ctx, spec)
    current = spec.parse(st.query_params.get(STEP_KEY, "1")) or 1
    _go(current)
    prev_col, bar_col, next_col = st.columns([1.3, 7.4, 1.3], vertical_alignment="center")
    with prev_col:
        st.button(
            ctx.t("steps.prev"),
            key="step_prev",  # PageUp (see CLICKER_JS)
            on_click=_move,
            args=(-1, count),
            icon=":material/chevron_left:",
            width="stretch",
            disabled=current == 1,
        )
    with next_col:
        st.button(
            ctx.t("steps.next"),
            key="step_next",  # PageDown (see CLICKER_JS)
            on_click=_move,
            args=(1, count),
            icon=":material/chevron_right:",
            icon_position="right",
            width="stretch",
            type="primary",
            disabled=current == count,
        )
    with bar_col:
        st.session_state[_CHOICE_KEY] = str(current)
        st.segmented_control(
            ctx.t("steps.label"),
            [str(i) for i in range(1, count + 1)],
            format_func=lambda s: f"{s} · {titles[int(s) - 1]}",
            key=_CHOICE_KEY,
            on_change=_picked,
            required=True,
            label_visibility="collapsed",
        )
    with st.container(key="arrow_keys"):  # hidden by CSS; only their shortcuts matter
        st.button("←", on_click=_move, args=(-1, count), shortcut="Left")
        st.button("→", on_click=_move, args=(1, count), shortcut="Right")
        st.html(CLICKER_JS, unsafe_allow_javascript=True)
    return Steps(current - 1, presenter=True)
