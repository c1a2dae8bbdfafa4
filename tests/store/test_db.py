"""store/db.py: opening a store (backends, schema version, data directory) and its faults:
a locked SQLite file, a PostgreSQL server stopped and started again."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from store import (
    DATA_ENV,
    SCHEMA_VERSION,
    STORE_FILE,
    DataDirError,
    SchemaTooNewError,
    Store,
    StoreError,
    StoreUnavailable,
    StoreUrlError,
    open_store,
)
from tests.store.conftest import PgServer, raw_execute

pytestmark = pytest.mark.xdist_group("store_pg")  # one PostgreSQL server per test run


def test_the_default_store_is_one_sqlite_file_in_wal_mode_in_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "lab"))
    with open_store() as store:
        assert store.backend == "sqlite"
        code = store.open_round("lecture", "q", ["a"]).code
        store.answer(code, "s1", "a")
    path = tmp_path / "lab" / STORE_FILE
    assert path.is_file()
    assert raw_execute(f"sqlite:///{path}", "PRAGMA journal_mode") == [("wal",)]
    with open_store(data_dir=tmp_path / "lab") as again:
        assert again.counts(code) == {"a": 1}
    with open_store(data_dir=tmp_path / "other") as other:
        assert other.results("lecture") == []
    assert (tmp_path / "other" / STORE_FILE).is_file()


def test_a_new_store_has_the_current_schema_version(store: Store, store_url: str) -> None:
    assert raw_execute(store_url, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


def test_a_store_from_a_newer_app_is_refused(opened: Callable[..., Store], store_url: str) -> None:
    store = opened()
    code = store.open_round("lecture", "q", ["a"]).code
    store.disconnect()
    raw_execute(store_url, f"UPDATE schema_version SET version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNewError) as refused:
        open_store(store_url)
    assert refused.value.reason == "schema_too_new"
    assert f"schema version {SCHEMA_VERSION + 1}" in str(refused.value)
    raw_execute(store_url, f"UPDATE schema_version SET version = {SCHEMA_VERSION}")
    with open_store(store_url) as back:  # untouched by the refusal
        assert back.current(code).question == "q"


def test_stores_opened_at_once_on_a_new_database_make_one_schema(store_url: str) -> None:
    stores: list[Store] = []
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            stores.append(open_store(store_url))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.disconnect()
    assert failures == []
    assert raw_execute(store_url, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


@pytest.mark.parametrize("url", ["mysql://db/lab", "sqlite:///", "lab.sqlite3", "sqlite://x"])
def test_an_unknown_store_url_is_refused(url: str) -> None:
    with pytest.raises(StoreUrlError) as refused:
        open_store(url)
    assert refused.value.reason == "bad_url"
    assert isinstance(refused.value, ValueError)


def test_a_store_url_with_a_password_is_not_echoed() -> None:
    with pytest.raises(StoreUrlError) as refused:
        open_store("mysql://lab:s3cret@db/lab")
    assert "s3cret" not in str(refused.value)


def test_a_data_directory_that_cannot_be_made_is_refused_at_open(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a regular file")
    for opening in (
        lambda: open_store(data_dir=tmp_path / "file" / "sub"),  # fails for root too
        lambda: open_store(f"sqlite:///{tmp_path / 'file' / 'sub' / 'lab.sqlite3'}"),
    ):
        with pytest.raises(DataDirError) as refused:
            opening()
        assert refused.value.reason == "data_dir"
        assert isinstance(refused.value, StoreError)
        assert "file/sub" in str(refused.value)
        assert refused.value.__cause__ is None  # no sqlite3 traceback under it


def test_a_store_file_that_is_not_a_database_is_refused_at_open(tmp_path: Path) -> None:
    (tmp_path / STORE_FILE).write_bytes(b"not SQLite at all, " * 100)
    with pytest.raises(DataDirError) as refused:
        open_store(data_dir=tmp_path)
    assert STORE_FILE in str(refused.value)


ROOT_SKIP = "root ignores file permissions (the case under a regular file runs for root too)"


@pytest.mark.skipif(os.geteuid() == 0, reason=ROOT_SKIP)
def test_a_read_only_data_directory_is_refused_at_open(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(DataDirError):
        open_store(data_dir=tmp_path / "ro")


def test_a_sqlite_file_locked_beyond_the_timeout_is_unavailable_then_usable(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'lab.sqlite3'}"
    store = open_store(url, timeout=0.05)
    code = store.open_round("lecture", "q", ["a", "b"]).code
    store.answer(code, "s1", "a")
    holder = sqlite3.connect(tmp_path / "lab.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
    try:
        with pytest.raises(StoreUnavailable) as failed:
            store.answer(code, "s1", "b")
        assert failed.value.reason == "unavailable"
        with pytest.raises(StoreUnavailable):
            open_store(url, timeout=0.05)  # locked: unavailable, not a bad data directory
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.own_answer(code, "s1") == "a"  # the refused change is not stored
    assert store.answer(code, "s1", "b").changed
    assert store.counts(code) == {"a": 0, "b": 1}
    store.disconnect()


def test_a_stopped_postgresql_is_unavailable_and_the_same_store_works_once_it_is_back(
    own_pg: PgServer,
) -> None:
    store = open_store(own_pg.new_database(), timeout=2)
    code = store.open_round("lecture", "q", ["a", "b"]).code
    store.answer(code, "s1", "a")
    own_pg.stop()  # mid-round: the store's connection is cut
    for asks in (
        lambda: store.answer(code, "s2", "b"),
        lambda: store.current(code),
        lambda: store.answer_count(code),
        lambda: store.reveal(code),
    ):
        with pytest.raises(StoreUnavailable) as failed:
            asks()
        assert "PostgreSQL" in str(failed.value)
    own_pg.start()
    assert store.current(code).is_open  # the same Store, no new one
    assert store.counts(code) == {"a": 1, "b": 0}  # nothing from while it was down
    store.answer(code, "s2", "b")
    own_pg.stop()
    own_pg.start()  # restarted between two calls: the idle connection is stale
    assert store.answer(code, "s3", "b").round_no == 1
    assert store.counts(code) == {"a": 1, "b": 2}
    store.disconnect()


def test_a_postgresql_that_stops_answering_is_unavailable_within_the_timeout(
    pg_server: PgServer,
) -> None:
    """A statement that waits (here on a lock another session holds, as on a hung server)
    ends at the store's timeout as StoreUnavailable: a student's screen never hangs on it."""
    import psycopg

    pg_url = pg_server.new_database()
    store = open_store(pg_url, timeout=1)
    code = store.open_round("lecture", "q", ["a", "b"]).code
    with psycopg.connect(pg_url) as holder:
        holder.execute("LOCK TABLE answers IN ACCESS EXCLUSIVE MODE")  # held until the end
        finished = threading.Event()

        def answer() -> None:
            with pytest.raises(StoreUnavailable):
                store.answer(code, "s1", "a")
            finished.set()

        worker = threading.Thread(target=answer)
        worker.start()
        assert finished.wait(10), "the answer waited past ten times the timeout"
        worker.join()
        holder.rollback()
    assert store.answer(code, "s1", "a").answer == "a"  # the lock gone: the store works
    store.disconnect()


def test_a_postgresql_that_is_not_running_is_unavailable_at_open(own_pg: PgServer) -> None:
    url = own_pg.new_database()
    own_pg.stop()
    with pytest.raises(StoreUnavailable):
        open_store(url, timeout=2)
    own_pg.start()
    with open_store(url, timeout=2) as store:
        assert store.backend == "postgresql"
