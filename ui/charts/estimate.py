"""A chart's size in px, estimated from its Vega-Lite spec before the browser draws it.

:func:`extent` re-derives, by rule of thumb, how Vega-Lite lays a spec out: every view's
width and height (a number, or ``{"step": px}`` times the distinct values of a discrete
axis, or Vega-Lite's defaults), the y axis beside it (its longest label, 0.55 em a
character), the x axis below it (deeper when its labels are turned), a legend on the
right or below, the title above (0.5 em a character, 1.25 × the axis font), the padding
(8 px each side); then concatenated parts side by side, stacked or in a grid with their
``spacing``, and facets as a grid of panels that share one y axis per row, one x axis per
column and one legend, with a header label above each panel. Font sizes come from the
spec's own config (:func:`ui.charts.theme.theme_config`). Its only user is
:func:`ui.charts.sizing.fit` (the docstring there says how a chart is sized).

With ``titles=False`` the width leaves out how wide the title texts are: then it is linear
in the view sizes, which is what lets :mod:`ui.charts.sizing` solve for a scale.
Labels are read from the chart's data: :func:`distinct` values of a field, remembered for
the length of one :func:`remembering` block.
"""

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ui.charts.text import chars, data_title, shape_title

_CONTINUOUS_W, _STEP_W = 300, 20  # Vega-Lite's default view width and band step


def _title_text(node: Mapping, rows: list | None) -> object:
    """A view's title as drawn: a :func:`data_title` worked out from ``rows``."""
    title, data = node.get("title"), node.get("data")
    name = data.get("name") if isinstance(data, Mapping) else None
    if rows and isinstance(name, str) and title == data_title(name):
        return shape_title(rows[0]["panel"], (rows[-1]["i"] + 1, rows[-1]["j"] + 1))
    return title


def data_rows(node: Mapping, datasets: Mapping, inherited: list | None) -> list | None:
    """The rows a (sub)spec draws: its inline values, its named dataset, else ``inherited``."""
    data = node.get("data")
    if isinstance(data, Mapping):
        if isinstance(data.get("values"), list):
            return data["values"]
        if isinstance(datasets.get(data.get("name")), list):
            return datasets[data["name"]]
    return inherited


# What the estimate has already read off a dataset, for the length of one
# :func:`ui.charts.sizing.fit`: it estimates the same axes for every candidate layout and
# scale (a 64 × 64 strip: ~190 passes over 4096 cells). Keyed on the rows' id, which stays
# valid while the spec being fitted holds them; a context variable, so every session's
# script thread has its own (or none).
_FIT_MEMO: ContextVar[dict | None] = ContextVar("fit_memo", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Within this block, what the estimate reads off a dataset is read once (see
    :data:`_FIT_MEMO`): :func:`ui.charts.sizing.fit` measures a chart in one."""
    token = _FIT_MEMO.set({})
    try:
        yield
    finally:
        _FIT_MEMO.reset(token)


def _memo(key: tuple, compute: Callable[[], object]) -> object:
    memo = _FIT_MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def distinct(rows: list | None, field: str | None) -> list:
    """The values of ``field`` in ``rows``, in order of appearance."""
    if not rows or not field:
        return []
    return _memo(("distinct", id(rows), field), lambda: _distinct_values(rows, field))


def _distinct_values(rows: list, field: str) -> list:
    try:  # rows are dicts with the field (a heatmap's cells): 3× faster than the check below
        return list(dict.fromkeys([r[field] for r in rows]))
    except (KeyError, TypeError):
        return list(dict.fromkeys(r.get(field) for r in rows if isinstance(r, Mapping)))


def extent(
    node: Mapping,
    datasets: Mapping,
    rows: list | None = None,
    font: float | None = None,
    titles: bool = True,
) -> tuple[float, float]:
    """Estimated px (width, height) of a Vega-Lite (sub)spec with its axes, legends and
    titles (``font``: the axis label size, read from the spec's config; ``titles=False``:
    leave out how wide the title texts are, so the width is linear in the view sizes)."""
    rows = data_rows(node, datasets, rows)
    font = font or node.get("config", {}).get("axis", {}).get("labelFontSize", 12)
    gap = node.get("spacing", 20)
    for key in ("hconcat", "vconcat", "concat"):
        if key in node:
            # the padding (16 px) goes round the whole chart, not round each part
            sizes = [
                (w - 16, h - 16)
                for w, h in (extent(p, datasets, rows, font, titles) for p in node[key])
            ]
            if key == "hconcat":
                w, h = sum(w for w, _ in sizes) + gap * (len(sizes) - 1), max(h for _, h in sizes)
            elif key == "vconcat":
                w, h = max(w for w, _ in sizes), sum(h for _, h in sizes) + gap * (len(sizes) - 1)
            else:
                cols = max(1, min(node.get("columns") or len(sizes), len(sizes)))
                grid = [sizes[i : i + cols] for i in range(0, len(sizes), cols)]
                widths = [max(sizes[i][0] for i in range(c, len(sizes), cols)) for c in range(cols)]
                w, h = sum(widths) + gap * (cols - 1), sum(max(h for _, h in r) for r in grid)
            if node.get("title"):
                h += _title_height(node["title"], font)
                w = max(w, _text_width(node["title"], font * 1.25) if titles else 0)
            return w + 16, h + 16
    if "facet" in node and "spec" in node:
        return _facet_extent(node, datasets, rows, font, titles)
    for layer in node.get("layer", []) if rows is None else []:  # layers with their own data
        rows = data_rows(layer, datasets, None)
        if rows:
            break
    box = _unit_box(node, rows, font)
    w = max(box.left + box.view_w + box.right, box.title_w if titles else 0)
    return w + 16, box.top + box.view_h + box.bottom + 16  # + padding


@dataclass(frozen=True)
class _Box:
    """Estimated px of one view (``view_w`` × ``view_h``) and what stands around it: the y
    axis (``left``), the x axis (``bottom``, with a legend below), the legend on the right,
    the title and a horizontal y title (``top``), and the width of the title text."""

    view_w: float
    view_h: float
    left: float
    bottom: float
    right: float
    top: float
    title_w: float


def _text_width(text: object, font: float, em: float = 0.5) -> float:
    """Estimated px of a title or label: ``em`` × ``font`` a character (CJK: twice that)."""
    if isinstance(text, Mapping):
        text = text.get("text", "")
    if isinstance(text, Mapping):  # an expression: its text is known only in the browser
        return 0.0
    lines = text if isinstance(text, list) else [text]
    return max((chars(str(s)) for s in lines), default=0) * font * em


def _title_height(title: object, font: float) -> float:
    """Estimated px of a chart title (a list of strings: one line each) and its offset."""
    text = title.get("text", "") if isinstance(title, Mapping) else title
    return (len(text) if isinstance(text, list) else 1) * (font * 1.25 + 2) + 8


def _unit_box(node: Mapping, rows: list | None, font: float) -> _Box:
    enc = node.get("encoding", {})
    for layer in node.get("layer", []):
        enc = {**layer.get("encoding", {}), **enc}
    x, y = enc.get("x", {}), enc.get("y", {})
    top = bottom = right = title_w = 0.0
    if node.get("title"):
        top += _title_height(node["title"], font)
        title_w = _text_width(_title_text(node, rows), font * 1.25)
    left = _axis_depth(y, rows, font, across=True)
    if isinstance(y, Mapping) and y.get("title"):  # horizontal, above the axis
        top += font + 8
        if (y.get("axis") or {}).get("titleAlign") != "right":  # it stands over the view
            title_w = max(title_w, left + _text_width(y["title"], font))
    legend = enc.get("color", {})
    if isinstance(legend, Mapping) and "field" in legend and legend.get("legend", {}) is not None:
        if legend.get("legend", {}).get("orient", "right") in ("right", "left"):
            right = 30 + _label_chars(legend, rows, quantitative_chars=4) * font * 0.55
        else:
            bottom += font + 16
    bottom += _axis_depth(x, rows, font, across=False)
    return _Box(
        _view_length(node.get("width"), x, rows),
        _view_length(node.get("height"), y, rows),
        left,
        bottom,
        right,
        top,
        title_w,
    )


def _facet_extent(
    node: Mapping, datasets: Mapping, rows: list | None, font: float, titles: bool
) -> tuple[float, float]:
    """A facet's px: the panels in a grid that share one y axis per row (on the left), one x
    axis per column (at the bottom), one legend, and a header label above each panel."""
    inner = node["spec"]
    rows = data_rows(inner, datasets, rows)
    if "facet" in inner or any(k in inner for k in ("hconcat", "vconcat", "concat")):
        w, h = extent(inner, datasets, rows, font, titles)  # nested: each panel in full
        box = _Box(w - 16, h - 16, 0, 0, 0, 0, 0)
    else:
        box = _unit_box(inner, rows, font)
    facet, gap = node["facet"], node.get("spacing", 20)
    header = font + 1  # the theme's header labels are one px larger than the axis labels
    if "field" in facet:
        names = distinct(rows, facet["field"]) or [""]
        cols = max(1, min(node.get("columns") or len(names), len(names)))
        n_rows, row_names = math.ceil(len(names) / cols), []
    else:
        names = distinct(rows, facet.get("column", {}).get("field")) or [""]
        row_names = distinct(rows, facet.get("row", {}).get("field"))
        cols, n_rows = len(names), max(1, len(row_names))
    col_w = max(box.view_w, max(_text_width(s, header) for s in names) if titles else 0)
    w = box.left + cols * col_w + gap * (cols - 1) + box.right
    w += max((_text_width(s, header) + 10 for s in row_names), default=0)  # row labels
    h = box.top + n_rows * (box.view_h + header + 10) + gap * (n_rows - 1) + box.bottom
    if node.get("title"):
        h += _title_height(node["title"], font)
        w = max(w, _text_width(node["title"], font * 1.25) if titles else 0)
    return max(w, box.title_w if titles else 0) + 16, h + 16


def _label_chars(channel: object, rows: list | None, quantitative_chars: int = 5) -> int:
    """Characters in the longest label of an axis or legend (CJK characters count double)."""
    if not isinstance(channel, Mapping) or "field" not in channel:
        return 0
    if channel.get("type") not in ("nominal", "ordinal"):
        return quantitative_chars

    def longest() -> int:
        labels = [str(v) for v in distinct(rows, channel["field"])] or ["xxxx"]
        return max(chars(s) for s in labels)

    return _memo(("chars", id(rows), channel["field"]), longest)


def _axis_depth(channel: object, rows: list | None, font: float, across: bool) -> float:
    """px an axis takes beside (``across``: a y axis) or below its view (an x axis)."""
    if not isinstance(channel, Mapping) or "field" not in channel:
        return 0.0
    text = _label_chars(channel, rows) * font * 0.55
    if across:  # a y title put beside the labels (facets: see _facet_titles) may be wider
        beside = (channel.get("axis") or {}).get("titleAlign") == "right"
        return max(text, _text_width(channel.get("title") or "", font) if beside else 0) + 12
    angle = (channel.get("axis") or {}).get("labelAngle", 0)
    depth = text * 0.71 + font * 0.71 if angle else font
    return depth + 12 + (font + 8 if channel.get("title") else 0)


def _view_length(size: object, channel: object, rows: list | None) -> float:
    if isinstance(size, int | float):
        return float(size)
    discrete = isinstance(channel, Mapping) and channel.get("type") in ("nominal", "ordinal")
    step = size.get("step", _STEP_W) if isinstance(size, Mapping) else _STEP_W
    if discrete:
        return step * max(1, len(distinct(rows, channel.get("field"))))
    return _CONTINUOUS_W
