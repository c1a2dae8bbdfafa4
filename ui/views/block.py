"""Presentation helpers and steps of the block page (pages/11_block.py): one token's journey
through SmolLM2 — the block with the size of every array, the residual stream, the logit
lens — and whether a head matters (ablation beside attention).

Every number comes from :mod:`core.interpret`, which runs core.llama's forward pass (the
one /decoder runs) and keeps what each layer adds; what the notes point out comes from
:mod:`core.findings.block`. The model's passes are cached per input and take their turn in
the process's line (:mod:`ui.turns`).
"""

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import core.findings.block as found
import core.interpret as interpret
import core.llama as llama
from models import smollm
from models.smollm_probe import PromptTokens
from ui import charts, loaded, questions
from ui import prompt as typed
from ui.context import PageContext
from ui.i18n import Translator
from ui.params import Choice, Int, Many, Text, pick_many, select, slider, text
from ui.safe import one_line, plain
from ui.sentence import more_box
from ui.steps import Controls, Got, View
from ui.turns import model_turn

# Who gets the drink? The indirect-object task of Wang et al. 2022: the model must pick the
# name that is not repeated, a prediction with heads that matter and heads that only look.
EXAMPLE = "When Mary and John went to the store, John gave a drink to"
EXAMPLE_RIVAL = " John"  # the task's rival: the repeated name (the logit difference of the paper)
PROMPT = Text("prompt", EXAMPLE, max_len=400)
RIVALS = 10  # the next tokens the ablation's rival is chosen from
LENS_K = 5  # tokens per layer in the logit lens
MODE = Choice("mode", "zero", interpret.MODES)
ATTN_COLOR, MLP_COLOR, STREAM_COLOR = charts.KEY_COLOR, "#edae49", "#30343f"


# ---- the model's passes (cached per input, each in its turn) ---------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def traced(ids: tuple[int, ...]) -> interpret.Trace:
    """The forward pass of /decoder, keeping what each block adds."""
    weights = loaded.smollm2().weights
    with model_turn(len(ids)):
        return interpret.trace(weights, list(ids))


@st.cache_data(max_entries=16, show_spinner=False)
def lens(ids: tuple[int, ...], pos: int) -> tuple[np.ndarray, np.ndarray]:
    """The logit lens's top tokens after every layer at position ``pos``: ids and
    probabilities ``(L + 1, LENS_K)``."""
    t = traced(ids)
    weights = loaded.smollm2().weights
    return interpret.lens_top(interpret.logit_lens(weights, t.resid[:, pos]), LENS_K)


@st.cache_data(max_entries=16, show_spinner=False)
def effects(
    ids: tuple[int, ...], layer: int, target: int, other: int, mode: str
) -> interpret.HeadEffects:
    """Every head of ``layer`` switched off in turn (one packed pass)."""
    weights = loaded.smollm2().weights
    with model_turn(len(ids)):
        return interpret.head_effects(weights, list(ids), layer, target, other, mode)


@st.cache_data(max_entries=16, show_spinner=False)
def ablated(ids: tuple[int, ...], heads: tuple[tuple[int, int], ...], mode: str) -> np.ndarray:
    """The next-token logits with ``heads`` switched off together."""
    weights = loaded.smollm2().weights
    with model_turn(len(ids)):
        return interpret.ablated_logits(weights, list(ids), heads, mode)


# ---- words ---------------------------------------------------------------------------------


def page_words(ctx: PageContext) -> dict[str, str]:
    """The model's sizes (loaded behind a spinner; if it is not installed the page says so
    and stops)."""
    return typed.sizes(typed.model_or_stop(ctx))


def token_name(labels: list[str], i: int) -> str:
    """A token as a control or a chart names it (a leading space as ␣)."""
    label = charts.unique_labels(labels)[i]
    return "␣" + label[1:] if label.startswith(" ") else label


def vocab_token(m: smollm.SmolLM, token: int) -> str:
    """A vocabulary token as text on screen (one line, a leading space as ␣)."""
    (label,) = smollm.token_labels(m, [token])
    return one_line("␣" + label[1:] if label.startswith(" ") else label, 24)


# ---- controls ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """The prompt as typed and as the model reads it."""

    raw: str
    tokens: PromptTokens

    @property
    def ids(self) -> tuple[int, ...]:
        return self.tokens.ids

    @property
    def labels(self) -> list[str]:
        return list(self.tokens.labels)


def prompt_controls(ctx: PageContext, got: Got) -> Prompt:
    """The prompt box and its tokens (folded)."""
    t = ctx.t
    raw = text(ctx, PROMPT, t("block.prompt"))
    p = typed.prompt_or_default(ctx, raw, EXAMPLE)
    with more_box(ctx, t("block.tokens_box", n=len(p.ids))):
        names = [plain(token_name(p.labels, i), 24) for i in range(len(p.ids))]
        st.markdown(" ".join(f"`{n}`" if "`" not in n else n for n in names))
    return Prompt(raw, p)


def lead(v: View, p: Prompt) -> None:
    """The top of a step's text: what this model can read (a prompt not in English)."""
    with v.lead:
        typed.chinese_note(v.ctx, p.raw)


def position_control(ctx: PageContext, got: Got) -> int:
    """Steps 2–3: the token whose journey is followed (default: the last, whose vector
    predicts the next token)."""
    p = got[SETTINGS]
    options = tuple(str(i) for i in range(len(p.ids)))
    spec = Choice("pos", options[-1], options)
    labels = p.labels
    chosen = select(
        ctx, spec, ctx.t("block.pos"), lambda i: token_name(labels, int(i)), widget="select"
    )
    return int(chosen)


@dataclass(frozen=True)
class Compared:
    """Step 4's folded choices: how a head is switched off, the two next tokens compared,
    the prompt token whose attention is shown."""

    mode: str
    target: int  # the model's most likely next token (a vocabulary id)
    other: int  # its rival (a vocabulary id)
    key: int  # the prompt position whose attention is shown beside the effects


def head_controls(ctx: PageContext, got: Got) -> tuple[int, tuple[int, ...]]:
    """Step 4: the layer, and heads of it to switch off together."""
    t, cfg = ctx.t, loaded.smollm2().config
    layer = slider(
        ctx, Int("layer", min(23, cfg.n_layers - 1), 0, cfg.n_layers - 1), t("block.layer")
    )
    heads = Many("off", tuple(str(h) for h in range(cfg.n_heads)))
    off = pick_many(
        ctx, heads, t("block.off"), lambda h: f"H{h}", default_label=t("block.none_off")
    )
    return int(layer), tuple(int(h) for h in off)


def compared_controls(ctx: PageContext, got: Got) -> Compared:
    """Step 4's zero or mean ablation, the rival of the most likely next token and the
    token whose attention is compared (folded: students in the sidebar, a slide in a closed
    expander). Defaults: the rival is the second most likely next token (the example's: the
    repeated name), the token looked at is the target's place in the prompt (else the one
    before the last)."""
    t, p, m = ctx.t, got[SETTINGS], loaded.smollm2()
    top = found.ranked(traced(p.ids).logits, RIVALS)  # (10,) most likely first
    target = int(top[0])
    with nullcontext() if ctx.presenter else more_box(ctx, t("block.compared_box")):
        mode = select(
            ctx, MODE, t("block.mode"), lambda x: t(f"block.mode_{x}"), help=t("block.mode_help")
        )
        rivals = tuple(str(int(i)) for i in top[1:])
        named = [str(i) for i in smollm.encode(m, EXAMPLE_RIVAL)] if p.raw == EXAMPLE else []
        default = named[0] if len(named) == 1 and named[0] in rivals else rivals[0]
        other = select(
            ctx,
            Choice("rival", default, rivals),
            t("block.rival", tgt=vocab_token(m, target)),
            lambda i: vocab_token(m, int(i)),
            widget="select",
            help=t("block.rival_help"),
        )
        labels = p.labels
        at = p.ids.index(target) if target in p.ids else max(0, len(p.ids) - 2)
        key = select(
            ctx,
            Choice("key", str(at), tuple(str(i) for i in range(len(labels)))),
            t("block.key"),
            lambda i: token_name(labels, int(i)),
            widget="select",
            help=t("block.key_help"),
        )
    return Compared(mode, target, int(other), int(key))


SETTINGS = Controls(prompt_controls, box="block.controls")
POSITION = Controls(position_control, slide="above")
# a slide: below the chart (the notes beside it keep the findings)
HEADS = Controls(head_controls, slide="below")
COMPARED = Controls(compared_controls, slide="below", fold="block.compared_box")


# ---- step 1: the block ---------------------------------------------------------------------


def block_rows(t: Translator, cfg: llama.LlamaConfig, n: int) -> list[dict]:
    """The boxes of the picture, top to bottom: what each computes and the shape of what it
    gives (``n`` prompt tokens); ``inside`` marks the repeated block."""
    d, h, kv, dh, ff, vocab = (
        cfg.d_model,
        cfg.n_heads,
        cfg.n_kv_heads,
        cfg.d_head,
        cfg.d_ff,
        cfg.vocab,
    )
    rows = [
        ("ids", t("block.box_ids"), f"({n},)", "io", False),
        (
            "embed",
            t("block.box_embed", vocab=charts.thousands(vocab), d=d),
            f"({n}, {d})",
            "embed",
            False,
        ),
        ("norm1", t("block.box_norm"), f"({n}, {d})", "norm", True),
        (
            "qkv",
            t("block.box_qkv", h=h, kv=kv, dh=dh),
            f"Q ({h}, {n}, {dh}) · K, V ({kv}, {n}, {dh})",
            "attn",
            True,
        ),
        (
            "attn",
            t("block.box_attn", h=h, kv=kv),
            f"({h}, {n}, {n}) → ({n}, {h * dh})",
            "attn",
            True,
        ),
        ("wo", t("block.box_wo", hd=h * dh, d=d), f"({n}, {d})", "attn", True),
        ("add1", t("block.box_add"), f"({n}, {d})", "add", True),
        ("norm2", t("block.box_norm"), f"({n}, {d})", "norm", True),
        (
            "mlp",
            t("block.box_mlp", d=d, ff=charts.thousands(ff)),
            f"({n}, {ff}) → ({n}, {d})",
            "mlp",
            True,
        ),
        ("add2", t("block.box_add"), f"({n}, {d})", "add", True),
        ("final", t("block.box_final"), f"({n}, {d})", "norm", False),
        (
            "logits",
            t("block.box_logits", vocab=charts.thousands(vocab)),
            f"(1, {vocab})",
            "io",
            False,
        ),
    ]
    return [
        {"i": i, "id": key, "label": label, "shape": shape, "kind": kind, "inside": inside}
        for i, (key, label, shape, kind, inside) in enumerate(rows)
    ]


KIND_COLORS = {
    "io": "#e8eaf0",
    "embed": "#d9e4f2",
    "norm": "#eeeeee",
    "attn": "#cfe8ec",
    "add": "#ffffff",
    "mlp": "#fbe7c6",
}


def block_chart(t: Translator, rows: list[dict], layers: int, presenter: bool) -> dict:
    """The block as boxes top to bottom, each with what it computes and, below it, the shape
    of what it gives; the repeated part framed, "× L" beside it (larger on a slide)."""
    step, width, boxes = (54, 980, 780) if presenter else (38, 560, 440)
    big, small = (22, 19) if presenter else (13, 11)
    data = [
        {
            **r,
            "y": r["i"] * step,
            "y2": r["i"] * step + step - 5,
            "y_label": r["i"] * step + 0.33 * (step - 5),  # the text's lines: in data units,
            "y_shape": r["i"] * step + 0.75 * (step - 5),  # so a scaled chart keeps them in
            "fill": KIND_COLORS[r["kind"]],
        }
        for r in rows
    ]
    inside = [r for r in data if r["inside"]]
    top, bottom = inside[0]["y"] - 4, inside[-1]["y2"] + 4
    frame = [
        {
            "y": top,
            "y2": bottom,
            "mid": (top + bottom) / 2,
            "label": t("block.repeat", layers=layers),
        }
    ]
    height = len(rows) * step
    y = {"field": "y", "type": "quantitative", "scale": {"domain": [0, height], "reverse": True}}
    return {
        "width": width,
        "height": height,
        "datasets": {"boxes": data, "frame": frame},
        "layer": [
            {
                "data": {"name": "frame"},
                "mark": {
                    "type": "rect",
                    "fill": None,
                    "stroke": charts.QUERY_COLOR,
                    "strokeDash": [4, 3],
                },
                "encoding": {
                    "x": {"value": -4},
                    "x2": {"value": boxes + 4},
                    "y": {**y, "axis": None},
                    "y2": {"field": "y2"},
                },
            },
            {
                "data": {"name": "frame"},
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "middle",
                    "dx": 12,
                    "color": charts.QUERY_COLOR,
                    "fontSize": big + 5,
                    "fontWeight": "bold",
                },
                "encoding": {
                    "x": {"value": boxes},
                    "y": {"field": "mid", "type": "quantitative"},
                    "text": {"field": "label"},
                },
            },
            {
                "data": {"name": "boxes"},
                "mark": {"type": "rect", "stroke": "#9aa0ac", "cornerRadius": 4},
                "encoding": {
                    "x": {"value": 0},
                    "x2": {"value": boxes},
                    "y": y,
                    "y2": {"field": "y2"},
                    "fill": {"field": "fill", "type": "nominal", "scale": None},
                },
            },
            {
                "data": {"name": "boxes"},
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "middle",
                    "dx": 8,
                    "fontSize": big,
                },
                "encoding": {
                    "x": {"value": 0},
                    "y": {**y, "field": "y_label"},
                    "text": {"field": "label"},
                },
            },
            {
                "data": {"name": "boxes"},
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "middle",
                    "dx": 8,
                    "fontSize": small,
                    "color": "#555",
                    "font": "monospace",
                },
                "encoding": {
                    "x": {"value": 0},
                    "y": {**y, "field": "y_shape"},
                    "text": {"field": "shape"},
                },
            },
        ],
        "config": {"view": {"stroke": None}},
    }


def parameters(w: llama.LlamaWeights) -> dict[str, int]:
    """How many parameters each part has: every layer's attention projections, every
    layer's MLP, the embedding (the norms: the rest)."""
    return {
        "attention": sum(layer.w_qkv.size + layer.w_o.size for layer in w.layers),
        "mlp": sum(layer.w_gate_up.size + layer.w_down.size for layer in w.layers),
        "embedding": w.embed.size,
    }


def block_notice(ctx: PageContext, m: smollm.SmolLM, n: int) -> list[str]:
    """Where the parameters are: attention, MLP, embedding (counted from the weights)."""
    w, cfg = m.weights, m.config
    parts, total = parameters(w), llama.parameter_count(w)
    pct = {k: f"{100 * v / total:.0f} %" for k, v in parts.items()}
    return [
        ctx.t(
            "block.notice_params",
            attn=pct["attention"],
            mlp=pct["mlp"],
            embed=pct["embedding"],
            layers=cfg.n_layers,
        ),
        ctx.t("block.notice_shapes", n=n, d=cfg.d_model),
        ctx.t("block.notice_same"),
    ]


def block_step(v: View) -> None:
    """Step 1: the block as a picture with the shape of every array for the prompt."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    cfg = m.config
    lead(v, p)
    chart = v.chart(block_chart, t, block_rows(t, cfg, len(p.ids)), cfg.n_layers, v.presenter)
    v.text("block.s1_text", **v.words)
    v.notice(block_notice(v.ctx, m, len(p.ids)))
    typed.weights_note(v.ctx, v.notes)
    v.links("decoder")
    counts = {k: np.array([v]) for k, v in parameters(m.weights).items()}
    v.export("block_picture", chart, arrays=counts)


# ---- step 2: the residual stream -----------------------------------------------------------


def stream_frame(
    t: Translator, resid: np.ndarray, attn: np.ndarray, mlp: np.ndarray
) -> pd.DataFrame:
    """Three lines over the layers (counted from 0 as on /decoder; -1: the embedding, before
    layer 0): the stream's size after each layer, and the size of what attention and the
    MLP add in it."""
    layers = np.arange(len(resid)) - 1  # (L + 1,) -1, 0, …, L - 1
    parts = [
        pd.DataFrame({"layer": layers, "norm": resid, "what": t("block.series_stream")}),
        pd.DataFrame({"layer": layers[1:], "norm": attn, "what": t("block.series_attn")}),
        pd.DataFrame({"layer": layers[1:], "norm": mlp, "what": t("block.series_mlp")}),
    ]
    return pd.concat(parts, ignore_index=True)


def stream_chart(t: Translator, frame: pd.DataFrame, presenter: bool) -> dict:
    """The stream's size and the two additions per layer (a log scale: they span decades);
    on a slide as wide as its column."""
    what = [t("block.series_stream"), t("block.series_attn"), t("block.series_mlp")]
    chart = charts.lines(
        frame,
        "layer",
        "norm",
        "what",
        x_title=t("block.layer_axis"),
        y_title=t("block.norm_axis"),
        log_y=True,
        color_domain=what,
        colors=[STREAM_COLOR, ATTN_COLOR, MLP_COLOR],
        width=900 if presenter else 620,
        height=480 if presenter else 300,
    )
    emb = t("block.emb").replace("'", "\\'")
    last = int(frame["layer"].max())
    chart["encoding"]["x"]["scale"] = {"domain": [-1, last], "nice": False, "zero": False}
    chart["encoding"]["x"]["axis"] = {
        "values": [-1, *range(5, last + 1, 5)],  # the embedding, then every fifth layer
        "format": "d",
        "labelExpr": f"datum.value == -1 ? '{emb}' : datum.label",
    }
    return chart


def stream_notice(ctx: PageContext, f: found.Stream, token: str) -> list[str]:
    t = ctx.t
    return [
        t("block.notice_grow", tok=token, start=f"{f.start:.1f}", end=f"{f.end:.1f}"),
        t(
            "block.notice_top_add",
            layer=f.top_layer,
            what=t(f"block.what_{f.top_kind}"),
            norm=f"{f.top_norm:.1f}",
        ),
        t("block.notice_attn_share", share=f"{100 * f.attn_share:.0f} %"),
        t("block.notice_residual"),
    ]


def stream_step(v: View) -> None:
    """Step 2: the residual stream's size at one token, layer by layer, and what each
    layer's attention and MLP add to it."""
    t, p = v.t, v[SETTINGS]
    pos = v[POSITION]
    lead(v, p)
    tr = traced(p.ids)
    resid, attn, mlp = interpret.norms(tr, pos)
    chart = v.chart(stream_chart, t, stream_frame(t, resid, attn, mlp), v.presenter)
    token = plain(token_name(p.labels, pos), 24)
    v.text("block.s2_text", tok=token, **v.words)
    v.notice(stream_notice(v.ctx, found.stream(resid, attn, mlp), token))
    arrays = {"resid_norm": resid, "attn_norm": attn, "mlp_norm": mlp}
    v.export("block_stream", chart, arrays=arrays)


# ---- step 3: the logit lens ----------------------------------------------------------------


def layer_name(t: Translator, layer: int) -> str:
    """A layer as the charts name it: "L0"… as on /decoder, the embedding for -1."""
    return t("block.emb") if layer < 0 else f"L{layer}"


def lens_frame(t: Translator, m: smollm.SmolLM, ids: np.ndarray, probs: np.ndarray) -> pd.DataFrame:
    """One cell per row of the lens (the embedding, then after each layer) and rank: the
    token and its probability."""
    rows = []
    for layer in range(ids.shape[0]):
        for rank in range(ids.shape[1]):
            rows.append(
                {
                    "layer": layer_name(t, layer - 1),
                    "i": layer,
                    "rank": rank + 1,
                    "token": vocab_token(m, int(ids[layer, rank])),
                    "p": float(probs[layer, rank]),
                }
            )
    return pd.DataFrame(rows)


SLIDE_RANKS = 3  # a slide: the 3 most likely tokens per row, the rows in two columns


def lens_chart(t: Translator, frame: pd.DataFrame, presenter: bool) -> dict:
    """Rows: the embedding, then after each layer, the output on top; columns: the 5 most
    likely next tokens if the model stopped there, coloured by probability. On a slide the
    3 most likely, the rows in two halves side by side (text large enough for the hall)."""
    if not presenter:
        return {
            **_lens_part(t, "lens", 520, 14, 12),
            "datasets": {"lens": frame.to_dict("records")},
        }
    half = (int(frame["i"].max()) + 2) // 2  # the later layers on the left, output on top
    shown = frame[frame["rank"] <= SLIDE_RANKS]
    later, earlier = shown[shown["i"] >= half], shown[shown["i"] < half]
    return {
        "datasets": {
            "lens_later": later.to_dict("records"),
            "lens_earlier": earlier.to_dict("records"),
        },
        "hconcat": [
            _lens_part(t, "lens_later", 320, 27, 20),
            _lens_part(t, "lens_earlier", 320, 27, 20),
        ],
        "spacing": 40,
        "resolve": {"scale": {"color": "shared"}},
    }


def _lens_part(t: Translator, name: str, width: int, cell_h: int, font: int) -> dict:
    """One lens grid on the dataset ``name``."""
    base = {
        "x": {
            "field": "rank",
            "type": "ordinal",
            "title": t("block.rank_axis"),
            "axis": {"labelAngle": 0},
        },
        "y": {
            "field": "layer",
            "type": "ordinal",
            "title": t("block.lens_axis"),
            "sort": {"field": "i", "order": "descending"},  # the output on top
        },
    }
    return {
        "width": width,
        "height": {"step": cell_h},
        "data": {"name": name},
        "layer": [
            {
                "mark": {"type": "rect", "stroke": "white"},
                "encoding": {
                    **base,
                    "color": {
                        "field": "p",
                        "type": "quantitative",
                        "scale": {"domain": [0, 1], "scheme": "blues"},
                        "title": t("block.prob"),
                    },
                    "tooltip": [
                        {"field": "layer", "title": t("block.lens_axis")},
                        {"field": "token", "title": t("block.token")},
                        {"field": "p", "title": t("block.prob"), "format": ".3f"},
                    ],
                },
            },
            {
                "mark": {"type": "text", "fontSize": font, "limit": width / 3 - 4},
                "encoding": {
                    **base,
                    "text": {"field": "token"},
                    "color": {
                        "condition": {"test": "datum.p > 0.5", "value": "white"},
                        "value": "#222",
                    },
                },
            },
        ],
    }


def lens_notice(ctx: PageContext, m: smollm.SmolLM, f: found.Lens, layers: int) -> list[str]:
    t = ctx.t
    tok = vocab_token(m, f.final)
    items = [
        t("block.notice_final", tok=plain(tok, 24), p=f"{f.p_final:.3f}", layers=layers),
        t(
            "block.notice_first",
            tok=plain(tok, 24),
            first=layer_name(t, f.first - 1),
            settled=layer_name(t, f.settled - 1),
        )
        if f.settled > 0
        else t("block.notice_always", tok=plain(tok, 24)),
        t("block.notice_lens_caveat"),
    ]
    return items


def lens_step(v: View) -> None:
    """Step 3: the logit lens — the next-token guess after every layer."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    pos = v[POSITION]
    lead(v, p)
    ids, probs = lens(p.ids, pos)
    layers = m.config.n_layers
    chart = v.chart(lens_chart, t, lens_frame(t, m, ids, probs), v.presenter)
    token = plain(token_name(p.labels, pos), 24)
    v.text("block.s3_text", tok=token, **v.words)
    v.notice(lens_notice(v.ctx, m, found.lens(ids, probs), layers))
    v.export("block_lens", chart, arrays={"top_ids": ids, "top_probs": probs})


# ---- step 4: does this head matter? --------------------------------------------------------


def heads_frame(
    t: Translator, effect: np.ndarray, paid: np.ndarray, off: tuple[int, ...]
) -> pd.DataFrame:
    """Per head: the change of the logit difference when it is switched off, and the
    attention it pays to the chosen token; the heads switched off together marked."""
    heads = [f"H{h}" for h in range(len(effect))]
    rows = []
    for h, name in enumerate(heads):
        picked = t("block.picked") if h in off else t("block.not_picked")
        rows.append(
            {
                "head": name,
                "value": float(effect[h]),
                "panel": t("block.panel_effect"),
                "picked": picked,
            }
        )
        rows.append(
            {
                "head": name,
                "value": float(paid[h]),
                "panel": t("block.panel_paid"),
                "picked": picked,
            }
        )
    return pd.DataFrame(rows)


def heads_chart(t: Translator, frame: pd.DataFrame) -> dict:
    """Two bar panels over the heads: the ablation's effect and the attention paid."""
    panels = []
    for panel, color in (
        (t("block.panel_effect"), charts.QUERY_COLOR),
        (t("block.panel_paid"), ATTN_COLOR),
    ):
        part = frame[frame["panel"] == panel]
        spec = charts.bars(
            part,
            "head",
            "value",
            title=panel,
            x_title=t("block.head_axis"),
            y_title=None,
            width=300,
            height=240,
        )
        for layer_ in spec["layer"]:
            layer_["encoding"]["opacity"] = {
                "condition": {"test": f"datum.picked == '{t('block.picked')}'", "value": 1},
                "value": 0.85,
            }
            if layer_["mark"]["type"] == "bar":
                layer_["encoding"]["color"] = {"value": color}
                layer_["encoding"]["stroke"] = {
                    "condition": {
                        "test": f"datum.picked == '{t('block.picked')}'",
                        "value": "#222",
                    },
                    "value": None,
                }
                layer_["encoding"]["strokeWidth"] = {"value": 2}
            else:
                layer_["encoding"]["text"]["format"] = ".2f"
        panels.append(spec)
    return charts.concat(panels, "hconcat", spacing=30)


def heads_notice(
    ctx: PageContext,
    m: smollm.SmolLM,
    e: interpret.HeadEffects,
    f: found.Heads,
    layer: int,
    c: Compared,
    off: tuple[int, ...],
    key: str,
    together: np.ndarray | None,
) -> list[str]:
    """The baseline, the head that matters against the head that looks, the heads switched
    off together, and the caveats (in one line on a slide)."""
    t = ctx.t
    tgt, oth = plain(vocab_token(m, c.target), 24), plain(vocab_token(m, c.other), 24)
    items = [
        t("block.notice_base", tgt=tgt, oth=oth, p=f"{e.base_prob:.3f}", diff=f"{e.base_diff:.2f}"),
        t(
            "block.notice_matters",
            layer=layer,
            head=f.matters,
            change=f"{e.diff[f.matters] - e.base_diff:+.2f}",
            mode=t(f"block.mode_{c.mode}"),
        ),
        t(
            "block.notice_agree" if f.agree else "block.notice_disagree",
            looks=f.looks,
            matters=f.matters,
            tok_key=key,
            paid=f"{f.paid:.2f}",
        ),
    ]
    if together is not None:
        both = found.scored(together, c.target, c.other)
        items.append(
            t(
                "block.notice_together",
                heads=", ".join(f"H{h}" for h in off),
                layer=layer,
                p0=f"{e.base_prob:.3f}",
                p1=f"{both.prob:.3f}",
                d0=f"{e.base_diff:.2f}",
                d1=f"{both.diff:.2f}",
                tgt=tgt,
            )
        )
    if ctx.presenter:
        return [*items, t("block.caveat_brief")]
    return [
        *items,
        t("block.caveat_redundant"),
        t("block.caveat_hydra"),
        t("block.caveat_attention"),
    ]


def heads_step(v: View) -> None:
    """Step 4: switch heads off and see the prediction move, beside where each head looks."""
    t, p, m = v.t, v[SETTINGS], loaded.smollm2()
    layer, off = v[HEADS]
    c = v[COMPARED]
    lead(v, p)
    tr = traced(p.ids)
    e = effects(p.ids, layer, c.target, c.other, c.mode)
    paid = interpret.attention_paid(tr.attention, len(p.ids) - 1, c.key)[layer]
    change = e.diff - e.base_diff  # (h,)
    together = ablated(p.ids, tuple((layer, h) for h in off), c.mode) if off else None
    chart = v.chart(heads_chart, t, heads_frame(t, change, paid, off))
    key = plain(token_name(p.labels, c.key), 24)
    last = plain(token_name(p.labels, len(p.ids) - 1), 24)
    tgt, oth = plain(vocab_token(m, c.target), 24), plain(vocab_token(m, c.other), 24)
    v.text("block.s4_text", tgt=tgt, oth=oth, tok_key=key, last=last, **v.words)
    if v.presenter:
        v.lead.markdown(t("block.s4_brief", tgt=tgt, oth=oth, tok_key=key, last=last))
    f = found.heads(change, paid)
    v.notice(heads_notice(v.ctx, m, e, f, layer, c, off, key, together))
    v.export("block_heads", chart, arrays={"logit_diff_change": change, "attention_paid": paid})


# ---- Ask the class -------------------------------------------------------------------------
# Step 4 on the example, layer ASK_LAYER, zero-ablation: which head's removal cuts the lead of
# the model's answer over the repeated name the most? The class guesses (most pick the head
# that looks at the answer most), the reveal is the ablation's own ranking.

ASK_LAYER = 23


def _ask_matters_truth() -> questions.Truth:
    m = loaded.smollm2()
    ids = tuple(smollm.encode(m, EXAMPLE))
    target = int(found.ranked(traced(ids).logits, 1)[0])
    (rival,) = smollm.encode(m, EXAMPLE_RIVAL)
    e = effects(ids, min(ASK_LAYER, m.config.n_layers - 1), target, rival, "zero")
    return questions.Truth(number=float(found.heads(e.diff - e.base_diff, e.prob).matters))


# a number question (the head's number): more heads than a choice question's tap targets
ASK_MATTERS = questions.Question("block.matters", "number", _ask_matters_truth)
QUESTIONS = (ASK_MATTERS,)
