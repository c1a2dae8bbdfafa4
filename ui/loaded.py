"""The real models, loaded once per server process and shared read-only by every session.

Each loader is an ``st.cache_resource`` function: the first caller reads the files, every
later one (any session) gets the same objects. :func:`warm_models` calls them in the
background once per process, a few seconds after the server's first page run and once
the process is not busy drawing pages (at most 30 s later), so a lecture's first visit to
a model page finds them in memory instead of waiting behind a spinner. A page opened
meanwhile waits for that same load instead of starting a second one.
"""

import threading
import time
from collections.abc import Callable, Sequence

import streamlit as st
from streamlit import runtime
from tokenizers import Tokenizer

from core.bert import BertWeights
from models import minilm, multilingual_e5, smollm

# The models load this long after a server's first page run starts: that page is drawn
# first, on a 2-core machine, and the models are in memory well before a lecture reaches them.
WARM_DELAY_S = 3.0
# ... and only once the process is not busy drawing pages: a replica restarted mid-lecture
# has half a class reconnecting to it at once, and loading the models (~1.9 s of CPU)
# beside their ~150 first runs made every page wait longer. Busy: it used more than
# BUSY_SHARE of a core over the last BUSY_LOOK_S; after WARM_AT_MOST_S it loads anyway.
BUSY_SHARE = 0.25
BUSY_LOOK_S = 0.5
WARM_AT_MOST_S = 30.0


@st.cache_resource(show_spinner=False)
def smollm2() -> smollm.SmolLM:
    """SmolLM2-135M's float32 weights and tokenizer (~540 MB, about 4 s on 2 cores)."""
    return smollm.load()


@st.cache_resource(show_spinner=False)
def minilm_l6() -> tuple[BertWeights, Tokenizer]:
    """all-MiniLM-L6-v2's weights and tokenizer."""
    return minilm.load_weights(), minilm.load_tokenizer()


@st.cache_resource(show_spinner=False)
def e5_small() -> tuple[BertWeights, multilingual_e5.UnigramTokenizer]:
    """multilingual-e5-small's 4-bit weights (embedding rows dequantised on demand) and its
    SentencePiece tokenizer (~0.5 s and ~150 MB; the 250,002 pieces take ~60 MB)."""
    return multilingual_e5.load_weights(), multilingual_e5.load_tokenizer()


def process_busy(look: float = BUSY_LOOK_S, share: float = BUSY_SHARE) -> bool:
    """Whether this process's threads used more than ``share`` of a core over the next
    ``look`` seconds (the caller's thread sleeps meanwhile)."""
    used = time.process_time()
    time.sleep(look)
    return time.process_time() - used > share * look


def warm(
    loaders: Sequence[Callable[[], object]],
    delay: float,
    busy: Callable[[], bool] = process_busy,
    at_most: float = WARM_AT_MOST_S,
) -> threading.Thread:
    """Call ``loaders`` one after the other in a background (daemon) thread, ``delay`` seconds
    from now and once ``busy()`` says no (or ``at_most`` seconds from now), and return the
    thread. A loader that fails is skipped: its page reports the failure itself when it is
    opened (a cached loader keeps no failure)."""

    def run() -> None:
        start = time.monotonic()
        time.sleep(delay)
        while time.monotonic() - start < at_most and busy():
            pass
        for load in loaders:
            try:
                load()
            except Exception:  # the page shows its own message when it is opened
                continue

    thread = threading.Thread(target=run, name="attention-lab-warm-models", daemon=True)
    thread.start()
    return thread


@st.cache_resource(show_spinner=False)
def warm_models() -> threading.Thread | None:
    """Once per server process: load every real model in the background (see the module's
    docstring). Not under AppTest, whose runtime is a stand-in: a test process reads a model
    only when a test opens its page."""
    if type(runtime.get_instance()) is not runtime.Runtime:  # AppTest's is a MagicMock(spec=...)
        return None
    return warm([smollm2, minilm_l6, e5_small], WARM_DELAY_S)
