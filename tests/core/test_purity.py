"""core/ is pure NumPy: no UI libraries, no I/O (docs/architecture.md, "Layers": `core/`
never imports streamlit, altair or pandas and does no I/O)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE_FILES = sorted((ROOT / "core").rglob("*.py"))  # with core/findings/
UI_LIBS = {"streamlit", "altair", "pandas"}
IO_MODULES = {"pathlib", "io", "os", "shutil", "tempfile", "pickle", "urllib", "requests"}
IO_MODULES |= {"store", "sqlite3", "psycopg"}  # the class's answers live in store/, beside core
IO_CALLS = {
    "open",
    "load",
    "save",
    "savez",
    "loadtxt",
    "savetxt",
    "fromfile",
    "tofile",
    "genfromtxt",
}


def test_importing_core_loads_no_ui_library():
    code = (
        "import sys, json, core; "
        f"print(json.dumps(sorted(m for m in {sorted(UI_LIBS)!r} if m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == []
    assert "numpy" not in UI_LIBS  # sanity: the probe lists only what must stay out


def _imported_roots(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module.split(".")[0]


def _called_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            yield f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")


def test_core_sources_import_no_ui_or_io_modules_and_call_no_file_io():
    assert len(CORE_FILES) >= 10
    for path in CORE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set(_imported_roots(tree))
        assert not imported & UI_LIBS, f"{path.name} imports {imported & UI_LIBS}"
        assert not imported & IO_MODULES, f"{path.name} imports {imported & IO_MODULES}"
        called = set(_called_names(tree))
        assert not called & IO_CALLS, f"{path.name} calls {called & IO_CALLS}"
        assert "pathlib" not in path.read_text(encoding="utf-8")


def test_the_source_checks_would_catch_a_violation():
    bad = ast.parse("import pandas as pd\nfrom altair import Chart\nopen('x')\nnp.load('y')")
    assert set(_imported_roots(bad)) == {"pandas", "altair"}
    assert {"open", "load"} <= set(_called_names(bad))
