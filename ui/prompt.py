"""A prompt a student types for SmolLM2 on a page that looks inside the model (/rope, /gqa):
the model behind a spinner, the prompt as the model reads it (capped), and the page's own
messages (``<page>.loading``, ``<page>.empty``, ``<page>.capped``, ``<page>.chinese``)."""

import unicodedata

import streamlit as st

from models import smollm
from models.smollm_probe import PromptTokens, prompt_tokens
from ui import loaded
from ui.context import PageContext


def model_or_stop(ctx: PageContext) -> smollm.SmolLM:
    """The loaded model (once per server process, behind a spinner)."""
    with st.spinner(ctx.t(f"{ctx.page}.loading")):
        return loaded.smollm2()


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


def chinese_note(ctx: PageContext, raw: str) -> None:
    """Say what this model can read when the prompt holds Chinese (or other wide) text."""
    if any(unicodedata.east_asian_width(c) in "WF" for c in raw):
        st.info(ctx.t(f"{ctx.page}.chinese"), icon=":material/translate:")
