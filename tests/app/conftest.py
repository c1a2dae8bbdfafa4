"""AppTest helpers: start from the entrypoint and switch to a page, as a user's link would."""

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = str(ROOT / "dashboard.py")


def open_page(page_file: str | None = None, **params: str) -> AppTest:
    """Run ``page_file`` (e.g. ``"pages/4_softmax.py"``; None = home) with URL ``params``."""
    at = AppTest.from_file(ENTRY, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    if page_file is not None:
        at.switch_page(page_file)
    return at.run()


@pytest.fixture
def page() -> Callable[..., AppTest]:
    """``page("pages/4_softmax.py", lang="zh")`` -> a run AppTest."""
    return open_page


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


def visible_types(at) -> set[str]:
    """Type names of the elements on screen in the main area (e.g. {"Latex", "Slider"})."""
    return {type(e).__name__ for e in visible(at.main)}


def optional_module(name: str):
    """Import an optional extra. Missing: skipped on a developer's machine with the reason,
    but a failure under CI, whose .ci/run installs requirements-optional.txt."""
    import importlib
    import os

    try:
        return importlib.import_module(name)
    except ImportError:
        hint = f"{name} is an optional extra: pip install -r requirements-optional.txt"
        if os.environ.get("CI"):
            pytest.fail(f"CI must install it ({hint})")
        pytest.skip(hint)
