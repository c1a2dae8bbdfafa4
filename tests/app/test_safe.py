"""ui.safe: user text shown as plain text, never as markdown or HTML."""

from ui.safe import one_line, plain


def test_plain_escapes_markdown_and_html() -> None:
    shown = plain("<img src=x> [a](http://e) **b**")
    assert "<" not in shown.replace("\\<", "") and "](" not in shown
    assert len(plain("x" * 500)) <= 40


def test_one_line_shortens_and_keeps_the_text_as_typed() -> None:
    assert one_line("[CLS]  it\n was.") == "[CLS] it was."  # nothing escaped
    shortened = one_line("x" * 500, 24)
    assert len(shortened) == 24 and shortened.endswith("…")
