"""Showing text users typed without letting it become markup."""

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def one_line(text: object, limit: int = 40) -> str:
    """User text shortened to one line of at most ``limit`` characters, for a place that
    shows text as text (a select box's options; nothing there is read as markdown)."""
    s = " ".join(str(text).split())
    return s[: limit - 1] + "…" if len(s) > limit else s


def plain(text: object, limit: int = 40) -> str:
    """User text made safe for Streamlit markdown: :func:`one_line`, specials escaped.

    Escaping stops links, images, HTML and LaTeX in user input from being rendered.
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text, limit))
