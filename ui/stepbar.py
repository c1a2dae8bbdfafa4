"""The step bar: a page shows one idea at a time, in presenter mode and for students alike.

A page's steps are drawn one at a time: a step bar (Back, the numbered steps, Next) picks
the step on screen, and the step lives in the URL (``?step=3``) so a prepared link opens on
the right slide and a student's link on the right step. Only the step on screen draws its
charts and text: a slider then redraws one step, not the whole page (a student moving
d_model on /qkv used to redraw four strips of heatmaps, three of them off screen). The
other steps draw only their controls, in hidden containers, so every control stays in the
URL: a link copied on any step restores them all. A tool page read top to bottom (the
homework checker) may stack its steps for students instead.

In presenter mode the clicker keys are caught by a small script (:data:`CLICKER_JS`) before
any widget sees them: a slider the lecturer just dragged keeps its focus (and its arrow
keys), but PageDown/PageUp still turn the step. A step taller than the screen is scrolled
first: PageDown shows the rest of it, then moves on. On a page's last step Next (and
PageDown) opens the next page's first step, on its first step Back (and PageUp) the previous
page's last step (``?step=last``), in the navigation's order: the clicker walks the whole
lecture. Escape gives the focus back to the page. A student's keys keep their usual meaning.

The URL is the single source of truth for the step: the buttons' callbacks write
``st.query_params`` directly and the step bar is redrawn from it on every run.
"""

from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.blocks import carried
from ui.context import PageContext
from ui.pages import PageInfo, lesson_pages
from ui.params import Int, check_url

STEP_KEY = "step"
_CHOICE_KEY = "_step_choice"
# Runs once per browser tab (a flag on window), acts only while a presenter step bar is on
# screen (the arrow-key buttons are drawn only then). Capture phase on window: it sees the
# key before the focused widget does.
CLICKER_JS = """
<script>
(() => {
  if (window.__attentionLabClicker) return;
  window.__attentionLabClicker = true;
  const doc = window.document;
  const main = () => doc.querySelector('[data-testid="stMain"]');
  const press = (name) => {
    // a button on the page, or on a page's last (first) step a link to the next (previous) page
    const button = doc.querySelector(`.st-key-step_${name} button, .st-key-step_${name} a`);
    if (!button || button.disabled) return;
    const area = main();
    if (area) area.scrollTop = 0;
    button.click();
  };
  window.addEventListener("keydown", (event) => {
    if (!doc.querySelector(".st-key-arrow_keys")) return;  // not presenting
    if (event.key === "Escape") {
      if (doc.activeElement && doc.activeElement !== doc.body) doc.activeElement.blur();
      return;
    }
    const arrow = event.key === "ArrowRight" || event.key === "ArrowLeft";
    if (arrow && (!doc.activeElement || doc.activeElement === doc.body)) {
      // the arrow keys' own buttons step within a page; at either end they go on here
      const link = doc.querySelector(
        `.st-key-step_${event.key === "ArrowRight" ? "next" : "prev"} a`);
      if (link) { event.preventDefault(); event.stopImmediatePropagation(); link.click(); }
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


LAST = "last"  # ?step=last: a page's last step (where PageUp from the next page lands)


def neighbours(page: str) -> tuple[PageInfo | None, PageInfo | None]:
    """The pages before and after ``page`` in the navigation's order (None at either end)."""
    pages = lesson_pages()
    i = [p.id for p in pages].index(page)
    return (pages[i - 1] if i > 0 else None), (pages[i + 1] if i + 1 < len(pages) else None)


def _page_button(ctx: PageContext, target: PageInfo, forward: bool) -> None:
    """On a page's last (first) step, Next (Back) leads to the next (previous) page's first
    (last) step, saying where: the clicker walks a whole lecture, and a student who reached
    the end of a page finds the next one."""
    name = ctx.t(f"nav.{target.id}")
    # A slide names just the page (the chevron says which way): one line beside the bar.
    label = name if ctx.presenter else ctx.t(f"steps.{('prev', 'next')[forward]}_page", page=name)
    st.page_link(
        target.file,
        label=label,
        icon=":material/chevron_right:" if forward else ":material/chevron_left:",
        icon_position="right" if forward else "left",
        query_params={**carried(ctx.lang, ctx.presenter), STEP_KEY: "1" if forward else LAST},
        width="stretch",
    )


def _turn(ctx: PageContext, page: PageInfo | None, current: int, count: int, forward: bool) -> None:
    """Next (``forward``) or Back: a button to the next (previous) step, or where the bar
    passes a page's end a link to the ``page`` beyond it (:func:`_page_button`). Its key is
    the one the clicker presses: PageDown or PageUp (see :data:`CLICKER_JS`)."""
    key = "step_next" if forward else "step_prev"
    if page:
        with st.container(key=key):
            _page_button(ctx, page, forward)
        return
    st.button(
        ctx.t(f"steps.{('prev', 'next')[forward]}"),
        key=key,
        on_click=_move,
        args=(1 if forward else -1, count),
        icon=":material/chevron_right:" if forward else ":material/chevron_left:",
        icon_position="right" if forward else "left",
        width="stretch",
        type="primary" if forward else "secondary",
        disabled=current == (count if forward else 1),
    )


def _go(step: int) -> None:
    st.query_params[STEP_KEY] = str(step)


def _move(delta: int, count: int) -> None:
    current = Int(STEP_KEY, 1, 1, count).parse(st.query_params.get(STEP_KEY, "1")) or 1
    _go(min(max(current + delta, 1), count))


def _picked() -> None:
    _go(int(st.session_state[_CHOICE_KEY]))


@dataclass(frozen=True)
class Steps:
    """Which of a page's steps is on screen on this run."""

    current: int | None  # 0-based index of the step on screen; None: all, stacked
    # where the steps off screen keep their hidden controls: for students the sidebar, where
    # the step on screen has its own (the main area then holds only what is seen); None: in
    # place (presenter mode)
    hidden_in: DeltaGenerator | None = None

    def show(self, index: int) -> bool:
        """Whether the step ``index`` (0-based) is on screen."""
        return self.current is None or index == self.current


def stepper(ctx: PageContext, titles: list[str], stacked: bool = False) -> Steps:
    """Draw the step bar and return which step is on screen.

    ``stacked``: students see every step, one below the other, and no step bar. For a tool
    read top to bottom (the homework checker: an upload and its verdict on one screen);
    presenter mode still shows one step at a time.
    """
    if stacked and not ctx.presenter:
        return Steps(None)
    count = len(titles)
    spec = Int(STEP_KEY, 1, 1, count)
    if st.query_params.get(STEP_KEY) == LAST:
        _go(count)
    check_url(ctx, spec)
    current = spec.parse(st.query_params.get(STEP_KEY, "1")) or 1
    _go(current)
    before, after = neighbours(ctx.page)
    before = before if current == 1 else None
    after = after if current == count else None
    widths = [2.0 if before else 1.3, 6.4, 2.0 if after else 1.3]
    prev_col, bar_col, next_col = st.columns(widths, vertical_alignment="center")
    with prev_col:
        _turn(ctx, before, current, count, forward=False)
    with next_col:
        _turn(ctx, after, current, count, forward=True)
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
    if ctx.presenter:  # a clicker and the arrow keys turn the slides
        with st.container(key="arrow_keys"):  # hidden by CSS; only their shortcuts matter
            st.button("←", on_click=_move, args=(-1, count), shortcut="Left")
            st.button("→", on_click=_move, args=(1, count), shortcut="Right")
            st.html(CLICKER_JS, unsafe_allow_javascript=True)
    return Steps(current - 1, None if ctx.presenter else ctx.controls)
