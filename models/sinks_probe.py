"""What the sliding-window page (/sinks) reads from SmolLM2 besides
:func:`models.smollm.window_run`: the same masked forward pass, keeping the model's
predictions at every scored position instead of the last one only.

One run is one pass of :func:`models.smollm.window_logits`, the one of
:func:`models.smollm.window_run` (every token keeps its true RoPE position). From it: the
mean negative log-likelihood of the last ``scored`` tokens and its perplexity (exactly
:func:`models.smollm.window_run`'s), each token's own, each layer's share of attention on
the first token, and the ``k`` most likely next tokens at every scored position and after
the text.
"""

from dataclasses import dataclass

import numpy as np

import core.llama as llama
from core.softmax_numerics import softmax
from models.smollm import SmolLM, window_logits

TOP_K = 5


@dataclass(frozen=True)
class SinkRun:
    """One configuration of the attention-sink experiment, with its predictions."""

    window: int | None  # tokens each query sees back (itself included); None = all (causal)
    sinks: int  # first tokens every query also sees
    n: int  # tokens in the text
    scored: int  # how many final tokens the mean is over
    nll: float  # mean negative log-likelihood of those tokens, nats
    perplexity: float  # exp(nll)
    token_nll: np.ndarray  # (scored,) each scored token's negative log-likelihood
    first_share: np.ndarray  # (L,) mean weight on the first token per layer (heads averaged)
    top_ids: np.ndarray  # (scored + 1, k) most likely next tokens, at n − scored − 1 … n − 1
    top_probs: np.ndarray  # (scored + 1, k) their probabilities
    target_prob: np.ndarray  # (scored,) probability given to the token that really came next

    def row(self, position: int) -> int:
        """The row of ``top_ids`` holding the prediction of token ``position`` (``n``: the
        token after the text), for ``n − scored <= position <= n``."""
        first = self.n - self.scored
        if not first <= position <= self.n:
            raise ValueError(f"positions {first} … {self.n} were scored, not {position}")
        return position - first


def sink_run(
    model: SmolLM,
    ids: list[int] | tuple[int, ...],
    window: int | None = None,
    sinks: int = 0,
    scored: int = 200,
    k: int = TOP_K,
) -> SinkRun:
    """One masked forward pass over ``ids``: each token sees the last ``window`` tokens and
    the first ``sinks`` (``window=None``: all earlier tokens).

    Shapes: ``ids`` ``(n,)``, ``1 <= scored <= n − 1`` -> :class:`SinkRun`. The time and
    memory of :func:`models.smollm.window_run` (one layer's weights ``(h, n, n)`` at a time),
    plus the softmax of ``scored + 1`` rows of logits.
    """
    n = len(ids)
    logits, share = window_logits(model, ids, window, sinks, scored)  # (scored + 1, V), (L, h)
    targets = np.asarray(ids[n - scored :])  # (scored,)
    nll = llama.token_nll(logits[:-1], targets)  # (scored,)
    probs = softmax(logits.astype(np.float64))  # (scored + 1, vocab)
    part = np.argpartition(-probs, k - 1, axis=-1)[:, :k]  # (scored + 1, k) unordered
    order = np.argsort(-np.take_along_axis(probs, part, axis=-1), axis=-1, kind="stable")
    top = np.take_along_axis(part, order, axis=-1)  # (scored + 1, k), most likely first
    mean = float(np.mean(nll))
    return SinkRun(
        window=window,
        sinks=sinks,
        n=n,
        scored=scored,
        nll=mean,
        perplexity=float(np.exp(mean)),
        token_nll=nll,
        first_share=share.mean(-1),  # (L,)
        top_ids=top,
        top_probs=np.take_along_axis(probs, top, axis=-1),
        target_prob=probs[np.arange(scored), targets],
    )
