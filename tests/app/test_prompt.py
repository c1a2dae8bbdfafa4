"""ui.prompt: SmolLM2 on the pages that look inside it — without the model installed, each
says how to install it, in the page's language, instead of a traceback."""

import pytest

from tests.app.conftest import open_page
from ui.i18n import Translator


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoder_without_the_model_says_how_to_install_it_and_stops(no_model, lang):
    at = open_page("pages/10_decoder.py", lang=lang)
    assert not at.exception
    assert [e.value for e in at.error] == [Translator(lang)("decoder.missing")]
    assert not at.get("vega_lite_chart")


def test_sinks_without_the_model_keeps_its_toy_step_and_says_so_on_the_model_steps(no_model):
    toy = open_page("pages/14_sinks.py", lang="zh", step="1")
    assert not toy.exception and not toy.error and toy.get("vega_lite_chart")
    for step in ("2", "3"):
        at = open_page("pages/14_sinks.py", lang="zh", step=step)
        assert not at.exception
        assert [e.value for e in at.error] == [Translator("zh")("sinks.missing")]
