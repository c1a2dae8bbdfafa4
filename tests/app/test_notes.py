"""ui/views/notes.py: the untrained-weights note and shortened vectors."""

import numpy as np

from tests.app.conftest import open_page, texts
from ui.i18n import Translator
from ui.notes import short_list
from ui.pages import PAGES

CONCEPT_PAGES = [p for p in PAGES if p.file.startswith("pages/") and p.section != "models"][:8]


def test_short_vectors_are_written_in_full():
    assert short_list(np.array([0.5, -1.0, 2.0])) == "[0.500, −1.000, 2.000]"
    assert short_list(np.arange(6.0), 0) == "[0, 1, 2, 3, 4, 5]"


def test_long_vectors_keep_the_first_four_and_the_last_two():
    text = short_list(np.arange(64.0), 0)
    assert text == "[0, 1, 2, 3, …, 62, 63]"


def test_every_concept_page_says_its_weights_are_untrained():
    ids = [p.id for p in CONCEPT_PAGES]
    assert ids == [
        "lookup",
        "qkv",
        "scaling",
        "softmax",
        "weighted_sum",
        "masking",
        "multi_head",
        "kv_cache",
    ]
    for info in CONCEPT_PAGES[1:3]:  # two pages run here; every page's own test checks it too
        for lang in ("en", "zh"):
            at = open_page(info.file, lang=lang)
            assert Translator(lang)(f"{info.id}.untrained") in texts(at), (info.id, lang)
