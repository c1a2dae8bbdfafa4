"""store/__main__.py: ``python -m store key`` and ``python -m store check``, run as a
lecturer (and deploy/serve) runs them: a subprocess, on a real SQLite file or a real
PostgreSQL server (tests/store/conftest.py)."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from store import DATA_ENV, SCHEMA_VERSION, STORE_FILE, lecturer_key
from store.__main__ import STORE_ENV
from tests.store.conftest import PgServer, raw_execute

pytestmark = pytest.mark.xdist_group("store_pg")  # one PostgreSQL server per test run

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, full: bool = False, **env: str) -> subprocess.CompletedProcess:
    """``python -m store *args`` from the repository, with ``env`` as the only store
    settings in its environment; ``full``: every write to a file fails, as on a full disk
    (a file size limit of 0 bytes: EFBIG where a full disk says ENOSPC)."""
    clean = {k: v for k, v in os.environ.items() if k not in (DATA_ENV, STORE_ENV)}

    def no_room() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    return subprocess.run(
        [sys.executable, "-m", "store", *args],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=no_room if full else None,
    )


def assert_one_line_error(done: subprocess.CompletedProcess, reason: str) -> str:
    """Exit status 1, nothing on stdout, one line on stderr naming ``reason``; that line."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error ({reason}): "), lines[0]
    return lines[0]


def test_key_prints_the_lecturer_key_the_app_reads(tmp_path: Path) -> None:
    made = run("key", "--data-dir", str(tmp_path / "data"))
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert made.stdout == key + "\n"
    assert key == lecturer_key(tmp_path / "data"), "the key the app compares with"
    assert run("key", "--data-dir", str(tmp_path / "data")).stdout == made.stdout, "kept"
    from_env = run("key", **{DATA_ENV: str(tmp_path / "data")})
    assert from_env.stdout == made.stdout, "$ATTENTION_LAB_DATA names the same directory"
    assert run("key", "--data-dir", str(tmp_path / "other")).stdout != made.stdout


def test_check_creates_the_store_and_says_where_it_lives(store_url: str, tmp_path: Path) -> None:
    done = run("check", "--data-dir", str(tmp_path / "data"), "--store", store_url)
    assert done.returncode == 0, done.stderr
    assert raw_execute(store_url, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]
    shown = store_url.removeprefix("sqlite:///") if store_url.startswith("sqlite") else store_url
    kind = "SQLite" if store_url.startswith("sqlite") else "PostgreSQL"
    assert done.stdout.splitlines() == [
        f"data directory: {tmp_path / 'data'}",
        f"store: {kind} {shown} (schema version {SCHEMA_VERSION})",
    ]
    again = run("check", "--data-dir", str(tmp_path / "data"), "--store", store_url)
    assert again.stdout == done.stdout, "an existing store is opened as it is"


def test_check_without_a_url_makes_sqlite_in_the_data_directory_of_the_environment(
    tmp_path: Path,
) -> None:
    data = tmp_path / "lab"
    done = run("check", **{DATA_ENV: str(data), STORE_ENV: ""})
    assert done.returncode == 0, done.stderr
    assert (data / STORE_FILE).is_file()
    assert f"store: SQLite {data / STORE_FILE} (schema version {SCHEMA_VERSION})" in done.stdout
    assert raw_execute(f"sqlite:///{data / STORE_FILE}", "PRAGMA journal_mode") == [("wal",)]


def test_check_reads_the_url_from_the_environment_and_never_prints_its_password(
    pg_server: PgServer, tmp_path: Path
) -> None:
    url = pg_server.new_database()  # the server trusts loopback: any password gets in
    with_password = url.replace("postgresql://lab@", "postgresql://lab:hunter2@")
    done = run("check", "--data-dir", str(tmp_path), **{STORE_ENV: with_password})
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    shown = url.replace("postgresql://lab@", "postgresql://lab:***@")
    assert f"store: PostgreSQL {shown} (schema version {SCHEMA_VERSION})" in done.stdout
    assert raw_execute(url, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


def test_a_data_directory_that_cannot_be_made_is_one_line_and_status_1(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    inside = str(tmp_path / "file" / "lab")  # under a regular file: fails for root too
    for action in ("key", "check"):
        line = assert_one_line_error(run(action, "--data-dir", inside), "data_dir")
        assert inside in line


def test_a_data_directory_on_a_full_disk_is_one_line_and_status_1(tmp_path: Path) -> None:
    folder = tmp_path / "full"
    line = assert_one_line_error(run("key", "--data-dir", str(folder), full=True), "data_dir")
    assert f"cannot keep the lecturer key in {folder / 'lecturer.key'}" in line
    assert not (folder / "lecturer.key").exists(), "no empty key left behind"
    line = assert_one_line_error(run("check", "--data-dir", str(folder), full=True), "data_dir")
    assert f"cannot use the store file {folder / STORE_FILE}" in line
    assert run("check", "--data-dir", str(folder)).returncode == 0, "room again: it works"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_data_directory_is_one_line_and_status_1(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir(mode=0o500)
    line = assert_one_line_error(run("check", "--data-dir", str(tmp_path / "ro")), "data_dir")
    assert "not writable" in line


def test_an_unreachable_postgresql_is_one_line_without_the_password(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://lab:hunter2@127.0.0.1:{port}/lab?password=hunter3"
    done = run("check", "--data-dir", str(tmp_path), "--store", url)
    line = assert_one_line_error(done, "unavailable")
    assert "hunter" not in line
    assert "PostgreSQL" in line


def test_an_unknown_url_is_one_line_without_the_password(tmp_path: Path) -> None:
    done = run("check", "--data-dir", str(tmp_path), "--store", "mysql://lab:hunter2@db/lab")
    line = assert_one_line_error(done, "bad_url")
    assert "hunter2" not in line


def test_a_store_from_a_newer_app_is_one_line_and_status_1(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.sqlite3'}"
    assert run("check", "--data-dir", str(tmp_path), "--store", url).returncode == 0
    raw_execute(url, f"UPDATE schema_version SET version = {SCHEMA_VERSION + 1}")
    done = run("check", "--data-dir", str(tmp_path), "--store", url)
    line = assert_one_line_error(done, "schema_too_new")
    assert "update the app" in line
