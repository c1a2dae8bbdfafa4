"""Presentation helpers for the database-lookup page: names, the table, the charts.

No maths here: the numbers and what the notes point out (which row, how much weight) come
from :mod:`core.lookup`; this module lays them out and words them.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from core import text_heatmap
from core.findings.lookup import row_share, soft_finding, sweep_ends
from core.lookup import (
    CAPITALS,
    capital_table,
    hard_lookup,
    lookup_scores,
    polar_query,
    soft_lookup,
    temperature_sweep,
    uniform_weight,
)
from ui import charts, notes
from ui.context import PageContext
from ui.i18n import Translator
from ui.notes import untrained
from ui.params import Choice, Float, Int, select, slider
from ui.questions import Option, Question, Truth
from ui.steps import Controls, Got, View

LON_DOMAIN = (-120.0, 170.0)  # room west of Washington for its label
LAT_DOMAIN = (-45.0, 70.0)
# Longitudes marked on the map: none at its left end, where Vega-Lite would set the label flush
# against the axis's start, running into the next one ("−100−60").
LON_TICKS = tuple(range(-90, 171, 30))

KEY_VIEW = 470  # px of the key chart's plot, wide and high, before it is fitted to its room
# What a px of the key chart's plot is worth on screen, at the least, once the chart is fitted
# to its room (a 1366 px laptop's page: ~0.7; a slide's chart column: ~0.89), by presenter
# mode: the labels, whose type keeps its size, are placed for that case.
KEY_SHRINK = {False: 0.7, True: 0.85}
VALUE_WIDTH = 460  # px of the map beside it (as high as the key chart)
LABEL_GAP = 4.0  # px between a key's tip dot and its label
ARROW_PAD = 3.0  # px between an arrow's centre line and a label (its stroke is 3 px wide)
Q_TEXT_DY = 16  # px from the query's tip up to its "q"
# Where a label may go round its tip: turned this many degrees from straight out (away from
# the query first), then this many units further out.
_TURNS = (0, *(s * d for d in range(15, 121, 15) for s in (1, -1)))
_FURTHER = (0.0, 0.2)


def names(t: Translator, ids: Sequence[str], kind: str) -> list[str]:
    """Translated country (``kind="country"``) or capital (``kind="capital"``) names."""
    return [t(f"lookup.{kind}.{i}") for i in ids]


def temperature_of(exponent: float) -> float:
    """The temperature a ``log₁₀ T`` slider position stands for."""
    return float(10.0**exponent)


def num(value: float, digits: int = 2) -> str:
    """A number as shown in text and tables (:func:`ui.notes.num`: typographic minus, ±∞
    spelled out, no "−0.00"), by default to two decimals."""
    return notes.num(value, digits)


ANGLE = Int("angle", 30, 0, 359)
LENGTH = Float("length", 1.5, 0.1, 2.0)
LOG_T = Float("log_t", 0.0, -2.0, 2.0)
FREE = "free"
AIM = Choice("aim", FREE, (FREE, *(row[0] for row in CAPITALS)))


@dataclass(frozen=True)
class Query:
    """The query the controls set: its direction (degrees), length and temperature, and the
    vector they make (:func:`core.lookup.polar_query`)."""

    angle: float
    length: float
    temperature: float
    vector: np.ndarray  # (2,)


def controls(ctx: PageContext, got: Got) -> Query:
    """The query controls: aim at a row or steer freely, length, temperature (students: in
    the sidebar, one below the other, the query they make written under them; a slide: a
    closed box above the step, in one row, the query shown in its cards and notes).

    Aiming at a row is a URL-bound choice rather than a button writing to the angle slider:
    code-set widget values do not reach the address bar, so a button would leave the URL
    showing the old angle. While a row is chosen the angle slider is hidden and the query
    points exactly along that row's key.
    """
    t = ctx.t
    country_names = names(t, capital_table()[0], "country")
    label = dict(zip(AIM.options[1:], country_names, strict=True)) | {FREE: t("lookup.free")}
    angles = {row[0]: row[1] for row in CAPITALS}
    aim = select(ctx, AIM, t("lookup.aim"), format_func=label.__getitem__)
    c1, c2, c3 = st.columns(3) if ctx.presenter else (st.container(),) * 3
    with c1:
        if aim == FREE:
            angle = float(slider(ctx, ANGLE, t("lookup.angle")))
        else:
            angle = angles[aim]
            st.markdown(t("lookup.aimed", country=label[aim], angle=f"{angle:.0f}"))
    with c2:
        length = float(slider(ctx, LENGTH, t("lookup.length"), step=0.1))
    with c3:
        log_label, log_help = t("lookup.log_temperature"), t("lookup.log_temperature_help")
        log_t = float(slider(ctx, LOG_T, log_label, step=0.05, help=log_help))
    temperature = temperature_of(log_t)
    query = polar_query(angle, length)
    if not ctx.presenter:
        x, y = num(query[0]), num(query[1])
        st.caption(t("lookup.query_now", x=x, y=y, T=f"{temperature:.3g}"))
    return Query(angle, length, temperature, query)


SETTINGS = Controls(controls, box="lookup.settings", slide="settings")


@dataclass(frozen=True)
class Lookup:
    """The table and what the query finds in it (:mod:`core.lookup`)."""

    ids: tuple[str, ...]
    countries: list[str]
    capitals: list[str]
    keys: np.ndarray  # (m, 2)
    values: np.ndarray  # (m, 2) latitude, longitude
    scores: np.ndarray  # (m,) q · k
    hard_index: int
    hard_value: np.ndarray  # (2,)
    weights: np.ndarray  # (m,)
    blended: np.ndarray  # (2,)

    def arrays(self, query: np.ndarray) -> dict[str, np.ndarray]:
        """What every step exports."""
        keys, values, scores, weights = self.keys, self.values, self.scores, self.weights
        return {
            "keys": keys,
            "values": values,
            "query": query,
            "scores": scores,
            "weights": weights,
        }

    def table(self, t: Translator) -> pd.DataFrame:
        """:func:`table_frame` of this lookup."""
        rows = (self.keys, self.values, self.scores, self.weights)
        return table_frame(t, self.countries, self.capitals, *rows)


def lookup(t: Translator, q: Query) -> Lookup:
    """The table looked up with ``q``: scores, the hard answer, the soft weights and blend."""
    ids, keys, values = capital_table()
    hard_index, hard_value = hard_lookup(q.vector, keys, values)
    weights, blended = soft_lookup(q.vector, keys, values, q.temperature)
    countries, capitals = names(t, ids, "country"), names(t, ids, "capital")
    scores = lookup_scores(q.vector, keys)
    return Lookup(
        ids, countries, capitals, keys, values, scores, hard_index, hard_value, weights, blended
    )


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


def table_styled(
    t: Translator,
    country_names: Sequence[str],
    capital_names: Sequence[str],
    keys: np.ndarray,
    values: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    hard_index: int,
) -> Styler:
    """The table as shown, numbers written out as in the text; the hard lookup's row bold."""
    head = [
        t("lookup.col_country"),
        t("lookup.col_capital"),
        t("lookup.col_key"),
        t("lookup.col_value"),
        "q·k",
        t("lookup.col_weight"),
    ]
    rows = [
        [
            country,
            capital,
            f"({num(keys[i, 0])}, {num(keys[i, 1])})",
            f"({num(values[i, 0])}, {num(values[i, 1])})",
            num(scores[i], 3),
            num(weights[i], 3),
        ]
        for i, (country, capital) in enumerate(zip(country_names, capital_names, strict=True))
    ]
    table = pd.DataFrame(rows, columns=head)
    bold = ["font-weight: bold" if i == hard_index else "" for i in range(len(rows))]
    return (
        table.style.hide(axis="index")
        .apply(lambda _: bold, axis=0)
        .set_properties(**{"text-align": "right"}, subset=head[4:])
    )


def key_space(
    t: Translator,
    country_names: Sequence[str],
    keys: np.ndarray,
    query: np.ndarray,
    weights: np.ndarray,
    extent: float,
    presenter: bool,
) -> dict:
    """Key arrows (tip size = weight) and the query arrow; each key's name and weight is
    written just outside its tip, clear of the arrows and of the other labels
    (:func:`label_spots`; ``presenter``: for a slide's larger type)."""
    font = charts.theme_config(presenter)["text"]["fontSize"]
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
    # Each label on one line, or two when that keeps it clear (name above weight).
    lines = [(n, num(w)) for n, w in zip(country_names, weights, strict=True)]
    unit_px = KEY_VIEW / (2 * extent) * KEY_SHRINK[presenter]  # px of one unit, at the least

    def forms(n: str, w: str) -> list[list[float]]:  # (2 forms, 2): "name weight", name over weight
        one_line = [label_width(f"{n} {w}", font), font * 1.25]
        two_lines = [max(label_width(n, font), label_width(w, font)), font * 2.4]
        return [one_line, two_lines]

    sizes = np.array([forms(n, w) for n, w in lines]) / unit_px  # (m, 2 forms, 2)
    tips = np.vstack([keys, query])  # (m + 1, 2) every arrow's tip, its dot as drawn below:
    areas = np.array([*(40 + 860 * np.asarray(weights)), 40 + 860 * 0.3])
    rings = (np.sqrt(areas / np.pi) + LABEL_GAP) / unit_px  # (m + 1,)
    q_text = [query[0], query[1] + Q_TEXT_DY / unit_px, 0.6 * font / unit_px]  # its "q", above
    dots = np.vstack([np.column_stack([tips, rings]), q_text])  # (m + 2, 3)
    spot, form = label_spots(keys, query, sizes, dots, extent, pad=ARROW_PAD / unit_px)
    texts = [("\n" if f else " ").join(pair) for pair, f in zip(lines, form, strict=True)]
    outside = pd.DataFrame({"x": spot[:, 0], "y": spot[:, 1], "text": texts})
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
    labels = {
        "data": {"name": "labels"},
        "mark": {
            "type": "text",
            "fontWeight": "bold",
            "color": charts.KEY_COLOR,
            "lineBreak": "\n",
        },
        "encoding": {"x": x, "y": y, "text": {"field": "text", "type": "nominal"}},
    }
    return {  # a plain Vega-Lite dict: the same chart through Altair took ~10× longer
        "datasets": {"arrows": _rows(data), "labels": _rows(outside)},
        "title": t("lookup.key_chart"),
        "width": KEY_VIEW,
        "height": KEY_VIEW,
        "layer": [
            {
                "data": {"name": "arrows"},
                "encoding": {"x": x, "y": y, "color": role},
                "layer": [
                    {
                        "mark": {"type": "rule", "strokeWidth": 3},
                        "encoding": {"x2": {"datum": 0}, "y2": {"datum": 0}},
                    },
                    {
                        "mark": {"type": "point", "filled": True, "opacity": 1},
                        "encoding": {
                            "size": size,
                            "tooltip": [
                                {"field": "label", "type": "nominal", "title": charts.SERIES_TIP}
                            ],
                        },
                    },
                    {
                        "mark": {"type": "text", "dy": -Q_TEXT_DY, "fontWeight": "bold"},
                        "encoding": {"text": {"field": "text", "type": "nominal"}},
                    },
                ],
            },
            labels,
        ],
    }


def _rows(frame: pd.DataFrame) -> list[dict]:
    """A table as inline Vega-Lite records (plain Python numbers and strings)."""
    return charts.records({k: frame[k].tolist() for k in frame.columns})


def label_width(text: str, font: float) -> float:
    """Estimated px of a bold chart label in the app's font: CJK characters 1 em, the others
    0.5 em (Source Sans is narrow: "Australia 0.02" measures 0.43 em a character)."""
    return sum(font * (1.0 if ord(c) > 0x2E80 else 0.5) for c in text)


def _hits(box: np.ndarray, arrows: np.ndarray, dots: np.ndarray, boxes: list) -> int:
    """How many arrows, tip dots and other labels' boxes ``box`` touches (each box is
    ``(x0, y0, x1, y1)``). ``arrows`` ``(p, s, 2)``: ``p`` points along each of ``s`` arrows;
    ``dots`` ``(d, 3)``: x, y, radius."""
    x0, y0, x1, y1 = box
    xs, ys = arrows[..., 0], arrows[..., 1]
    crossed = ((xs > x0) & (xs < x1) & (ys > y0) & (ys < y1)).any(axis=0).sum()  # (s,) -> n
    nearest = np.clip(dots[:, :2], box[:2], box[2:])  # (d, 2) the box's point nearest a dot
    touched = (np.hypot(*(nearest - dots[:, :2]).T) < dots[:, 2]).sum()
    overlaps = sum(1 for b in boxes if b[0] < x1 and x0 < b[2] and b[1] < y1 and y0 < b[3])
    return int(crossed + touched) + overlaps


def label_spots(
    keys: np.ndarray,
    query: np.ndarray,
    sizes: np.ndarray,
    dots: np.ndarray,
    extent: float,
    pad: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Where each key's label goes (the centre of its text) and in which of its forms (say
    one line or two): beside its key's tip dot, straight outwards, unless something is in
    the way there; then turned round the tip, away from the query arrow first, to the first
    place inside the axes where it touches no arrow, no dot and no other label and is
    nearer its own key's tip than any other (the fewest of those faults if there is no
    such place). So the query arrow running along a key pushes its label aside, and every
    label stays next to its own key.

    ``sizes`` ``(m, f, 2)``: the width and height of each label's ``f`` forms, in the
    chart's units, the one to prefer first; ``dots`` ``(m + k, 3)``: the keys' tip dots (x,
    y, radius, a gap included), then anything else to keep clear of (the query's tip, its
    name); ``pad``: how far a label keeps from an arrow (half its stroke and a little).
    Shapes: ``keys`` ``(m, 2)``, ``query`` ``(2,)`` -> ``(spots (m, 2), forms (m,))``.
    """
    m, forms = sizes.shape[:2]
    unit = keys / np.linalg.norm(keys, axis=1, keepdims=True)  # (m, 2)
    arrows = np.linspace(0.0, 1.0, 120)[:, None, None] * np.vstack([keys, query])  # (120, m+1, 2)
    # Turn first away from the query: a key the query lies anticlockwise of turns clockwise.
    away = np.where(unit[:, 0] * query[1] - unit[:, 1] * query[0] > 0, -1.0, 1.0)  # (m,)

    def spot(j: int, form: int, turn: float = 0.0, further: float = 0.0) -> np.ndarray:
        a = math.radians(away[j] * turn)
        ux, uy = unit[j]
        dx, dy = ux * math.cos(a) - uy * math.sin(a), ux * math.sin(a) + uy * math.cos(a)
        w, h = sizes[j, form]
        reach = dots[j, 2] + abs(dx) * w / 2 + abs(dy) * h / 2 + further
        return keys[j] + np.array([dx, dy]) * reach  # the box touches the dot's ring there

    def box(j: int, form: int, at: np.ndarray) -> np.ndarray:
        return np.concatenate([at - sizes[j, form] / 2, at + sizes[j, form] / 2])

    def cost(j: int, form: int, at: np.ndarray, placed: list) -> int:
        b = box(j, form, at)
        out = int(b[0] < -extent or b[1] < -extent or b[2] > extent or b[3] > extent)
        wide = b + np.array([-pad, -pad, pad, pad])  # the arrows' strokes have a width
        near = np.linalg.norm(np.clip(keys, b[:2], b[2:]) - keys, axis=1)  # (m,) tips to box
        other = int(near.argmin() != j)  # nearer another key's tip: it reads as that one's
        return out + other + _hits(wide, arrows, np.delete(dots, j, axis=0), placed)

    def straight(j: int, placed: list) -> int | None:  # the first form clear straight out
        return next((f for f in range(forms) if cost(j, f, spot(j, f), placed) == 0), None)

    def search(j: int, placed: list) -> tuple[int, np.ndarray]:
        best, fewest = None, math.inf
        for further in _FURTHER:
            for turn in _TURNS:
                for form in range(forms):
                    at = spot(j, form, turn, further)
                    faults = cost(j, form, at, placed)
                    if faults == 0:  # the first clear place
                        return form, at
                    if faults < fewest:
                        best, fewest = (form, at), faults
        return best

    spots, chosen, placed = np.zeros((m, 2)), np.zeros(m, dtype=int), []
    # The labels an arrow blocks straight out (the query's, mostly) choose first, the others
    # then stay straight out where the labels placed before leave them room.
    blocked = [j for j in range(m) if straight(j, []) is None]
    for j in [*blocked, *(j for j in range(m) if j not in blocked)]:
        form = None if j in blocked else straight(j, placed)
        chosen[j], spots[j] = search(j, placed) if form is None else (form, spot(j, form))
        placed.append(box(j, chosen[j], spots[j]))
    return spots, chosen


def labels_below(values: np.ndarray, lat_band: float = 6.0, lon_reach: float = 60.0) -> list[bool]:
    """Which capitals write their label below their dot rather than above it: those with
    another capital at about their latitude (within ``lat_band`` degrees) a little to the
    east (within ``lon_reach`` degrees), whose label would otherwise run into theirs (Cairo
    beside New Delhi). ``values``: ``(m, 2)`` latitude, longitude."""
    lat, lon = values[:, 0], values[:, 1]
    east = lon[None, :] - lon[:, None]  # (m, m) degrees from capital i east to capital j
    near = (np.abs(lat[None, :] - lat[:, None]) < lat_band) & (east > 0) & (east < lon_reach)
    return [bool(b) for b in near.any(axis=1)]


def _label_dy(below: bool, ringed: bool) -> int:
    """px from a capital's dot to its label: above it, or below; clear of the hard pick's ring."""
    gap = 30 if ringed else 16
    return gap + 2 if below else -gap


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
            "ringed": [i == hard_index for i in range(len(values))],
        }
    )
    x = {
        "field": "lon",
        "type": "quantitative",
        "scale": {"domain": list(LON_DOMAIN)},
        "axis": {"values": list(LON_TICKS)},
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
        {"field": "name", "type": "nominal", "title": charts.SERIES_TIP},
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
        "width": VALUE_WIDTH,
        "height": KEY_VIEW,
        "encoding": {"x": x, "y": y},
        "layer": [
            {"data": {"name": "hard"}, "mark": ring},
            {
                "data": {"name": "capitals"},
                "mark": {"type": "circle", "color": charts.VALUE_COLOR, "opacity": 0.8},
                "encoding": {"size": size, "tooltip": tips},
            },
            *(
                {
                    "data": {"name": "capitals"},
                    "transform": [
                        {"filter": f"datum.below == {below} && datum.ringed == {ringed}"}
                    ],
                    "mark": {
                        "type": "text",
                        "dy": _label_dy(below == "true", ringed == "true"),
                        "color": "#222",
                    },
                    "encoding": {"text": {"field": "text", "type": "nominal"}},
                }
                for below in ("false", "true")
                for ringed in ("false", "true")
            ),
            {"data": {"name": "blend"}, "mark": star},
            {
                "data": {"name": "blend"},
                "mark": star_text,
                "encoding": {"text": {"field": "text", "type": "nominal"}},
            },
        ],
    }


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
    presenter: bool = False,
) -> dict:
    """The key space (query and key arrows) next to the value space (capitals and blend);
    ``presenter``: sized for a slide's larger type."""
    arrows = key_space(t, country_names, keys, query, weights, 2.1, presenter)
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
        {"field": "item", "type": "nominal", "title": charts.SERIES_TIP},
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
            {
                "data": {"name": "sweep"},
                "mark": {"type": "line", "strokeWidth": 2.5},
                "encoding": {"x": x, "y": y, "color": color, "tooltip": tips},
            },
            {
                "data": {"name": "rule"},
                "mark": {"type": "rule", "strokeDash": [6, 4], "color": "#444"},
                "encoding": {"x": {"field": "T", "type": "quantitative"}},
            },
            {
                "data": {"name": "rule"},
                "mark": {"type": "text", "align": "left", "dx": 6, "dy": -6, "color": "#444"},
                "encoding": {
                    "x": {"field": "T", "type": "quantitative"},
                    "y": {"datum": 1.0},
                    "text": {"field": "text", "type": "nominal"},
                },
            },
        ],
    }


def sweep_text_rows(
    temperatures: np.ndarray, weights: np.ndarray, every: int = 10
) -> tuple[np.ndarray, list[str]]:
    """Every ``every``-th row of the sweep and its ``T = …`` label (for the text heatmap)."""
    rows = weights[::every]
    return rows, [f"T={temperature:.3g}" for temperature in temperatures[::every]]


# px of the hard-vs-soft charts on a slide: their column's height but for the note under
# them (the notice goes beside them, under the cards): the key chart's labels (18 px and up)
# need a large plot to stay clear of the arrows
SOFT_HEIGHT = 640
SWEEP_HEIGHT = 440  # px of the temperature sweep


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
    top = row_share(weights)  # the row the soft lookup leans on most
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
                w=num(top.weight, 3),
                country=country_names[top.index],
            )
        )


def sweep_notices(
    t: Translator,
    country_names: Sequence[str],
    temperatures: np.ndarray,
    weights: np.ndarray,
    hard_index: int,
) -> list[str]:
    """The "what to notice" items of the temperature sweep: its coldest and hottest rows
    (:func:`core.findings.lookup.sweep_ends`)."""
    ends = sweep_ends(weights)
    return [
        t(
            "lookup.notice_cold" + ("" if ends.cold.one_hot else "_tie"),
            T=f"{temperatures[0]:.3g}",
            country=country_names[ends.cold.index],
            w=num(ends.cold.weight, 4),
            hard=country_names[hard_index],
        ),
        t(
            "lookup.notice_hot",
            T=f"{temperatures[-1]:.3g}",
            w=num(ends.hot.weight, 3),
            m=len(country_names),
            u=num(ends.uniform, 3),
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
    """The "what to notice" items of the hard-vs-soft step, phrased for the weights shown
    (:func:`core.findings.lookup.soft_finding`)."""
    found = soft_finding(weights, hard_index, length, temperature)
    w, left = num(found.hard.weight, 3), num(found.hard.rest, 3)
    sharp = "_sharp" if found.hard.sharp else ""
    return [
        t(f"lookup.notice_hard{sharp}", capital=capital_names[hard_index], w=w, rest=left),
        t(
            f"lookup.notice_blend{'_same' if sharp else ''}",
            lat=num(blended[0]),
            lon=num(blended[1]),
            capital=capital_names[hard_index],
        ),
        t(
            "lookup.notice_length",
            L=num(length, 1),
            T=f"{temperature:.3g}",
            r=f"{found.stretch:.3g}",
        ),
    ]


# ---- the steps -----------------------------------------------------------------------------


def table_step(v: View) -> None:
    """Step 1: the table, each row's key and value with this query's score and weight; the
    hard lookup's row bold (a slide: at the whole width)."""
    t, found = v.t, lookup(v.t, v[SETTINGS])
    v.lead.markdown(t("lookup.table_text"))
    rows = (found.keys, found.values, found.scores, found.weights, found.hard_index)
    v.figure.table(table_styled(t, found.countries, found.capitals, *rows))
    if v.presenter:
        v.notes.caption(t("lookup.table_caption"))
    else:  # what to read in the table, above it
        v.notice([t("lookup.table_caption")])


def soft_step(v: View) -> None:
    """Step 2: the hard and the soft lookup side by side, in key space and on the map, and
    their answers (a slide: the cards beside the charts, one below the other)."""
    t, q = v.t, v[SETTINGS]
    found = lookup(t, q)
    v.text("lookup.soft_text")
    names_ = (found.countries, found.capitals)
    answers = (found.weights, found.blended, found.hard_index)
    args = (t, *names_, found.keys, found.values, q.vector, *answers, v.presenter)
    chart = v.chart(soft_chart, *args)
    items = soft_notices(
        t, found.capitals, found.weights, found.hard_index, found.blended, q.length, q.temperature
    )
    with v.notes:
        cards = (found.hard_value, found.hard_index, found.blended, found.weights)
        result_cards(t, *names_, *cards, stacked=v.presenter)
    # a slide keeps the blend note: its cards state the hard answer and the weight
    v.notice(items[1:2] if v.presenter else items)
    v.export(
        "lookup",
        chart,
        data=lambda: found.table(t),
        arrays={**found.arrays(q.vector), "blended": found.blended, "hard_value": found.hard_value},
        text=lambda: text_heatmap(found.weights[None, :], ["q"], found.countries),
    )
    with v.below if v.presenter else v.notes:  # a slide: under the charts
        untrained(v.ctx)


def sweep_step(v: View) -> None:
    """Step 3: every row's weight as the temperature goes from cold (one row) to hot (all
    alike), a rule at this query's temperature."""
    t, q = v.t, v[SETTINGS]
    found = lookup(t, q)
    temps, sweep = temperature_sweep(q.vector, found.keys)
    m, u = len(found.ids), num(uniform_weight(len(found.ids)), 3)
    v.lead.markdown(t("lookup.sweep_text", m=m, u=u))
    chart = v.chart(sweep_chart, t, found.countries, temps, sweep, q.temperature)
    v.notice(sweep_notices(t, found.countries, temps, sweep, found.hard_index))
    v.export(
        "lookup_temperature",
        chart,
        data=lambda: sweep_frame(found.countries, temps, sweep),
        arrays={**found.arrays(q.vector), "temperatures": temps, "sweep_weights": sweep},
        text=lambda: text_heatmap(*sweep_text_rows(temps, sweep), found.countries),
    )
    v.links(("softmax", t("lookup.softmax_link")), ("qkv", t("lookup.qkv_link")))


# Ask the class: the query at ASK_ANGLE degrees, between Russia's key (35) and Egypt's (80):
# which row does it match best?
ASK_ANGLE = 55.0


def _ask_best_options(t: Translator) -> tuple[Option, ...]:
    ids = capital_table()[0]
    return tuple(Option(i, name) for i, name in zip(ids, names(t, ids, "country"), strict=True))


def _ask_best_truth() -> Truth:
    ids, keys, values = capital_table()
    index, _ = hard_lookup(polar_query(ASK_ANGLE, LENGTH.default), keys, values)
    return Truth(right=frozenset({ids[index]}))


ASK_BEST = Question("lookup.best", "choice", _ask_best_truth, _ask_best_options)
QUESTIONS = (ASK_BEST,)
