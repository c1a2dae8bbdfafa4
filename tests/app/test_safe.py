"""ui.safe: user text shown as plain text, never as markdown or HTML."""

from ui.safe import plain


def test_plain_escapes_markdown_and_html() -> None:
    shown = plain("<img src=x> [a](http://e) **b**")
    assert "<" not in shown.replace("\\<", "") and "](" not in shown
    assert len(plain("x" * 500)) <= 40
