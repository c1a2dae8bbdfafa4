"""The store from a terminal (what deploy/serve runs before it starts the replicas).

    python -m store key [--data-dir D]                 # the lecturer key (made on first use)
    python -m store check [--data-dir D] [--store URL]  # open (create) the store; say where

``--data-dir`` defaults to ``$ATTENTION_LAB_DATA`` (else ``~/.local/share/attention-lab``),
``--store`` to ``$ATTENTION_LAB_STORE`` (a ``postgresql://…`` URL; unset or empty: SQLite
in the data directory), as the app reads them. Prefer the environment variable for a URL
with a password: a command line is visible to every user of the machine (``ps``). A
password is never printed. A store that cannot be used (the data directory not writable,
PostgreSQL down, an unknown URL, a schema from a newer app) is one line on stderr and exit
status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from store.datadir import default_data_dir, ensure_data_dir, lecturer_key
from store.db import SCHEMA_VERSION, StoreError, sqlite_path
from store.store import open_store

STORE_ENV = "ATTENTION_LAB_STORE"  # the environment variable naming the store's URL
HIDDEN = "***"  # what a password is shown as


def redacted(url: str) -> str:
    """``url`` with its password (``user:password@`` or ``?password=``) shown as ``***``."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<the store URL>"
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{HIDDEN}@{hosts}"
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = parts.query
    if any(k == "password" for k, _ in pairs):
        hidden = [(k, HIDDEN if k == "password" else v) for k, v in pairs]
        query = urllib.parse.urlencode(hidden, safe="*")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


def _secrets(url: str | None) -> list[str]:
    """The password(s) in ``url``, to take out of any message that might quote them."""
    if not url:
        return []
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return [url]
    found = [parts.password, urllib.parse.unquote(parts.password)] if parts.password else []
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    return found + [v for k, v in pairs if k == "password" and v]


def check(data_dir: Path, url: str | None) -> list[str]:
    """Open the store (creating the data directory, the file or the schema), close it; the
    lines that say where the data lives and the schema version."""
    folder = ensure_data_dir(data_dir)  # the lecturer key lives here whatever the store
    with open_store(url, folder) as store:
        backend = store.backend
    if backend == "sqlite":
        where = f"SQLite {sqlite_path(url, folder)}"
    else:
        where = f"PostgreSQL {redacted(url or '')}"
    return [f"data directory: {folder}", f"store: {where} (schema version {SCHEMA_VERSION})"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command and its options (``--store`` defaults to ``$ATTENTION_LAB_STORE``)."""
    p = argparse.ArgumentParser(prog="python -m store", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("key", "check"), help="key: the lecturer key; check: open")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the data directory (default: $ATTENTION_LAB_DATA or ~/.local/share/attention-lab)",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="postgresql://… (default: $ATTENTION_LAB_STORE; unset or empty: SQLite)",
    )
    args = p.parse_args(argv)
    if args.store is None:
        args.store = os.environ.get(STORE_ENV, "")
    args.store = args.store.strip() or None
    args.data_dir = (args.data_dir or default_data_dir()).expanduser().absolute()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0, or 1 with one line on stderr if the store cannot be used."""
    args = parse_args(argv)
    try:
        if args.action == "key":
            lines = [lecturer_key(args.data_dir)]
        else:
            lines = check(args.data_dir, args.store)
    except StoreError as error:
        message = " ".join(str(error).split())  # one line, whatever the driver said
        for secret in _secrets(args.store):
            message = message.replace(secret, HIDDEN)
        print(f"error ({error.reason}): {message}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
