"""The store's backends for its tests: a SQLite file in ``tmp_path`` and a real PostgreSQL
server that the tests start themselves (never a mock, never an outside host).

PostgreSQL's ``initdb`` and ``pg_ctl`` are found on PATH, then in
``/usr/lib/postgresql/<ver>/bin`` (Debian's ``postgresql`` package, which .ci/run installs).
Without them the PostgreSQL cases are skipped with that reason, and fail when ``CI`` is set.
PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user (made
with ``useradd`` if missing). It listens on 127.0.0.1 only, on a free port, with its unix
socket in its own temporary directory, and trusts local connections (a test server).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path

import psycopg
import pytest

from store import Store, open_store

BACKENDS = ["sqlite", "postgresql"]
PG_USER = "postgres"  # the OS account the server runs as when the tests run as root
_databases = count()


def pg_bin_dir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: PATH first, then the newest
    ``/usr/lib/postgresql/<ver>/bin``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server_account() -> pwd.struct_passwd | None:
    """The account the server runs as: None (this one) unless the tests run as root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
        )
        return pwd.getpwnam(PG_USER)


class PgServer:
    """A PostgreSQL server of its own: ``start``, ``stop``, and a fresh database per
    ``new_database`` call. The superuser is ``lab``; nobody else can reach it."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.account = _server_account()
        self.dir = Path(tempfile.mkdtemp(prefix="attention-lab-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        if self.account is not None:
            os.chown(self.dir, self.account.pw_uid, self.account.pw_gid)
        self._pg(
            "initdb",
            *("-D", str(self.data), "-U", "lab", "--auth=trust", "-E", "UTF8", "--locale=C"),
            "--no-sync",
        )

    def _pg(self, program: str, *args: str) -> subprocess.CompletedProcess:
        as_user = {}
        if self.account is not None:
            as_user = {"user": self.account.pw_uid, "group": self.account.pw_gid}
        command = [str(self.bin / program), *args]
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=self.dir, **as_user, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr}{done.stdout}")
        return done

    def start(self) -> None:
        """Start the server (on the same port every time) and wait until it accepts."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}"
            " -c fsync=off -c max_connections=100"
        )
        log = str(self.dir / "log")
        self._pg("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop the server now (fast shutdown: every connection is cut)."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str) -> str:
        return f"postgresql://lab@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """The URL of a new, empty database on this server."""
        name = f"t{os.getpid()}_{next(_databases)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def running(self) -> bool:
        """Whether the server is up (``pg_ctl status``)."""
        status = [str(self.bin / "pg_ctl"), "-D", str(self.data), "status"]
        as_user = {}
        if self.account is not None:
            as_user = {"user": self.account.pw_uid, "group": self.account.pw_gid}
        return subprocess.run(status, capture_output=True, **as_user, check=False).returncode == 0

    def remove(self) -> None:
        """Stop the server if it runs and delete its files."""
        if self.running():
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_pg_server() -> PgServer:
    """A started server of its own; skipped without PostgreSQL (a failure under CI)."""
    bin_dir = pg_bin_dir()
    if bin_dir is None:
        hint = "PostgreSQL's initdb/pg_ctl not found (Debian: apt-get install postgresql)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must install it ({hint})")
        pytest.skip(hint)
    server = PgServer(bin_dir)
    server.start()
    return server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the session's store tests (a database per test)."""
    server = start_pg_server()
    yield server
    server.remove()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The name of the backend a test runs on."""
    return request.param


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store's URL: a SQLite file in ``tmp_path`` or a new PostgreSQL database."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'lab.sqlite3'}"
    return request.getfixturevalue("pg_server").new_database()


def raw_execute(url: str, sql: str) -> list[tuple]:
    """Run ``sql`` on a store's database with the driver itself (to tamper with it) and
    return its rows."""
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url[len("sqlite:///") :])) as conn, conn:
            return conn.execute(sql).fetchall()
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


@pytest.fixture
def own_pg() -> Iterator[PgServer]:
    """A PostgreSQL server of the test's own, to stop and start (the shared one stays up)."""
    server = start_pg_server()
    yield server
    server.remove()


@pytest.fixture
def opened(store_url: str) -> Iterator[Callable[..., Store]]:
    """Open stores on the test's database (``opened(flood_limit=3)``), all disconnected at
    the end."""
    stores: list[Store] = []

    def make(**options: object) -> Store:
        made = open_store(store_url, **options)
        stores.append(made)
        return made

    yield make
    for made in stores:
        made.disconnect()


@pytest.fixture
def store(opened: Callable[..., Store]) -> Store:
    """A store on a fresh database."""
    return opened()
