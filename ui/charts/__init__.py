"""Charts for every page: one look, legible on a projector, cheap to redraw.

A page builds a chart with a builder, and draws it with :func:`show_cached` (or
:func:`show`) in the room its layout gives it (:func:`room`). One module per step; each
imports only modules listed below it:

* :mod:`~ui.charts.drawing`: themed (:func:`to_spec`), fitted and drawn (:func:`show`),
  built once per input (:func:`show_cached`).
* :mod:`~ui.charts.specs`: the builders, inputs -> a Vega-Lite dict (:func:`heatmap`,
  :func:`matrix_strip`, :func:`bars`, :func:`lines`, :func:`histogram`; side by side with
  :func:`concat`, over each other with :func:`layer`) and the data behind a spec
  (:func:`table`). Why they build plain dicts and not Altair charts, measured, is in its
  docstring.
* :mod:`~ui.charts.sizing`: the room (:class:`Room`, :func:`room`), a chart fitted to it
  (:func:`fit`) and cell sizes (:func:`fit_cell`); its docstring walks through how one
  chart is sized.
* :mod:`~ui.charts.estimate`: a chart's size in px, estimated from its spec.
* :mod:`~ui.charts.theme`: font, colours and the Vega-Lite config.
* :mod:`~ui.charts.text`: numbers, labels and titles as printed (:func:`fmt`,
  :func:`vector_tex`, :func:`unique_labels`, …), also in the pages' own text.

Everything a caller uses is here, as ``charts.<name>``.
"""

from ui.charts.drawing import show, show_cached, to_spec
from ui.charts.sizing import (
    CROWDED_STEP,
    LADDER,
    MAX_GROWTH,
    PAGE_HEIGHT,
    PAGE_WIDTH,
    PRESENTER_WIDTH,
    SKIP_TOUCHING,
    Room,
    fit,
    fit_cell,
    room,
)
from ui.charts.specs import (
    MAX_ANNOTATED,
    MIN_ANNOTATED_CELL,
    SERIES_TIP,
    SLIDE_FONT,
    Panel,
    bars,
    by_index,
    cell_font,
    concat,
    framed,
    heatmap,
    histogram,
    histogram_rows,
    layer,
    lines,
    matrix_strip,
    records,
    symmetric_domain,
    table,
    text_em,
)
from ui.charts.text import (
    SUBSCRIPTS,
    data_title,
    dim_labels,
    fmt,
    fmt_cells,
    fmt_list,
    shape_title,
    thousands,
    unique_labels,
    vector_tex,
)
from ui.charts.theme import (
    ACCENT,
    FRAME,
    KEY_COLOR,
    MASKED,
    QUERY_COLOR,
    VALUE_COLOR,
    theme_config,
)

__all__ = [
    "ACCENT",
    "CROWDED_STEP",
    "FRAME",
    "KEY_COLOR",
    "LADDER",
    "MASKED",
    "MAX_ANNOTATED",
    "MAX_GROWTH",
    "MIN_ANNOTATED_CELL",
    "PAGE_HEIGHT",
    "PAGE_WIDTH",
    "PRESENTER_WIDTH",
    "QUERY_COLOR",
    "SERIES_TIP",
    "SKIP_TOUCHING",
    "SLIDE_FONT",
    "SUBSCRIPTS",
    "VALUE_COLOR",
    "Panel",
    "Room",
    "bars",
    "by_index",
    "cell_font",
    "concat",
    "data_title",
    "dim_labels",
    "fit",
    "fit_cell",
    "fmt",
    "fmt_cells",
    "fmt_list",
    "framed",
    "heatmap",
    "histogram",
    "histogram_rows",
    "layer",
    "lines",
    "matrix_strip",
    "records",
    "room",
    "shape_title",
    "show",
    "show_cached",
    "symmetric_domain",
    "table",
    "text_em",
    "theme_config",
    "thousands",
    "to_spec",
    "unique_labels",
    "vector_tex",
]
