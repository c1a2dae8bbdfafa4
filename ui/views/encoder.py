"""Presentation helpers for the real-encoder page (pages/9_encoder.py).

Two trained encoders, picked with ``?model=``: all-MiniLM-L6-v2 (English, the English
page's default) and multilingual-e5-small (about 100 languages, the Chinese page's default,
opening on a Chinese sentence). Each is read once per server process
(:mod:`ui.loaded`, ``st.cache_resource``, never mutated); each sentence's forward pass is
cached (:func:`analyse`, bounded). Every number comes from :mod:`core.bert`, which runs the
concept pages' ``scaled_dot_product_attention`` in every head; what the notes point out is
computed in :mod:`core.bert` and :mod:`core.findings.encoder`.
"""

from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import streamlit as st

import models
from core.bert import BertWeights, explain_weight, head_ranking, without_keys
from core.findings.encoder import (
    Flow,
    Question,
    bare,
    favourite_flips,
    flow,
    flow_facts,
    parked,
    place_of,
    question,
    rank_of,
    rare_link,
    specialist,
    spread,
    weight_shift,
)
from models import minilm
from models import multilingual_e5 as e5
from ui import charts, loaded, questions
from ui.context import PageContext
from ui.i18n import Translator
from ui.params import (
    Choice,
    Flag,
    Float,
    Text,
    assign,
    options_of,
    select,
    select_or_none,
    slider,
    text,
    toggle,
)
from ui.safe import one_line, plain
from ui.steps import Controls as Group  # this view's own Controls: what the page shows
from ui.steps import Got, View, stop
from ui.turns import model_turn

LESSON = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
# The Chinese pair for the multilingual model. Written with 它 after a comma: after 因为 the
# model's vocabulary has one piece 因为它, and 它 would have no row of its own.
ZH_TIRED, ZH_WIDE = "动物没有过马路，它太累了。", "动物没有过马路，它太宽了。"
# The words of each default pair the texts name: the English words are also the keys.
PAIR_WORDS = {
    "en": ("it", "animal", "street", "tired", "wide"),
    "zh": ("它", "动物", "马路", "累", "宽"),
}
MINILM, E5 = "minilm", "e5"  # the URL's tokens for the two models
MODELS = (MINILM, E5)
MAX_TEXT = 1500  # characters in a sentence box
MAX_TOKENS = minilm.MAX_TOKENS  # tokens the page reads (e5 could read 512: charts stay quick)
HIDE = Flag("hide_special", False)
QUERY_KEY, QUERY_WIDGET = "q", "_q_pick"
MAX_PILLS = 40  # presenter mode: longer sentences pick their query tokens from a drop-down
MAX_GRID_QUERIES = 3  # query tokens drawn in the grid of every head (panels each)
GRID_ROW = 6  # layers drawn side by side in that grid at most
UNKNOWN_LIMIT = 0.5  # more unknown pieces than this: the model cannot read the text
TOP_HEADS = 5
# The words the lesson's question asks about: said when the model reads one only inside a
# larger piece (the pronoun's query and the lesson's target: core.findings.encoder.question)
TARGET_WORDS = ("animal", "动物")
SEEN_SENTENCE = "_encoder_sentence"  # session state: the sentence the picked tokens index
# Presenter mode: px of height a step's chart may take (with its axes), so that the step's
# title, its one-line text and the "what to notice" box stay on a 1920 x 1080 screen, and
# the chart's share of the width where the notice (or the top heads) stand beside it.
HEAD_HEIGHT, GRID_HEIGHT, COMPARE_HEIGHT, EXPLAIN_HEIGHT = 820, 430, 620, 600
SEARCH_HEIGHT = 720  # a twelve-layer model's layer × head table, its numbers readable
FLOW_HEIGHT = 420  # step 6's three rows (raw, rollout, uniform) over the sentence's tokens
FLOW_ROW = 30  # px of each of those rows at least (cells as narrow as a long sentence needs)
TALL_GRID = 1.15  # the grid of a model with two rows of panels: this much more height
SIDE_SHARE = 0.58
# A weight that moves by more than this between sentence A and B shows in the B − A cells
# (two decimals) as a visible change; the comparison notice counts the rows that have one.
VISIBLE_CHANGE = 0.05
# Attention rollout's share of the residual connection (Abnar & Zuidema 2020 use 0.5)
RESIDUAL = Float("residual", 0.5, 0.0, 1.0)


def model_choice(lang: str) -> Choice:
    """The model switch: the Chinese page opens on the multilingual model."""
    return Choice("model", E5 if lang == "zh" else MINILM, MODELS)


def texts(model: str, lang: str) -> tuple[Text, Text]:
    """Sentence A and B: the Chinese pair on the Chinese page's multilingual model, else
    the lesson's English pair (MiniLM reads English only)."""
    first, second = (ZH_TIRED, ZH_WIDE) if (model, lang) == (E5, "zh") else (LESSON, WIDE)
    return Text("text", first, MAX_TEXT), Text("compare", second, MAX_TEXT)


def weights_of(model: str) -> BertWeights:
    """The model's weights, loaded once per process."""
    return (loaded.e5_small() if model == E5 else loaded.minilm_l6())[0]


def special_tokens(model: str) -> tuple[str, str]:
    """The tokens the model puts around every sentence: ``<s>``/``</s>`` or [CLS]/[SEP]."""
    return e5.SPECIAL if model == E5 else minilm.SPECIAL


def names(model: str) -> dict[str, str]:
    """The model's name and special tokens, for the texts (``{cls}`` is the opening one)."""
    cls, sep = special_tokens(model)
    return {"model": models.E5 if model == E5 else models.MINILM, "cls": cls, "sep": sep}


@dataclass(frozen=True)
class Analysis:
    """One sentence through the model."""

    model: str  # MINILM or E5
    text: str
    tokens: list[str]
    total: int  # tokens before the cap
    unknown_share: float
    hidden: np.ndarray  # (L+1, n, d_model)
    attention: np.ndarray  # (L, h, n, n)

    @property
    def special(self) -> list[int]:
        """Positions of the special tokens."""
        marks = special_tokens(self.model)
        return [i for i, tok in enumerate(self.tokens) if tok in marks]


@st.cache_data(max_entries=32, show_spinner=False)
def analyse(text: str, model: str = MINILM) -> Analysis:
    """Tokenise and run ``model`` on ``text`` (cached per sentence and model); the forward
    pass in its turn (:mod:`ui.turns`)."""
    if model == E5:
        weights, tokenizer = loaded.e5_small()
        enc = e5.encode(tokenizer, text, MAX_TOKENS)
        with model_turn(len(enc.ids)):
            out = e5.run(weights, enc)
    else:
        weights, tokenizer = loaded.minilm_l6()
        enc = minilm.encode(tokenizer, text)
        with model_turn(len(enc.ids)):
            out = minilm.run(weights, enc)
    return Analysis(
        model, text, enc.tokens, enc.total, enc.unknown_share, out.hidden, out.attention
    )


def sizes(model: str = MINILM) -> dict[str, int]:
    """The model's sizes for running text, read from its files (never typed in)."""
    cfg = weights_of(model).config
    return {
        "layers": cfg.n_layers,
        "heads": cfg.n_heads,
        "total": cfg.n_layers * cfg.n_heads,
        "width": cfg.d_model,
    }


def parameter_count(model: str = MINILM) -> int:
    """How many numbers the model has (counted in the loaded weights)."""
    w = weights_of(model)
    arrays = [w.word, w.position, w.token_type, w.ln_g, w.ln_b]
    arrays += [a for layer in w.layers for a in vars(layer).values()]
    return sum(a.size for a in arrays)


def parameter_amount(lang: str, count: int) -> str:
    """``count`` to three significant digits in the unit the language counts in: millions
    in English (``22.6``), 万 (ten thousands) in Chinese (``2260``)."""
    if lang == "zh":
        return f"{float(f'{count / 1e4:.3g}'):.0f}"
    return f"{count / 1e6:.3g}"


def model_line(ctx: PageContext, model: str) -> str:
    """What the model is, in a line: its sizes from its files, its languages, its origin (a
    slide: the sizes and languages only)."""
    short = "_short" if ctx.presenter else ""
    params = parameter_amount(ctx.lang, parameter_count(model))
    if model == MINILM:
        return ctx.t(f"encoder.model_minilm{short}", params=params, **sizes(model))
    info = e5_info()
    values = {
        "params": params,
        "pieces": f"{info.pieces:,}" if ctx.lang == "en" else f"{info.pieces}",
        "bits": f"{info.bits_per_weight:.1f}",
        "positions": info.max_positions,
        "read": MAX_TOKENS,
    }
    return ctx.t(f"encoder.model_e5{short}", **values, **sizes(model))


@st.cache_resource(show_spinner=False)
def e5_info() -> e5.ModelInfo:
    """multilingual-e5-small's sizes, read from its file header once per process."""
    return e5.model_info()


def joined(ctx: PageContext, items: list[str]) -> str:
    """Items of a list in running text, with the language's separator (``, `` or ``、``)."""
    return ctx.t("encoder.list_sep").join(items)


def code(token: str) -> str:
    """A token as inline code for markdown (plain text if it contains a backtick)."""
    return plain(token, 24) if "`" in token else f"`{token}`"


def strip(tokens: list[str], limit: int = 16) -> str:
    """The first ``limit`` tokens as inline code, "…" if there are more."""
    more = " …" if len(tokens) > limit else ""
    return " ".join(code(tok) for tok in tokens[:limit]) + more


def current_model(ctx: PageContext) -> str:
    """The model the URL asks for (its default if none, or a bad one: :func:`model_switch`
    warns about that when it draws the switch). The URL is a choice's one source of truth
    (:func:`ui.params.select`): the page's words read it before the switch is drawn."""
    spec = model_choice(ctx.lang)
    return spec.parse(st.query_params.get(spec.key, spec.default)) or spec.default


WORDS_MODEL = "_encoder_words_model"  # session state: the model the page's words are of


def model_switch(ctx: PageContext, got: Got) -> str:
    """The model switch, first in the settings (whose title names it). The settings rerun
    without the title and the step bar, which name the model's sizes: a model that is not
    the one the page's words were made for (:func:`page_words`) reruns the whole page."""
    spec = model_choice(ctx.lang)
    label = ctx.t("encoder.model")
    picked = select(
        ctx, spec, label, lambda m: ctx.t(f"encoder.model_{m}_name"), label_visibility="collapsed"
    )
    if picked != st.session_state.get(WORDS_MODEL):
        st.rerun()
    return picked


# A model that cannot be read: its package is not installed (ImportError), its file is
# missing (OSError) or corrupt (ValueError, e.g. multilingual_e5.ModelFileError).
LOAD_ERRORS = (ImportError, OSError, ValueError)


def unavailable(ctx: PageContext, model: str, error: Exception) -> NoReturn:
    """``model`` cannot be loaded: say so and how to install it, keep the model switch (the
    other model may work), and stop the page."""
    st.error(
        ctx.t("encoder.missing", name=ctx.t(f"encoder.model_{model}_name"), reason=str(error)),
        icon=":material/error:",
    )
    stop(ctx, [MODEL])


def page_words(ctx: PageContext) -> dict[str, object]:
    """What the page knows before its steps (:func:`words`) of the model the URL asks for,
    loaded on its first visit behind a spinner; a model that cannot be loaded stops the page
    (:func:`unavailable`)."""
    model = current_model(ctx)
    st.session_state[WORDS_MODEL] = model
    try:
        with st.spinner(ctx.t("encoder.loading")):
            return words(ctx, model)
    except LOAD_ERRORS as error:  # not installed, or its file unreadable
        unavailable(ctx, model, error)


def words(ctx: PageContext, model: str) -> dict[str, object]:
    """What the texts fill in: the model's sizes, name and special tokens, and the words of
    its default sentence pair (it/animal/street/tired/wide, or 它/动物/马路/累/宽)."""
    chinese = texts(model, ctx.lang)[0].default == ZH_TIRED
    pair = PAIR_WORDS["zh" if chinese else "en"]
    return {**sizes(model), **names(model), **dict(zip(PAIR_WORDS["en"], pair, strict=True))}


def sentence(ctx: PageContext, model: str, spec: Text, label: str) -> Analysis:
    """A URL-bound sentence box run through the model (:func:`sentence_box`, :func:`read`)."""
    return read(ctx, model, spec, sentence_box(ctx, model, spec, label))


def sentence_box(ctx: PageContext, model: str, spec: Text, label: str) -> str:
    """A URL-bound sentence box; its text, not yet read by the model (a step off screen
    keeps the box without paying for the forward pass)."""
    return text(ctx, spec, label, help=ctx.t(f"encoder.text_help_{model}", limit=MAX_TOKENS))


def read(ctx: PageContext, model: str, spec: Text, raw: str) -> Analysis:
    """``raw`` (the text of ``spec``'s box) through ``model``; empty or unreadable text
    warns and falls back to the box's default sentence, long text is cut (and says so)."""
    t = ctx.t
    a = analyse(raw, model)
    special = set(a.special)
    if not any(bare(tok) for i, tok in enumerate(a.tokens) if i not in special):
        # nothing but <s> </s> (and e5's lone ▁ for a text of spaces): no word to read
        ctx.warn(t("encoder.empty", fallback=code(spec.default)))
        return analyse(spec.default, model)
    if a.unknown_share > UNKNOWN_LIMIT:
        share = f"{a.unknown_share:.0%}"
        key = f"encoder.unknown_{model}"
        ctx.warn(t(key, share=share, tokens=strip(a.tokens), fallback=code(spec.default)))
        return analyse(spec.default, model)
    if a.total > len(a.tokens):
        ctx.warn(t("encoder.cut", total=a.total, limit=MAX_TOKENS, **names(model)))
    return a


def merged_notice(ctx: PageContext, a: Analysis, c: "Controls") -> list[str]:
    """The words of the question that the model reads only inside a larger piece (因为它):
    say so, which piece stands in for the pronoun when it is the query shown, and how to
    write the sentence so that the word stands alone."""
    found = []
    pronoun = c.asked.pronoun
    if pronoun is not None and pronoun.merged:
        piece = code(pronoun.piece)
        said = [ctx.t("encoder.merged", word=pronoun.word, piece=piece)]
        if c.queries[:1] == [pronoun.index]:  # the piece's row is the one shown
            said.append(ctx.t("encoder.merged_shown", word=pronoun.word, piece=piece))
        found.append(("" if ctx.lang == "zh" else " ").join(said))
        if not ctx.presenter:  # how to rephrase: a student's tip (a lecturer says it)
            tip = "encoder.tip_it" if pronoun.word == "它" else "encoder.tip_rephrase"
            found.append(ctx.t(tip, word=pronoun.word))
    for word in TARGET_WORDS:
        place = place_of(a.tokens, word)
        if place.merged:
            piece = code(a.tokens[place.inside])
            said = ctx.t("encoder.merged", word=word, piece=piece)
            gap = "" if ctx.lang == "zh" else " "
            tip = "" if ctx.presenter else gap + ctx.t("encoder.tip_rephrase", word=word)
            found.append(f"{said}{tip}")
    return found


def prompt(ctx: PageContext, a: Analysis, c: "Controls", short: bool = False) -> str:
    """What the student is asked to pick while the page states no finding: the query
    token (a sentence without a pronoun) or the target token (any sentence but the
    lesson's: the page does not guess what a pronoun refers to)."""
    t, part = ctx.t, "_short" if short else ""
    boxes = {"queries": t("encoder.queries"), "box": t("encoder.target")}
    if not c.queries:
        return t(f"encoder.pick_query{part}", **boxes)
    return t(f"encoder.pick_target{part}", q=label(a.tokens, c.queries[0]), **boxes)


def asked(c: "Controls") -> bool:
    """Whether a query and a target are picked: what every finding is about."""
    return bool(c.queries) and c.target is not None


def noted(v: View, items: list[str]) -> None:
    """The step's "what to notice" box, headed by what the model reads only inside a
    larger piece (:attr:`Settings.merged`); none if there is nothing to say."""
    items = [*v[SETTINGS].merged, *items]
    if items:
        v.notice(items)


def step_text(v: View, name: str, **values: object) -> None:
    """A step's explanation: in full for a student, its short version on a projector (with
    the page's :func:`words` and ``values``)."""
    key = f"encoder.{name}_{'short' if v.presenter else 'text'}"
    v.lead.markdown(v.t(key, **{**v.words, **values}))


def parse_indices(raw: str, n: int) -> list[int] | None:
    """``"10,2"`` -> ``[10, 2]`` if every entry is a token index below ``n``, else None."""
    parts = [p.strip() for p in raw.split(",")]
    if not all(p.isdigit() and len(p) <= 4 for p in parts):
        return None
    picked = list(dict.fromkeys(int(p) for p in parts))
    return picked if all(i < n for i in picked) else None


def _queries_changed(default: int | None) -> None:
    chosen = [str(c) for c in st.session_state.get(QUERY_WIDGET) or []]
    if chosen and chosen != [str(default)]:
        st.query_params[QUERY_KEY] = ",".join(chosen)
    else:  # nothing picked: back to the default query
        st.query_params.pop(QUERY_KEY, None)


def query_picker(ctx: PageContext, tokens: list[str], default: int | None) -> list[int]:
    """One or several query tokens, kept in the URL as indices (``?q=10,2``): a list to
    pick from in the sidebar (every token a row of pills would be most of it), pills in
    presenter mode's settings box. ``default`` None (a sentence without a pronoun): none
    until the student picks one."""
    t, labels = ctx.t, charts.unique_labels(tokens)
    raw = st.query_params.get(QUERY_KEY)
    fallback = [] if default is None else [default]
    picked = fallback if raw is None else parse_indices(raw, len(tokens))
    if picked is None:
        shown = plain(raw, 24)
        named = t("encoder.queries_placeholder") if default is None else labels[default]
        ctx.warn(t("params.invalid", name=QUERY_KEY, value=shown, default=plain(named)))
        st.query_params.pop(QUERY_KEY, None)
        picked = fallback
    st.session_state[QUERY_WIDGET] = [str(i) for i in picked]
    pills = ctx.presenter and len(tokens) <= MAX_PILLS
    shown_as = plain if pills else one_line  # pills read markdown, a list shows plain text
    common = {
        "format_func": lambda i: shown_as(labels[int(i)], 24),
        "key": QUERY_WIDGET,
        "on_change": _queries_changed,
        "args": (default,),
        "help": t("encoder.queries_help"),
    }
    options = [str(i) for i in range(len(tokens))]
    if pills:  # a slide's settings box: one row of pills (the sidebar: a list, below)
        st.pills(t("encoder.queries"), options, selection_mode="multi", **common)
    else:
        # its own placeholder (Streamlit's is English) and no "Select all" entry (English too,
        # and every token a row of panels is not a view)
        placeholder = t("encoder.queries_placeholder")
        st.multiselect(
            t("encoder.queries"), options, placeholder=placeholder, select_all=False, **common
        )
    return picked


def token_choice(key: str, tokens: list[str], default: int | None) -> Choice:
    """A choice of one token of the sentence, by index (``default`` None: ``""``, none)."""
    return Choice(key, "" if default is None else str(default), options_of(range(len(tokens))))


def target_picker(ctx: PageContext, tokens: list[str], default: int | None) -> int | None:
    """The target token, kept in the URL as an index (``?target=2``): the lesson's word by
    default in the lesson's sentence, else empty (None) until the student picks one."""
    labels = charts.unique_labels(tokens)
    spec = token_choice("target", tokens, default)
    # a select box shows its options as text: nothing to escape
    fmt = lambda i: one_line(labels[int(i)], 24)  # noqa: E731
    label = ctx.t("encoder.target")
    if default is not None:
        return int(select(ctx, spec, label, fmt, "select"))
    picked = select_or_none(ctx, spec, label, fmt, ctx.t("encoder.queries_placeholder"))
    return None if picked is None else int(picked)


def forget_picks(a: "Analysis") -> None:
    """A new sentence (or model) forgets the query and target tokens picked in the one
    before: they are indices into its pieces, meaningless in another sentence. A link
    opened afresh keeps them (nothing was seen before it)."""
    seen = (a.model, a.text)
    if st.session_state.get(SEEN_SENTENCE, seen) != seen:
        for key in (QUERY_KEY, "target"):
            st.query_params.pop(key, None)
    st.session_state[SEEN_SENTENCE] = seen


def head_specs(best: tuple[int, int], layers: int, heads: int) -> tuple[Choice, Choice]:
    """Layer and head choices; the defaults are the head that head search ranks first for
    the first query token."""
    return (
        Choice("layer", str(best[0]), tuple(str(i) for i in range(layers))),
        Choice("head", str(best[1]), tuple(str(i) for i in range(heads))),
    )


def pick_head(specs: tuple[Choice, Choice], layer: int, head: int) -> None:
    """Button callback: show head ``layer``/``head`` (the URL follows)."""
    assign(specs[0], layer)
    assign(specs[1], head)


@dataclass(frozen=True)
class Controls:
    """What the page shows: which tokens, which head, special tokens or not."""

    queries: list[int]  # indices into the full token list (none: the student picks)
    target: int | None  # None: not picked yet (the page states no finding until it is)
    layer: int
    head: int
    hide: bool
    specs: tuple[Choice, Choice]
    asked: Question  # what the page asks of the sentence by default (its pronoun, target)


def controls(ctx: PageContext, a: Analysis) -> Controls:
    """Query tokens, target token, the head and the [CLS]/[SEP] switch. The query is the
    sentence's pronoun (or the piece that holds it), the target the lesson's word only in
    the lesson's question (:func:`core.findings.encoder.question`); the student picks what
    the page does not, told so beside the box."""
    t = ctx.t
    forget_picks(a)
    default = question(a.tokens, a.model == E5)
    pronoun = default.pronoun
    queries = query_picker(ctx, a.tokens, None if pronoun is None else pronoun.index)
    if not queries:
        st.caption(t("encoder.pick_query_short"))
    if ctx.presenter:  # one row in the settings box above the slide
        c1, c2, c3, c4 = st.columns([3, 4, 2, 3], vertical_alignment="bottom")
    else:  # the sidebar: layer and head side by side, then the target, then the switch
        c2, c3 = st.columns(2, vertical_alignment="bottom")
        c1, c4 = st.container(), st.container()
    with c1:
        target = target_picker(ctx, a.tokens, default.target)
        if target is None and queries:
            st.caption(t("encoder.pick_target_short", q=label(a.tokens, queries[0])))
    best = (0, 0)  # nothing asked yet: the first head
    if queries and target is not None:  # the head search's first (stable as queries are added)
        order, _ = head_ranking(a.attention, queries[0], target)
        best = (int(order[0, 0]), int(order[0, 1]))
    L, H = a.attention.shape[:2]  # noqa: N806
    specs = head_specs(best, L, H)
    with c2:
        layers = "segmented" if ctx.presenter else "select"  # the sidebar: one row for six
        layer = int(select(ctx, specs[0], t("encoder.layer"), lambda s: f"L{s}", layers))
    with c3:
        head = int(select(ctx, specs[1], t("encoder.head"), lambda s: f"H{s}", "select"))
    with c4:
        cls, sep = special_tokens(a.model)
        hide = toggle(ctx, HIDE, t("encoder.hide", cls=cls, sep=sep), help=t("encoder.hide_help"))
    return Controls(queries, target, layer, head, hide, specs, default)


@dataclass(frozen=True)
class Shown:
    """The attention as drawn: all tokens, or the special ones removed and rows renormalised."""

    tokens: list[str]
    attention: np.ndarray  # (L, h, m, m)
    index: dict[int, int]  # full-sentence index -> index in the drawn matrices

    def rows(self, indices: list[int]) -> list[int]:
        """The drawn positions of those tokens that are drawn."""
        return [self.index[i] for i in indices if i in self.index]


def shown(a: Analysis, hide: bool) -> Shown:
    """The attention with or without the special tokens."""
    keep = np.ones(len(a.tokens), dtype=bool)
    keep[a.special] = not hide
    index = {int(i): k for k, i in enumerate(np.flatnonzero(keep))}
    tokens = [tok for tok, k in zip(a.tokens, keep, strict=True) if k]
    weights = without_keys(a.attention, keep) if hide else a.attention
    return Shown(tokens, weights, index)


def head_name(layer: int, head: int) -> str:
    """``L3H1``: layer and head, counted from 0."""
    return f"L{layer}H{head}"


def head_chart(
    t: Translator,
    tokens: list[str],
    weights: np.ndarray,
    rows: list[int],
    title: str,
    presenter: bool,
) -> dict:
    """One head's weights, large, numbers in the cells while they fit (as large as the
    cells allow on a projector); query rows framed."""
    n = len(tokens)
    cell = charts.fit_cell(n, n, 560 if presenter else 440, 560 if presenter else 440, lo=4, hi=44)
    labels = charts.unique_labels(tokens)
    spec = charts.heatmap(
        {title: weights},
        labels,
        labels,
        x_title=t("encoder.keys"),
        y_title=t("encoder.rows"),
        title=title,
        cell=cell,
        max_font=charts.SLIDE_FONT if presenter else 15,
    )
    return charts.framed(spec, rows)


def grid_chart(
    t: Translator,
    tokens: list[str],
    rows: np.ndarray,
    names: list[str],
    selected: tuple[int, int],
    presenter: bool,
) -> dict:
    """All heads at once: for each query token, one panel per layer (a row per head: where
    that head's query looks) and, below them, the layer means over the heads.

    ``rows`` ``(k, L, h, n)``: the queries' weight rows in every head. Three panels a row
    on a laptop, all six on a projector; a model of twelve layers in two rows of six.
    Pointing at a cell outlines its key token's column in every layer's panel, across every
    head (linked views: :func:`ui.charts.heatmap`'s ``link="cols"``): a row is a head
    number, unrelated from one layer to the next, but a column is the same token in all.
    """
    k, L, H, n = rows.shape  # noqa: N806
    width = charts.PRESENTER_WIDTH if presenter else charts.PAGE_WIDTH
    # one row of panels on a projector, three a row on a laptop; twelve layers: two rows
    columns = -(-L // 2) if L > GRID_ROW else (L if presenter else 3)
    cell = int(np.clip((width - 90 - 24 * columns) / (columns * n), 3, 22))  # axis: ~90 px
    tall = presenter and L > GRID_ROW  # two rows of panels on a slide
    if tall:  # drawn small, grown to the room: labels thinned out
        cell = min(cell, 14)
    cols = charts.unique_labels(tokens)
    head_labels, layer_labels = [f"H{h}" for h in range(H)], [f"L{i}" for i in range(L)]
    parts = []
    for q in range(k):
        panels = {f"L{i}": rows[q, i] for i in range(L)}
        grid = charts.heatmap(
            panels,
            head_labels,
            cols,
            x_title=None if tall else t("encoder.keys"),  # a slide's tall grid: the room
            columns=columns,
            cell=cell,
            legend=False,
            annotate=False,
            name=f"grid{q}",
            link="cols",  # the key token pointed at, outlined in every layer and head
        )
        grid = charts.framed(grid, selected[1], panel=f"L{selected[0]}")
        grid["title"] = t("encoder.grid_row", q=names[q])
        mean = charts.heatmap(
            {t("encoder.layer_mean", heads=H): rows[q].mean(axis=1)},  # (L, n) mean over heads
            layer_labels,
            cols,
            cell=cell,
            annotate=False,
            name=f"mean{q}",
            title=t("encoder.layer_mean", heads=H),
        )
        parts += [grid, mean]
    return charts.concat(parts, "vconcat", spacing=16)


def grid_height(layers: int) -> int:
    """Presenter mode: the px of height the grid of every head may take."""
    return int(GRID_HEIGHT * TALL_GRID) if layers > GRID_ROW else GRID_HEIGHT


def search_chart(t: Translator, weights: np.ndarray, title: str, presenter: bool) -> dict:
    """Head search as a layer × head table: the weight from the query to the target."""
    L, H = weights.shape  # noqa: N806
    cell = 40  # on a projector it grows to the room, its numbers with it
    return charts.heatmap(
        {title: weights},
        [f"L{i}" for i in range(L)],
        [f"H{h}" for h in range(H)],
        x_title=t("encoder.head"),
        y_title=t("encoder.layer"),
        title=title,
        cell=cell,
    )


def compare_chart(
    t: Translator,
    tokens_a: list[str],
    wa: np.ndarray,
    tokens_b: list[str],
    wb: np.ndarray,
    titles: tuple[str, str, str],
    presenter: bool,
) -> dict:
    """The selected head on both sentences and, when they have as many tokens, B − A: all
    three side by side on a projector, the difference below the pair on a laptop."""
    same = len(tokens_a) == len(tokens_b)
    n = max(len(tokens_a), len(tokens_b))
    wide = presenter and same  # three panels in one row
    room = charts.PRESENTER_WIDTH if presenter else charts.PAGE_WIDTH
    width = room - 410 if wide else room - 240  # px after axes, legends
    cell = charts.fit_cell(n * (3 if wide else 2), n, width, 560, lo=4, hi=34)
    la, lb = charts.unique_labels(tokens_a), charts.unique_labels(tokens_b)
    keys = t("encoder.keys")
    parts = [
        charts.heatmap(
            {titles[0]: wa},
            la,
            la,
            x_title=keys,
            title=titles[0],
            cell=cell,
            legend=False,
            name="a",
        ),
        charts.heatmap({titles[1]: wb}, lb, lb, x_title=keys, title=titles[1], cell=cell, name="b"),
    ]
    if same:
        diff = wb - wa
        parts.append(
            charts.heatmap(
                {titles[2]: diff},
                lb,
                lb,
                "scores",
                x_title=keys,
                title=titles[2],
                cell=cell,
                domain=charts.symmetric_domain(diff),
                name="diff",
            )
        )
    if not same or wide:
        return charts.concat(parts, spacing=28)
    return charts.concat([charts.concat(parts[:2], spacing=28), parts[2]], "vconcat", spacing=20)


def explain_chart(
    t: Translator,
    tokens: list[str],
    scores: np.ndarray,
    weights: np.ndarray,
    parts: np.ndarray,
    query: str,
    presenter: bool,
) -> dict:
    """One query's row taken apart: scores, their softmax, and how much each value adds."""
    n = len(tokens)
    cell = charts.fit_cell(n, 1, 620 if presenter else 780, lo=6, hi=44 if presenter else 60)
    cols, row = charts.unique_labels(tokens), [query]

    def strip(
        name: str, values: np.ndarray, kind: str = "weights", domain: list[float] | None = None
    ) -> dict:
        """The row ``values`` (``(n,)``) as a one-row heatmap titled ``encoder.ex_<name>``."""
        title = t(f"encoder.ex_{name}")
        panel = {title: values[None]}  # (1, n)
        style = {"title": title, "name": name, "cell": cell, "legend": False, "domain": domain}
        return charts.heatmap(panel, row, cols, kind, **style)

    strips = [
        strip("scores", scores, "scores"),
        strip("weights", weights),
        strip("parts", parts, domain=[0, float(parts.max()) or 1.0]),
    ]
    return charts.concat(strips, "vconcat", spacing=14)


def grid_rows(s: Shown, queries: list[int]) -> np.ndarray:
    """The drawn queries' weight rows in every head: ``(k, L, h, m)``."""
    rows = s.rows(queries)[:MAX_GRID_QUERIES]
    return np.moveaxis(s.attention[:, :, rows, :], 2, 0)  # (k, L, h, m)


def label(tokens: list[str], i: int) -> str:
    """Token ``i`` as shown on the axes (repeated tokens numbered), safe for markdown."""
    return plain(charts.unique_labels(tokens)[i], 24)


def head_notice(ctx: PageContext, a: Analysis, s: Shown, c: Controls) -> list[str]:
    """What the selected head does with the first query token (and, with [CLS]/[SEP]
    hidden, the model's own weight before the row was rescaled)."""
    t, rows = ctx.t, s.rows(c.queries)
    name = head_name(c.layer, c.head)
    if not asked(c):
        return [prompt(ctx, a, c)]
    if not rows or c.target not in s.index:
        return [t("encoder.hidden_pick", **names(a.model))]
    i, j = rows[0], s.index[c.target]
    row = s.attention[c.layer, c.head, i]
    top = int(row.argmax())
    items = [
        t(
            "encoder.notice_row",
            head=name,
            q=label(s.tokens, i),
            k=label(s.tokens, j),
            w=charts.fmt(row[j], 3),
            top=label(s.tokens, top),
            w_top=charts.fmt(row[top], 3),
        )
    ]
    if c.target == c.queries[0]:  # a token's weight on its own key: no link to another word
        items.append(t("encoder.notice_self", q=label(s.tokens, i)))
    items.append(t("encoder.notice_same" if top == j else "encoder.notice_other"))
    if c.hide:
        own = a.attention[c.layer, c.head, c.queries[0]]  # (n,) the model's row, all tokens
        special = a.special
        items.append(
            t(
                "encoder.notice_rescaled",
                **names(a.model),
                q=label(s.tokens, i),
                k=label(s.tokens, j),
                own=charts.fmt(own[c.target], 3),
                special=charts.fmt(own[special].sum(), 3),
                rest=charts.fmt(1 - own[special].sum(), 3),
                w=charts.fmt(row[j], 3),
            )
        )
    return items


def average_notice(ctx: PageContext, a: Analysis, s: Shown, c: Controls) -> list[str]:
    """What averaging the heads hides, and how much weight sits on [CLS] — computed live."""
    t = ctx.t
    items = [] if asked(c) else [prompt(ctx, a, c)]
    rows = s.rows(c.queries)
    if asked(c) and rows and c.target in s.index:
        i, j = rows[0], s.index[c.target]
        best = specialist(s.attention, i, j)
        items.append(
            t(
                "encoder.notice_average" if best.hidden else "encoder.notice_best_head",
                layer=best.layer,
                heads=s.attention.shape[1],
                head=head_name(best.layer, best.head),
                q=label(s.tokens, i),
                k=label(s.tokens, j),
                mean=charts.fmt(best.mean, 3),
                w=charts.fmt(best.weight, 3),
                ratio=f"{best.ratio:.1f}",
            )
        )
    cls = parked(a.attention, 0)  # the opening special token, over all queries
    if cls.much:  # "much of the weight": said only when a layer parks a quarter or more
        items.append(
            t(
                "encoder.notice_cls_short" if ctx.presenter else "encoder.notice_cls",
                **names(a.model),
                lo=charts.fmt(cls.per_layer[cls.low_layer], 2),
                lo_layer=cls.low_layer,
                hi=charts.fmt(cls.per_layer[cls.high_layer], 2),
                hi_layer=cls.high_layer,
                head=head_name(*cls.top_head),
                top=charts.fmt(cls.top, 2),
            )
        )
    if c.hide:
        items.append(t("encoder.notice_hidden", **names(a.model)))
    elif not ctx.presenter:  # a tip for a student; a lecturer has the settings box
        items.append(t("encoder.notice_hide_tip", **names(a.model)))
    return items


@dataclass(frozen=True)
class Search:
    """Head search for the picked query tokens and target."""

    weights: np.ndarray  # (L, h): mean weight from the queries to the target
    order: np.ndarray  # (L*h, 2)
    ranked: np.ndarray  # (L*h,)


def search(s: Shown, c: Controls) -> Search | None:
    """Rank every head (None if no target is picked, or the picked tokens are hidden)."""
    rows = s.rows(c.queries)
    if not rows or c.target is None or c.target not in s.index:
        return None
    j = s.index[c.target]
    order, ranked = head_ranking(s.attention, np.array(rows), j)
    return Search(s.attention[:, :, rows, j].mean(axis=-1), order, ranked)


def search_notice(ctx: PageContext, found: Search) -> list[str]:
    """The top two heads against the typical head ("most heads do not make this link" only
    when the median head puts almost nothing there)."""
    (l1, h1), (l2, h2) = found.order[0], found.order[1]
    rare = rare_link(found.ranked)
    return [
        ctx.t(
            "encoder.notice_search" if rare else "encoder.notice_search_common",
            first=head_name(int(l1), int(h1)),
            w1=charts.fmt(found.ranked[0], 3),
            second=head_name(int(l2), int(h2)),
            w2=charts.fmt(found.ranked[1], 3),
            median=charts.fmt(np.median(found.ranked), 3),
            total=found.ranked.size,
        )
    ]


def same_token(tokens_a: list[str], tokens_b: list[str], i: int) -> int | None:
    """Token ``i`` of sentence A in sentence B: the same position if the sentences have as
    many tokens, else the first occurrence of the same token."""
    if len(tokens_a) == len(tokens_b):
        return i
    return tokens_b.index(tokens_a[i]) if tokens_a[i] in tokens_b else None


def compare_notice(
    ctx: PageContext, sa: Shown, sb: Shown, c: Controls, full_a: Analysis, full_b: Analysis
) -> list[str]:
    """What changed between the two sentences in the selected head, and what did not."""
    t, items = ctx.t, []
    if len(full_a.tokens) == len(full_b.tokens):
        changed = [
            f"{code(x)} → {code(y)}"
            for x, y in zip(full_a.tokens, full_b.tokens, strict=True)
            if x != y
        ]
        if not row_view(ctx, sa, sb, c):  # else the columns say it: tired/wide
            items.append(t("encoder.notice_changed", words=joined(ctx, changed) or "—"))
    else:
        items.append(t("encoder.notice_lengths", a=len(full_a.tokens), b=len(full_b.tokens)))
    rows = sa.rows(c.queries)
    if not asked(c):
        return [*items, prompt(ctx, full_a, c)]
    if not rows or c.target not in sa.index:
        return items
    i, j = rows[0], sa.index[c.target]
    ib, jb = same_token(sa.tokens, sb.tokens, i), same_token(sa.tokens, sb.tokens, j)
    if ib is None or jb is None:
        return [*items, t("encoder.notice_missing")]
    ra, rb = sa.attention[c.layer, c.head, i], sb.attention[c.layer, c.head, ib]
    ta, tb = int(ra.argmax()), int(rb.argmax())
    items.append(
        t(
            "encoder.notice_compare",
            head=head_name(c.layer, c.head),
            q=label(sa.tokens, i),
            k=label(sa.tokens, j),
            wa=charts.fmt(ra[j], 3),
            wb=charts.fmt(rb[jb], 3),
            top_a=label(sa.tokens, ta),
            top_b=label(sb.tokens, tb),
        )
    )
    if len(sa.tokens) == len(sb.tokens):
        flips = favourite_flips(sa.attention, sb.attention, i, ib)
        total = sa.attention.shape[0] * sa.attention.shape[1]
        items.append(t("encoder.notice_flips", q=label(sa.tokens, i), flips=flips, total=total))
        items.append(spread_notice(ctx, sa, sb, c, i))
    shift = shift_notice(ctx, full_a, full_b, c)
    if shift:
        items.append(shift)
    items.append(t("encoder.notice_caveat_short" if ctx.presenter else "encoder.notice_caveat"))
    return items


def shift_notice(ctx: PageContext, a: Analysis, b: Analysis, c: Controls) -> str | None:
    """Where the weight went that the first query token lost on the target, in the model's
    own rows (special tokens included): to another word, or parked on ``<s>``/``</s>``?
    Only for sentences that align token by token, and only when the target lost weight."""
    if len(a.tokens) != len(b.tokens) or c.target == c.queries[0]:
        return None
    i, j = c.queries[0], c.target
    ra, rb = a.attention[c.layer, c.head, i], b.attention[c.layer, c.head, i]  # (n,) each
    found = weight_shift(ra, rb, j, a.special)
    if found.target > -VISIBLE_CHANGE or found.top < 0:
        return None
    return ctx.t(
        "encoder.notice_shift",
        head=head_name(c.layer, c.head),
        q=label(b.tokens, i),
        k=label(b.tokens, j),
        lost=charts.fmt(-found.target, 3),
        special=signed(found.special),
        others=signed(found.others),
        top=plain(pair_labels(a.tokens, b.tokens)[found.top], 24),
        gain=signed(found.top_gain),
        **names(a.model),
    )


def signed(value: float) -> str:
    """``+0.609`` / ``−0.609``: a change with its sign."""
    return f"{value:+.3f}".replace("-", "−")


def row_view(ctx: PageContext, sa: Shown, sb: Shown, c: Controls) -> bool:
    """Whether the comparison shows only the first query token's rows (A, B, B − A) and not
    the whole matrices: on a projector, when the sentences align token by token."""
    return ctx.presenter and bool(sa.rows(c.queries)) and len(sa.tokens) == len(sb.tokens)


def spread_notice(ctx: PageContext, sa: Shown, sb: Shown, c: Controls, i: int) -> str:
    """How far the changed word's effect spreads in the selected head, in what the chart
    shows: the whole B − A matrix for a student, the row of query ``i`` on a projector.
    Sentences of equal length (cells match by position)."""
    t = ctx.t
    diff = sb.attention[c.layer, c.head] - sa.attention[c.layer, c.head]  # (m, m) B − A
    if np.abs(diff).max() < 5e-4:  # nothing that three decimals would show
        return t("encoder.spread_none")
    layer0 = c.layer == 0  # its inputs are the embeddings: only the changed token's differ
    why = t("encoder.spread_first") if layer0 else t("encoder.spread_later", layer=c.layer)
    if row_view(ctx, sa, sb, c):
        row = spread(diff[i : i + 1], VISIBLE_CHANGE)  # the one row on the slide
        (_, k), change = row.largest
        return t(
            "encoder.spread_row",
            q=label(sa.tokens, i),
            k=plain(pair_labels(sa.tokens, sb.tokens)[k], 24),
            change=signed(change),
            moved=row.moved_cells,
            n=diff.shape[1],
            threshold=VISIBLE_CHANGE,
            why=why,
        )
    found = spread(diff, VISIBLE_CHANGE)
    return t(
        "encoder.spread_all",
        up_q=label(sb.tokens, found.rise[0]),
        up_k=label(sb.tokens, found.rise[1]),
        up=signed(found.rise_by),
        down_q=label(sb.tokens, found.fall[0]),
        down_k=label(sb.tokens, found.fall[1]),
        down=signed(found.fall_by),
        moved=found.moved,
        n=found.rows,
        rest=found.rows - found.moved,
        threshold=VISIBLE_CHANGE,
        why=why,
    )


@dataclass(frozen=True)
class Explained:
    """The selected weight recomputed from the layer's input."""

    i: int
    j: int
    dot: float
    scale: float
    score: float
    weight: float
    forward_weight: float
    scores: np.ndarray  # (n,)
    weights: np.ndarray  # (n,)
    parts: np.ndarray  # (n,) length of α_ij v_j
    output_norm: float


def explain(a: Analysis, c: Controls) -> Explained:
    """Query (first picked token) → target in the selected head, step by step. No target
    picked: the query's row alone is shown (the cell's numbers are then of its own key, and
    not shown)."""
    weights = weights_of(a.model)
    i = c.queries[0]
    j = i if c.target is None else c.target
    h = weights.config.n_heads
    ex = explain_weight(a.hidden[c.layer], weights.layers[c.layer], h, c.head, i, j)
    return Explained(
        i,
        j,
        ex.dot,
        ex.scale,
        float(ex.scores[j]),
        float(ex.weights[j]),
        float(a.attention[c.layer, c.head, i, j]),
        ex.scores,
        ex.weights,
        ex.mix.sizes,
        float(np.linalg.norm(ex.mix.output)),
    )


def explain_latex(ex: Explained) -> str:
    """The weight's formula with this cell's numbers filled in."""
    return (
        rf"s_{{ij}}=\frac{{q_i\cdot k_j}}{{\sqrt{{d_k}}}}=\frac{{{ex.dot:.3f}}}{{{ex.scale:.3f}}}"
        rf"={ex.score:.3f},\qquad \alpha_{{ij}}=\frac{{e^{{s_{{ij}}}}}}{{\sum_{{j'}}"
        rf"e^{{s_{{ij'}}}}}}={ex.weight:.3f}"
    ).replace("-", "−")


def explain_notice(ctx: PageContext, a: Analysis, ex: Explained, cell: bool) -> list[str]:
    """The recomputed weight against the forward pass (``cell``: a target is picked), and
    the value mix."""
    t, tokens = ctx.t, a.tokens
    top = np.argsort(-ex.parts, kind="stable")[:3]
    mix = joined(
        ctx,
        [t("encoder.mix_item", k=label(tokens, int(k)), w=charts.fmt(ex.parts[k], 2)) for k in top],
    )
    recomputed = t(
        "encoder.notice_recomputed",
        w=charts.fmt(ex.weight, 6),
        fw=charts.fmt(ex.forward_weight, 6),
        diff=f"{abs(ex.weight - ex.forward_weight):.1e}",
    )
    norm = charts.fmt(ex.output_norm, 2)
    mixed = t("encoder.notice_mix", q=label(tokens, ex.i), mix=mix, norm=norm)
    return [recomputed, mixed] if cell else [mixed]


def head_metric(s: Shown, c: Controls) -> tuple[str, str] | None:
    """``("L3H1: it → animal", "0.677")`` for the first query token and the target (None
    until both are picked, or while one is hidden)."""
    rows = s.rows(c.queries)
    if not rows or c.target is None or c.target not in s.index:
        return None
    i, j = rows[0], s.index[c.target]
    name = f"{head_name(c.layer, c.head)}: {label(s.tokens, i)} → {label(s.tokens, j)}"
    return name, charts.fmt(s.attention[c.layer, c.head, i, j], 3)


def search_title(ctx: PageContext, s: Shown, c: Controls) -> str:
    """The head-search chart's title: which queries, which target (plain chart text)."""
    names = charts.unique_labels(s.tokens)
    queries = joined(ctx, [names[i] for i in s.rows(c.queries)])
    return ctx.t("encoder.search_title", q=queries, k=names[s.index[c.target]])


def top_heads(ctx: PageContext, found: Search, c: Controls) -> None:
    """The best heads, each with a button that shows it everywhere on the page. The step is
    a fragment of its own, the head a page setting: a pick reruns the whole page, so the
    settings show the head picked."""
    st.markdown(f"**{ctx.t('encoder.top_heads', k=TOP_HEADS)}**")
    picked = False
    for rank, (layer, head) in enumerate(found.order[:TOP_HEADS].tolist()):
        name, w = head_name(layer, head), charts.fmt(found.ranked[rank], 3)
        picked |= st.button(
            f"{rank + 1}. {name} · {w}",
            key=f"pick_{name}",
            on_click=pick_head,
            args=(c.specs, layer, head),
            type="primary" if (layer, head) == (c.layer, c.head) else "secondary",
            icon=":material/visibility:",
            help=ctx.t("encoder.pick_help", head=name),
        )
    if picked:
        st.rerun()


def compare_titles(ctx: PageContext, head: str) -> tuple[str, str, str]:
    """Titles of the two sentences' panels and of their difference."""
    t = ctx.t
    return t("encoder.sentence_a", head=head), t("encoder.sentence_b", head=head), t("encoder.diff")


def pair_labels(tokens_a: list[str], tokens_b: list[str]) -> list[str]:
    """Column labels for two sentences of equal length: ``tired/wide`` where they differ."""
    la, lb = charts.unique_labels(tokens_a), charts.unique_labels(tokens_b)
    return [x if x == y else f"{x}/{y}" for x, y in zip(la, lb, strict=True)]


def compare_rows_chart(
    t: Translator,
    columns: list[str],
    ra: np.ndarray,
    rb: np.ndarray,
    query: str,
    presenter: bool,
) -> dict:
    """The query's row in sentence A and B, and B − A, numbers in every cell (presenter
    mode: large enough to read in a hall)."""
    n = len(columns)
    # On a projector the cells are drawn small and grow to the room (the numbers with them).
    cell = charts.fit_cell(n, 3, 620 if presenter else 800, lo=20, hi=44 if presenter else 70)
    names = (t("encoder.row_a", q=query), t("encoder.row_b", q=query))
    diff = (rb - ra)[None]
    return charts.concat(
        [
            charts.heatmap(
                {t("encoder.rows_title", q=query): np.stack([ra, rb])},
                list(names),
                columns,
                title=t("encoder.rows_title", q=query),
                cell=cell,
                legend=False,
                name="pair",
            ),
            charts.heatmap(
                {t("encoder.diff"): diff},
                [t("encoder.diff")],
                columns,
                "scores",
                x_title=t("encoder.keys"),
                title=t("encoder.diff"),
                cell=cell,
                legend=False,
                domain=charts.symmetric_domain(diff),
                name="pair_diff",
            ),
        ],
        "vconcat",
        spacing=10,
    )


def comparison(v: View, sa: Shown, sb: Shown, c: Controls, head: str) -> dict:
    """Draw the two sentences in the selected head: on a projector the first query token's
    rows (A, B, B − A) in large cells when the sentences align, else the whole matrices."""
    t, rows = v.t, sa.rows(c.queries)
    wa, wb = sa.attention[c.layer, c.head], sb.attention[c.layer, c.head]
    if row_view(v.ctx, sa, sb, c):
        query = charts.unique_labels(sa.tokens)[rows[0]]
        columns = pair_labels(sa.tokens, sb.tokens)
        return v.chart(compare_rows_chart, t, columns, wa[rows[0]], wb[rows[0]], query, True)
    titles = compare_titles(v.ctx, head)
    # the whole matrices: the page's width (the step's room is the rows' column on a slide)
    args = (t, sa.tokens, wa, sb.tokens, wb, titles, v.presenter)
    return v.chart(compare_chart, *args, space=charts.room(v.ctx))


def flow_chart(
    t: Translator,
    tokens: list[str],
    rows: np.ndarray,
    labels: tuple[str, str, str],
    title: str,
    presenter: bool,
) -> dict:
    """One query's row three ways (``rows`` ``(3, n)``: raw attention of the last layer,
    rollout, uniform; ``labels`` their names), one row each over the sentence's tokens,
    numbers in the cells while they fit (as large as the cells allow on a projector). A
    long sentence's narrow cells stay :data:`FLOW_ROW` px high, so each row keeps its label."""
    n = len(tokens)
    cell = charts.fit_cell(n, 3, 620 if presenter else 700, lo=6, hi=44 if presenter else 60)
    return charts.heatmap(
        {title: rows},
        list(labels),
        charts.unique_labels(tokens),
        x_title=t("encoder.keys"),
        title=title,
        cell=cell,
        legend=False,
        name="flow",
        max_font=charts.SLIDE_FONT if presenter else 15,
        aspect=max(1.0, FLOW_ROW / cell),
    )


def tops(ctx: PageContext, tokens: list[str], row: np.ndarray, found: tuple[int, ...]) -> str:
    """`` `it` (0.258)``, or tokens tied at three decimals: `` `<s>`, `</s>` (0.250 each)``:
    tokens as code, so that a special token or a punctuation mark reads as a token."""
    labels, w = charts.unique_labels(tokens), charts.fmt(row[found[0]], 3)
    named = joined(ctx, [code(labels[k]) for k in found])
    return ctx.t(
        "encoder.flow_top_one" if len(found) == 1 else "encoder.flow_top_tied", k=named, w=w
    )


def flow_notice(ctx: PageContext, a: Analysis, c: Controls, f: Flow) -> list[str]:
    """What the rollout step points out, from the numbers: the favourites of raw attention
    and rollout (and whether they share one), the special tokens' weight and the favourites
    without them, how far each row is from uniform, the target's weight and rank, and the
    caveat (a slide: each in fewer words)."""
    t, tokens, n = ctx.t, a.tokens, len(a.tokens)
    short = "_short" if ctx.presenter else ""
    labels = charts.unique_labels(tokens)
    facts = flow_facts(f, a.special)
    u = charts.fmt(1 / n, 3)
    if facts.shared == facts.raw_top == facts.rolled_top:
        verdict = t("encoder.flow_same")
    elif facts.shared:
        verdict = t("encoder.flow_shared", k=joined(ctx, [code(labels[k]) for k in facts.shared]))
    else:
        verdict = t("encoder.flow_differ")
    items = [
        t(
            f"encoder.notice_flow_top{short}",
            q=label(tokens, c.queries[0]),
            raw=tops(ctx, tokens, f.raw, facts.raw_top),
            rolled=tops(ctx, tokens, f.rolled, facts.rolled_top),
            verdict=verdict,
            heads=a.attention.shape[1],
            n=n,
            u=u,
        )
    ]
    if facts.raw_words and facts.rolled_words:  # a sentence of more than special tokens
        items.append(
            t(
                f"encoder.notice_flow_words{short}",
                s_raw=charts.fmt(facts.raw_special, 3),
                s_rolled=charts.fmt(facts.rolled_special, 3),
                raw=tops(ctx, tokens, f.raw, facts.raw_words),
                rolled=tops(ctx, tokens, f.rolled, facts.rolled_words),
                **names(a.model),
            )
        )
    which = {"raw": "flow_farther_raw", "rollout": "flow_farther_rollout", None: "flow_as_far"}
    items.append(
        t(
            f"encoder.notice_flow_distance{short}",
            d_raw=charts.fmt(facts.raw_distance, 3),
            d_rolled=charts.fmt(facts.rolled_distance, 3),
            n=n,
            most=charts.fmt(1 - 1 / n, 3),
            which=t(f"encoder.{which[facts.farther]}"),
        )
    )
    if c.target is not None:
        j = c.target
        items.append(
            t(
                "encoder.notice_flow_target",
                k=label(tokens, j),
                w_raw=charts.fmt(f.raw[j], 3),
                r_raw=rank_of(f.raw, j),
                w_rolled=charts.fmt(f.rolled[j], 3),
                r_rolled=rank_of(f.rolled, j),
                n=n,
                u=u,
            )
        )
    if c.hide:
        items.append(t("encoder.notice_flow_kept", n=n, **names(a.model)))
    items.append(t(f"encoder.notice_flow_caveat{short}"))
    return items


# ---- the page's controls ------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The page's settings: the model, sentence A as the model read it, what to show."""

    model: str  # MINILM or E5
    a: Analysis
    c: Controls
    raw_b: str | None  # a slide's sentence B (its box is in the settings; students: SENTENCE_B)
    # the words of the question the model reads only inside a larger piece, said first in
    # every step's notes (students: in the strip above the chart; a rephrasing tip next)
    merged: tuple[str, ...] = ()

    @property
    def shown(self) -> Shown:
        """Sentence A's attention as drawn (special tokens hidden or not)."""
        return shown(self.a, self.c.hide)


def settings(ctx: PageContext, got: Got) -> Settings:
    """Sentence A (read by the model behind a spinner), on a slide sentence B, then the
    query and target tokens, the head and the special-tokens switch, and what the model
    reads only inside a larger piece (:func:`merged_notice`)."""
    t, model = ctx.t, got[MODEL]
    first, second = texts(model, ctx.lang)
    with st.spinner(t("encoder.loading")):
        a = sentence(ctx, model, first, t("encoder.text"))
    raw_b = sentence_box(ctx, model, second, t("encoder.compare")) if ctx.presenter else None
    c = controls(ctx, a)
    # a word of the question inside a larger piece: the first thing every step notices (a
    # box above the step would push the chart off the first screen, or off the slide)
    return Settings(model, a, c, raw_b, tuple(merged_notice(ctx, a, c)))


def sentence_b(ctx: PageContext, got: Got) -> str:
    """Sentence B's text. Students find its box above the comparison it changes (the
    sidebar has no room left on a 1280 × 720 laptop); a slide has it in the settings."""
    s = got[SETTINGS]
    if s.raw_b is not None:
        return s.raw_b
    return sentence_box(ctx, s.model, texts(s.model, ctx.lang)[1], ctx.t("encoder.compare"))


def residual_control(ctx: PageContext, got: Got) -> float:
    """Step 6: the residual share of attention rollout, URL-bound (``?residual=0.5``)."""
    t = ctx.t
    return float(slider(ctx, RESIDUAL, t("encoder.residual"), 0.1, help=t("encoder.residual_help")))


MODEL = Group(model_switch, box="encoder.settings")
SETTINGS = Group(settings)  # in the model's box
SENTENCE_B = Group(sentence_b, student="above")
# students: above the chart it changes (the sidebar has no room left on a 1280 × 720 laptop)
ROLLOUT = Group(residual_control, slide="above", student="above")


# ---- the steps ----------------------------------------------------------------------------


def head_step(v: View) -> None:
    """Step 1: the selected head's weights, its readout beside them (students too: a square
    chart leaves the room), what the model is."""
    t, s = v.t, v[SETTINGS]
    sa, c = s.shown, s.c
    line = model_line(v.ctx, s.model)
    if v.presenter:  # what the model is, in a line above the readout
        v.aside.caption(line)
    else:
        v.lead.markdown(line)
    title = t("encoder.head_title", head=head_name(c.layer, c.head))
    weights = sa.attention[c.layer, c.head]  # (m, m) the selected head as drawn
    chart = v.chart(head_chart, t, sa.tokens, weights, sa.rows(c.queries), title, v.presenter)
    metric = head_metric(sa, c)
    if metric:
        v.aside.metric(*metric)
    elif not asked(c) and not v.presenter:  # where the readout goes: what to pick (a slide:
        # its notes say it)
        v.aside.info(prompt(v.ctx, s.a, c, short=True), icon=":material/touch_app:")
    noted(v, head_notice(v.ctx, s.a, sa, c))
    arrays = {"tokens": np.array(s.a.tokens), "attention": s.a.attention}
    v.export("encoder_head", chart, arrays=arrays)


def grid_step(v: View) -> None:
    """Step 2: every head at once, for the first query tokens, and the layer means."""
    t, s = v.t, v[SETTINGS]
    sa, c = s.shown, s.c
    step_text(v, "grid", shown=MAX_GRID_QUERIES)
    grid = grid_rows(sa, c.queries)
    if len(grid):
        labels = charts.unique_labels(sa.tokens)
        queries = [labels[i] for i in sa.rows(c.queries)[:MAX_GRID_QUERIES]]
        args = (t, sa.tokens, grid, queries, (c.layer, c.head), v.presenter)
        # a model of twelve layers has two rows of panels: the room grows with its layers
        space = charts.room(v.ctx, height=grid_height(int(v.words["layers"])))
        chart = v.chart(grid_chart, *args, space=space)
    noted(v, average_notice(v.ctx, s.a, sa, c))
    if len(grid):
        v.export("encoder_grid", chart)


def search_step(v: View) -> None:
    """Step 3: every head ranked by the weight from the queries to the target; the best
    ones, beside the chart, pick a head for every step."""
    t, s = v.t, v[SETTINGS]
    sa, c = s.shown, s.c
    step_text(v, "search")
    if not asked(c):  # nothing to rank the heads by
        v.figure.info(prompt(v.ctx, s.a, c), icon=":material/touch_app:")
        noted(v, [])
        return
    found = search(sa, c)
    if found is None:
        v.figure.info(t("encoder.hidden_pick", **v.words), icon=":material/visibility_off:")
        noted(v, [])
        return
    v.chart(search_chart, t, found.weights, search_title(v.ctx, sa, c), v.presenter)
    with v.aside:
        top_heads(v.ctx, found, c)  # buttons that pick a head for every step
    noted(v, search_notice(v.ctx, found))


def compare_step(v: View) -> None:
    """Step 4: the selected head on sentence A and on sentence B (read here: the only step
    that needs it)."""
    s = v[SETTINGS]
    sa, c = s.shown, s.c
    first, second = texts(s.model, v.ctx.lang)
    with st.spinner(v.t("encoder.loading")):
        b = read(v.ctx, s.model, second, v[SENTENCE_B])
    sb = shown(b, c.hide)
    head = head_name(c.layer, c.head)
    # the lesson's words ("tired" → "wide") only of the lesson's pair: any other pair is
    # described by the notes (which tokens differ)
    lesson = (s.a.text, b.text) == (first.default, second.default)
    step_text(v, "compare" if lesson else "compare_any", head=head)
    chart = comparison(v, sa, sb, c, head)
    noted(v, compare_notice(v.ctx, sa, sb, c, s.a, b))
    v.export("encoder_compare", chart)


def explain_step(v: View) -> None:
    """Step 5: one weight recomputed from the layer's input, its formula with the numbers."""
    t, s = v.t, v[SETTINGS]
    a, c = s.a, s.c
    step_text(v, "explain", head=head_name(c.layer, c.head))
    if not c.queries:  # no row to take apart
        v.figure.info(prompt(v.ctx, a, c), icon=":material/touch_app:")
        noted(v, [])
        v.links("multi_head", "softmax")
        return
    ex = explain(a, c)
    if asked(c):
        v.lead.latex(explain_latex(ex))
    else:  # the query's row, no cell of it to recompute
        v.lead.info(prompt(v.ctx, a, c, short=True), icon=":material/touch_app:")
    query = charts.unique_labels(a.tokens)[ex.i]
    v.chart(explain_chart, t, a.tokens, ex.scores, ex.weights, ex.parts, query, v.presenter)
    noted(v, explain_notice(v.ctx, a, ex, asked(c)))
    v.links("multi_head", "softmax")


def rollout_step(v: View) -> None:
    """Step 6: where the first query token's attention goes after the last layer: the raw
    attention of that layer (mean of its heads), attention rollout through every layer and
    the uniform baseline, over every token the model reads (special ones included)."""
    t, s = v.t, v[SETTINGS]
    a, c = s.a, s.c
    n = len(a.tokens)
    step_text(v, "rollout", n=n)
    if not c.queries:  # no row to follow
        v.figure.info(prompt(v.ctx, a, c), icon=":material/touch_app:")
        noted(v, [])
        return
    residual = v[ROLLOUT]
    i = c.queries[0]
    f = flow(a.attention, i, residual)
    last = a.attention.shape[0] - 1
    query = charts.unique_labels(a.tokens)[i]
    rows = (
        t("encoder.flow_raw", layer=last),
        t("encoder.flow_rollout"),
        t("encoder.flow_uniform", n=n),
    )
    title = t("encoder.flow_title", q=query)
    chart = v.chart(flow_chart, t, a.tokens, f.rows, rows, title, v.presenter)
    noted(v, flow_notice(v.ctx, a, c, f))
    arrays = {"tokens": np.array(a.tokens), "raw": f.raw, "rollout": f.rolled, "uniform": f.uniform}
    caption = t("encoder.flow_caption", q=query, r=charts.fmt(residual, 2))
    v.export("encoder_rollout", chart, arrays=arrays, caption=caption)


# ---- Ask the class ------------------------------------------------------------------------
# Where the pronoun looks in one head: the model's own row of it (the page's default query)
# over every token of the sentence. The lesson's English sentence on MiniLM in L3H1, the head
# the English page opens on (head search's first for it → animal); the Chinese sentence on
# multilingual-e5-small in L8H8, the head the Chinese page opens on (for 它 → 动物). Layers
# and heads count from 0, as the page shows them (L3H1).
ASK_IT_HEAD = (3, 1)
ASK_ZH_HEAD = (8, 8)


def pronoun_row(model: str, text_: str, head: tuple[int, int]) -> np.ndarray:
    """The row of ``text_``'s pronoun (the page's default query) in ``head`` (layer, head) of
    ``model``: its weights over every token, special tokens included.

    Shapes: -> ``(n,)``, summing to 1.
    """
    a = analyse(text_, model)
    pronoun = question(a.tokens, model == E5).pronoun
    if pronoun is None:
        raise ValueError(f"no pronoun in {text_!r}")
    return a.attention[head[0], head[1], pronoun.index]


def _ask_it_truth() -> questions.Truth:
    return questions.Truth.of_row(pronoun_row(MINILM, LESSON, ASK_IT_HEAD))


def _ask_it_zh_truth() -> questions.Truth:
    return questions.Truth.of_row(pronoun_row(E5, ZH_TIRED, ASK_ZH_HEAD))


ASK_IT = questions.Question(
    "encoder.it", "token", _ask_it_truth, questions.tokens(lambda: analyse(LESSON, MINILM).tokens)
)
ASK_IT_ZH = questions.Question(
    "encoder.it_zh",
    "token",
    _ask_it_zh_truth,
    questions.tokens(lambda: analyse(ZH_TIRED, E5).tokens),
)
QUESTIONS = (ASK_IT, ASK_IT_ZH)
