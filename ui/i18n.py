"""Translations: ``t("softmax.title", n=3)`` looks a key up in the active language.

Catalogs live in ``ui/locales/<lang>/<section>.toml``; a key is ``<section>.<name>`` (nested
TOML tables add further dots). Both languages must have exactly the same keys and the same
``{placeholders}`` — ``tests/app/test_i18n.py`` enforces it.
"""

import string
import threading
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

LANGUAGES = ("en", "zh")
DEFAULT_LANGUAGE = "en"
LANGUAGE_NAMES = MappingProxyType({"en": "English", "zh": "简体中文"})
LOCALES_DIR = Path(__file__).parent / "locales"
# One thread reads a catalog, the others wait for it: a class whose replica restarted
# reconnects to the new process all at once, and each of ~150 sessions read the 28 files
# itself (25 ms each): 2.5 s of the process's CPU before any page was drawn.
_READING = threading.Lock()


def _flatten(table: Mapping, prefix: str) -> dict[str, str]:
    """Nested TOML tables -> ``{"a.b.c": text}``."""
    flat: dict[str, str] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, key))
        else:
            flat[key] = str(value)
    return flat


def catalog(lang: str) -> Mapping[str, str]:
    """Every key of one language, read once per process (read-only afterwards)."""
    with _READING:
        return _read_catalog(lang)


@cache
def _read_catalog(lang: str) -> Mapping[str, str]:
    flat: dict[str, str] = {}
    for path in sorted((LOCALES_DIR / lang).glob("*.toml")):
        with path.open("rb") as f:
            flat.update(_flatten(tomllib.load(f), path.stem))
    return MappingProxyType(flat)


def placeholders(text: str) -> set[str]:
    """The ``{names}`` a catalog string expects."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def browser_language(locale: str | None) -> str:
    """Map a browser locale such as ``zh-CN`` or ``en-US`` to one of :data:`LANGUAGES`."""
    return "zh" if (locale or "").lower().startswith("zh") else DEFAULT_LANGUAGE


class Translator:
    """Callable that renders catalog strings in one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
        self._catalog = catalog(self.lang)

    def __call__(self, key: str, **values: object) -> str:
        """The text for ``key`` with ``{placeholders}`` filled in. Unknown keys raise KeyError."""
        text = self._catalog[key]
        return text.format(**values) if values else text

    def has(self, key: str) -> bool:
        """Whether ``key`` exists (for optional texts such as per-page notes)."""
        return key in self._catalog
