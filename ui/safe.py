"""Showing text users typed without letting it become markup."""

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def plain(text: object, limit: int = 40) -> str:
    """User text made safe for Streamlit markdown: shortened, one line, specials escaped.

    Escaping stops links, images, HTML and LaTeX in user input from being rendered.
    """
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return _MARKDOWN_SPECIAL.sub(r"\\\1", s)
