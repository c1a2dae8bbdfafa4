"""The database-lookup page: hard lookup is the cold limit of the soft one."""

import re

import numpy as np
import pytest

from core.lookup import CAPITALS, capital_table, polar_query, soft_lookup
from tests.app.conftest import texts, visible
from ui import charts
from ui.i18n import Translator
from ui.views import lookup as view

PAGE = "pages/1_lookup.py"
STEPS = ("1", "2", "3")  # the table, hard vs soft, the temperature sweep
SOFT = "2"  # the step with the hard and soft lookup's answer cards


def _on_step(at, step: str):
    """Turn to ``step`` with the step bar, as a user would (only that step is drawn)."""
    return at.button_group(key="_step_choice").set_value(step).run()


def _soft(at) -> tuple[float, float, float]:
    """(blend latitude, blend longitude, largest weight) from the soft-lookup card."""
    text = next(m.value for m in at.markdown if m.value.startswith("The answer is the blend"))
    lat, lon, w = re.search(r"blend \((\S+), (\S+)\)\. The largest weight is (\S+),", text).groups()
    return float(lat.replace("−", "-")), float(lon.replace("−", "-")), float(w)


def _hard(at) -> tuple[str, float, float]:
    """(country, latitude, longitude) from the hard-lookup card."""
    text = next(m.value for m in at.markdown if m.value.startswith("The best match is"))
    country, lat, lon = re.search(r"\*\*(.+?)\*\*, .* at \((\S+), (\S+)\)", text).groups()
    return country, float(lat.replace("−", "-")), float(lon.replace("−", "-"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_in_both_languages(page, lang):
    at = page(PAGE, lang=lang)
    assert not at.exception
    assert not at.warning
    title = at.title[0].value
    assert title == ("Attention as a database lookup" if lang == "en" else "把注意力看作数据库查询")
    if lang == "zh":
        for step in STEPS:  # every step, each drawn only while on screen
            body = texts(_on_step(at, step))
            for english in ("The best match", "What to notice", "Country", "Russia", "weight"):
                assert english not in body, step


@pytest.mark.parametrize("step", ["1", "2", "3"])
def test_presenter_mode_runs_each_step(page, step):
    at = page(PAGE, present="1", step=step, lang="zh")
    assert not at.exception
    assert not at.warning


def test_defaults_match_a_live_soft_lookup(page):
    at = page(PAGE, step=SOFT)
    _, keys, values = capital_table()
    weights, blended = soft_lookup(polar_query(30, 1.5), keys, values, 1.0)
    lat, lon, top = _soft(at)
    assert (lat, lon) == pytest.approx(tuple(blended), abs=0.006)
    assert top == pytest.approx(weights.max(), abs=6e-4)
    assert _hard(at) == ("Russia", 55.76, 37.62)


def test_lowering_temperature_raises_the_top_weight(page):
    at = page(PAGE, step=SOFT)
    tops = []
    for log_t in (1.0, 0.0, -0.5, -1.0):
        at.slider(key="log_t").set_value(log_t).run()
        tops.append(_soft(at)[2])
    assert tops == sorted(tops)
    assert tops[0] < 0.2 < 0.8 < tops[-1]


def test_smallest_temperature_soft_pick_equals_hard_pick(page):
    at = page(PAGE, log_t="-2.0", step=SOFT)
    country, lat, lon = _hard(at)
    blend_lat, blend_lon, top = _soft(at)
    assert top == pytest.approx(1.0, abs=1e-3)
    assert (blend_lat, blend_lon) == pytest.approx((lat, lon), abs=0.011)
    _on_step(at, "3")  # the temperature sweep names the cold limit
    cold = next(m.value for m in at.markdown if "At T = 0.01 the soft lookup" in m.value)
    assert f"of the weight on {country}. The hard lookup picks {country}" in cold


def _aim_control(at):
    return next(group for group in at.button_group if "France" in group.options)


@pytest.mark.parametrize(("item", "country"), [("brazil", "Brazil"), ("china", "China")])
def test_choosing_an_item_points_the_query_at_it(page, item, country):
    at = page(PAGE, step=SOFT)
    _aim_control(at).set_value(item).run()
    assert not at.exception
    assert at.query_params["aim"] == item  # the URL restores the view
    assert _hard(at)[0] == country
    angle = next(row[1] for row in CAPITALS if row[0] == item)
    x, y = polar_query(angle, 1.5)
    assert f"({x:.2f}, {y:.2f})".replace("-", "−").replace("−0.00", "0.00") in texts(at)
    assert "angle" not in [s.key for s in at.slider]  # the angle slider steps aside
    _aim_control(at).set_value("free").run()
    assert "aim" not in at.query_params and at.slider(key="angle").value == 30


def test_an_aim_link_opens_aimed_in_chinese(page):
    at = page(PAGE, aim="india", lang="zh", step=SOFT)
    assert not at.exception and not at.warning
    assert any("查询正对着**印度**（130°）" in m.value for m in at.markdown)
    assert any("最匹配的是**印度**" in m.value for m in at.markdown)


def test_query_length_acts_like_inverse_temperature(page):
    short = _soft(page(PAGE, length="0.5", log_t="0.0", step=SOFT))[2]
    long = _soft(page(PAGE, length="2.0", log_t="0.0", step=SOFT))[2]
    assert long > short
    _, keys, values = capital_table()
    expected = soft_lookup(polar_query(30, 2.0), keys, values, 1.0)[0].max()
    assert long == pytest.approx(expected, abs=6e-4)


def test_bad_url_params_warn_and_fall_back(page):
    at = page(PAGE, angle="abc", length="99", log_t="nan", aim="atlantis", step=SOFT)
    assert len(at.warning) == 4
    assert at.slider(key="angle").value == 30
    assert at.slider(key="length").value == pytest.approx(1.5)
    assert at.slider(key="log_t").value == pytest.approx(0.0)
    assert not at.exception
    assert _hard(at)[0] == "Russia"


@pytest.mark.parametrize(
    "params",
    [
        {"angle": "0", "length": "0.1", "log_t": "-2.0"},
        {"angle": "359", "length": "2.0", "log_t": "2.0"},
    ],
)
def test_extreme_controls_raise_nothing_and_show_no_nan(page, params):
    at = page(PAGE, **params)
    for step in STEPS:  # every step, each drawn only while on screen
        _on_step(at, step)
        assert not at.exception and not at.warning
        body = texts(at)
        assert "nan" not in body.lower().replace("nanjing", ""), step
    lat, lon, top = _soft(_on_step(at, SOFT))
    assert np.isfinite([lat, lon, top]).all() and 0 < top <= 1


def _label_boxes(labels: list[dict], font: float, presenter: bool) -> list[tuple[float, ...]]:
    """Each key label's box (x0, y0, x1, y1) in the key chart's units, as the page sizes it."""
    from ui.views.lookup import KEY_SHRINK, KEY_VIEW, label_width

    unit_px = KEY_VIEW / 4.2 * KEY_SHRINK[presenter]  # px of a unit of the ±2.1 axes, at least
    boxes = []
    for row in labels:
        lines = row["text"].split("\n")
        w = max(label_width(line, font) for line in lines) / unit_px
        h = 1.2 * font * len(lines) / unit_px
        boxes.append((row["x"] - w / 2, row["y"] - h / 2, row["x"] + w / 2, row["y"] + h / 2))
    return boxes


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_key_labels_cross_no_arrow_and_no_other_label(lang, presenter):
    """Issue 29: on a slide in Chinese "俄罗斯 0.31" was crossed by an arrow. For the default
    query, the query aimed at each row and a long free query, every key's label keeps clear
    of every arrow and of the other labels, and stays beside its own key's tip."""
    from ui.views.lookup import key_space, names

    t = Translator(lang)
    ids, keys, values = capital_table()
    countries = names(t, ids, "country")
    font = charts.theme_config(presenter)["text"]["fontSize"]
    queries = [polar_query(30, 1.5), polar_query(100, 2.0)]
    queries += [polar_query(row[1], length) for row in CAPITALS for length in (1.5, 2.0)]
    for q in queries:
        weights, _ = soft_lookup(q, keys, values, 1.0)
        labels = key_space(t, countries, keys, q, weights, 2.1, presenter)["datasets"]["labels"]
        boxes = _label_boxes(labels, font, presenter)
        along = np.linspace(0.0, 1.0, 200)[:, None, None] * np.vstack([keys, q])  # the arrows
        for j, (x0, y0, x1, y1) in enumerate(boxes):
            where = (lang, presenter, q.round(2).tolist(), labels[j]["text"])
            xs, ys = along[..., 0], along[..., 1]
            assert not ((xs > x0) & (xs < x1) & (ys > y0) & (ys < y1)).any(), where
            for a0, b0, a1, b1 in boxes[:j]:
                assert not (a0 < x1 and x0 < a1 and b0 < y1 and y0 < b1), where
            gaps = np.linalg.norm(np.clip(keys, [x0, y0], [x1, y1]) - keys, axis=1)  # (m,)
            assert gaps[j] < 0.75 and gaps.argmin() == j, where  # its own key's label
            assert max(abs(x0), abs(x1), abs(y0), abs(y1)) <= 2.1, where  # inside the axes


def test_the_map_sets_no_longitude_flush_against_its_left_end():
    """Vega-Lite sets an axis's first label flush with its start, where it ran into the next
    one ("−100−60" on a slide): the map marks none there."""
    from ui.views.lookup import value_space

    _, keys, values = capital_table()
    weights, blended = soft_lookup(polar_query(30, 1.5), keys, values, 1.0)
    capitals = [row[0] for row in CAPITALS]
    x = value_space(Translator("zh"), capitals, values, weights, blended, 1)["encoding"]["x"]
    west, east = x["scale"]["domain"]
    ticks = x["axis"]["values"]
    assert west < min(ticks) and max(ticks) < east
    assert min(np.diff(ticks)) >= 30  # degrees apart: room for "−90" beside "−60" at 18 px


def test_a_capital_beside_another_at_its_latitude_writes_its_label_below():
    from ui.views.lookup import labels_below

    ids, _, values = capital_table()
    below = dict(zip(ids, labels_below(values), strict=True))
    assert below["egypt"]  # Cairo: New Delhi lies 46° east at about its latitude
    assert not any(below[c] for c in ids if c != "egypt")
    pair = np.array([[30.0, 0.0], [31.0, 40.0], [31.0, 140.0]])  # (lat, lon)
    assert labels_below(pair) == [True, False, False]  # only the western one of a close pair


def test_cold_notices_do_not_call_a_single_capital_a_blend(page):
    shown = texts(page(PAGE, lang="en", log_t="-2", step=SOFT))
    assert "need not be any capital" not in shown and "practically Moscow itself" in shown
    assert "Keys and values here are made up by hand" in texts(page(PAGE, lang="en", step=SOFT))


def test_presenter_slide_folds_the_controls_and_keeps_the_blend_note(page):
    student = page(PAGE, lang="en", step=SOFT)
    slide = page(PAGE, lang="en", present="1", step=SOFT)
    label = "Query: direction, length and temperature"
    assert label in [e.label for e in slide.expander]
    assert label not in [e.label for e in student.expander]
    notes = next(m.value for m in slide.markdown if "need not be any capital" in m.value)
    assert notes.startswith("- ") and notes.count("\n- ") == 0  # one point (students: three)
    # the point it leaves out (the hard answer, the largest weight) is on the slide's cards
    assert not any(m.value.startswith("- The hard lookup") for m in slide.markdown)
    assert "The best match is" in texts(slide) and "The largest weight is" in texts(slide)
    assert _soft(slide) == _soft(student)  # the same live answer on the slide


def test_only_the_step_on_screen_draws_its_charts(page):
    at = page(PAGE, lang="en", log_t="-1.0", step="1")
    assert not at.exception and not at.warning
    assert not at.get("vega_lite_chart"), "the table step has no chart; the others are not sent"
    shown = texts(at)
    (table,) = at.table  # the step's table: a table element, the hard lookup's row bold
    assert list(table.value.columns[:2]) == ["Country", "Capital"]
    assert table.value["Country"].tolist()[1] == "Russia"
    bold = re.findall(r"row(\d+)_col\d+[^{]*\{ font-weight: bold", str(table.proto))
    assert set(bold) == {"1"}, "Russia: the largest q·k at T = 0.1"
    assert "The best match is" not in shown and "At T = 0.01 the soft lookup" not in shown
    assert at.slider(key="log_t").value == pytest.approx(-1.0)  # a control of steps 2 and 3
    assert at.query_params["log_t"] == "-1.0" and at.query_params["step"] == "1"
    _on_step(at, "3")
    assert len(at.get("vega_lite_chart")) == 1  # the sweep only, not the hard-vs-soft planes
    assert "The best match is" not in texts(at)
    assert at.slider(key="log_t").value == pytest.approx(-1.0)


QUERY_SLIDERS = {"angle", "length", "log_t"}


@pytest.mark.parametrize("step", STEPS)
def test_students_steer_the_query_in_the_sidebar_a_slide_above_the_step(page, step):
    """For students the query's controls and its readout sit in the sidebar on every step,
    next to the chart they change; on a slide in the closed box above the step."""
    student = page(PAGE, lang="en", step=step)
    assert {s.key for s in student.sidebar.slider} == QUERY_SLIDERS
    assert "_choice_aim" in [g.key for g in student.sidebar.button_group]
    assert not [e for e in visible(student.main) if getattr(e, "key", None) in QUERY_SLIDERS]
    assert any(c.value.startswith("Query q = (1.30, 0.75)") for c in student.sidebar.caption)
    slide = page(PAGE, lang="en", present="1", step=step)
    assert not slide.sidebar.slider
    on_slide = {getattr(e, "key", None) for e in visible(slide.main)}
    assert QUERY_SLIDERS | {"_choice_aim"} <= on_slide


def test_the_best_match_question_is_the_key_at_the_smallest_angle_to_the_query():
    angles = {row[0]: row[1] for row in CAPITALS}  # each country's key, in degrees
    assert (angles["russia"], angles["egypt"]) == (35.0, 80.0)  # as the question says
    gap = {c: abs((a - view.ASK_ANGLE + 180) % 360 - 180) for c, a in angles.items()}
    nearest = min(gap, key=gap.__getitem__)
    truth = view.ASK_BEST.truth()
    assert truth.right == {nearest}
    assert truth.is_right(nearest) and not truth.is_right("egypt")
