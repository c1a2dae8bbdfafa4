"""Presentation helpers for the real-decoder page (pages/10_decoder.py).

The model (SmolLM2-135M-Instruct) is read once per server process (:func:`ui.loaded.smollm2`,
``st.cache_resource``, never mutated); each prompt's forward pass is cached (:func:`run`,
bounded). Generation runs only when a button is pressed and is kept in the session (the
last run per mode), so moving a slider does not start it again; the sessions of a process
take turns, one token at a time (:mod:`ui.turns`). Every number comes from
:mod:`core.llama`, which runs the concept pages' ``scaled_dot_product_attention``.
"""

import time
from collections.abc import Callable
from contextlib import closing, nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import core.findings.decoder as found
import core.llama as llama
from core import batching
from core.kv_cache import KVCache
from core.masks import future_blank
from core.sampling import GREEDY, Sampling, distribution
from models import smollm
from ui import charts, loaded, questions
from ui import prompt as typed
from ui.batching import COST_SIZES, engine
from ui.blocks import folded
from ui.context import PageContext
from ui.i18n import Translator
from ui.params import Choice, Flag, Float, Int, Text, number, select, slider, text, toggle
from ui.safe import one_line, plain
from ui.sentence import more_box
from ui.steps import Controls, Got, View
from ui.turns import turns

LESSON = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
OTHER_START = "Yesterday, the animal didn't cross the street because it was too tired."
PROMPT = Text("prompt", LESSON, max_len=400)
SINK_PROMPT = Text("sink_prompt", OTHER_START, max_len=400)
TEMPERATURE = Float("temp", 1.0, 0.0, 3.0)  # 0: greedy (as vLLM and llama.cpp read it)
N_TOKENS = Int("n_gen", 12, 1, 20)
SAMPLE = Flag("sample", False)
TOP_K = Int("top_k", 0, 0, 200)  # 0: every token
TOP_P = Float("top_p", 1.0, 0.0, 1.0)  # 1: every token; 0: the most likely one only
SEED = Int("seed", 0, 0, 999_999)
USE_CACHE = Flag("cache", True)
BARS = 10  # next tokens in step 4's chart
WHY = ("it", "animal", "street")  # the lesson's question: what does "it" refer to?
RUNS_KEY = "_decoder_runs"


def step_text(v: View, step: int, variant: str = "", **values: object) -> None:
    """The step's explanation: in full for students (``variant``: a suffix of its key, e.g.
    ``"_one"`` for one chart instead of two), one short line on the projector."""
    key = f"decoder.s{step}_brief" if v.presenter else f"decoder.s{step}_text{variant}"
    v.lead.markdown(v.t(key, **values))


def side_by_side(spec: dict) -> bool:
    """Whether a chart as drawn (:func:`charts.show_cached` returns it, laid out for its
    room) shows its parts side by side rather than one below the other."""
    if len(spec.get("hconcat", [])) > 1:
        return True
    return len(spec.get("concat", [])) > 1 and spec.get("columns", 2) > 1


def places(ctx: PageContext, spec: dict) -> dict[str, str]:
    """Where a two-part chart put its parts, in words for the step's text: the second part
    ``on the right`` or ``below``; the parts as ``Left``/``Right`` or ``Top``/``Bottom``."""
    t = ctx.t
    if side_by_side(spec):
        return {
            "place": t("decoder.place_right"),
            "first": t("decoder.part_left"),
            "second": t("decoder.part_right"),
        }
    return {
        "place": t("decoder.place_below"),
        "first": t("decoder.part_top"),
        "second": t("decoder.part_bottom"),
    }


@dataclass(frozen=True)
class Prompt:
    """A prompt as the model reads it."""

    text: str
    ids: tuple[int, ...]  # at most smollm.MAX_PROMPT_TOKENS
    labels: list[str]  # readable text of each token (我¹ᐟ² 我²ᐟ²: a character's pieces)
    read: str  # the text the model read, its byte pieces joined into characters
    total: int  # tokens before the cap
    pieces: bool  # some token is only part of a character (Chinese, emoji, …)


@st.cache_data(max_entries=32, show_spinner=False)
def tokenize(text_: str) -> Prompt:
    """Tokenise ``text_`` with the model's own tokenizer, capped at MAX_PROMPT_TOKENS."""
    m = loaded.smollm2()
    ids = smollm.encode(m, text_)
    kept = ids[: smollm.MAX_PROMPT_TOKENS]
    labels = smollm.token_labels(m, kept)
    pieces = any(lab.endswith(("ᐟ²", "ᐟ³", "ᐟ⁴")) for lab in labels)
    read = "".join(smollm.text_spans(m, kept))
    return Prompt(text_, tuple(kept), labels, read, len(ids), pieces)


@dataclass(frozen=True)
class Run:
    """The model's read of a prompt: every layer's attention, the next-token logits, and
    every layer's keys and values, which a generation goes on from."""

    attention: np.ndarray  # (L, h, n, n)
    logits: np.ndarray  # (vocab,) after the last token
    caches: tuple[KVCache, ...]  # (h_kv, n, d_head) per layer
    ms: float  # how long the pass took

    @property
    def read(self) -> batching.Read:
        """What Generate goes on from."""
        return batching.Read(self.caches, self.logits, None)


@st.cache_data(max_entries=16, show_spinner=False)
def run(ids: tuple[int, ...]) -> Run:
    """The model's read of ``ids`` (cached per prompt): once for the charts and for
    Generate. Read by the process's engine with the prompts other sessions wait to read at
    the same moment, in its turn as a pass that reads a text (:mod:`ui.batching`)."""
    loaded.smollm2()  # loaded before the engine is made (never inside a turn)
    read, ms = engine().read(ids)
    return Run(read.attention, read.logits, read.caches, ms)


def prompt_input(ctx: PageContext, spec: Text, label: str) -> Prompt:
    """A URL-bound prompt box; empty text falls back to the default, long text is capped."""
    raw = text(ctx, spec, label)
    if not raw.strip():
        ctx.warn(ctx.t("decoder.empty"))
        raw = spec.default
    p = tokenize(raw)
    if p.total > len(p.ids):
        ctx.warn(ctx.t("decoder.capped", total=p.total, cap=len(p.ids)))
    return p


def fixed_pair_note(ctx: PageContext, p: Prompt) -> None:
    """Step 2 reads the lesson's two sentences, whatever the prompt: say so when the prompt
    box holds something else."""
    if p.text != LESSON:
        st.caption(ctx.t("decoder.fixed_pair"))


def chinese_note(ctx: PageContext, p: Prompt) -> None:
    """Say plainly what this model can read when the prompt is not English."""
    typed.chinese_note(ctx, p.text, pieces=p.pieces)


def token_box(ctx: PageContext, p: Prompt) -> None:
    """The prompt's tokens under its box: folded for students (the sidebar keeps its room
    for the step's controls; the step's charts name the tokens too), shown on a slide."""
    with more_box(ctx, ctx.t("decoder.tokens_box", n=len(p.ids))):
        st.markdown(ctx.t("decoder.tokens", n=len(p.ids), strip=token_strip(p)))


def token_strip(p: Prompt, limit: int = 64) -> str:
    """The prompt's tokens as inline code for markdown."""
    return " ".join(_code(tok) for tok in p.labels[:limit])


def _code(token: str) -> str:
    shown = token.replace(" ", "␣") if token.strip() == "" else token
    return plain(shown, 24) if "`" in shown else f"`{shown}`"


def head_controls(ctx: PageContext, got: Got) -> tuple[int, int, int]:
    """Step 1's layer, head and followed query token (default: "it", else the last token);
    step 2 reads the layer and the head too."""
    m, p, t = loaded.smollm2(), got[SETTINGS], ctx.t
    cfg = m.config
    names = charts.unique_labels(p.labels)
    stripped = [lab.strip() for lab in p.labels]
    default = stripped.index("it") if "it" in stripped else len(p.labels) - 1

    def pick(name: str, preferred: int, count: int) -> int:
        """The slider of a layer or a head, at ``preferred`` if the model has it, else its last."""
        spec = Int(name, min(preferred, count - 1), 0, count - 1)
        help_ = t(f"decoder.{name}_help", **typed.sizes(m))
        return int(slider(ctx, spec, t(f"decoder.{name}"), help=help_))

    # beside the chart or in the sidebar: the sliders side by side, the token below them
    c1, c2 = st.columns(2, vertical_alignment="bottom")
    c3 = st.container()
    with c1:
        layer = pick("layer", 13, cfg.n_layers)
    with c2:
        head = pick("head", 8, cfg.n_heads)
    with c3:
        spec = Choice("query", str(default), tuple(str(i) for i in range(len(p.labels))))
        query = select(
            ctx, spec, t("decoder.query"), lambda i: one_line(names[int(i)], 24), widget="select"
        )
    return layer, head, int(query)


def query_rows(attention: np.ndarray, query: int) -> np.ndarray:
    """The query's row in every layer, averaged over the heads, keys after it blank.

    Shapes: ``attention`` ``(L, h, n, n)`` -> ``(L, n)``, NaN right of ``query``.
    """
    rows = attention[:, :, query, :].mean(axis=1)  # (L, n)
    return found.blank_after(rows, [query] * rows.shape[0])


def head_chart(
    t: Translator,
    labels: list[str],
    weights: np.ndarray,
    query: int,
    overview: np.ndarray,
    title: str,
    heads: int,
    presenter: bool,
) -> dict:
    """The selected head's causal weights (numbers in the cells, the query row outlined)
    next to the query's row in every layer (mean over the heads). On a projector the cell
    numbers are as large as the cells allow."""
    n, n_layers = len(labels), overview.shape[0]
    cell = charts.fit_cell(n, n, 440, 440, lo=5, hi=44)
    rest = charts.PAGE_WIDTH - n * cell - 2 * 70 - 70 - 40  # axes, legend, gap
    small = charts.fit_cell(n, n_layers, max(rest, 4 * n), 440, lo=4, hi=30)
    names = charts.unique_labels(labels)
    keys = t("decoder.keys")
    head = charts.heatmap(
        {title: future_blank(weights)},
        labels,
        labels,
        x_title=keys,
        y_title=t("decoder.queries"),
        cell=cell,
        legend=False,
        max_font=charts.SLIDE_FONT if presenter else 15,
    )
    head = charts.framed(head, query)
    overview_title = [  # two lines: one would be wider than the panel
        t("decoder.overview", q=names[query].strip() or names[query]),
        charts.shape_title(t("decoder.overview_mean", heads=heads), overview.shape),
    ]
    return charts.concat(
        [
            head,
            charts.heatmap(
                {"overview": overview},
                [f"L{i}" for i in range(n_layers)],
                labels,
                x_title=keys,
                y_title=t("decoder.layer_axis"),
                title=overview_title,
                cell=small,
                annotate=False,
            ),
        ],
        spacing=40,
    )


def head_notice(
    ctx: PageContext, p: Prompt, r: Run, layer: int, head: int, query: int
) -> list[str]:
    """Live "what to notice" items for the selected head and query."""
    t, names = ctx.t, charts.unique_labels(p.labels)
    f = found.head_row(r.attention, layer, head, query)
    top = [
        t("decoder.weighted", tok=plain(names[j], 24), w=f"{w:.3f}")
        for j, w in zip(f.top, f.weights, strict=True)
    ]
    items = [
        t(
            "decoder.notice_row",
            q=plain(names[query], 24),
            layer=layer,
            head=head,
            top=t("decoder.then").join(top),
        )
    ]
    if f.first_leads:  # the first token: where heads park weight, not meaning
        items.append(t("decoder.notice_first", tok=plain(names[0], 24), q=plain(names[query], 24)))
    layers, heads = r.attention.shape[:2]
    items.append(
        t("decoder.notice_causal", later=charts.fmt(f.later, 1), layers=layers, heads=heads)
    )
    return items


@dataclass(frozen=True)
class Why:
    """The lesson's two sentences, which differ only in their adjective."""

    labels_a: list[str]
    labels_b: list[str]
    it: int  # position of "it"
    adj: int  # position of the adjective (the first token that differs)
    nouns: tuple[int, int]  # positions of "animal" and "street"
    it_diff: float  # largest |difference| on the "it" row over every layer and head
    adj_diff: float  # the same on the adjective's row
    rows_a: np.ndarray  # (2, n) "it" row (chosen head) and adjective row (adjective head)
    rows_b: np.ndarray  # (2, n)


def why(layer: int, head: int, adj_layer: int, adj_head: int) -> Why:
    """Run both sentences and compare the "it" rows and the adjective rows."""
    a, b = tokenize(LESSON), tokenize(WIDE)
    ra, rb = run(a.ids), run(b.ids)
    stripped = [lab.strip() for lab in a.labels]
    it, animal, street = (stripped.index(w) for w in WHY)
    adj = found.first_difference(a.ids, b.ids)

    def rows(r: Run) -> np.ndarray:
        picked = np.stack([r.attention[layer, head, it], r.attention[adj_layer, adj_head, adj]])
        return found.blank_after(picked, [it, adj])  # (2, n)

    return Why(
        a.labels,
        b.labels,
        it,
        adj,
        (animal, street),
        found.largest_change(ra.attention, rb.attention, it),
        found.largest_change(ra.attention, rb.attention, adj),
        rows(ra),
        rows(rb),
    )


def why_chart(t: Translator, w: Why, rows: list[str], presenter: bool) -> dict:
    """The two sentences side by side: the "it" row and the adjective row of each (larger
    numbers on a projector)."""
    n = len(w.labels_a)
    cell = charts.fit_cell(n, 2, 620, hi=48)
    font = charts.SLIDE_FONT if presenter else 15  # numbers as large as the cells allow
    common = {"cell": cell, "x_title": t("decoder.keys"), "max_font": font}
    parts = [
        charts.heatmap(
            {t("decoder.sentence_a"): w.rows_a},
            rows,
            w.labels_a,
            legend=False,
            title=t("decoder.sentence_a"),
            **common,
        ),
        charts.heatmap(
            {t("decoder.sentence_b"): w.rows_b},
            rows,
            w.labels_b,
            title=t("decoder.sentence_b"),
            **common,
        ),
    ]
    return charts.concat(parts, spacing=40)


def why_notice(
    ctx: PageContext, w: Why, layer: int, head: int, al: int, ah: int, sz: dict[str, str]
) -> list[str]:
    """The comparison in plain words, every number from the two forward passes."""
    t = ctx.t
    animal, street = w.nouns
    adj_a, adj_b = plain(w.labels_a[w.adj], 20), plain(w.labels_b[w.adj], 20)
    return [
        t(
            "decoder.notice_it",
            **sz,
            layer=layer,
            head=head,
            a=f"{w.rows_a[0, animal]:.3f}",
            s=f"{w.rows_a[0, street]:.3f}",
            diff=charts.fmt(w.it_diff, 1),
        ),
        t(
            "decoder.notice_adj",
            layer=al,
            head=ah,
            adj_a=adj_a,
            adj_b=adj_b,
            a1=f"{w.rows_a[1, animal]:.3f}",
            s1=f"{w.rows_a[1, street]:.3f}",
            a2=f"{w.rows_b[1, animal]:.3f}",
            s2=f"{w.rows_b[1, street]:.3f}",
            diff=f"{w.adj_diff:.3f}",
        ),
        t("decoder.notice_why"),
    ]


def adjective_controls(ctx: PageContext, got: Got) -> tuple[int, int]:
    """Step 2's layer and head for the adjective's row (default: layer 4, head 2)."""
    cfg, t = loaded.smollm2().config, ctx.t
    c1, c2 = st.columns(2)
    with c1:
        al = slider(
            ctx,
            Int("adj_layer", min(4, cfg.n_layers - 1), 0, cfg.n_layers - 1),
            t("decoder.adj_layer"),
        )
    with c2:
        ah = slider(
            ctx, Int("adj_head", min(2, cfg.n_heads - 1), 0, cfg.n_heads - 1), t("decoder.adj_head")
        )
    return int(al), int(ah)


def sink(attention: np.ndarray) -> np.ndarray | None:
    """Each head's weight on the first token, or None for a one-token prompt."""
    return llama.first_token_share(attention) if attention.shape[-1] >= 2 else None


def sink_chart(t: Translator, shares: dict[str, np.ndarray]) -> dict:
    """One 30 × 9 heatmap per prompt: the share of each head's weight on the first token."""
    n_layers, n_heads = next(iter(shares.values())).shape
    # cells wider than high: 30 layers must fit the slide's height, and the head labels
    # ("H0", "H1", ...) need more width than a square cell that low would give them
    cell = charts.fit_cell(n_heads, 1, 300, lo=8, hi=32)
    aspect = min(1.0, charts.fit_cell(n_layers, 1, 480, lo=8, hi=30) / cell)
    rows, cols = [f"L{i}" for i in range(n_layers)], [f"H{j}" for j in range(n_heads)]
    parts = [
        charts.heatmap(
            {title: s},
            rows,
            cols,
            x_title=t("decoder.head_axis"),
            y_title=t("decoder.layer_axis"),  # on both: their titles line up
            title=title,
            cell=cell,
            aspect=aspect,
            annotate=False,
        )  # one shared colour scale: Vega-Lite draws its legend once
        for title, s in shares.items()
    ]
    return charts.concat(parts, spacing=30, resolve={"scale": {"color": "shared"}})


def sink_notice(ctx: PageContext, shares: list[tuple[Prompt, np.ndarray]]) -> list[str]:
    """Median share and how many heads give the first token more than half, per prompt."""
    items, sinks = [], [found.sink(s) for _, s in shares]
    for (p, _), f in zip(shares, sinks, strict=True):
        items.append(
            ctx.t(
                "decoder.notice_sink",
                first=_code(p.labels[0]),
                median=f"{f.median:.2f}",
                count=f.count,
                total=f.total,
            )
        )
    # the sink "stays on the first position" only if every prompt on screen shows it
    held = all(f.held for f in sinks)
    items.append(ctx.t("decoder.notice_sink_why" if held else "decoder.notice_sink_varies"))
    return items


def next_controls(ctx: PageContext, got: Got) -> float:
    """Step 4's temperature of the next-token softmax (a sampled generation's too; 0 is
    greedy)."""
    return float(
        slider(ctx, TEMPERATURE, ctx.t("decoder.temp"), step=0.05, help=ctx.t("decoder.temp_help"))
    )


def next_frame(
    t: Translator, m: smollm.SmolLM, logits: np.ndarray, temperature: float, keeps: np.ndarray
) -> pd.DataFrame:
    """The top-10 next tokens at ``temperature`` (readable token text, probability) and
    whether the generation's setting keeps each (``keeps``: :func:`kept`, ``(vocab,)``)."""
    p = distribution(logits, Sampling(temperature))  # (vocab,) 1 on the top token at 0
    ids = np.argsort(-p, kind="stable")[:BARS]  # (10,)
    labels = charts.unique_labels(smollm.token_labels(m, [int(i) for i in ids]))
    keep = keeps[ids]
    return pd.DataFrame(
        {
            "token": [_axis(lab) for lab in labels],
            "p": p[ids],
            "kept": [t("decoder.kept" if k else "decoder.dropped") for k in keep],
        }
    )


def kept(logits: np.ndarray, s: Sampling) -> np.ndarray:
    """Which tokens a generation with ``s`` can pick (greedy: the most likely only).

    Shapes: ``logits`` ``(vocab,)`` -> bool ``(vocab,)``.
    """
    return distribution(logits, s) > 0


def _axis(label: str) -> str:
    """A token for a chart axis: a leading space shown as ␣ (else " the" looks like "the")."""
    return "␣" + label[1:] if label.startswith(" ") else label


def next_chart(t: Translator, frame: pd.DataFrame) -> dict:
    """Bars of the top-10 probabilities, most likely first, coloured by whether the
    generation's setting keeps the token."""
    return charts.bars(
        frame,
        "token",
        "p",
        sort=list(frame["token"]),
        color="kept",
        color_domain=[t("decoder.kept"), t("decoder.dropped")],
        colors=[charts.KEY_COLOR, "#c9ccd3"],
        y_domain=(0, 1),
        x_title=t("decoder.next_axis"),
        y_title=t("decoder.prob_axis"),
        width=640,
        height=240,
    )


def next_notice(
    ctx: PageContext, frame: pd.DataFrame, temperature: float, sz: dict[str, str]
) -> list[str]:
    """What the temperature did to the distribution."""
    f = found.next_token(frame["p"].to_numpy())
    key = "decoder.notice_next" if temperature > 0 else "decoder.notice_next_zero"
    return [
        ctx.t(
            key,
            tok=_code(str(frame["token"].iloc[f.top])),
            p=f"{f.p:.3f}",
            mass=f"{f.mass:.3f}",
            temp=f"{temperature:.2f}",
        ),
        ctx.t("decoder.notice_temp", **sz),
    ]


def sampling_notice(ctx: PageContext, keeps: np.ndarray, s: Sampling, vocab: str) -> list[str]:
    """One sentence per sampling control, with what it keeps here (``keeps``: :func:`kept`,
    counted live)."""
    t = ctx.t
    if s.greedy:
        return [t("decoder.notice_greedy")]
    every = len(keeps)
    items = [
        t("decoder.notice_top_k", k=s.top_k)
        if 0 < s.top_k < every
        else t("decoder.notice_top_k_off", vocab=vocab),
        t("decoder.notice_top_p", p=f"{s.top_p:.2f}")
        if s.top_p < 1
        else t("decoder.notice_top_p_off"),
        t("decoder.notice_kept", n=int(keeps.sum()), vocab=vocab),
    ]
    if s.top_p <= 0:
        items.append(t("decoder.notice_top_p_zero"))
    return items


@dataclass(frozen=True)
class Settings:
    """What a generation run depends on."""

    ids: tuple[int, ...]
    n_tokens: int
    sampling: Sampling  # GREEDY when not sampling (its other values do not matter then)


@dataclass(frozen=True)
class Generation:
    """A finished generation run, timed step by step."""

    settings: Settings
    use_cache: bool
    tokens: list[int]
    labels: list[str]  # each token on its own (the cache table is about tokens)
    spans: list[str]  # the same text with each character's byte pieces joined
    text: str
    step_ms: list[float]
    cache_len: list[int]
    cache_bytes: list[int]
    batch: list[int]  # how many generations the step of each token decoded (0: the prompt's read)
    stopped: bool  # the model wrote its end-of-text token

    @property
    def later_ms(self) -> float:
        """The mean time of a step after the first (the first also reads the prompt)."""
        return found.later_mean(self.step_ms)


@dataclass(frozen=True)
class Gen:
    """Step 4's generation switches."""

    n_tokens: int
    sample: bool
    use_cache: bool


def gen_controls(ctx: PageContext, got: Got) -> Gen:
    """Step 4's number of tokens, greedy or sampled, with or without the cache (step 5
    generates with them too). In the sidebar the cache switch (step 5 is about it) is
    folded with the sampling's details (:func:`sampling_controls`)."""
    t = ctx.t
    n = slider(ctx, N_TOKENS, t("decoder.n_tokens"))
    if ctx.presenter:  # the toggles side by side
        left, right = st.columns(2, vertical_alignment="bottom")
    else:
        left = right = nullcontext()
    with left:
        sample = toggle(ctx, SAMPLE, t("decoder.sample"), help=t("decoder.sample_help"))
    with right if ctx.presenter else more_box(ctx, t("decoder.cache_box")):
        cache = toggle(ctx, USE_CACHE, t("decoder.use_cache"), help=t("decoder.use_cache_help"))
    return Gen(int(n), bool(sample), bool(cache))


def sampling_controls(ctx: PageContext, got: Got) -> tuple[Settings, bool]:
    """Step 4's top-k, top-p and seed (used only when sampling; folded for students, in a
    closed expander on a slide), and the generation's settings they complete."""
    t, p, temperature, gen = ctx.t, got[SETTINGS], got[NEXT], got[GENERATION]
    off = not gen.sample
    with nullcontext() if ctx.presenter else more_box(ctx, t("decoder.more")):
        k = slider(ctx, TOP_K, t("decoder.top_k"), help=t("decoder.top_k_help"), disabled=off)
        top_p = slider(
            ctx, TOP_P, t("decoder.top_p"), step=0.01, help=t("decoder.top_p_help"), disabled=off
        )
        seed = number(ctx, SEED, t("decoder.seed"), disabled=off)
    s = Sampling(temperature, int(k), float(top_p), int(seed))
    # greedy (not sampling, or temperature 0): the other values change nothing, so one key
    return Settings(
        p.ids, gen.n_tokens, s if gen.sample and not s.greedy else GREEDY
    ), gen.use_cache


def generate(
    m: smollm.SmolLM, s: Settings, use_cache: bool, show: Callable[[list[str]], None]
) -> Generation:
    """Generate token by token, calling ``show`` with the text so far after every token.
    With the cache it goes on from the page's read of the prompt (:func:`run`: the first
    token costs no pass) in the process's batch (:mod:`ui.batching`); without, every step
    reads the whole text again, in its turn. Each token's time is that of its pass."""
    tokens, ms, batch = [], [], []
    if use_cache:
        r = run(s.ids)
        progress = engine().generate(r.read, s.n_tokens, s.sampling, m.eos_id)
        with closing(progress):  # stopped early (a new click): leaves the batch
            for got in progress:
                tokens = list(got.tokens)
                ms.append(got.ms if got.batch else r.ms)  # the first: the prompt's read
                batch.append(got.batch)
                show(smollm.text_spans(m, tokens))
        lens = [len(s.ids) + k for k in range(len(tokens))]
        per_token = sum(c.nbytes for c in r.caches) // len(s.ids)
        held = [n * per_token for n in lens]
    else:
        tokens, lens, held = without_cache(m, s, show, ms)
        batch = [1] * len(tokens)
    stopped = bool(tokens) and tokens[-1] == m.eos_id
    kept_ = tokens[:-1] if stopped else tokens
    return Generation(
        s,
        use_cache,
        tokens,
        smollm.token_labels(m, tokens),
        smollm.text_spans(m, tokens),
        smollm.decode(m, kept_),
        ms,
        lens,
        held,
        batch,
        stopped,
    )


def without_cache(
    m: smollm.SmolLM, s: Settings, show: Callable[[list[str]], None], ms: list[float]
) -> tuple[list[int], list[int], list[int]]:
    """The generation without the cache: every step reads the prompt and the tokens so far,
    one at a time in its turn; appends each step's time to ``ms``. Returns the tokens and
    (all 0) the cache's length and bytes."""
    steps = llama.generate_steps(
        m.weights, list(s.ids), s.n_tokens, use_cache=False, sampling=s.sampling, stop=m.eos_id
    )
    line, tokens = turns(), []
    for k in range(s.n_tokens):  # generate_steps yields n_tokens steps, or stops at eos_id
        with line.turn(first=k == 0, prompt=len(s.ids)):
            start = time.perf_counter()
            step = next(steps)
            ms.append((time.perf_counter() - start) * 1000)
        tokens.append(step.token)
        show(smollm.text_spans(m, tokens))
        if step.token == m.eos_id:
            break
    return tokens, [0] * len(tokens), [0] * len(tokens)


def remember(g: Generation) -> None:
    """Keep the last run of each mode in this session (not in the URL: it is a result)."""
    runs = dict(st.session_state.get(RUNS_KEY, {}))
    runs[g.use_cache] = g
    st.session_state[RUNS_KEY] = runs


def recalled(s: Settings, use_cache: bool) -> Generation | None:
    """This session's last run in that mode, if it was made with these settings."""
    g = st.session_state.get(RUNS_KEY, {}).get(use_cache)
    return g if g is not None and g.settings == s else None


def generated_markdown(p: Prompt, spans: list[str], done: bool) -> str:
    """The prompt, then the generated text highlighted token by token (a character made of
    several byte pieces as one) (safe markdown)."""
    prompt = plain(p.read, 400)
    new = " ".join(f":orange-background[{plain(span, 40) or '␣'}]" for span in spans)
    return f"{prompt} {new}{'' if done else ' ▌'}"


def stream(ctx: PageContext, m: smollm.SmolLM, p: Prompt, s: Settings, cache: bool) -> Generation:
    """Run one generation, showing each token as soon as it exists."""
    slot = st.empty()
    g = generate(m, s, cache, lambda labels: slot.markdown(generated_markdown(p, labels, False)))
    slot.markdown(generated_markdown(p, g.spans, True))
    remember(g)
    return g


def generation(
    ctx: PageContext, m: smollm.SmolLM, p: Prompt, s: Settings, use_cache: bool, pressed: bool
) -> Generation | None:
    """Step 4's run, shown: made now, token by token, when ``pressed``; else this session's
    last run with these settings; else None."""
    if pressed:
        return stream(ctx, m, p, s, use_cache)
    g = recalled(s, use_cache)
    if g is not None:
        st.markdown(generated_markdown(p, g.spans, True))
    return g


def timed_runs(
    ctx: PageContext, m: smollm.SmolLM, p: Prompt, s: Settings, pressed: bool
) -> tuple[Generation | None, Generation | None]:
    """Step 5's runs with and without the cache: made now (in a status box that shows the
    tokens arrive) when ``pressed``, else this session's last ones with these settings."""
    if not pressed:
        return recalled(s, True), recalled(s, False)
    with st.status(ctx.t("decoder.comparing"), expanded=True) as box:
        on, off = (stream(ctx, m, p, s, cache) for cache in (True, False))
        box.update(label=ctx.t("decoder.compared"), state="complete", expanded=False)
    return on, off


def generation_notice(ctx: PageContext, g: Generation) -> list[str]:
    """Speed, mode and sampling of the run on screen, and whom its steps were shared with."""
    t, sm = ctx.t, g.settings.sampling
    mode = t("decoder.mode_cache") if g.use_cache else t("decoder.mode_full")
    how = (
        t("decoder.greedy")
        if sm.greedy
        else t(
            "decoder.sampled",
            temp=f"{sm.temperature:.2f}",
            k=sm.top_k,
            p=f"{sm.top_p:.2f}",
            seed=sm.seed,
        )
    )
    items = [
        t(
            "decoder.notice_gen",
            n=len(g.tokens),
            mode=mode,
            how=how,
            ms=f"{sum(g.step_ms):.0f}",
            per=f"{g.later_ms:.0f}",
        )
    ]
    if g.use_cache and len(g.batch) > 1:  # the first token came from the prompt's read
        most = max(g.batch[1:])
        items.append(
            t("decoder.notice_batch", most=most) if most > 1 else t("decoder.notice_alone")
        )
    if g.stopped:
        items.append(t("decoder.notice_eos"))
    return items


def timing_frame(t: Translator, runs: list[Generation]) -> pd.DataFrame:
    """Milliseconds per generated token, one line per mode (no rows before a run)."""
    dtypes = {"step": int, "ms": float, "mode": str}
    parts = [pd.DataFrame({name: pd.Series(dtype=d) for name, d in dtypes.items()})]
    for g in runs:
        mode = t("decoder.mode_cache") if g.use_cache else t("decoder.mode_full")
        parts.append(
            pd.DataFrame({"step": np.arange(1, len(g.step_ms) + 1), "ms": g.step_ms, "mode": mode})
        )
    return pd.concat(parts, ignore_index=True)


def timing_chart(t: Translator, frame: pd.DataFrame) -> dict:
    """Time per step with and without the cache (the first step reads the whole prompt);
    before any run, its empty axes say how to fill them."""
    chart = charts.lines(
        frame,
        "step",
        "ms",
        "mode",
        x_title=t("decoder.step_axis"),
        y_title=t("decoder.ms_axis"),
        log_y=True,
        color_domain=[t("decoder.mode_cache"), t("decoder.mode_full")],
        colors=[charts.KEY_COLOR, charts.QUERY_COLOR],
        width=560,
        height=240,
    )
    chart["encoding"]["x"]["axis"] = {"tickMinStep": 1, "format": "d"}  # whole steps, not 1.1
    return chart if len(frame) else with_hint(chart, t("decoder.timing_empty"))


def with_hint(chart: dict, hint: str) -> dict:
    """An empty chart with ``hint`` in its middle: its axes say what will be there, the
    hint how to fill them."""
    middle = {"x": {"expr": "width / 2"}, "y": {"expr": "height / 2"}}
    text = {
        "datasets": {"hint": [{"hint": hint}]},
        "data": {"name": "hint"},
        "mark": {"type": "text", **middle, "color": "#808495"},
        "encoding": {"text": {"field": "hint", "type": "nominal"}},
    }
    return charts.layer([chart, text])


def cache_box(ctx: PageContext, m: smollm.SmolLM, g: Generation) -> None:
    """The table of :func:`cache_table`."""
    st.table(cache_table(ctx, m, g), hide_index=True)  # no toolbar: its tooltips are English


def cache_table(ctx: PageContext, m: smollm.SmolLM, g: Generation) -> pd.DataFrame:
    """The cache after each step: its shape per layer, and the memory of all layers with
    grouped-query attention and as it would be with one key/value head per query head."""
    t, cfg, sz = ctx.t, m.config, typed.sizes(m)
    return pd.DataFrame(
        {
            t("decoder.col_step"): np.arange(1, len(g.tokens) + 1),
            t("decoder.col_token"): [_axis(lab) for lab in g.labels],
            t("decoder.col_shape"): [f"({cfg.n_kv_heads}, {n}, {cfg.d_head})" for n in g.cache_len],
            t("decoder.col_memory", **sz): [f"{b / 1024:.0f} KiB" for b in g.cache_bytes],
            t("decoder.col_mha", **sz): [
                f"{llama.mha_cache_bytes(b, cfg) / 1024:.0f} KiB" for b in g.cache_bytes
            ],
        }
    )


def compare_notice(
    ctx: PageContext, m: smollm.SmolLM, on: Generation, off: Generation
) -> list[str]:
    """Same tokens? How much faster? How big is the cache?"""
    t, cfg = ctx.t, m.config
    same = on.tokens == off.tokens
    sp = found.speed(on.step_ms, off.step_ms)
    at = found.first_difference(on.tokens, off.tokens) + 1  # counted from 1 on screen
    return [
        t("decoder.same") if same else t("decoder.differ", at=at),
        t(
            "decoder.notice_speed",
            on=f"{sp.total_on:.0f}",
            off=f"{sp.total_off:.0f}",
            per_on=f"{sp.per_on:.0f}",
            per_off=f"{sp.per_off:.0f}",
            x=f"{sp.ratio:.1f}",
        ),
        *growth_notice(ctx, on, off),
        t(
            "decoder.notice_memory",
            layers=cfg.n_layers,
            kv=cfg.n_kv_heads,
            h=cfg.n_heads,
            d=cfg.d_head,
            kib=f"{on.cache_bytes[-1] / 1024:.0f}",
            mha=f"{llama.mha_cache_bytes(on.cache_bytes[-1], cfg) / 1024:.0f}",
            ratio=cfg.n_heads // cfg.n_kv_heads,
        ),
    ]


GREW = found.GREW  # the without-cache run's last step took at least this many times its first


def growth_notice(ctx: PageContext, on: Generation, off: Generation) -> list[str]:
    """What the length should do to a step without the cache (step k feeds the prompt and
    the k − 1 tokens before it, so the work grows with the token count) against what the
    timer measured on its first and last step, which on a shared machine may not show it."""
    g = found.growth(len(off.settings.ids), off.step_ms)
    if g is None:
        return []
    t = ctx.t
    items = [
        t(
            "decoder.notice_growth",
            k=g.steps,
            n1=g.first_len,
            nk=g.last_len,
            r=f"{g.expected:.1f}",
            ms1=f"{g.first_ms:.0f}",
            msk=f"{g.last_ms:.0f}",
            g=f"{g.grew:.2f}",
        )
    ]
    if g.seen:
        items.append(t("decoder.growth_seen"))
    else:
        items.append(t("decoder.growth_hidden", per_on=f"{on.later_ms:.0f}"))
    return items


# ---- the page's controls ------------------------------------------------------------------


def page_words(ctx: PageContext) -> dict[str, str]:
    """What the page knows before its steps: the model's sizes (the model loaded behind a
    spinner on its first visit; if it is not installed, the page says so and stops)."""
    return typed.sizes(typed.model_or_stop(ctx))


def prompt_controls(ctx: PageContext, got: Got) -> Prompt:
    """The prompt box and, under it, its tokens (the page's settings)."""
    p = prompt_input(ctx, PROMPT, ctx.t("decoder.prompt"))
    token_box(ctx, p)
    return p


def second_prompt(ctx: PageContext, got: Got) -> Prompt:
    """Step 3's second prompt: another first token, the same sink?"""
    return prompt_input(ctx, SINK_PROMPT, ctx.t("decoder.sink_prompt"))


def generate_button(ctx: PageContext, got: Got) -> bool:
    """Step 4's Generate (below the generation settings)."""
    return st.button(ctx.t("decoder.generate"), type="primary", icon=":material/play_arrow:")


def compare_button(ctx: PageContext, got: Got) -> bool:
    """Step 5's Generate with and without the cache."""
    return st.button(ctx.t("decoder.compare"), icon=":material/timer:")


def measure_button(ctx: PageContext, got: Got) -> bool:
    """Step 6's Measure."""
    return st.button(ctx.t("decoder.measure"), icon=":material/speed:")


SETTINGS = Controls(prompt_controls, box="decoder.controls")
HEAD = Controls(head_controls, slide="notes")  # read by step 2 too
ADJECTIVE = Controls(adjective_controls)  # a slide: in the step's text, above the chart
SECOND = Controls(second_prompt, slide="notes")
NEXT = Controls(next_controls, slide="above")  # read by step 5 too
GENERATION = Controls(gen_controls, slide="notes")  # read by step 5 too
SAMPLING = Controls(sampling_controls, slide="notes", fold="decoder.more")  # step 5 too
GENERATE = Controls(generate_button, slide="notes", keep=False)
COMPARE = Controls(compare_button, keep=False)
MEASURE = Controls(measure_button, keep=False)


# ---- the steps ----------------------------------------------------------------------------
# A step's text names where its chart's parts went (:func:`places`), so it is written into
# the step's text once the chart is drawn.


def lead(v: View, p: Prompt, step: int) -> None:
    """The top of a step's text: what this model can read and, on a slide, the step's full
    title (the step bar has its short one)."""
    with v.lead:
        chinese_note(v.ctx, p)
        if v.presenter:
            st.subheader(v.t(f"decoder.s{step}_title"))


def heads_step(v: View) -> None:
    """Step 1: the selected head's causal weights beside the query's row in every layer."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    layer, head, query = v[HEAD]
    lead(v, p, 1)
    result = run(p.ids)
    overview = query_rows(result.attention, query)
    # The chart's title does not name the layer and head (the sliders do): a new layer or
    # head then only swaps the chart's data. The exports name them.
    shown_as = (t("decoder.head_weights"), m.config.n_heads, v.presenter)
    weights = result.attention[layer, head]
    chart = v.chart(head_chart, t, p.labels, weights, query, overview, *shown_as)
    step_text(v, 1, **places(v.ctx, chart), **v.words)
    v.notice(head_notice(v.ctx, p, result, layer, head, query))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    caption = t("decoder.head_title", layer=layer, head=head)
    v.export("decoder_head", chart, arrays={"attention": result.attention}, caption=caption)


def why_step(v: View) -> None:
    """Step 2: the lesson's two sentences, the "it" row (step 1's head) and the adjective's
    row: "it" cannot see the word that decides what it means."""
    t, p = v.t, v[SETTINGS]
    layer, head, _ = v[HEAD]
    adj_layer, adj_head = v[ADJECTIVE]
    lead(v, p, 2)
    step_text(v, 2, a=LESSON, b=WIDE)
    with v.lead:
        fixed_pair_note(v.ctx, p)
    w = why(layer, head, adj_layer, adj_head)
    rows = [
        t("decoder.row_it", layer=layer, head=head),
        t("decoder.row_adj", layer=adj_layer, head=adj_head),
    ]
    v.chart(why_chart, t, w, rows, v.presenter)
    v.notice(why_notice(v.ctx, w, layer, head, adj_layer, adj_head, v.words))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links("masking", "encoder", place=v.below if v.presenter else None)  # a slide: room


def sink_step(v: View) -> None:
    """Step 3: every head's weight on the first token, for the prompt and a second one."""
    t, p = v.t, v[SETTINGS]
    lead(v, p, 3)
    pairs = [(q, sink(run(q.ids).attention)) for q in (p, v[SECOND])]
    shares = [(q, s) for q, s in pairs if s is not None]
    if len(shares) < len(pairs):
        v.notes.info(t("decoder.one_token"))
    chart = {}  # a one-token prompt draws no chart
    if shares:
        panels = {t("decoder.sink_title", first=q.labels[0]): s for q, s in shares}
        chart = v.chart(sink_chart, t, panels)
        v.notice(sink_notice(v.ctx, shares))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    step_text(v, 3, "_one" if len(shares) == 1 else "", **places(v.ctx, chart))


def next_step(v: View) -> None:
    """Step 4: the next token's probabilities at the temperature (the tokens the generation
    setting keeps in colour), and a generation."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    temperature = v[NEXT]
    settings, use_cache = v[SAMPLING]
    lead(v, p, 4)
    step_text(v, 4, **v.words)
    logits = run(p.ids).logits
    keeps = kept(logits, settings.sampling)  # (vocab,) what the setting can write
    top = next_frame(t, m, logits, temperature, keeps)
    v.chart(next_chart, t, top)
    with v.notes if v.presenter else v.below:  # students: the text below the chart
        made = generation(v.ctx, m, p, settings, use_cache, v[GENERATE])
    items = [] if made is None else generation_notice(v.ctx, made)
    items += next_notice(v.ctx, top, temperature, v.words)
    v.notice(items + sampling_notice(v.ctx, keeps, settings.sampling, v.words["vocab"]))
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links(("softmax", t("decoder.softmax_link")))


def cache_step(v: View) -> None:
    """Step 5: step 4's generation with and without the KV cache, timed step by step."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    settings, _ = v[SAMPLING]
    lead(v, p, 5)
    step_text(v, 5, **v.words)
    with v.lead if v.presenter else v.figure:  # students: above the chart
        on, off = timed_runs(v.ctx, m, p, settings, v[COMPARE])
    done = [g for g in (on, off) if g is not None]
    if not v.presenter or len(done) == 2:  # students: the chart's place kept
        v.chart(timing_chart, t, timing_frame(t, done))
    if on is None or off is None:
        v.lead.caption(t("decoder.compare_hint"))
    else:
        place = v.below if v.presenter else v.notes  # a slide: below the chart
        v.notice(compare_notice(v.ctx, m, on, off), place=place)
        with v.notes:
            table = lambda: cache_box(v.ctx, m, on)  # noqa: E731
            folded(v.ctx, t("decoder.cache_table"), "cache_table", table, icon=":material/table:")
    typed.weights_note(v.ctx, v.notes)  # the 4-bit copy
    v.links("kv_cache")


@dataclass(frozen=True)
class Cost:
    """Step 6's measurement: one decoding step for batches of several sizes."""

    ids: tuple[int, ...]
    sizes: tuple[int, ...]
    step_ms: tuple[float, ...]


COST_KEY = "_decoder_cost"


def measured_cost(ctx: PageContext, p: Prompt, pressed: bool) -> Cost | None:
    """Step 6's timing: made now on the server when ``pressed`` (behind a spinner), else this
    session's last one for this prompt."""
    if pressed:
        with st.spinner(ctx.t("decoder.measuring")):
            times = engine().cost(run(p.ids).read, COST_SIZES)
        st.session_state[COST_KEY] = Cost(p.ids, COST_SIZES, tuple(times))
    c = st.session_state.get(COST_KEY)
    return c if c is not None and c.ids == p.ids else None


def cost_frame(t: Translator, f: found.Batched | None) -> pd.DataFrame:
    """Two bars per batch size: the whole step and its share per generation (ms); no rows
    before a measurement."""
    rows = []
    for b, step, one in zip(f.sizes, f.step_ms, f.token_ms, strict=True) if f else ():
        size = t("decoder.batch_of", b=b)
        rows.append({"size": size, "ms": step, "what": t("decoder.cost_step")})
        rows.append({"size": size, "ms": one, "what": t("decoder.cost_token")})
    return pd.DataFrame(rows, columns=["size", "ms", "what"])


def cost_chart(t: Translator, frame: pd.DataFrame) -> dict:
    """The step's time and the time per generation, side by side for each batch size;
    before a measurement, empty axes that say how to fill them."""
    sizes = [t("decoder.batch_of", b=b) for b in COST_SIZES]
    what = [t("decoder.cost_step"), t("decoder.cost_token")]
    chart = charts.bars(
        frame,
        "size",
        "ms",
        sort=sizes,
        color="what",
        color_domain=what,
        colors=[charts.QUERY_COLOR, charts.KEY_COLOR],
        x_title=t("decoder.batch_axis"),
        y_title=t("decoder.cost_axis"),
        width=560,
        height=260,
    )
    for part in chart["layer"]:  # the bars and their labels: grouped by size
        part["encoding"]["xOffset"] = {"field": "what", "sort": what}
        part["encoding"]["x"]["scale"] = {"domain": sizes}  # the sizes before any bar
        part["encoding"]["y"]["axis"] = {"format": "d"}  # whole milliseconds
        if "text" in part["encoding"]:
            part["encoding"]["text"]["format"] = ".0f"  # whole milliseconds
    return chart if len(frame) else with_hint(chart, t("decoder.cost_empty"))


def cost_notice(ctx: PageContext, f: found.Batched, params: str) -> list[str]:
    """What the timer measured, and why (the weights read once per step)."""
    t, big = ctx.t, f.sizes[-1]
    items = [
        t(
            "decoder.notice_cost",
            b=big,
            one=f"{f.step_ms[0]:.0f}",
            alone=f"{f.step_ms[0] * big:.0f}",
            batch=f"{f.step_ms[-1]:.0f}",
            x=f"{f.speedup:.1f}",
        ),
        t(
            "decoder.notice_weights",
            params=params,
            mb=f"{f.weight_mb:.0f}",
            b=big,
            share=f"{f.shared_mb:.0f}",
        ),
    ]
    if not f.cheaper:
        items.append(t("decoder.notice_cost_noisy"))
    items.append(t("decoder.notice_cost_attention"))
    return items


def batch_step(v: View) -> None:
    """Step 6: what one decoding step costs for 1, 4 and 16 generations at once, measured on
    the server: the weights are read once per step, whoever it decodes for."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    lead(v, p, 6)
    step_text(v, 6, **v.words)
    with v.lead if v.presenter else v.figure:
        c = measured_cost(v.ctx, p, v[MEASURE])
    v.lead.caption(t("decoder.under_way", n=engine().under_way()))
    f = None if c is None else found.batched(c.sizes, c.step_ms, llama.weight_bytes(m.weights))
    v.chart(cost_chart, t, cost_frame(t, f))
    if f is None:
        v.lead.caption(t("decoder.cost_hint"))
    else:
        v.notice(cost_notice(v.ctx, f, v.words["params"]))
    v.links("kv_cache")


# ---- Ask the class ------------------------------------------------------------------------
# The lesson's prompt (the page's default): where does its last token look, averaged over
# every layer and head? The model's own mean row (:func:`core.findings.decoder.mean_row`).


def _ask_last_words() -> list[str]:
    """The lesson prompt's tokens as a student reads them (no leading space)."""
    return [label.strip() or label for label in tokenize(LESSON).labels]


def _ask_last_truth() -> questions.Truth:
    ids = tokenize(LESSON).ids
    return questions.Truth.of_row(found.mean_row(run(ids).attention, len(ids) - 1))  # (n,)


ASK_LAST = questions.Question(
    "decoder.last", "token", _ask_last_truth, questions.tokens(_ask_last_words)
)
QUESTIONS = (ASK_LAST,)
