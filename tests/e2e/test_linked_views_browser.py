"""Linked views in Chromium: pointing at a cell of one panel outlines its row or its column
in every panel of the chart (heatmap's ``link``): on /multi_head's grid of heads the query's
row (``"rows"``), on /encoder's layer × head overview the key token's column (``"cols"``:
the same token in every layer and head; a row there is a head number, unrelated from one
layer to the next), in English and Chinese, on a student's laptop (a canvas) and on a
lecturer's slide (SVG). A click pins the outline after the pointer leaves; a second click on
it, or a click beside the cells, lets it go. Nothing else on the chart changes.

The outline is found in the chart's pixels, so the same test reads a canvas and an SVG:
the panels are the blocks of the blues colour scheme's cells, and a panel is outlined when
it holds pixels of :data:`ui.charts.specs.LINK_COLOR`, the one red on these charts.
"""

import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Locator, Page

from tests.conftest import wait_until
from tests.e2e.conftest import Server, no_error_on_screen, shot, wait_idle
from ui.charts.specs import LINK_COLOR

LAPTOP, SLIDE = (1366, 768), (1920, 1080)
CHART = '[data-testid="stMain"] [data-testid="stVegaLiteChart"] .marks'
AWAY = (1, 1)  # where the pointer rests off the chart (the window's top-left corner)
NEAR = 1  # px around an outline where its edges blend into the cells
# Vega's tooltip shows what the pointer is on and covers part of the panels: hidden here,
# where the panels' pixels are counted (the tooltip is not what this file tests).
NO_TOOLTIP = "#vg-tooltip-element { visibility: hidden !important; }"
RED = tuple(int(LINK_COLOR[k : k + 2], 16) for k in (1, 3, 5))


@dataclass(frozen=True)
class View:
    """A page's step whose chart links its rows or columns (``link``): how many rows and
    columns a panel has, how many of its panels are linked and how many others it draws
    (/encoder's layer means: another chart)."""

    path: str
    link: str  # "rows" or "cols"
    rows: int
    cols: int
    linked: int
    others: int = 0


# /multi_head with 8 heads: 9 panels (their average the last) in two or three rows of
# panels, each panel's rows the queries of "The cat sat on the mat" / "猫坐在垫子上"
# (6 tokens). /encoder's overview of the query "it" / "它": a panel per layer (MiniLM 6,
# multilingual-e5 12), a row per head (12), a column per token of the sentence (MiniLM 16,
# e5 14, their special tokens included).
VIEWS = {
    ("multi_head", "en"): View("/multi_head?lang=en&step=2&heads=8", "rows", 6, 6, 9),
    ("multi_head", "zh"): View("/multi_head?lang=zh&step=2&heads=8", "rows", 6, 6, 9),
    ("encoder", "en"): View("/encoder?lang=en&step=2", "cols", 12, 16, 6, others=1),
    ("encoder", "zh"): View("/encoder?lang=zh&step=2", "cols", 12, 14, 12, others=1),
}


@dataclass(frozen=True)
class Panel:
    """A panel's cells in px of the chart: rows ``top:bottom``, columns ``left:right``."""

    top: int
    bottom: int
    left: int
    right: int


def _runs(filled: np.ndarray, gap: int = 4, least: int = 30) -> list[tuple[int, int]]:
    """The stretches ``(start, end)`` where ``filled`` (1-D) is true, bridging gaps up to
    ``gap`` (the white lines between cells) and keeping those at least ``least`` long (not
    a colour legend's bar)."""
    runs: list[list[int]] = []
    for k in np.flatnonzero(filled):
        if runs and k - runs[-1][1] <= gap:
            runs[-1][1] = int(k) + 1
        else:
            runs.append([int(k), int(k) + 1])
    return [(a, b) for a, b in runs if b - a >= least]


def _cells(img: np.ndarray) -> np.ndarray:
    """Where the pixels are cells of the blues scheme (#cfe1f2 … #0a4a90): bluer than red."""
    r, b = img[..., 0], img[..., 2]
    return (b - r > 25) & (b > 120)


def _red(img: np.ndarray) -> np.ndarray:
    """Where the pixels are the outline's colour (its edges blend into the cells)."""
    return np.abs(img - np.array(RED)).max(axis=-1) < 60


def panels(img: np.ndarray) -> list[Panel]:
    """The blocks of cells, column by column of panels."""
    cells = _cells(img)
    found = []
    for left, right in _runs(cells.any(axis=0)):
        for top, bottom in _runs(cells[:, left:right].any(axis=1)):
            # a block's own columns: a narrower block below a wider one (the layer means)
            cols = _runs(cells[top:bottom, left:right].any(axis=0))
            found += [Panel(top, bottom, left + a, left + b) for a, b in cols]
    return found


def outlined(img: np.ndarray, found: list[Panel], link: str) -> list[tuple[int, int] | None]:
    """For each panel, the px (from its top, or its left for ``link="cols"``) of the
    outlined band, or None without one."""
    red = _red(img)
    axis = 1 if link == "rows" else 0  # a row's red runs across the panel, a column's down
    out = []
    for p in found:
        lines = np.flatnonzero(red[p.top : p.bottom, p.left : p.right].sum(axis=axis) > 2)
        out.append((int(lines.min()), int(lines.max())) if lines.size else None)
    return out


def _near(mask: np.ndarray, px: int) -> np.ndarray:
    """``mask`` grown by ``px`` pixels in every direction."""
    grown = mask.copy()
    for dy in range(-px, px + 1):
        for dx in range(-px, px + 1):
            grown |= np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    return grown


@dataclass(frozen=True)
class Chart:
    """The step's chart on screen: its marks (a canvas or an SVG) and where they are."""

    page: Page
    marks: Locator

    def box(self) -> dict:
        """Where the chart is in the window, in CSS px (``x``, ``y``, ``width``, ``height``)."""
        box = self.marks.bounding_box()
        assert box is not None
        return box

    def pixels(self) -> np.ndarray:
        """The chart as drawn now, RGB, one entry per CSS px (the window's scale is 1)."""
        png = self.page.screenshot(clip=self.box())
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)

    def at(self, panel: Panel, view: View) -> tuple[float, float]:
        """The window's px of the middle of the middle cell of ``panel`` (``view``'s rows
        and columns)."""
        box = self.box()
        y = panel.top + (view.rows // 2 + 0.5) * (panel.bottom - panel.top) / view.rows
        x = panel.left + (view.cols // 2 + 0.5) * (panel.right - panel.left) / view.cols
        return box["x"] + x, box["y"] + y

    def wait_for(self, what: str, condition: Callable[[np.ndarray], bool]) -> np.ndarray:
        """The chart's pixels once ``condition(pixels)`` holds (Vega draws a moment after
        the pointer's event)."""
        seen = []

        def drawn() -> bool:
            seen.append(self.pixels())
            return condition(seen[-1])

        wait_until(drawn, what, 20, pause=lambda s: self.page.wait_for_timeout(s * 1000))
        return seen[-1]


def _open(server: Server, open_app, view: View, slide: bool) -> Chart:
    width, height = SLIDE if slide else LAPTOP
    path = view.path + ("&present=1" if slide else "")
    page = open_app(server, path, width, height)
    page.wait_for_selector(CHART, state="visible", timeout=240_000)  # a model loads first
    wait_idle(page)
    page.add_style_tag(content=NO_TOOLTIP)
    marks = page.locator(CHART).first
    marks.scroll_into_view_if_needed()
    page.mouse.move(*AWAY)
    return Chart(page, marks)


@pytest.mark.parametrize("slide", [False, True], ids=["laptop", "slide"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page_id", ["multi_head", "encoder"])
def test_pointing_at_a_cell_outlines_its_row_or_column_in_every_panel_and_a_click_pins_it(
    server, open_app, page_id: str, lang: str, slide: bool
) -> None:
    view = VIEWS[page_id, lang]
    chart = _open(server, open_app, view, slide)
    name = f"linked_{page_id}_{lang}_{'slide' if slide else 'laptop'}"
    before = chart.pixels()
    found = panels(before)
    assert len(found) == view.linked + view.others, found

    def bands(img: np.ndarray) -> list[tuple[int, int] | None]:
        return outlined(img, found, view.link)

    assert bands(before) == [None] * len(found), "no outline before pointing"

    def all_outlined(img: np.ndarray) -> bool:
        return sum(map(bool, bands(img))) == view.linked

    top_left = min(found, key=lambda p: p.top + p.left)  # a linked panel: L0 on /encoder
    cell = chart.at(top_left, view)
    chart.page.mouse.move(*cell)
    pointed = chart.wait_for(f"the {view.link} outlined in every linked panel", all_outlined)
    seen = bands(pointed)
    assert seen.count(None) == view.others, "the layer means are not linked"
    first, last = seen[found.index(top_left)]  # the row or column pointed at, in every panel
    box = chart.box()
    at = (
        cell[1] - box["y"] - top_left.top
        if view.link == "rows"
        else cell[0] - box["x"] - top_left.left
    )
    assert first <= at <= last
    assert all(abs(b[0] - first) <= 1 and abs(b[1] - last) <= 1 for b in seen if b), seen
    size = (
        (top_left.bottom - top_left.top) / view.rows,
        (top_left.right - top_left.left) / view.cols,
    )
    band = size[0] if view.link == "rows" else size[1]
    assert last - first <= band + 2, "one row or column, not more"
    red = _red(pointed)
    for p, b in zip(found, seen, strict=True):  # a column runs the panel's height, a row its width
        if b is not None:
            inside = red[p.top : p.bottom, p.left : p.right]
            extent = inside.any(axis=1) if view.link == "cols" else inside.any(axis=0)
            assert extent.mean() > 0.9, "across the whole panel"
    assert panels(pointed) == found, "the panels stay where they were"
    changed = np.abs(pointed - before).max(axis=-1) > 40
    assert not (changed & ~_near(red, NEAR)).any(), "only the outlines are new"
    shot(chart.page, f"{name}_pointed")

    chart.page.mouse.click(*cell)  # pinned: it stays while the lecturer talks
    chart.page.mouse.move(*AWAY)
    pinned = chart.wait_for(f"the pinned {view.link} outlined", all_outlined)
    assert bands(pinned) == seen
    shot(chart.page, f"{name}_pinned")

    def clean(img: np.ndarray) -> bool:
        return not any(bands(img))

    chart.page.mouse.click(*cell)  # a second click on it lets it go
    chart.page.mouse.move(*AWAY)
    chart.wait_for("no outline after a second click", clean)

    chart.page.mouse.click(*cell)
    chart.page.mouse.move(*AWAY)
    chart.wait_for(f"the {view.link} pinned again", all_outlined)
    chart.page.mouse.click(box["x"] + 2, box["y"] + 2)  # beside the cells: let go
    chart.page.mouse.move(*AWAY)
    after = chart.wait_for("no outline after a click beside the cells", clean)
    assert not (np.abs(after - before).max(axis=-1) > 40).any(), "the chart as it was"
    no_error_on_screen(chart.page)
