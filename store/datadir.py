"""The data directory: where the embedded store's file and the lecturer key live.

The default is ``$ATTENTION_LAB_DATA`` if set, else ``~/.local/share/attention-lab``. It is
created on first use.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from store.db import DataDirError

DATA_ENV = "ATTENTION_LAB_DATA"  # the environment variable naming the data directory
KEY_FILE = "lecturer.key"  # the lecturer key's file inside the data directory


def default_data_dir() -> Path:
    """The data directory used when none is given: ``$ATTENTION_LAB_DATA``, else
    ``~/.local/share/attention-lab``."""
    named = os.environ.get(DATA_ENV, "").strip()
    return Path(named).expanduser() if named else Path.home() / ".local/share/attention-lab"


def ensure_data_dir(data_dir: Path | None = None) -> Path:
    """The data directory (``default_data_dir()`` if None), created if missing; raises
    ``DataDirError`` if it cannot be created or written to."""
    path = Path(data_dir) if data_dir is not None else default_data_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DataDirError(f"cannot create the data directory {path}: {error}") from None
    if not path.is_dir():
        raise DataDirError(f"the data directory {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise DataDirError(f"the data directory {path} is not writable")
    return path


def lecturer_key(data_dir: Path | None = None) -> str:
    """The lecturer key: made on the first call (``secrets.token_urlsafe``), kept in
    ``<data_dir>/lecturer.key`` readable by its owner only (mode 0600), the same on every
    later call, also from another process. Raises ``DataDirError`` if the data directory
    cannot hold it."""
    folder = ensure_data_dir(data_dir)
    path = folder / KEY_FILE
    try:
        if not path.exists():
            _write_once(path, secrets.token_urlsafe(24))
        if stat.S_IMODE(path.stat().st_mode) != 0o600:
            path.chmod(0o600)  # a key copied in by hand with wider rights
        key = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise DataDirError(f"cannot keep the lecturer key in {path}: {error}") from None
    if not key:
        raise DataDirError(f"the lecturer key file {path} is empty: delete it to make one")
    return key


def _write_once(path: Path, key: str) -> None:
    """Write ``key`` to ``path`` unless another process got there first: the file appears
    whole (written beside it, then linked into place), never half-written."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(key + "\n")
        with contextlib.suppress(FileExistsError):  # another process made the key first
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)
