"""How big a chart is drawn: the room the page's layout gives it, and the chart fitted to it.

How one chart is sized, in order (the numbers are this module's constants):

1. **The room.** The page asks :func:`room` for the px its chart may take, a :class:`Room`.
   Students: ``share`` × :data:`PAGE_WIDTH` (820, the main column of a 1280 × 720 laptop
   with the sidebar open) wide and at most :data:`PAGE_HEIGHT` (480, what a 1280 × 720
   laptop leaves below the title and the step bar) high; a chart keeps its own size when
   it fits. Presenter mode: ``share`` × :data:`PRESENTER_WIDTH` (1660) by ``height`` or
   :data:`PRESENTER_HEIGHT` (520), with ``grow``: a smaller chart grows to fill the room.
   ``share=0.5`` is one of two equal columns.
2. **The builder's own sizes.** A builder (:mod:`ui.charts.specs`) sizes its views before
   any room is known, and these sizes decide the spec: a heatmap's cells are ``cell`` px,
   by default :func:`fit_cell` of the matrix in ~420 × 420 px (12..56 px); a matrix
   strip's cells fit :data:`PAGE_WIDTH` (:data:`PRESENTER_WIDTH` on a projector) less 80
   px (100) per matrix for its axis and legend, 10..26 px (34); bars, lines and
   histograms have a ``width`` and ``height`` of their own. Cells come in steps of
   :data:`LADDER`, so a slightly different shape keeps the spec and the browser only swaps
   the data.
3. **Themed.** :func:`ui.charts.drawing.to_spec` adds the house config, whose axis font
   (12 px, 19 on a projector) the estimate reads.
4. **Fitted** (:func:`fit`; ``show_cached`` keeps the result per chart, input and room):

   a. facets get the order of their data and their y title beside the axis
      (:func:`_fixed_facets`);
   b. the chart as built is one candidate layout. If it would have to shrink below
      :data:`WRAP_BELOW` (0.75) of its size, wrapped layouts join the candidates
      (:func:`_wrapped`): its side-by-side parts or facet panels in every number of
      columns that gives another number of rows, or, for a stack, each part wrapped to
      the room's width / 0.75. If the room has a height and the chart is a stack of
      parts, the parts side by side join too (a wide, low projector);
   c. each candidate gets its scale (5.), the largest scale wins (a tie: the earlier
      candidate, so a chart is wrapped only when that draws it larger);
   d. :func:`scaled` multiplies the winner's view widths and heights (and steps, to 0.1
      px), pixel positions and mark fonts (whole px within 11..28) by the scale, and drops
      cell numbers whose font would fall below :data:`MIN_CELL_FONT`; a band axis whose step
      shrinks below 16 px skips labels that would touch (:func:`_crowded`); a scale within
      3 % of 1 leaves the chart as it is.
5. **The scale of one layout** (:func:`_scale_for`). This is why the size estimate
   (:func:`ui.charts.estimate.extent`) runs more than once per chart:

   - Axes, legends and titles keep their size while the views scale, so without the
     widths of the title texts the estimated size is linear in the scale ``f``:
     ``w(f) = w(1) + (f − 1) · (w(2) − w(1))``. The estimate runs at ``f = 1`` and
     ``f = 2`` (``titles=False``), and ``f`` is solved for the room's width (when the
     chart is too wide, or the room grows it) and for its height (when the room has one
     and the chart is too high, or grows); the smaller wins, clipped to
     :data:`MIN_SHRINK` (0.45) .. 1, or .. :data:`MAX_GROWTH` (2.2) when growing.
   - A title wider than its view widens the chart, and not linearly: the estimate runs
     again with the titles, at ``f``. Students: ``f`` ≥ 1 becomes 1 (a chart that fits
     keeps its size), a smaller ``f`` goes down to a step of :data:`LADDER`
     (:func:`on_ladder`), and while the chart with its titles is more than 1 px wider
     than the room, one step further down (unless it would be too wide even at
     :data:`MIN_SHRINK`: then the title sticks out instead). Presenter mode: if the
     titles make it too wide, 8 steps of bisection between :data:`MIN_SHRINK` and ``f``
     find the largest scale that fits.
   - So a layout costs 3 estimates when it fits (``f = 1``, ``f = 2``, the titles at
     ``f``), plus one per step down the ladder or 10 for a bisection, and a chart one such
     set per candidate layout: measured, a 6 × 6 heatmap 3 estimates, a 40 × 40 one 6, a
     strip of three d_model = 64 matrices 10, two stacked rows of facets 11. An estimate
     walks the spec, not the cells: a dataset's labels are read once per :func:`fit`
     (:func:`ui.charts.estimate.remembering`).

Every spec here gives its views' sizes in px and lets Vega-Lite add the axes, legends and
titles around them (``autosize: pad``, :func:`ui.charts.drawing.to_spec`): the estimate
predicts that total, which Vega-Lite knows only once it draws.

**Why predict, when Vega-Lite can size a chart itself.** It can, but only for some charts
(Vega-Lite's "Customizing Size" page, and its ``normalizeAutoSize``): ``width:
"container"`` makes a view as wide as the element around it, and ``autosize: "fit"``
(``"fit-x"``, ``"fit-y"``; a container width implies ``"fit-x"``) shrinks the plotting
area so that axes, legends and titles fit a total size. Both work for a single view or a
layer only: for ``facet``, ``hconcat``, ``vconcat``, ``concat`` and ``repeat`` Vega-Lite
drops a container width and turns ``fit`` into ``pad``, with a warning; and an axis sized
per discrete ``step`` keeps its step, fit or not. Here that rules out the heatmaps (cells
sized by ``{"step": cell}``, several panels as a facet), the matrix strips and every chart
of side-by-side or stacked parts (/kv_cache's cost panels, /scaling's variance and
saturation charts, /training's curves and probe); and how many parts go in a row
(Vega-Lite wraps after a given number of ``columns``, never by width) needs the predicted
widths too. What could size itself are the single
views on continuous or bar axes, such as home's path-length lines, /scaling's gradient
curve, /decoder's timing chart and top-10 bars. They keep the estimate as well, as a
container width would replace only half of it: the height must still fit the room (and
grow with the width on a slide, :data:`MAX_GROWTH`), the element would have to stretch
(``st.vega_lite_chart(width="stretch")``: Streamlit's frontend then sets the width) and
the exports, drawn by vl-convert where there is no container, would fall back to a
default width (300 px) unless given the px width that the estimate computes anyway.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ui.charts.estimate import data_rows, distinct, extent, remembering
from ui.context import PageContext

# The room a chart may take, in CSS px. Normal mode: the main column of a 1280 x 720 laptop
# with the sidebar open (~820 px; 1366 x 768 gives ~905, 1920 simply has room to spare).
# Presenter mode: a 1920 x 1080 projector with the sidebar closed (~1700 px), and a height
# that leaves the step's title, a line of text and the "what to notice" box on screen.
PAGE_WIDTH = 820
# Students: the height left on a 1280 x 720 laptop below the title and the step bar, so a
# chart is on the first screen together with the sidebar's controls that change it.
PAGE_HEIGHT = 480
PRESENTER_WIDTH = 1660
PRESENTER_HEIGHT = 520
MAX_GROWTH = 2.2  # presenter mode: a small chart grows at most this much…
MIN_SHRINK = 0.45  # …and a large one shrinks at most this much (then it scrolls in its box)
WRAP_BELOW = 0.75  # a chart that would have to shrink below this wraps its parts into rows
# No chart text below this many px (a student's laptop): cell numbers that would be smaller
# are left out (the tooltip still gives them), other mark text is drawn at least this large
MIN_CELL_FONT = 11


@dataclass(frozen=True)
class Room:
    """The px a chart may take: ``width``, ``height`` (None: any), and whether a smaller chart
    grows into it (presenter mode) or keeps its own size."""

    width: int
    height: int | None = None
    grow: bool = False


def room(ctx: PageContext, share: float = 1.0, height: int | None = None) -> Room:
    """The :class:`Room` for a chart on this page: ``share`` of the page width (``0.5`` in
    one of two equal columns), ``height`` px at most in presenter mode (default
    :data:`PRESENTER_HEIGHT`; pass less on a step with more text). For students at most
    :data:`PAGE_HEIGHT` (their text goes below the chart)."""
    if ctx.presenter:
        return Room(int(PRESENTER_WIDTH * share), height or PRESENTER_HEIGHT, grow=True)
    return Room(int(PAGE_WIDTH * share), min(height or PAGE_HEIGHT, PAGE_HEIGHT))


def fit(spec: Mapping, space: Room) -> dict:
    """``spec`` laid out for ``space``: side-by-side parts and facet panels wrap into rows
    when they are much too wide, stacked parts go side by side when the room is wide and
    low (presenter mode), then the whole chart is scaled (view sizes, cells, cell text)
    down to fit, or up to fill the room when ``space.grow``; facets get a fixed order.
    Sizes are estimated from the spec (axes and legends by rule of thumb)."""
    with remembering():
        return _fit(spec, space)


def _fit(spec: Mapping, space: Room) -> dict:
    datasets = spec.get("datasets", {})
    out = _fixed_facets(spec, datasets)
    layouts = [out]
    as_is = _scale_for(out, space, datasets)
    if as_is < WRAP_BELOW:  # too small if only shrunk
        layouts += _wrapped(out, int(space.width / WRAP_BELOW), datasets)
    if space.height and "vconcat" in out and len(out["vconcat"]) > 1:
        side = {**{k: v for k, v in out.items() if k != "vconcat"}, "hconcat": out["vconcat"]}
        layouts.append(side)
    scales = [as_is] + [_scale_for(layout, space, datasets) for layout in layouts[1:]]
    order = range(0, -len(layouts), -1)  # equal scales: the earlier layout
    f, _, best = max(zip(scales, order, layouts, strict=True), key=lambda x: x[:2])
    if abs(f - 1) < 0.03:  # as built, but without text too small to read
        return scaled(best, 1.0) if _too_small(best) else best
    return scaled(best, f)


def _scale_for(spec: dict, space: Room, datasets: Mapping) -> float:
    """The factor that makes ``spec`` fit ``space`` (or fill it, when ``space.grow``)."""
    # Axes, legends and titles keep their size, so without the title texts' widths the
    # extent is linear in the scale: solve for it.
    w, h = extent(spec, datasets, titles=False)
    w2, h2 = extent(scaled(spec, 2.0), datasets, titles=False)
    f = 1 + (space.width - w) / max(w2 - w, 1) if (w > space.width or space.grow) else 1.0
    if space.height and (space.grow or h > space.height):
        f = min(f, 1 + (space.height - h) / max(h2 - h, 1))
    f = float(np.clip(f, MIN_SHRINK, MAX_GROWTH if space.grow else 1.0))

    def too_wide(g: float) -> bool:
        return extent(scaled(spec, g), datasets)[0] > space.width + 1

    # A title wider than its view widens its part: shrink the views further while that
    # helps (a title wider than the room whatever the scale leaves them be). Shrinking
    # goes down the ladder (see LADDER); growing into a slide's room, by bisection.
    if not space.grow:
        f = 1.0 if f >= 1 else on_ladder(f)
        if too_wide(f) and not too_wide(MIN_SHRINK):
            while too_wide(f):
                f = max(f / LADDER, MIN_SHRINK)
        return f
    if not too_wide(f) or too_wide(MIN_SHRINK):
        return f
    low = MIN_SHRINK
    for _ in range(8):
        mid = (low + f) / 2
        low, f = (low, mid) if too_wide(mid) else (mid, f)
    return low


def _wrap(spec: dict, width: int, datasets: Mapping) -> dict:
    """``spec`` with side-by-side parts or panels wrapped into rows that fit ``width``."""
    rows = data_rows(spec, datasets, None)
    if "vconcat" in spec:
        return {**spec, "vconcat": [_wrap(p, width, datasets) for p in spec["vconcat"]]}
    if "hconcat" in spec and len(spec["hconcat"]) > 1:
        parts = spec["hconcat"]
        for cols in range(len(parts) - 1, 0, -1):
            candidate = {
                **{k: v for k, v in spec.items() if k != "hconcat"},
                "concat": parts,
                "columns": cols,
            }
            if extent(candidate, datasets)[0] <= width or cols == 1:
                return candidate
    if "facet" in spec and "spec" in spec:
        facet = spec["facet"]
        if "column" in facet and "row" not in facet:  # one row of panels -> a wrapping facet
            spec = {**spec, "facet": dict(facet["column"])}
            spec.pop("columns", None)
            facet = spec["facet"]
        if "field" in facet:
            n = len(distinct(rows, facet["field"])) or 1
            cols = min(spec.get("columns") or n, n)
            while cols > 1 and extent({**spec, "columns": cols}, datasets)[0] > width:
                cols -= 1
            return {**spec, "columns": cols}
    return spec


def _wrapped(spec: dict, width: int, datasets: Mapping) -> list[dict]:
    """Ways to wrap ``spec``: side-by-side parts or facet panels in every number of columns
    that gives a different number of rows (the caller keeps the one that can be drawn
    largest), or stacked parts each wrapped to fit ``width`` (:func:`_wrap`)."""
    wrapped = _wrap(spec, width, datasets)
    if "hconcat" in spec and len(spec["hconcat"]) > 1:
        n = len(spec["hconcat"])
    elif "facet" in wrapped and "columns" in wrapped:
        n = len(distinct(data_rows(spec, datasets, None), wrapped["facet"]["field"])) or 1
    else:
        return [wrapped]
    layouts = []
    for cols in sorted({math.ceil(n / r) for r in range(2, n + 1)}, reverse=True):
        if "hconcat" in spec:
            rest = {k: v for k, v in spec.items() if k != "hconcat"}
            layouts.append({**rest, "concat": spec["hconcat"], "columns": cols})
        else:
            layouts.append({**wrapped, "columns": cols})
    return layouts


# A facet's y title, horizontal, stands left of the panels' header labels (beside the axis
# labels, its right end at the axis) instead of above the first panel, where it would run
# into that panel's header label.
_Y_TITLE_BESIDE = {"titleAlign": "right", "titleX": -6}


def _y_title_beside(spec: Mapping) -> dict:
    """``spec`` (a facet's panel) with its y title moved beside the axis labels."""

    def moved(enc: object) -> object:
        y = enc.get("y") if isinstance(enc, Mapping) else None
        if not isinstance(y, Mapping) or not y.get("title") or y.get("axis", {}) is None:
            return enc
        return {**enc, "y": {**y, "axis": {**(y.get("axis") or {}), **_Y_TITLE_BESIDE}}}

    out = {**spec, "encoding": moved(spec["encoding"])} if "encoding" in spec else dict(spec)
    if isinstance(spec.get("layer"), list):
        out["layer"] = [
            {**x, "encoding": moved(x["encoding"])}
            if isinstance(x, Mapping) and "encoding" in x
            else x
            for x in spec["layer"]
        ]
    return out


def _fixed_facets(node: object, datasets: Mapping, rows: list | None = None) -> object:
    """Facets without an explicit order get the order of their data (Vega-Lite would sort
    the panel labels, so the panels would swap places with the language), and their y
    title goes beside the axis labels (:func:`_y_title_beside`)."""
    if isinstance(node, list):
        return [_fixed_facets(x, datasets, rows) for x in node] if has_nodes(node) else node
    if not isinstance(node, dict):  # JSON: see scaled
        return node
    rows = data_rows(node, datasets, rows)
    out = {
        k: v if k in ("datasets", "data", "config") else _fixed_facets(v, datasets, rows)
        for k, v in node.items()
    }
    facet = out.get("facet")
    if isinstance(facet, Mapping) and isinstance(out.get("spec"), Mapping):
        out["spec"] = _y_title_beside(out["spec"])
        defs = [facet] if "field" in facet else [facet.get(k) for k in ("row", "column")]
        fixed = {}
        for d in defs:
            if isinstance(d, Mapping) and d.get("sort") is None and distinct(rows, d["field"]):
                fixed[id(d)] = {**d, "sort": distinct(rows, d["field"])}
        if "field" in facet:
            out["facet"] = fixed.get(id(facet), facet)
        else:
            out["facet"] = {k: fixed.get(id(v), v) for k, v in facet.items()}
    return out


_SCALED = ("width", "height")
_POSITION = ("x", "x2", "y", "y2")
_PARTS = ("layer", "hconcat", "vconcat", "concat", "spec")  # where sized views nest


def scaled(node: object, f: float) -> object:
    """A copy of a (sub)spec with view sizes, pixel positions and mark fonts times ``f``
    (datasets, data, config and lists of plain values, such as an axis's sort order, are
    shared, not copied); text layers whose font would fall below :data:`MIN_CELL_FONT` px
    are dropped (their numbers would overlap). Specs are JSON, so their nodes are dicts
    and lists (an ``isinstance`` against them is ~3× faster than against ``Mapping``: this
    walk runs a few thousand times a fit)."""
    if isinstance(node, list):
        return [scaled(x, f) for x in node] if has_nodes(node) else node
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("datasets", "data", "config", "title", "tooltip"):
            out[key] = value
        elif key == "layer" and isinstance(value, list):  # cell numbers too small: drop them
            out[key] = [scaled(x, f) for x in value if _font(x) * f >= MIN_CELL_FONT]
        elif key in _SCALED and isinstance(value, int | float):
            out[key] = round(value * f, 1)
        elif key in _SCALED and isinstance(value, Mapping) and "step" in value:
            out[key] = {**value, "step": round(value["step"] * f, 1)}
        elif key == "mark" and isinstance(value, Mapping) and "fontSize" in value:
            font = int(np.clip(round(value["fontSize"] * f), MIN_CELL_FONT, 28))
            out[key] = {**value, "fontSize": font}
        elif key == "encoding" and isinstance(value, Mapping):
            enc = dict(value)
            for ch in _POSITION:
                pos = enc.get(ch)
                if isinstance(pos, Mapping) and isinstance(pos.get("value"), int | float):
                    enc[ch] = {**pos, "value": pos["value"] * f}
            out[key] = enc
        elif key in _PARTS:
            out[key] = scaled(value, f)
        else:  # transforms, facet definitions, resolve…: nothing sized inside
            out[key] = value
    return _crowded(out) if f < 1 else out


CROWDED_STEP = 16  # px: a band axis's step below which its labels may touch…
SKIP_TOUCHING = {"labelOverlap": "greedy", "labelSeparation": 2}  # …so skip those that would


def _crowded(view: dict) -> dict:
    """A view whose band steps shrank below :data:`CROWDED_STEP` px skips labels that would touch
    (its builder chose the axes for the steps before scaling)."""
    enc = view.get("encoding")
    if not isinstance(enc, dict):
        return view
    changed = dict(enc)
    for size, channel in (("width", "x"), ("height", "y")):
        step = view.get(size)
        pos = enc.get(channel)
        if not (isinstance(step, dict) and isinstance(step.get("step"), int | float)):
            continue
        if step["step"] >= CROWDED_STEP or not isinstance(pos, dict) or pos.get("axis", {}) is None:
            continue
        changed[channel] = {**pos, "axis": {**(pos.get("axis") or {}), **SKIP_TOUCHING}}
    return {**view, "encoding": changed}


def has_nodes(items: list) -> bool:
    """Whether a spec list holds dicts or lists (else: plain values, nothing to walk)."""
    return any(isinstance(x, dict | list) for x in items)


def _too_small(node: object) -> bool:
    """Whether a (sub)spec has a mark whose font is below :data:`MIN_CELL_FONT`."""
    if isinstance(node, list):
        return has_nodes(node) and any(_too_small(x) for x in node)
    if not isinstance(node, dict):
        return False
    if _font(node) < MIN_CELL_FONT:
        return True
    return any(_too_small(node[k]) for k in _PARTS if k in node)


def _font(layer: object) -> float:
    """A layer's own mark font size (inf when it sets none: such layers always stay)."""
    mark = layer.get("mark") if isinstance(layer, Mapping) else None
    size = mark.get("fontSize") if isinstance(mark, Mapping) else None
    return float(size) if isinstance(size, int | float) else math.inf


# Sizes come in steps of this factor (cells from :func:`fit_cell`, the scale :func:`fit`
# shrinks a chart by), so a chart keeps its spec while its shape changes a little (a
# d_model slider): the browser swaps the new rows into the chart on screen instead of
# compiling and drawing it again (~80 ms of main-thread work for a strip of 7 matrices).
LADDER = 2**0.125


def on_ladder(x: float) -> float:
    """The largest power of :data:`LADDER` that is at most ``x`` (> 0)."""
    return LADDER ** math.floor(math.log(x, LADDER) + 1e-9)


def fit_cell(
    columns: int,
    rows: int = 1,
    width: float = 420,
    height: float | None = None,
    lo: int = 12,
    hi: int = 56,
) -> int:
    """Cell size in px so that ``columns`` cells fit ``width`` (and ``rows`` fit ``height``):
    ``hi`` if they fit at that size, else the whole px of the largest step of
    :data:`LADDER` that fits, not below ``lo``."""
    fit = width / max(columns, 1)
    if height is not None:
        fit = min(fit, height / max(rows, 1))
    return hi if fit >= hi else max(lo, int(on_ladder(fit)))
