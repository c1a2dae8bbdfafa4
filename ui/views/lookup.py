"""Presentation helpers for the database-lookup page: names, the table, the charts.

No maths here beyond picking and formatting numbers that :mod:`core.lookup` computed.
"""

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core.lookup import CAPITALS
from ui import charts
from ui.i18n import Translator
from ui.params import Choice, Float, Int, select, slider
from ui.shell import PageContext

LON_DOMAIN = (-100.0, 170.0)
LAT_DOMAIN = (-45.0, 70.0)


def names(t: Translator, ids: Sequence[str], kind: str) -> list[str]:
    """Translated country (``kind="country"``) or capital (``kind="capital"``) names."""
    return [t(f"lookup.{kind}.{i}") for i in ids]


def temperature_of(exponent: float) -> float:
    """The temperature a ``log₁₀ T`` slider position stands for."""
    return float(10.0**exponent)


def num(value: float, digits: int = 2) -> str:
    """A number as shown in text and tables (typographic minus, ±∞ spelled out, no "−0.00")."""
    value = float(value)
    return charts.fmt(0.0 if round(value, digits) == 0 else value, digits)


ANGLE = Int("angle", 30, 0, 359)
LENGTH = Float("length", 1.5, 0.1, 2.0)
LOG_T = Float("log_t", 0.0, -2.0, 2.0)
FREE = "free"
AIM = Choice("aim", FREE, (FREE, *(row[0] for row in CAPITALS)))


def controls(ctx: PageContext, country_names: Sequence[str]) -> tuple[float, float, float]:
    """The query controls: aim at a row or steer freely, length, temperature.

    Returns ``(angle in degrees, length, log₁₀ T)``. Aiming at a row is a URL-bound choice
    rather than a button writing to the angle slider: code-set widget values do not reach
    the address bar, so a button would leave the URL showing the old angle. While a row is
    chosen the angle slider is hidden and the query points exactly along that row's key.
    """
    t = ctx.t
    label = dict(zip(AIM.options[1:], country_names, strict=True)) | {FREE: t("lookup.free")}
    angles = {row[0]: row[1] for row in CAPITALS}
    with st.container(border=True):
        aim = select(ctx, AIM, t("lookup.aim"), format_func=label.__getitem__)
        c1, c2, c3 = st.columns(3)
        with c1:
            if aim == FREE:
                angle = float(slider(ctx, ANGLE, t("lookup.angle")))
            else:
                angle = angles[aim]
                st.markdown(t("lookup.aimed", country=label[aim], angle=f"{angle:.0f}"))
        with c2:
            length = float(slider(ctx, LENGTH, t("lookup.length"), step=0.1))
        with c3:
            log_t = float(slider(ctx, LOG_T, t("lookup.log_temperature"), step=0.05))
    return angle, length, log_t


def table_frame(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    keys: np.ndarray,
    values: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
) -> pd.DataFrame:
    """The lookup table with this query's scores and weights (also the CSV export)."""
    return pd.DataFrame(
        {
            t("lookup.col_country"): country_names,
            t("lookup.col_capital"): capital_names,
            "k_x": keys[:, 0],
            "k_y": keys[:, 1],
            t("lookup.col_lat"): values[:, 0],
            t("lookup.col_lon"): values[:, 1],
            "q·k": scores,
            t("lookup.col_weight"): weights,
        }
    )


def table_markdown(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    keys: np.ndarray,
    values: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    hard_index: int,
) -> str:
    """The table as markdown; the hard lookup's row is bold."""
    head = [
        t("lookup.col_country"),
        t("lookup.col_capital"),
        t("lookup.col_key"),
        t("lookup.col_value"),
        "q·k",
        t("lookup.col_weight"),
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * 4]
    for i, (country, capital) in enumerate(zip(country_names, capital_names, strict=True)):
        cells = [
            country,
            capital,
            f"({num(keys[i, 0])}, {num(keys[i, 1])})",
            f"({num(values[i, 0])}, {num(values[i, 1])})",
            num(scores[i], 3),
            num(weights[i], 3),
        ]
        if i == hard_index:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def key_space(
    t: Translator,
    country_names: Sequence[str],
    keys: np.ndarray,
    query: np.ndarray,
    weights: np.ndarray,
    extent: float,
) -> alt.Chart:
    """Key arrows (tip size = weight) and the query arrow; each key's name and weight is
    written just outside its tip so neighbouring labels do not collide."""
    data = pd.DataFrame(
        {
            "label": [*country_names, "q"],
            "x": [*keys[:, 0], query[0]],
            "y": [*keys[:, 1], query[1]],
            "role": ["key"] * len(country_names) + ["query"],
            "size": [*weights, 0.3],
            "text": [""] * len(country_names) + ["q"],
        }
    )
    arrows = charts.vectors_2d(data, t("lookup.key_chart"), extent)
    outside = pd.DataFrame(
        {
            "x": keys[:, 0] * 1.22,
            "y": keys[:, 1] * 1.22 - 0.06,
            "text": [f"{n} {num(w)}" for n, w in zip(country_names, weights, strict=True)],
            "align": np.where(
                keys[:, 0] > 0.3, "left", np.where(keys[:, 0] < -0.3, "right", "center")
            ),
        }
    )
    scale = alt.Scale(domain=[-extent, extent])
    labels = [
        alt.Chart(outside[outside["align"] == side])
        .mark_text(align=side, fontWeight="bold", color=charts.KEY_COLOR)
        .encode(x=alt.X("x:Q", scale=scale), y=alt.Y("y:Q", scale=scale), text="text:N")
        for side in ("left", "center", "right")
    ]
    return alt.layer(arrows, *labels).properties(width=470, height=470)


def value_space(
    t: Translator,
    capital_names: Sequence[str],
    values: np.ndarray,
    weights: np.ndarray,
    blended: np.ndarray,
    hard_index: int,
) -> alt.Chart:
    """Capitals on a latitude/longitude plane, dot size = weight; the blend as a star and
    the hard lookup's capital ringed."""
    caps = pd.DataFrame(
        {
            "name": capital_names,
            "lat": values[:, 0],
            "lon": values[:, 1],
            "weight": weights,
            "text": [f"{n} {num(w)}" for n, w in zip(capital_names, weights, strict=True)],
        }
    )
    x = alt.X("lon:Q", scale=alt.Scale(domain=list(LON_DOMAIN)), title=t("lookup.axis_lon"))
    y = alt.Y("lat:Q", scale=alt.Scale(domain=list(LAT_DOMAIN)), title=t("lookup.axis_lat"))
    base = alt.Chart(caps).encode(x=x, y=y)
    size = alt.Size("weight:Q", scale=alt.Scale(domain=[0, 1], range=[40, 900]), legend=None)
    tips = [
        alt.Tooltip("name:N", title=""),
        alt.Tooltip("lat:Q", title=t("lookup.axis_lat")),
        alt.Tooltip("lon:Q", title=t("lookup.axis_lon")),
        alt.Tooltip("weight:Q", title=t("lookup.col_weight"), format=".3f"),
    ]
    dots = base.mark_circle(color=charts.VALUE_COLOR, opacity=0.8).encode(size=size, tooltip=tips)
    labels = base.mark_text(dy=-16, color="#222").encode(text="text:N")
    hard = pd.DataFrame({"lat": [values[hard_index, 0]], "lon": [values[hard_index, 1]]})
    ring = (
        alt.Chart(hard)
        .mark_point(shape="circle", size=1400, strokeWidth=3, color=charts.ACCENT)
        .encode(x=x, y=y)
    )
    blend = pd.DataFrame(
        {"lat": [blended[0]], "lon": [blended[1]], "text": [t("lookup.blend_label")]}
    )
    star_base = alt.Chart(blend).encode(x=x, y=y)
    star = star_base.mark_point(
        shape="diamond", filled=True, size=420, color=charts.QUERY_COLOR, opacity=1
    )
    star_text = star_base.mark_text(
        align="right", dx=-14, color=charts.QUERY_COLOR, fontWeight="bold"
    ).encode(text="text:N")
    return alt.layer(ring, dots, labels, star, star_text).properties(
        title=t("lookup.value_chart"), width=560, height=470
    )


def soft_chart(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    keys: np.ndarray,
    values: np.ndarray,
    query: np.ndarray,
    weights: np.ndarray,
    blended: np.ndarray,
    hard_index: int,
) -> alt.HConcatChart:
    """The key space (query and key arrows) next to the value space (capitals and blend)."""
    arrows = key_space(t, country_names, keys, query, weights, extent=2.1)
    return arrows | value_space(t, capital_names, values, weights, blended, hard_index)


def sweep_frame(
    country_names: Sequence[str], temperatures: np.ndarray, weights: np.ndarray
) -> pd.DataFrame:
    """Long table of the sweep: one line per (temperature, row)."""
    t_idx, m_idx = np.indices(weights.shape)
    return pd.DataFrame(
        {
            "T": temperatures[t_idx.ravel()],
            "weight": weights.ravel(),
            "item": np.asarray(country_names, dtype=object)[m_idx.ravel()],
        }
    )


def sweep_chart(
    t: Translator,
    country_names: Sequence[str],
    temperatures: np.ndarray,
    weights: np.ndarray,
    current: float,
) -> alt.LayerChart:
    """A line per row: its weight against a log temperature axis, a rule at the current T."""
    data = sweep_frame(country_names, temperatures, weights)
    order = list(country_names)
    x = alt.X("T:Q", scale=alt.Scale(type="log"), title=t("lookup.axis_temperature"))
    y = alt.Y("weight:Q", scale=alt.Scale(domain=[0, 1]), title=t("lookup.axis_weight"))
    color = alt.Color("item:N", sort=order, title=None, legend=alt.Legend(orient="bottom"))
    lines = (
        alt.Chart(data)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=x,
            y=y,
            color=color,
            tooltip=[
                alt.Tooltip("item:N", title=""),
                alt.Tooltip("T:Q", title="T", format=".3g"),
                alt.Tooltip("weight:Q", title=t("lookup.axis_weight"), format=".3f"),
            ],
        )
    )
    rule_data = pd.DataFrame({"T": [current], "text": [f"T = {current:.3g}"]})
    rule = alt.Chart(rule_data).mark_rule(strokeDash=[6, 4], color="#444").encode(x="T:Q")
    label = (
        alt.Chart(rule_data)
        .mark_text(align="left", dx=6, dy=-6, color="#444")
        .encode(x="T:Q", y=alt.datum(1.0), text="text:N")
    )
    return alt.layer(lines, rule, label).properties(
        title=t("lookup.sweep_chart"), width=900, height=340
    )


def sweep_text_rows(
    temperatures: np.ndarray, weights: np.ndarray, every: int = 10
) -> tuple[np.ndarray, list[str]]:
    """Every ``every``-th row of the sweep and its ``T = …`` label (for the text heatmap)."""
    rows = weights[::every]
    return rows, [f"T={temperature:.3g}" for temperature in temperatures[::every]]


def pick(weights: np.ndarray) -> tuple[int, float, float]:
    """The row with the largest weight, that weight, and the weight left for all others."""
    index = int(np.argmax(weights))
    return index, float(weights[index]), rest(weights, index)


def rest(weights: np.ndarray, index: int) -> float:
    """Total weight of every row but ``index``."""
    return float(np.sum(np.delete(weights, index)))


def uniform(m: int) -> float:
    """The weight each of ``m`` rows gets when the blend is uniform."""
    return 1.0 / m


def result_cards(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    hard_value: np.ndarray,
    hard_index: int,
    blended: np.ndarray,
    weights: np.ndarray,
) -> None:
    """The hard and the soft lookup's answers, side by side, each with its formula."""
    top, top_w, _ = pick(weights)
    hard_col, soft_col = st.columns(2)
    with hard_col, st.container(border=True):
        st.markdown(f"**{t('lookup.hard_title')}**")
        st.latex(r"\hat v = v_{j^*},\quad j^* = \arg\max_j\, q\cdot k_j")
        st.markdown(
            t(
                "lookup.hard_result",
                country=country_names[hard_index],
                capital=capital_names[hard_index],
                lat=num(hard_value[0]),
                lon=num(hard_value[1]),
            )
        )
    with soft_col, st.container(border=True):
        st.markdown(f"**{t('lookup.soft_title')}**")
        st.latex(r"\hat v = \sum_j \mathrm{softmax}\!\left(\frac{q\cdot k}{T}\right)_{\!j} v_j")
        st.markdown(
            t(
                "lookup.soft_result",
                lat=num(blended[0]),
                lon=num(blended[1]),
                w=num(top_w, 3),
                country=country_names[top],
            )
        )


def sweep_notices(
    t: Translator,
    country_names: Sequence[str],
    temperatures: np.ndarray,
    weights: np.ndarray,
    hard_index: int,
) -> list[str]:
    """The "what to notice" items of the temperature sweep: its coldest and hottest rows."""
    cold, cold_w, _ = pick(weights[0])
    _, hot_w, _ = pick(weights[-1])
    m = len(country_names)
    return [
        t(
            "lookup.notice_cold",
            T=f"{temperatures[0]:.3g}",
            country=country_names[cold],
            w=num(cold_w, 4),
            hard=country_names[hard_index],
        ),
        t(
            "lookup.notice_hot",
            T=f"{temperatures[-1]:.3g}",
            w=num(hot_w, 3),
            m=m,
            u=num(uniform(m), 3),
        ),
    ]
