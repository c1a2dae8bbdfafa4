"""What the sliding-window page (/sinks) points out, read off :mod:`core.masks`' windows.

How many keys a query keeps at most, i.e. how long the cache stays (:func:`keys_kept`); how
far back the last token reaches (:func:`reach_back`); the toy mask's cache length and reach
together (:func:`window_facts` -> :class:`WindowFacts`); for the real model's attention on
the first token per layer, which layers give it much or almost nothing
(:func:`share_summary`, :func:`index_runs`, :func:`mean_over`); and how much a window raises
the perplexity (:func:`perplexity_times`).
"""

from dataclasses import dataclass

import numpy as np

from core.masks import mask_states, reach_depth, sliding_window_mask, window_reach


def keys_kept(mask: np.ndarray) -> int:
    """The most keys any query may attend to: how many keys and values a cache for this mask
    has to hold per layer.

    Shapes: bool ``(n_q, n_k)`` -> int.
    """
    return int(np.asarray(mask, dtype=bool).sum(axis=-1).max(initial=0))


def reach_back(depth: np.ndarray, row: int, sinks: int = 0) -> int:
    """How many positions back query ``row`` reaches (0: only itself), not counting the
    first ``sinks`` tokens, which every query sees directly.

    Shapes: ``depth`` int ``(n, n)`` from :func:`reach_depth` -> int.
    """
    reached = np.flatnonzero(depth[row] > 0)  # (m,)
    reached = reached[reached >= sinks] if row >= sinks else reached
    return int(row - reached.min()) if reached.size else 0


def index_runs(indices: np.ndarray | list[int]) -> list[tuple[int, int]]:
    """Sorted indices as runs of neighbours: ``[0, 1, 10, 11, 12]`` -> ``[(0, 1), (10, 12)]``.

    Shapes: ``(m,)`` -> ``r`` pairs ``(first, last)``.
    """
    runs: list[tuple[int, int]] = []
    for i in sorted(int(x) for x in indices):
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


@dataclass(frozen=True)
class ShareSummary:
    """Where a model's attention on the first token is large and where it is tiny."""

    high: tuple[int, int] | None  # the longest run of layers with a share >= the threshold
    high_range: tuple[float, float]  # the smallest and largest share in that run
    low: list[tuple[int, int]]  # runs of layers with a share below the low threshold
    low_max: float  # the largest share among those layers (0 if none)


def share_summary(share: np.ndarray, high: float = 0.2, low: float = 0.01) -> ShareSummary:
    """Summarise a per-layer share of attention on the first token: the longest run of
    neighbouring layers at ``high`` or more (ties: the later run), with its range, and the
    layers below ``low``.

    Shapes: ``share`` ``(L,)`` -> :class:`ShareSummary`.
    """
    share = np.asarray(share, dtype=np.float64)
    runs = index_runs(np.flatnonzero(share >= high))
    best = max(runs, key=lambda r: (r[1] - r[0], r[0]), default=None)
    span = (0.0, 0.0)
    if best is not None:
        part = share[best[0] : best[1] + 1]
        span = (float(part.min()), float(part.max()))
    small = np.flatnonzero(share < low)
    low_max = float(share[small].max()) if small.size else 0.0
    return ShareSummary(best, span, index_runs(small), low_max)


def mean_over(share: np.ndarray, layers: tuple[int, int] | None) -> float:
    """The mean of a per-layer share over the layers ``first … last`` (all when None).

    Shapes: ``share`` ``(L,)`` -> scalar.
    """
    share = np.asarray(share, dtype=np.float64)
    return float(share.mean() if layers is None else share[layers[0] : layers[1] + 1].mean())


@dataclass(frozen=True)
class WindowFacts:
    """A sliding-window mask with sinks on ``n`` tokens, stacked ``layers`` deep."""

    states: np.ndarray  # (n, n) why each key is or is not visible (:func:`mask_states`)
    depth: np.ndarray  # (n, n) layers needed to reach (0: not within the layers)
    kept: int  # keys a query keeps at most (the cache's length)
    reach: int  # (W − 1)·L, :func:`core.masks.window_reach`
    back: int  # how far back the last token actually reaches
    first: int  # the earliest non-sink token the last token reaches

    @property
    def full_reach(self) -> bool:
        """Whether the last token reaches the whole (W − 1)·L back (else the text's start
        stops it first)."""
        return self.back == self.reach


def window_facts(n: int, window: int, sinks: int, layers: int) -> WindowFacts:
    """The mask's states and reach, and the facts the page states about its last token.

    Shapes: scalars -> :class:`WindowFacts` with ``(n, n)`` arrays.
    """
    mask = sliding_window_mask(n, window, sinks)  # (n, n)
    depth = reach_depth(mask, layers)  # (n, n)
    back = reach_back(depth, n - 1, sinks)
    return WindowFacts(
        mask_states(n, window, sinks),
        depth,
        keys_kept(mask),
        window_reach(window, layers),
        back,
        n - 1 - back,
    )


def perplexity_times(perplexity: float, full: float) -> float:
    """How many times full attention's perplexity ``perplexity`` is (a window that loses
    the first tokens makes the model several times more surprised)."""
    return perplexity / full
