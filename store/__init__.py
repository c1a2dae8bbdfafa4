"""The store: Ask the class's rounds and answers in a real database (an I/O layer beside
``models/``; ``core/`` never imports it).

``open_store()`` opens SQLite (WAL) in one file under the data directory
(``$ATTENTION_LAB_DATA``, else ``~/.local/share/attention-lab``), made on first use;
``open_store("postgresql://…")`` opens PostgreSQL (several hosts). Both share one
versioned schema. ``lecturer_key(data_dir)`` is the lecturer's secret, kept in the data
directory. Errors: ``StoreError`` and its subclasses when the store fails (``StoreUnavailable``:
retry later), ``RefusedError`` and its subclasses when a request is refused; each has a stable
``reason`` the UI translates.
"""

from store.datadir import DATA_ENV, default_data_dir, ensure_data_dir, lecturer_key
from store.db import (
    SCHEMA_VERSION,
    STORE_FILE,
    DataDirError,
    SchemaTooNewError,
    StoreError,
    StoreUnavailable,
    StoreUrlError,
)
from store.store import (
    JOIN_ALPHABET,
    JOIN_CODE_LENGTH,
    BadStudentError,
    Confirmation,
    NotAnOptionError,
    NotANumberError,
    NotRevealedError,
    RefusedError,
    ResultRow,
    RoundClosedError,
    RoundInfo,
    Store,
    TooManyAnswersError,
    UnknownCodeError,
    normalise_code,
    open_store,
)

__all__ = [
    "DATA_ENV",
    "JOIN_ALPHABET",
    "JOIN_CODE_LENGTH",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "BadStudentError",
    "Confirmation",
    "DataDirError",
    "NotANumberError",
    "NotAnOptionError",
    "NotRevealedError",
    "RefusedError",
    "ResultRow",
    "RoundClosedError",
    "RoundInfo",
    "SchemaTooNewError",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "StoreUrlError",
    "TooManyAnswersError",
    "UnknownCodeError",
    "default_data_dir",
    "ensure_data_dir",
    "lecturer_key",
    "normalise_code",
    "open_store",
]
