"""Text shared by the pages: the "these weights are untrained" note with links to the pages
that show trained attention; numbers and long vectors as running text writes them (beside
:func:`ui.charts.fmt`): :func:`num`, :func:`sci`, :func:`significant`, :func:`grouped`,
:func:`power_of_ten`, :func:`short_list`; and a chart title with a subtitle legible on a
projector (:func:`subtitled`)."""

import numpy as np
import streamlit as st

from ui.blocks import link
from ui.charts import fmt
from ui.context import PageContext
from ui.pages import available_pages, page_info

TRAINED_PAGES = ("encoder", "decoder", "training")  # pages with learned attention weights
HEAD, TAIL = 4, 2  # entries kept at the start and at the end of a shortened vector
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def untrained(ctx: PageContext) -> None:
    """The page's ``<page>.untrained`` sentence (its weights are random, so its patterns mean
    nothing yet) and links to the pages whose weights are trained (those that exist)."""
    pages = [p for p in TRAINED_PAGES if page_info(p) in available_pages()]
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.caption(f":material/casino: {ctx.t(f'{ctx.page}.untrained')}", width="content")
        if pages:
            st.caption(ctx.t("nav.trained"), width="content")
        for page in pages:
            link(ctx, page)


def short_list(values: np.ndarray, digits: int = 3) -> str:
    """A vector for running text, ``[0.62, 1.65, −1.11]``; longer than six entries it keeps
    the first four and the last two: ``[0.62, 1.65, −1.11, 0.35, …, 0.10, −0.42]``.

    Shapes: ``(d,)`` -> a string."""
    v = np.asarray(values, dtype=float).ravel()  # (d,)
    if v.size <= HEAD + TAIL:
        return "[" + ", ".join(fmt(float(x), digits) for x in v) + "]"
    head = ", ".join(fmt(float(x), digits) for x in v[:HEAD])
    tail = ", ".join(fmt(float(x), digits) for x in v[-TAIL:])
    return f"[{head}, …, {tail}]"


def num(value: float, digits: int = 3) -> str:
    """A number in running text (:func:`ui.charts.fmt`: a typographic minus, ±∞ spelled
    out), an integer too with ``digits`` decimals."""
    return fmt(float(value), digits)


def sci(value: float) -> str:
    """A tiny difference in scientific notation (``4.8e−06``), exactly 0 as ``0``."""
    return "0" if value == 0 else f"{value:.1e}".replace("-", "−")


def significant(value: float) -> str:
    """Three significant digits, in scientific form when tiny or huge, ±∞ spelled out:
    ``"−1e+09"``, ``"0"``, ``"3.2e−17"``."""
    if not np.isfinite(value):
        return fmt(value)
    return f"{value:.3g}".replace("-", "−")


def grouped(value: float) -> str:
    """An integer in groups of three: ``16384`` -> ``"16 384"`` (a no-break space, so a
    number is never split across lines)."""
    return f"{int(value):,}".replace(",", "\u00a0")


def power_of_ten(exponent: int) -> str:
    """Ten to the power ``exponent`` as text writes it: ``4`` -> ``"10⁴"``, ``-6`` ->
    ``"10⁻⁶"``."""
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def subtitled(text: str, subtitle: str, presenter: bool) -> dict:
    """A chart's title (a Vega-Lite ``title``) with a subtitle legible on a projector."""
    return {
        "text": text,
        "subtitle": subtitle,
        "subtitleFontSize": 18 if presenter else 12,
        "subtitleColor": "#444",
    }
