"""The shared "sentence + dimensions" controls used by every page that embeds tokens.

URL keys: ``text``, ``d_model``, ``d_k``, ``d_v``, ``seed``, ``embedding`` (lesson|stable),
``pos`` (positional encoding). Defaults are lesson 002's example: "The cat sat on the mat",
d_model = 8, d_k = d_v = 4, seed 42, lesson embeddings — so the page reproduces the
lesson's numbers as it opens.
"""

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import streamlit as st

import core
from ui.charts import unique_labels
from ui.context import PageContext
from ui.params import Choice, Flag, Int, Text, assign, number, select, slider, text, toggle
from ui.safe import plain

LESSON_TEXT = "The cat sat on the mat"
NATIVE_TEXT = {"zh": "猫坐在垫子上"}  # a page's default sentence per language (per character)
TEXT = Text("text", LESSON_TEXT, max_len=300)
D_MODEL = Int("d_model", 8, 2, 64)
D_K = Int("d_k", 4, 1, 64)
D_V = Int("d_v", 4, 1, 64)
SEED = Int("seed", 42, 0, 2**32 - 1)
EMBED = Choice("embedding", "lesson", core.EMBEDDING_MODES)  # "embed" is Streamlit's own
POSITIONS = Flag("pos", False)
TOKEN_KEY = "token"  # URL key of a followed token (an index "0".."n-1")
LESSON_SETTINGS = (
    (TEXT, LESSON_TEXT),
    (D_MODEL, 8),
    (D_K, 4),
    (D_V, 4),
    (SEED, 42),
    (EMBED, "lesson"),
    (POSITIONS, False),
)


@dataclass(frozen=True)
class Sentence:
    """Tokens, their embeddings and the projection sizes chosen on the page."""

    tokens: list[str]
    x: np.ndarray  # (n, d_model)
    d_model: int
    d_k: int
    d_v: int
    seed: int
    mode: str
    positions: bool

    def projections(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """W_Q, W_K, W_V for these sizes and seed (lesson 002's initialisation)."""
        return core.init_projections(self.d_model, self.d_k, self.d_v, self.seed)


def load_lesson_example() -> None:
    """Button callback: restore lesson 002's exact settings (the URL follows)."""
    for spec, value in LESSON_SETTINGS:
        assign(spec, value)


def tokens_or_default(ctx: PageContext, raw: str) -> list[str]:
    """Tokenise the user's text; on bad text warn (translated) and use the lesson sentence."""
    try:
        return core.tokenize(raw)
    except core.TooManyTokensError as err:
        ctx.warn(ctx.t("sentence.too_many", count=err.count, limit=err.limit))
    except core.TokenizeError:
        ctx.warn(ctx.t("sentence.empty"))
    return core.tokenize(LESSON_TEXT)


def sentence_controls(
    ctx: PageContext,
    dims: bool = True,
    key_dims: bool = True,
    native: bool = False,
    d_model_step: int = 1,
) -> Sentence:
    """Draw the sentence and size controls and embed the sentence.

    ``dims=False`` hides d_model/d_k/d_v (defaults are used); ``key_dims=False`` hides only
    d_k and d_v (e.g. multi-head pages derive them from d_model and h). ``native=True``
    (pages about token patterns) starts from a sentence in the reader's language
    (:data:`NATIVE_TEXT`); the lesson example stays one click away. ``d_model_step``: a
    move of the d_model slider lands on a multiple of it (multi-head: of h, so that h still
    divides d_model), see :func:`snap_d_model`.
    """
    t = ctx.t
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        spec = replace(TEXT, default=NATIVE_TEXT.get(ctx.lang, LESSON_TEXT)) if native else TEXT
        raw = text(ctx, spec, t("sentence.text"), help=t("sentence.text_help"))
        st.button(
            "" if not ctx.presenter else t("sentence.lesson"),
            on_click=load_lesson_example,
            icon=":material/school:",
            help=t("sentence.lesson_help"),
            width="content",
            key="lesson_example",
        )
    tokens = tokens_or_default(ctx, raw)
    d_model = d_k = d_v = None
    if dims:
        snap = {"on_change": snap_d_model, "args": (d_model_step,)}
        d_model = slider(ctx, D_MODEL, "d_model", **snap)
        st.session_state[_PREVIOUS_D_MODEL] = d_model
        if key_dims:
            left, right = st.columns(2)
            with left:
                d_k = slider(ctx, D_K, "d_k")
            with right:
                d_v = slider(ctx, D_V, "d_v")
    # The rarely moved ones, folded for students (every control of the sidebar then fits a
    # laptop's screen); on a slide they sit in the settings expander already.
    with more_box(ctx, t("sentence.more")):
        with st.container(horizontal=True, vertical_alignment="bottom", gap="medium"):
            seed = number(ctx, SEED, t("sentence.seed"), width=140)
            positions = toggle(ctx, POSITIONS, t("sentence.positions"))
        mode = select(
            ctx, EMBED, t("sentence.embed"), format_func=lambda m: t(f"sentence.mode_{m}")
        )
    d_model = d_model or D_MODEL.default
    x = core.embed_tokens(tokens, d_model, mode, int(seed), positions)
    return Sentence(
        tokens, x, d_model, d_k or D_K.default, d_v or D_V.default, int(seed), mode, positions
    )


_PREVIOUS_D_MODEL = "_previous_d_model"  # d_model of the last run: the direction of a move


def snap_d_model(step: int) -> None:
    """Slider callback: a d_model that is not a multiple of ``step`` moves on, in the
    direction the slider went, to the next multiple (8 -> 9 becomes 10 for step 2; 10 -> 9
    becomes 8), within the slider's range. Nothing moves when the range holds at most one
    multiple (e.g. step 64): then the page's own fallback explains the clash."""
    value = int(st.session_state[D_MODEL.key])
    multiples = [m for m in range(step, D_MODEL.hi + 1, step) if m >= D_MODEL.lo]
    if value % step == 0 or len(multiples) < 2:
        return
    up = value > int(st.session_state.get(_PREVIOUS_D_MODEL, D_MODEL.default))
    ahead = [m for m in multiples if (m > value if up else m < value)]
    st.session_state[D_MODEL.key] = (
        (min(ahead) if up else max(ahead)) if ahead else (multiples[-1] if up else multiples[0])
    )


def current_d_model() -> int:
    """The d_model this run will use, before its slider is drawn: the widget's value, else
    the link's (when valid), else the default."""
    if D_MODEL.key in st.session_state:
        return int(st.session_state[D_MODEL.key])
    return D_MODEL.parse(st.query_params.get(D_MODEL.key, "")) or D_MODEL.default


def more_box(ctx: PageContext, label: str) -> AbstractContextManager:
    """Secondary controls: a closed expander for students (in the sidebar), in place on a
    slide (already inside the settings expander; expanders do not nest)."""
    if ctx.presenter:
        return st.container()
    return st.expander(label, icon=":material/more_horiz:")


def token_picker(ctx: PageContext, tokens: list[str], label: str) -> int:
    """The followed token, kept in the URL as its index (``?token=2``), shown as the token.

    An index that does not exist in this sentence (a shortened sentence, a bad link) warns
    and falls back to the first token.
    """
    labels = unique_labels(tokens)
    spec = Choice(TOKEN_KEY, "0", tuple(str(i) for i in range(len(tokens))))
    return int(select(ctx, spec, label, format_func=lambda i: plain(labels[int(i)], 24)))


def sentence_draw(**options: Any) -> Callable[[PageContext, Any], Sentence]:
    """The ``draw(ctx, got)`` of a :class:`ui.steps.Controls` group of the sentence and size
    controls: :func:`sentence_controls` with ``options`` (``dims``, ``key_dims``, ``native``,
    ``d_model_step``), returning the :class:`Sentence`::

        SENTENCE = Controls(sentence_draw(), box="qkv.settings", slide="settings")
    """

    def draw(ctx: PageContext, got: Any) -> Sentence:
        return sentence_controls(ctx, **options)

    return draw


def token_draw(sentence: object, label: str) -> Callable[[PageContext, Any], int]:
    """The ``draw(ctx, got)`` of a :class:`ui.steps.Controls` group of the
    :func:`token_picker` over the tokens of the group ``sentence`` (``got[sentence]``, a
    :class:`Sentence`), labelled with the catalog key ``label``; returns the followed
    token's index::

        TOKEN = Controls(token_draw(SENTENCE, "qkv.token"))
    """

    def draw(ctx: PageContext, got: Any) -> int:
        return token_picker(ctx, got[sentence].tokens, ctx.t(label))

    return draw
