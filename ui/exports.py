"""Downloads for slides and homework: CSV, PNG, SVG, NPZ and the text heatmap.

PNG and SVG are rendered on the server with vl-convert (no internet needed) and only when
the button is clicked (the download data is a callable), as is a CSV made from the chart's
own data, so exports cost next to nothing per rerun.
"""

import io
import json
from collections.abc import Callable, Mapping

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.charts import table
from ui.shell import PageContext


def _json(chart: alt.TopLevelMixin | dict) -> str:
    return json.dumps(chart) if isinstance(chart, dict) else chart.to_json()


def chart_png(chart: alt.TopLevelMixin | dict, scale: float = 2.0) -> bytes:
    """The chart (an Altair chart or a Vega-Lite spec) as a PNG, ``scale`` × its CSS size."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(_json(chart), scale=scale)


def chart_svg(chart: alt.TopLevelMixin | dict) -> str:
    """The chart (an Altair chart or a Vega-Lite spec) as SVG text."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(_json(chart))


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """All named arrays in one ``.npz`` (loadable with ``np.load(f)``, no pickle needed)."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getvalue()


def csv_text(data: pd.DataFrame) -> str:
    """The data behind a chart as CSV (UTF-8, with a BOM so spreadsheet apps read Chinese)."""
    return "\ufeff" + data.to_csv(index=False)


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


def export_panel(
    ctx: PageContext,
    name: str,
    chart: alt.TopLevelMixin | dict | None = None,
    data: pd.DataFrame | None = None,
    arrays: Mapping[str, np.ndarray] | None = None,
    text: str | None = None,
) -> None:
    """A row of download buttons for one view (hidden in presenter mode: less chrome).

    ``name`` becomes the file stem (``attention-lab_<name>.png``) and keeps widget keys unique.
    The CSV holds ``data``, or else the data of ``chart`` (a spec dict) as drawn.
    """
    if ctx.presenter:
        return
    stem = f"attention-lab_{name}"

    def csv() -> str:  # made only when the button is clicked
        return csv_text(table(chart) if data is None else data)

    with st.expander(ctx.t("exports.title"), icon=":material/ios_share:"):
        cols = st.columns(5)
        if chart is not None:
            with cols[0]:
                _button("PNG", lambda: chart_png(chart), f"{stem}.png", "image/png", f"png_{name}")
            with cols[1]:
                _button(
                    "SVG", lambda: chart_svg(chart), f"{stem}.svg", "image/svg+xml", f"svg_{name}"
                )
        if data is not None or isinstance(chart, dict):
            with cols[2]:
                _button("CSV", csv, f"{stem}.csv", "text/csv", f"csv_{name}")
        if arrays:
            with cols[3]:
                _button(
                    "NPZ",
                    lambda: npz_bytes(arrays),
                    f"{stem}.npz",
                    "application/octet-stream",
                    f"npz_{name}",
                )
        if text is not None:
            with cols[4]:
                _button("TXT", lambda: text, f"{stem}.txt", "text/plain", f"txt_{name}")
        st.caption(ctx.t("exports.hint"))
