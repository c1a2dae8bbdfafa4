"""store/datadir.py: the data directory and the lecturer key."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from store import DATA_ENV, DataDirError, default_data_dir, ensure_data_dir, lecturer_key


def test_the_data_directory_is_the_environments_or_under_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert default_data_dir() == tmp_path / "home/.local/share/attention-lab"
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "lab"))
    assert default_data_dir() == tmp_path / "lab"
    assert ensure_data_dir() == tmp_path / "lab"
    assert (tmp_path / "lab").is_dir()  # made on first use


def test_the_lecturer_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    key = lecturer_key(data)
    assert len(key) >= 32
    kept = data / "lecturer.key"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert lecturer_key(data) == key
    assert lecturer_key(tmp_path / "elsewhere") != key
    assert sorted(p.name for p in data.iterdir()) == ["lecturer.key"]  # no temporary left


def test_a_key_file_readable_by_others_is_made_private(tmp_path: Path) -> None:
    key = lecturer_key(tmp_path)
    (tmp_path / "lecturer.key").chmod(0o644)
    assert lecturer_key(tmp_path) == key
    assert stat.S_IMODE((tmp_path / "lecturer.key").stat().st_mode) == 0o600


def test_processes_starting_together_get_one_key(tmp_path: Path) -> None:
    keys: list[str] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        keys.append(lecturer_key(tmp_path))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8
    assert len(set(keys)) == 1


def test_a_data_directory_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(DataDirError) as failed:
        lecturer_key(tmp_path / "file" / "sub")  # under a regular file: fails for root too
    assert failed.value.reason == "data_dir"
    assert "file/sub" in str(failed.value)
    with pytest.raises(DataDirError):
        ensure_data_dir(tmp_path / "file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_data_directory_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(DataDirError):
        lecturer_key(tmp_path / "ro")
