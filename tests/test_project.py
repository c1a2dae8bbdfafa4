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
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run([sys.executable, "-m", "ruff", "format", "--check", "."], cwd=ROOT,
                         capture_output=True, text=True)  # fmt: skip
    assert fmt.returncode == 0, fmt.stdout


def _imports(path: Path) -> set[str]:
    """The ``ui`` modules ``path`` imports (also inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ui"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            found |= {n for n in names if _module_file(n)} or {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ui.")}
    return {n for n in found if _module_file(n)}


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def test_ui_modules_import_each_other_without_a_cycle() -> None:
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts): p
        for p in (ROOT / "ui").rglob("*.py")
        if p.name != "__init__.py"
    }
    graph = {name: _imports(path) & modules.keys() for name, path in modules.items()}
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
    assert "ui.shell" in graph and graph["ui.views.decoder"], "the graph was read"
