"""Helpers for the core tests (pure NumPy; the only extra they may reach for is torch)."""

import importlib
import os
from types import ModuleType

import pytest


def optional_module(name: str) -> ModuleType:
    """Import an optional extra. Missing: skipped on a developer's machine with the reason,
    but a failure under CI, whose .ci/run installs requirements-optional.txt."""
    try:
        return importlib.import_module(name)
    except ImportError:
        hint = f"{name} is an optional extra: pip install -r requirements-optional.txt"
        if os.environ.get("CI"):
            pytest.fail(f"CI must install it ({hint})")
        pytest.skip(hint)
