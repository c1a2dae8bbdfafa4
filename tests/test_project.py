"""Project hygiene: the README's commands, CI, lint and pinned requirements."""

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
