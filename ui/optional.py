"""Optional packages the pages use when they are installed: torch, for the cross-checks of
/multi_head and /gqa against PyTorch's own attention."""

import gc
from types import ModuleType

import streamlit as st


@st.cache_resource(show_spinner=False)
def torch() -> ModuleType | None:
    """torch, imported once per server process (None if it fails to import). Its ~140 000
    objects live as long as the process, so they are frozen out of the garbage collector's
    sight, as the start-up objects are (:mod:`ui.shell`): a full collection that walked
    them all paused whichever rerun it fell on by ~70 ms more."""
    try:
        import torch
    except ImportError:
        return None
    gc.collect()
    gc.freeze()
    return torch
