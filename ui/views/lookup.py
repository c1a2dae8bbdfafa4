"""Presentation helpers for the database-lookup page: names, the table, the charts.

No maths here beyond picking and formatting numbers that :mod:`core.lookup` computed.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from core.lookup import CAPITALS
from ui import charts
from ui.context import PageContext
from ui.i18n import Translator
from ui.params import Choice, Float, Int, select, slider
from ui.sentence import settings_box

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
    with settings_box(ctx, t("lookup.settings")) if ctx.presenter else st.container(border=True):
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
) -> dict:
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
    spot, lean = label_spots(keys, query)  # (m, 2), (m,): which way each label's text runs
    outside = pd.DataFrame(
        {
            "x": spot[:, 0],
            "y": spot[:, 1],
            "text": [f"{n} {num(w)}" for n, w in zip(country_names, weights, strict=True)],
            "align": np.where(lean > 0.3, "left", np.where(lean < -0.3, "right", "center")),
        }
    )
    domain = {"domain": [-extent, extent]}
    x = {"field": "x", "type": "quantitative", "scale": domain, "title": None}
    y = {"field": "y", "type": "quantitative", "scale": domain, "title": None}
    role = {
        "field": "role",
        "type": "nominal",
        "legend": None,
        "scale": {"domain": ["query", "key"], "range": [charts.QUERY_COLOR, charts.KEY_COLOR]},
    }
    size = {
        "field": "size",
        "type": "quantitative",
        "legend": None,
        "scale": {"domain": [0, 1], "range": [40, 900]},
    }
    labels = [
        {
            "data": {"name": "labels"},
            "transform": [{"filter": f"datum.align === '{side}'"}],
            "mark": {
                "type": "text",
                "align": side,
                "fontWeight": "bold",
                "color": charts.KEY_COLOR,
            },
            "encoding": {"x": x, "y": y, "text": {"field": "text", "type": "nominal"}},
        }
        for side in ("left", "center", "right")
    ]
    return {  # a plain Vega-Lite dict: the same chart through Altair took ~10× longer
        "datasets": {"arrows": _rows(data), "labels": _rows(outside)},
        "title": t("lookup.key_chart"),
        "width": 470,
        "height": 470,
        "layer": [
            {
                "data": {"name": "arrows"},
                "encoding": {"x": x, "y": y, "color": role},
                "layer": [
                    {"mark": {"type": "rule", "strokeWidth": 3},
                     "encoding": {"x2": {"datum": 0}, "y2": {"datum": 0}}},
                    {"mark": {"type": "point", "filled": True, "opacity": 1},
                     "encoding": {"size": size,
                                  "tooltip": [{"field": "label", "type": "nominal", "title": ""}]}},
                    {"mark": {"type": "text", "dy": -16, "fontWeight": "bold"},
                     "encoding": {"text": {"field": "text", "type": "nominal"}}},
                ],
            },
            *labels,
        ],
    }  # fmt: skip


def _rows(frame: pd.DataFrame) -> list[dict]:
    """A table as inline Vega-Lite records (plain Python numbers and strings)."""
    return charts.records({k: frame[k].tolist() for k in frame.columns})


def label_spots(
    keys: np.ndarray, query: np.ndarray, shift: float = 0.22
) -> tuple[np.ndarray, np.ndarray]:
    """Where each key's label goes, and which way its text runs (x of a direction: > 0 to the
    right): just beyond the tip, outwards; moved sideways and running away from the query
    arrow when the query points along that key, so the arrow never covers it.

    Shapes: ``keys`` ``(m, 2)``, ``query`` ``(2,)`` -> ``(spots (m, 2), lean (m,))``.
    """
    unit = keys / np.linalg.norm(keys, axis=1, keepdims=True)  # (m, 2)
    q_len = float(np.linalg.norm(query))
    near = (unit @ query > 0.85 * q_len) & (q_len > 0.9)  # (m,) the arrow runs past the tip
    perp = np.stack([-unit[:, 1], unit[:, 0]], axis=1)  # (m, 2) a quarter turn to the left
    side = np.where(unit[:, 0] * query[1] - unit[:, 1] * query[0] > 0, -1.0, 1.0)  # away
    spots = keys * 1.22 + np.array([0.0, -0.06])  # (m, 2)
    away = side[:, None] * perp  # (m, 2)
    lean = np.where(near, away[:, 0], unit[:, 0])  # (m,)
    return spots + (near * shift)[:, None] * away, lean


def labels_below(values: np.ndarray, lat_band: float = 6.0, lon_reach: float = 60.0) -> list[bool]:
    """Which capitals write their label below their dot rather than above it: those with
    another capital at about their latitude (within ``lat_band`` degrees) a little to the
    east (within ``lon_reach`` degrees), whose label would otherwise run into theirs (Cairo
    beside New Delhi). ``values``: ``(m, 2)`` latitude, longitude."""
    lat, lon = values[:, 0], values[:, 1]
    east = lon[None, :] - lon[:, None]  # (m, m) degrees from capital i east to capital j
    near = (np.abs(lat[None, :] - lat[:, None]) < lat_band) & (east > 0) & (east < lon_reach)
    return [bool(b) for b in near.any(axis=1)]


def value_space(
    t: Translator,
    capital_names: Sequence[str],
    values: np.ndarray,
    weights: np.ndarray,
    blended: np.ndarray,
    hard_index: int,
) -> dict:
    """Capitals on a latitude/longitude plane, dot size = weight; the blend as a star and
    the hard lookup's capital ringed."""
    caps = pd.DataFrame(
        {
            "name": capital_names,
            "lat": values[:, 0],
            "lon": values[:, 1],
            "weight": weights,
            "text": [f"{n} {num(w)}" for n, w in zip(capital_names, weights, strict=True)],
            "below": labels_below(values),
        }
    )
    x = {
        "field": "lon",
        "type": "quantitative",
        "scale": {"domain": list(LON_DOMAIN)},
        "title": t("lookup.axis_lon"),
    }
    y = {
        "field": "lat",
        "type": "quantitative",
        "scale": {"domain": list(LAT_DOMAIN)},
        "title": t("lookup.axis_lat"),
    }
    size = {
        "field": "weight",
        "type": "quantitative",
        "legend": None,
        "scale": {"domain": [0, 1], "range": [40, 900]},
    }
    tips = [
        {"field": "name", "type": "nominal", "title": ""},
        {"field": "lat", "type": "quantitative", "title": t("lookup.axis_lat")},
        {"field": "lon", "type": "quantitative", "title": t("lookup.axis_lon")},
        {
            "field": "weight",
            "type": "quantitative",
            "title": t("lookup.col_weight"),
            "format": ".3f",
        },
    ]
    hard = [{"lat": float(values[hard_index, 0]), "lon": float(values[hard_index, 1])}]
    blend = [{"lat": float(blended[0]), "lon": float(blended[1]), "text": t("lookup.blend_label")}]
    star = {
        "type": "point",
        "shape": "diamond",
        "filled": True,
        "size": 420,
        "color": charts.QUERY_COLOR,
        "opacity": 1,
    }
    star_text = {
        "type": "text",
        "align": "right",
        "dx": -14,
        "color": charts.QUERY_COLOR,
        "fontWeight": "bold",
    }
    ring = {
        "type": "point",
        "shape": "circle",
        "size": 1400,
        "strokeWidth": 3,
        "color": charts.ACCENT,
    }
    return {
        "datasets": {"capitals": _rows(caps), "hard": hard, "blend": blend},
        "title": [t("lookup.value_chart"), t("lookup.value_marks")],  # one line: wider than the map
        "width": 560,
        "height": 470,
        "encoding": {"x": x, "y": y},
        "layer": [
            {"data": {"name": "hard"}, "mark": ring},
            {"data": {"name": "capitals"},
             "mark": {"type": "circle", "color": charts.VALUE_COLOR, "opacity": 0.8},
             "encoding": {"size": size, "tooltip": tips}},
            *({"data": {"name": "capitals"}, "transform": [{"filter": f"datum.below == {side}"}],
               "mark": {"type": "text", "dy": 18 if side == "true" else -16, "color": "#222"},
               "encoding": {"text": {"field": "text", "type": "nominal"}}}
              for side in ("false", "true")),
            {"data": {"name": "blend"}, "mark": star},
            {"data": {"name": "blend"}, "mark": star_text,
             "encoding": {"text": {"field": "text", "type": "nominal"}}},
        ],
    }  # fmt: skip


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
) -> dict:
    """The key space (query and key arrows) next to the value space (capitals and blend)."""
    arrows = key_space(t, country_names, keys, query, weights, extent=2.1)
    places = value_space(t, capital_names, values, weights, blended, hard_index)
    return charts.concat([arrows, places], resolve={})


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
) -> dict:
    """A line per row: its weight against a log temperature axis, a rule at the current T."""
    data = sweep_frame(country_names, temperatures, weights)
    x = {
        "field": "T",
        "type": "quantitative",
        "scale": {"type": "log"},
        "title": t("lookup.axis_temperature"),
    }
    y = {
        "field": "weight",
        "type": "quantitative",
        "scale": {"domain": [0, 1]},
        "title": t("lookup.axis_weight"),
    }
    color = {
        "field": "item",
        "type": "nominal",
        "sort": list(country_names),
        "title": None,
        "legend": {"orient": "bottom"},
    }
    tips = [
        {"field": "item", "type": "nominal", "title": ""},
        {"field": "T", "type": "quantitative", "title": "T", "format": ".3g"},
        {
            "field": "weight",
            "type": "quantitative",
            "title": t("lookup.axis_weight"),
            "format": ".3f",
        },
    ]
    rule = [{"T": float(current), "text": f"T = {current:.3g}"}]
    return {
        "datasets": {"sweep": _rows(data), "rule": rule},
        "title": t("lookup.sweep_chart"),
        "width": 900,
        "height": 340,
        "layer": [
            {"data": {"name": "sweep"}, "mark": {"type": "line", "strokeWidth": 2.5},
             "encoding": {"x": x, "y": y, "color": color, "tooltip": tips}},
            {"data": {"name": "rule"},
             "mark": {"type": "rule", "strokeDash": [6, 4], "color": "#444"},
             "encoding": {"x": {"field": "T", "type": "quantitative"}}},
            {"data": {"name": "rule"},
             "mark": {"type": "text", "align": "left", "dx": 6, "dy": -6, "color": "#444"},
             "encoding": {"x": {"field": "T", "type": "quantitative"}, "y": {"datum": 1.0},
                          "text": {"field": "text", "type": "nominal"}}},
        ],
    }  # fmt: skip


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


# px of the hard-vs-soft charts on a slide: the room left beside the cards once the notice
# under them keeps only the blend (the cards state the hard answer and the largest weight)
SOFT_HEIGHT = 470


def chart_room(ctx: PageContext, height: int) -> charts.Room:
    """The room of a chart drawn in the left column of :func:`beside`."""
    return charts.room(ctx, share=0.6 if ctx.presenter else 1.0, height=height)


def result_cards(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    hard_value: np.ndarray,
    hard_index: int,
    blended: np.ndarray,
    weights: np.ndarray,
    stacked: bool = False,
) -> None:
    """The hard and the soft lookup's answers, side by side (``stacked``: one below the
    other, in a narrow column), each with its formula."""
    top, top_w, _ = pick(weights)
    hard_col, soft_col = (st.container(), st.container()) if stacked else st.columns(2)
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
            "lookup.notice_cold" + ("" if cold_w > 0.99 else "_tie"),
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


def soft_notices(
    t: Translator,
    capital_names: Sequence[str],
    weights: np.ndarray,
    hard_index: int,
    blended: np.ndarray,
    length: float,
    temperature: float,
) -> list[str]:
    """The "what to notice" items of the hard-vs-soft step, phrased for the weights shown."""
    w, left = num(weights[hard_index], 3), num(rest(weights, hard_index), 3)
    sharp = "_sharp" if rest(weights, hard_index) < 0.01 else ""
    ratio = f"{length / temperature:.3g}"
    return [
        t(f"lookup.notice_hard{sharp}", capital=capital_names[hard_index], w=w, rest=left),
        t(
            f"lookup.notice_blend{'_same' if sharp else ''}",
            lat=num(blended[0]),
            lon=num(blended[1]),
            capital=capital_names[hard_index],
        ),
        t("lookup.notice_length", L=num(length, 1), T=f"{temperature:.3g}", r=ratio),
    ]
