"""ui.params: the URL specs accept only valid values."""

import pytest

from ui.params import Choice, Flag, Float, Int, Many, Text, divisor_choice


@pytest.mark.parametrize(
    ("spec", "raw", "value"),
    [
        (Int("n", 6, 2, 32), "12", 12),
        (Int("n", 6, 2, 32), "-3", None),
        (Int("n", 6, 2, 32), "1e99", None),
        (Int("n", 6, 2, 32), "99999999999999999999", None),
        (Int("n", 6, 2, 32), "6.0", None),
        (Float("t", 1.0, 0.01, 10.0), "nan", None),
        (Float("t", 1.0, 0.01, 10.0), "inf", None),
        (Float("t", 1.0, 0.01, 10.0), "0.5", 0.5),
        (Float("t", 1.0, 0.01, 10.0), "abc", None),
        (Choice("h", "2", ("1", "2", "4")), "abc", None),
        (Choice("h", "2", ("1", "2", "4")), "4", "4"),
        (Text("s", "x", 5), "toolong", None),
        (Flag("f", False), "true", True),
        (Flag("f", False), "yes", None),
        (Many("off", ("0", "1", "2")), "2.0", ("0", "2")),  # the options' order
        (Many("off", ("0", "1", "2")), "", ()),
        (Many("off", ("0", "1", "2")), "1..1", ("1",)),
        (Many("off", ("0", "1", "2")), "1.9", None),
    ],
)
def test_url_specs_accept_only_valid_values(spec, raw, value) -> None:
    assert spec.parse(raw) == value


def test_divisor_choice_offers_only_divisors() -> None:
    spec = divisor_choice("heads", 12, 5)
    assert spec.options == ("1", "2", "3", "4", "6", "12")
    assert spec.default == "1"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_over_long_url_text_is_cut_to_the_box_and_says_so(lang) -> None:
    from tests.app.conftest import open_page
    from ui.i18n import Translator

    at = open_page("pages/2_qkv.py", lang=lang, text="cat " * 100)  # 400 characters
    box = at.text_input(key="text").value
    assert box == ("cat " * 100)[:300]  # the box keeps the first max_chars
    said = Translator(lang)("params.too_long", name="text", limit=300)
    assert said in [w.value for w in at.warning]
