"""ui.params: the URL specs accept only valid values."""

import pytest

from ui.params import Choice, Flag, Float, Int, Text, divisor_choice


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
    ],
)
def test_url_specs_accept_only_valid_values(spec, raw, value) -> None:
    assert spec.parse(raw) == value


def test_divisor_choice_offers_only_divisors() -> None:
    spec = divisor_choice("heads", 12, 5)
    assert spec.options == ("1", "2", "3", "4", "6", "12")
    assert spec.default == "1"
