"""Project hygiene: the README's commands, CI, lint and pinned requirements."""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("streamlit run dashboard.py")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in ci


def test_requirements_are_pinned_with_one_comment_each() -> None:
    for name in (
        "requirements.txt",
        "requirements-dev.txt",
        "requirements-optional.txt",
        "requirements-models.txt",
    ):
        for line in (ROOT / name).read_text().splitlines():
            if line.strip():
                assert re.fullmatch(r"(\S+==\S+|-r \S+)  # .+", line), (name, line)


def test_ruff_lint_and_format_are_clean() -> None:
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout
    check = [sys.executable, "-m", "ruff", "format", "--check", "."]
    fmt = subprocess.run(check, cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout


def _module_name(path: Path) -> str:
    """``ui/charts/sizing.py`` -> ``ui.charts.sizing``; a package's ``__init__.py`` is the
    package itself (``ui.charts``)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package: bool) -> set[str]:
    """The modules ``path`` imports (also inside functions), by full name: ``from ui import
    charts`` and ``from ui.charts import room`` both name ``ui.charts``; a relative import
    is resolved against ``path``'s package."""
    here = _module_name(path).split(".")
    here = here if package else here[:-1]  # the package that holds path
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *filter(None, [base])])
            found |= {base, *(f"{base}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_ui_modules_import_each_other_without_a_cycle() -> None:
    files = sorted((ROOT / "ui").rglob("*.py"))
    modules = {_module_name(p): p for p in files}
    graph = {
        name: (_imports(path, path.name == "__init__.py") & modules.keys()) - {name}
        for name, path in modules.items()
    }
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(name) :], name]))
        if name in done:
            return
        for child in sorted(graph[name]):
            visit(child, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert "ui.charts" in graph["ui.views.decoder"], "the graph was read, packages included"


def test_page_files_are_numbered_in_the_navigations_order() -> None:
    """``pages/<N>_<id>.py``: N counts up along ui.pages.PAGES, and every file is a page."""
    from ui.pages import PAGES, available_pages

    files = sorted((ROOT / "pages").glob("*.py"))
    numbered = {p.stem.split("_", 1)[1]: int(p.stem.split("_", 1)[0]) for p in files}
    registered = [p.id for p in PAGES if p.id != "home"]
    assert set(numbered) == set(registered), "a file without an entry, or an entry without a file"
    assert [numbered[i] for i in registered] == list(range(1, len(registered) + 1))
    assert len(available_pages()) == len(PAGES)
