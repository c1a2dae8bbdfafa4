"""ui.prompt: SmolLM2 on the pages that look inside it — without the model installed, each
says how to install it, in the page's language, instead of a traceback."""

import pytest

from core.llama import parameter_count
from tests.app.conftest import open_page
from tests.conftest import smollm2
from ui import loaded
from ui.i18n import Translator
from ui.prompt import sizes


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoder_without_the_model_says_how_to_install_it_and_stops(no_model, lang):
    at = open_page("pages/10_decoder.py", lang=lang)
    assert not at.exception
    assert [e.value for e in at.error] == [Translator(lang)("decoder.missing")]
    assert not at.get("vega_lite_chart")


def test_sinks_without_the_model_keeps_its_toy_step_and_says_so_on_the_model_steps(no_model):
    toy = open_page("pages/15_sinks.py", lang="zh", step="1")
    assert not toy.exception and not toy.error and toy.get("vega_lite_chart")
    for step in ("2", "3"):
        at = open_page("pages/15_sinks.py", lang="zh", step=step)
        assert not at.exception
        assert [e.value for e in at.error] == [Translator("zh")("sinks.missing")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_smollm2_pages_name_the_4_bit_copy_they_run_with_the_files_shares(lang):
    """/decoder, /rope, /gqa and /sinks run the wheel's 4-bit copy: each model step says so
    for students, with each storage type's share of the numbers read from the file."""
    stored = dict(loaded.smollm2().stored)
    share = f"{stored['Q4_1'] / sum(stored.values()):.0%}".replace("%", " %")
    t = Translator(lang)
    for page, step in (
        ("pages/10_decoder.py", "1"),
        ("pages/12_rope.py", "4"),
        ("pages/13_gqa.py", "4"),
        ("pages/13_gqa.py", "3"),
    ):
        captions = [c.value for c in open_page(page, lang=lang, step=step).caption]
        note = [c for c in captions if c.startswith(t("app.smollm_weights").split("{")[0])]
        assert len(note) == 1 and share in note[0] and "Q4_1" in note[0], (page, step)
    slide = open_page("pages/12_rope.py", lang=lang, step="4", present="1")
    assert not any("Q4_1" in c.value for c in slide.caption)  # a slide keeps its room


def test_the_model_sizes_for_running_text_are_read_from_the_weights():
    m = smollm2()
    sz, cfg = sizes(m), m.config
    assert sz["params"].replace(" ", "") == str(parameter_count(m.weights))
    assert sz["group"] == str(cfg.n_heads // cfg.n_kv_heads)
    assert (sz["d"], sz["dh"], sz["kv"]) == (str(cfg.d_model), str(cfg.d_head), str(cfg.n_kv_heads))
    assert sz["ff"].replace(" ", "") == str(cfg.d_ff) and " " in sz["vocab"]
