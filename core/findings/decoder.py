"""What the real-decoder page points out, computed from the model's weights and timings.

The page (``ui/views/decoder.py``) turns each finding into a translated sentence; which
token, how much and how many come from here, so they can be tested without a browser or
the model.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SINK_SHARE = 0.5  # a head "parks" its weight on the first token when it gives it more than this
GREW = 1.1  # the without-cache run's last step took at least this many times its first


def blank_after(rows: np.ndarray, queries: Sequence[int] | np.ndarray) -> np.ndarray:
    """Attention rows with the keys after their query (which a causal query cannot see) as
    NaN, so a chart draws them as "not there".

    Shapes: ``rows`` ``(m, n)``, ``queries`` ``(m,)`` -> ``(m, n)`` float.
    """
    seen = np.arange(rows.shape[-1])[None, :] <= np.asarray(queries)[:, None]  # (m, n)
    return np.where(seen, rows, np.nan)


def first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    """The first position at which two token sequences differ; the shorter one's length if
    one is the start of the other (the length if they are equal)."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def mean_row(attention: np.ndarray, query: int) -> np.ndarray:
    """``query``'s row averaged over every layer and head: where the model as a whole has it
    look (a distribution over the keys, in float64 so that it sums to 1 to rounding).

    Shapes: ``attention`` ``(L, h, n, n)`` -> ``(n,)``.
    """
    rows = np.asarray(attention[:, :, query, :], dtype=np.float64)  # (L, h, n)
    return rows.mean(axis=(0, 1))


@dataclass(frozen=True)
class HeadRow:
    """One head's row for one query, and what no head of the model does."""

    top: tuple[int, ...]  # the (at most two) keys the query weights most, most first
    weights: tuple[float, ...]  # their weights
    first_leads: bool  # the first token leads a query that could look elsewhere
    later: float  # the largest weight any query puts on a later key (0 in a causal model)


def head_row(attention: np.ndarray, layer: int, head: int, query: int) -> HeadRow:
    """The keys ``query`` weights most in ``(layer, head)``, and the largest weight on a key
    after its query over every layer and head.

    Shapes: ``attention`` ``(L, h, n, n)`` -> :class:`HeadRow`.
    """
    row = attention[layer, head, query, : query + 1]  # (query + 1,)
    order = np.argsort(-row, kind="stable")[:2]  # (≤ 2,)
    return HeadRow(
        top=tuple(int(j) for j in order),
        weights=tuple(float(row[j]) for j in order),
        first_leads=bool(order[0] == 0 and query > 0),
        later=float(np.triu(attention, 1).max(initial=0.0)),
    )


def largest_change(attention_a: np.ndarray, attention_b: np.ndarray, query: int) -> float:
    """The largest ``|a − b|`` on ``query``'s row over every layer and head of two forward
    passes on prompts of equal length.

    Shapes: ``attention_a``, ``attention_b`` ``(L, h, n, n)`` -> scalar.
    """
    return float(np.abs(attention_a[:, :, query] - attention_b[:, :, query]).max())


@dataclass(frozen=True)
class Sink:
    """How much the heads of one prompt give the first token."""

    median: float  # the median head's share
    count: int  # heads that give it more than SINK_SHARE
    total: int  # heads

    @property
    def held(self) -> bool:
        """Whether the median head gives the first token more than SINK_SHARE."""
        return self.median > SINK_SHARE


def sink(shares: np.ndarray) -> Sink:
    """Summarise each head's share of weight on the first token.

    Shapes: ``shares`` ``(L, h)`` (:func:`core.llama.first_token_share`) -> :class:`Sink`.
    """
    return Sink(float(np.median(shares)), int((shares > SINK_SHARE).sum()), int(shares.size))


@dataclass(frozen=True)
class NextToken:
    """The most likely next token among those shown, and the mass they hold together."""

    top: int  # its index among the shown tokens
    p: float  # its probability
    mass: float  # the shown tokens' probability together


def next_token(probs: np.ndarray) -> NextToken:
    """The leader of the shown tokens and their total probability.

    Shapes: ``probs`` ``(k,)`` most likely first (the bars of /decoder's step 4).
    """
    return NextToken(0, float(probs[0]), float(np.sum(probs)))


def later_mean(step_ms: Sequence[float]) -> float:
    """The mean time of a generation step after the first (the first also reads the
    prompt); the first step's time if there is no other."""
    return float(np.mean(step_ms[1:] or step_ms))


@dataclass(frozen=True)
class Speed:
    """Two generation runs' times: with the cache and without it."""

    total_on: float  # ms, every step with the cache
    total_off: float  # ms, without it
    per_on: float  # ms, mean later step with the cache (:func:`later_mean`)
    per_off: float  # ms, without it
    ratio: float  # per_off / per_on: how many times faster a later step is with the cache


def speed(on_ms: Sequence[float], off_ms: Sequence[float]) -> Speed:
    """Compare the step times (ms) of a run with the cache and one without it."""
    per_on, per_off = later_mean(on_ms), later_mean(off_ms)
    return Speed(
        float(sum(on_ms)), float(sum(off_ms)), per_on, per_off, per_off / max(per_on, 1e-9)
    )


@dataclass(frozen=True)
class Growth:
    """What the length should do to a step without the cache, against what was timed."""

    steps: int  # steps run
    first_len: int  # tokens the first step reads (the prompt)
    last_len: int  # tokens the last step reads (the prompt and the k − 1 tokens before it)
    expected: float  # last_len / first_len: how much more work the last step does
    first_ms: float
    last_ms: float
    grew: float  # last_ms / first_ms

    @property
    def seen(self) -> bool:
        """Whether the timer shows the growth (the last step took ≥ GREW × the first)."""
        return self.grew >= GREW


def growth(prompt_len: int, off_ms: Sequence[float]) -> Growth | None:
    """The without-cache run's first and last step against the tokens each read; None for
    a run of one step (nothing to compare)."""
    steps = len(off_ms)
    if steps < 2:
        return None
    first, last = off_ms[0], off_ms[-1]
    return Growth(
        steps,
        prompt_len,
        prompt_len + steps - 1,
        (prompt_len + steps - 1) / prompt_len,
        first,
        last,
        last / max(first, 1e-9),
    )


@dataclass(frozen=True)
class Batched:
    """What a decoding step cost for batches of several sizes, timed on the server."""

    sizes: tuple[int, ...]  # generations per step, smallest first
    step_ms: tuple[float, ...]  # one step of the whole batch
    token_ms: tuple[float, ...]  # the same, per generation (step_ms / size)
    speedup: float  # the largest batch: its tokens alone one at a time / together
    weight_mb: float  # the weights one step reads, MB
    shared_mb: float  # the same per generation of the largest batch

    @property
    def cheaper(self) -> bool:
        """Whether a token costs less in the largest batch than alone (what the step says)."""
        return self.token_ms[-1] < self.token_ms[0]


def batched(sizes: Sequence[int], step_ms: Sequence[float], weight_bytes: int) -> Batched:
    """Step times (ms) of batches of ``sizes`` generations, per generation and against
    decoding the largest batch's generations one at a time (the first size must be 1)."""
    per = tuple(float(ms) / b for ms, b in zip(step_ms, sizes, strict=True))
    alone = float(step_ms[0]) * sizes[-1]  # the largest batch's tokens, one step each
    mb = weight_bytes / 1e6
    return Batched(
        tuple(sizes),
        tuple(float(ms) for ms in step_ms),
        per,
        alone / max(float(step_ms[-1]), 1e-9),
        mb,
        mb / sizes[-1],
    )
