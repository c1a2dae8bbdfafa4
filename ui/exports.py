"""Downloads for slides and homework: CSV, PNG, SVG, NPZ and the text heatmap.

The buttons sit in a closed box below each view (in presenter mode, one small popover),
and the box is lazy: its buttons are built, and sent to the browser, only while it is open
(opening it reruns the page, or just the fragment it is in). A page with a dozen views
therefore costs no button at all on a slider step. PNG and SVG are rendered on the server
with vl-convert (no internet needed) and only when a button is clicked (the download data
is a callable), as is a CSV made from the chart's own data. A ``caption`` (the view's
settings, e.g. "T = 0.5, query = Russia") is printed under the title of the PNG and SVG,
so a figure pasted into slides says what it shows.
"""

import io
import json
from collections.abc import Callable, Mapping
from typing import TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from ui.charts import table
from ui.context import PageContext


def with_caption(chart: dict, caption: str | None) -> dict:
    """The chart with ``caption`` as the subtitle of its title (or as its title if it has
    none); unchanged without a caption."""
    if not caption:
        return chart
    title = chart.get("title")
    head = dict(title) if isinstance(title, dict) else {"text": title} if title else {}
    if head.get("text"):
        head["subtitle"] = caption
    else:
        head["text"] = caption
    return {**chart, "title": {"anchor": "start", **head}}


def chart_png(chart: dict, scale: float = 2.0, caption: str | None = None) -> bytes:
    """The chart (a Vega-Lite spec) as a PNG, ``scale`` × its CSS size, with ``caption``
    under its title."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(json.dumps(with_caption(chart, caption)), scale=scale)


def chart_svg(chart: dict, caption: str | None = None) -> str:
    """The chart (a Vega-Lite spec) as SVG text, ``caption`` under its title."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(json.dumps(with_caption(chart, caption)))


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """All named arrays in one ``.npz`` (loadable with ``np.load(f)``, no pickle needed)."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getvalue()


CSV_DIGITS = 6  # significant digits in CSV exports (the screen shows 2-4)


def csv_text(data: pd.DataFrame, digits: int = CSV_DIGITS) -> str:
    """The data behind a chart as CSV (UTF-8, with a BOM so spreadsheet apps read Chinese).

    Floats keep ``digits`` significant digits, and rounding noise around zero (below
    1e-12, such as -1.8e-16 for a cosine that is 0) is written as 0: the numbers of the
    view, not the bits of the float arithmetic. Use the NPZ export for full precision.
    """
    clean = data.copy()
    for name in clean.columns:
        if pd.api.types.is_float_dtype(clean[name]):
            col = clean[name].to_numpy(dtype=float)
            clean[name] = np.where(np.abs(col) < 1e-12, 0.0, col) + 0.0
    return "\ufeff" + clean.to_csv(index=False, float_format=f"%.{digits}g")


def _button(label: str, data: Callable[[], bytes | str], name: str, mime: str, key: str) -> None:
    st.download_button(
        label,
        data,
        file_name=name,
        mime=mime,
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


T = TypeVar("T")
Lazy = T | Callable[[], T]  # a value, or a function that makes it when the box is opened
KEY_PREFIX = "exports_"  # the boxes' widget keys: exports_<name>, exports_pop_<name>


def _now(value: "Lazy[T]") -> T:
    return value() if callable(value) else value


def export_panel(
    ctx: PageContext,
    name: str,
    chart: dict | None = None,
    data: Lazy[pd.DataFrame] | None = None,
    arrays: Lazy[Mapping[str, np.ndarray]] | None = None,
    text: Lazy[str] | None = None,
    caption: str | None = None,
) -> None:
    """A row of download buttons for one view: in a closed box below the view, or in
    presenter mode a small "Export" popover (a lecturer prepares slides from there too).
    Nothing inside is built until the box is opened.

    ``name`` becomes the file stem (``attention-lab_<name>.png``) and keeps widget keys unique.
    The CSV holds ``data``, or else the data of ``chart`` (a spec dict) as drawn.
    ``data``, ``arrays`` and ``text`` may be functions that make them: called only when the
    box is open, so a view pays nothing for exports it does not show.
    ``caption`` (the view's settings, e.g. ``"T = 0.5, query = Russia"``) goes under the
    title of the PNG and SVG.
    """
    if ctx.presenter:
        box = st.popover(
            ctx.t("exports.short"),
            icon=":material/ios_share:",
            type="tertiary",
            key=f"{KEY_PREFIX}pop_{name}",
            on_change="rerun",
        )
    else:
        box = st.expander(
            ctx.t("exports.title"),
            icon=":material/ios_share:",
            key=f"{KEY_PREFIX}{name}",
            on_change="rerun",
        )
    if not box.open:
        return
    stem = f"attention-lab_{name}"
    table_data, arrays, text = _now(data), _now(arrays), _now(text)

    def csv() -> str:  # made only when the button is clicked
        return csv_text(table(chart) if table_data is None else table_data)

    buttons: list[tuple[str, Callable[[], bytes | str], str]] = []
    if chart is not None:
        buttons.append(("PNG", lambda: chart_png(chart, caption=caption), "image/png"))
        buttons.append(("SVG", lambda: chart_svg(chart, caption=caption), "image/svg+xml"))
    if table_data is not None or chart is not None:
        buttons.append(("CSV", csv, "text/csv"))
    if arrays:
        buttons.append(("NPZ", lambda: npz_bytes(arrays), "application/octet-stream"))
    if text is not None:
        buttons.append(("TXT", lambda: text, "text/plain"))
    with box:
        with st.container(horizontal=True, gap="small"):
            for fmt, make, mime in buttons:
                _button(fmt, make, f"{stem}.{fmt.lower()}", mime, f"{fmt.lower()}_{name}")
        if not ctx.presenter:
            st.caption(ctx.t("exports.hint"))
