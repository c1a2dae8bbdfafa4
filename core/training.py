"""Train one attention layer in NumPy: tasks, forward, hand-written backward, Adam.

The model reads a sequence of ``n`` one-hot tokens ``x`` (``d_model`` wide), runs one
self-attention layer (``W_Q``, ``W_K``, ``W_V``) and reads the output out at the target rows
with a linear layer ``W_O`` and a softmax cross-entropy over ``n_symbols`` classes. The
``scaled`` flag divides the scores by √d_k or not; nothing else differs, so a run and its
*unscaled twin* (same seed: same initial weights, same batches) isolate the effect of √d_k.

Symbols are embedded by fixed random tables (entries N(0, 1), drawn from the seed), so
every token is a dense ``width``-wide vector. Tasks (both solvable by one attention layer):

* ``"recall"`` (find the matching key): ``n_pairs`` tokens each carry a key and a value
  (key embedding ‖ value embedding), the last token carries the query key and zeros. Target:
  the value stored under that key. Loss at the last row only; the query reads the pairs (not
  itself); the right position is the pair whose key matches.
* ``"max"`` (largest so far): ``n_pairs`` distinct numbers; row ``i`` must name the largest
  of tokens ``0 … i``. Loss at every row, with a causal mask by default (a row that saw the
  later numbers would know the answer of a different question).

Shapes: ``B`` sequences per batch, ``n`` tokens, ``r`` target rows, ``C = n_symbols`` classes.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from core.experiments import entropy
from core.masks import apply_mask, causal_mask
from core.softmax_numerics import log_softmax, softmax

TASKS = ("recall", "max")
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a run (two equal configs give identical runs)."""

    task: str = "recall"
    d_k: int = 16
    scaled: bool = True
    lr: float = 3e-3
    steps: int = 300
    seed: int = 0
    n_symbols: int = 16
    n_pairs: int = 8
    batch: int = 64
    width: int = 32  # d_model, the token width (recall: half key, half value)
    d_v: int = 32
    causal: bool | None = None  # None: the task's default (recall: no mask, max: causal)
    snapshots: int = 30  # about this many snapshots (plus the first and the last)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; choose one of {TASKS}")
        if min(self.d_k, self.d_v, self.steps, self.batch, self.snapshots) < 1:
            raise ValueError("d_k, d_v, steps, batch and snapshots must be at least 1")
        if not 2 <= self.n_pairs <= self.n_symbols:
            raise ValueError("n_pairs must be in 2 … n_symbols (keys/numbers are distinct)")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise ValueError("lr must be a positive finite number")
        if self.width < 2 or self.width % 2:
            raise ValueError("width must be an even number ≥ 2")

    @property
    def masked(self) -> bool:
        """Whether the causal mask is on."""
        return self.task == "max" if self.causal is None else self.causal

    @property
    def mask(self) -> np.ndarray | None:
        """(n, n) bool, True = may attend: the recall query reads only the pairs; the causal
        mask when on; None when every row sees every key."""
        keep = np.ones((self.n, self.n), dtype=bool)
        if self.task == "recall":
            keep[-1, -1] = False
        if self.masked:
            keep &= causal_mask(self.n)
        return None if keep.all() else keep

    @property
    def n(self) -> int:
        """Tokens per sequence."""
        return self.n_pairs + 1 if self.task == "recall" else self.n_pairs

    @property
    def rows(self) -> np.ndarray:
        """The rows that carry a target, shape (r,)."""
        return np.array([self.n - 1]) if self.task == "recall" else np.arange(self.n)


@dataclass(frozen=True)
class Batch:
    """Sequences of one task with their answers."""

    x: np.ndarray  # (B, n, d_model) embedded tokens
    y: np.ndarray  # (B, r) target class per target row
    right: np.ndarray  # (B, r) the position each target row should attend to
    symbols: np.ndarray  # (B, n) recall: key of each token; max: its number
    values: np.ndarray  # (B, n) recall: value of each token (-1 for the query); max: -1


@dataclass(frozen=True)
class Params:
    """The model's weights."""

    w_q: np.ndarray  # (d_model, d_k)
    w_k: np.ndarray  # (d_model, d_k)
    w_v: np.ndarray  # (d_model, d_v)
    w_o: np.ndarray  # (d_v, C)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The four matrices in order (Q, K, V, O)."""
        return (self.w_q, self.w_k, self.w_v, self.w_o)


@dataclass(frozen=True)
class Forward:
    """Everything the forward pass computed (kept for the backward pass and the page)."""

    xm: np.ndarray  # (B, n, d_model) x W_Q W_Kᵀ: each token's query in the key space
    v: np.ndarray  # (B, n, d_v)
    scores: np.ndarray  # (B, n, n) what the softmax sees (scaled or not, −∞ where masked)
    weights: np.ndarray  # (B, n, n)
    out: np.ndarray  # (B, n, d_v)
    logits: np.ndarray  # (B, r, C)
    loss: float  # mean cross-entropy over (B, r)
    seq_loss: np.ndarray  # (B,) mean cross-entropy of each sequence


@dataclass(frozen=True)
class Snapshot:
    """The model at one step (before that step's update; the last one after training)."""

    step: int
    probe_weights: np.ndarray  # (r, n) the probe's attention rows at the target rows
    probe_pred: np.ndarray  # (r,) the probe's predicted class per target row
    loss: float  # on that step's fresh batch
    accuracy: float
    focus: float  # mean weight on the right position
    entropy: float  # mean attention entropy of the target rows, nats
    score_std: float  # spread of the scores the softmax sees (target rows, visible keys)
    grad_median: float  # median over sequences of ‖∂loss_b/∂W_Q‖


@dataclass(frozen=True)
class History:
    """A training run: curves per step, snapshots, and whether it diverged.

    ``loss``, ``accuracy`` and ``focus`` have one entry per completed step (``steps`` of
    them unless the run diverged); they are always finite.
    """

    config: TrainConfig
    loss: np.ndarray  # (completed,) cross-entropy on each step's fresh batch
    accuracy: np.ndarray  # (completed,) share of target rows answered right, in [0, 1]
    focus: np.ndarray  # (completed,) mean attention weight on the right position
    snapshots: tuple[Snapshot, ...]
    probe: Batch  # one fixed sequence (B = 1) the page shows
    diverged_at: int | None = None  # the step whose loss or update was not finite
    done: bool = True  # False while a live run is still going
    params: Params | None = field(default=None, repr=False)

    @property
    def completed(self) -> int:
        """Steps trained so far."""
        return len(self.loss)


# ---- tasks ---------------------------------------------------------------------------------


def _distinct(rng: np.random.Generator, b: int, pool: int, count: int) -> np.ndarray:
    """``count`` distinct integers below ``pool`` per row, shape (b, count)."""
    return np.argsort(rng.random((b, pool)), axis=1)[:, :count]


def embedding_tables(config: TrainConfig, rng: np.random.Generator) -> np.ndarray:
    """Fixed random symbol embeddings, entries N(0, 1): recall (2, C, width/2) for keys and
    values; max (1, C, width) for the numbers."""
    if config.task == "recall":
        return rng.normal(0.0, 1.0, (2, config.n_symbols, config.width // 2))
    return rng.normal(0.0, 1.0, (1, config.n_symbols, config.width))


def recall_batch(rng: np.random.Generator, b: int, n_pairs: int, tables: np.ndarray) -> Batch:
    """Associative recall: (b, n_pairs + 1, width) tokens, key embedding ‖ value embedding;
    the last token holds the query key and zeros. Target: the value stored under that key."""
    key_table, value_table = tables  # (C, width/2) each
    keys = _distinct(rng, b, len(key_table), n_pairs)  # (b, m)
    vals = rng.integers(0, len(value_table), (b, n_pairs))  # (b, m)
    pick = rng.integers(0, n_pairs, b)  # (b,)
    idx = np.arange(b)
    query = keys[idx, pick]  # (b,)
    pairs = np.concatenate([key_table[keys], value_table[vals]], axis=-1)  # (b, m, width)
    last = np.concatenate([key_table[query], np.zeros_like(value_table[query])], axis=-1)
    x = np.concatenate([pairs, last[:, None]], axis=1)  # (b, n, width)
    symbols = np.concatenate([keys, query[:, None]], axis=1)  # (b, n)
    values = np.concatenate([vals, np.full((b, 1), -1)], axis=1)  # (b, n)
    return Batch(x, vals[idx, pick][:, None], pick[:, None], symbols, values)


def max_batch(rng: np.random.Generator, b: int, n_pairs: int, tables: np.ndarray) -> Batch:
    """Largest so far: (b, n_pairs, width) embedded distinct numbers; row i's target is the
    largest of numbers 0 … i and its right position is where that number sits."""
    nums = _distinct(rng, b, tables.shape[1], n_pairs)  # (b, n)
    best = np.maximum.accumulate(nums, axis=1)  # (b, n)
    right = np.argmax(nums[:, None, :] == best[:, :, None], axis=2)  # (b, n)
    return Batch(tables[0][nums], best, right, nums, np.full_like(nums, -1))


def make_batch(
    config: TrainConfig, rng: np.random.Generator, tables: np.ndarray, b: int | None = None
) -> Batch:
    """A fresh batch of ``b`` (default ``config.batch``) sequences of the config's task."""
    make = recall_batch if config.task == "recall" else max_batch
    return make(rng, b or config.batch, config.n_pairs, tables)


# ---- model ---------------------------------------------------------------------------------


def init_params(config: TrainConfig, rng: np.random.Generator) -> Params:
    """Gaussian weights, std ``1/√width`` for W_Q, W_K, W_V (tokens have unit-variance
    entries, so q, k and v entries start with variance ≈ 1) and ``1/√d_v`` for W_O."""
    d, s = config.width, 1.0 / np.sqrt(config.width)
    return Params(
        rng.normal(0, s, (d, config.d_k)),
        rng.normal(0, s, (d, config.d_k)),
        rng.normal(0, s, (d, config.d_v)),
        rng.normal(0, 1 / np.sqrt(config.d_v), (config.d_v, config.n_symbols)),
    )


def forward(
    params: Params,
    x: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    scaled: bool,
    mask: np.ndarray | None = None,
) -> Forward:
    """One attention layer, read out at ``rows``: (B, n, d_model) -> loss.

    1) project 2) score (÷√d_k if ``scaled``; −∞ where ``mask`` is False) 3) softmax
    4) mix the values 5) read out the target rows and take the cross-entropy with ``y`` (B, r).
    ``mask``: (n, n) bool, True = may attend (every row must see at least one key).

    The scores QKᵀ = (x W_Q)(x W_K)ᵀ are computed as x (W_Q W_Kᵀ) xᵀ: the same numbers, but
    the d_k-wide products happen once per step on the weights, not for every token, so a
    run at d_k = 256 costs about as much as one at d_k = 16.
    """
    d_k = params.w_q.shape[1]
    xm = x @ (params.w_q @ params.w_k.T)  # 1) (B, n, d_model)
    v = x @ params.w_v  # (B, n, d_v)
    scores = xm @ np.swapaxes(x, -1, -2)  # 2) (B, n, n) = Q Kᵀ
    if scaled:
        scores = scores / np.sqrt(d_k)
    scores = apply_mask(scores, mask)  # −∞ where masked
    weights = softmax(scores)  # 3) (B, n, n)
    out = weights @ v  # 4) (B, n, d_v)
    logits = out[:, rows] @ params.w_o  # 5) (B, r, C)
    logp = log_softmax(logits)  # (B, r, C)
    nll = -np.take_along_axis(logp, y[..., None], axis=-1)[..., 0]  # (B, r)
    seq = nll.mean(axis=1)  # (B,)
    return Forward(xm, v, scores, weights, out, logits, float(seq.mean()), seq)


def backward(
    params: Params,
    x: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    scaled: bool,
    fw: Forward,
    per_sequence: bool = False,
) -> tuple[Params, np.ndarray | None]:
    """Gradients of ``fw.loss`` with respect to every weight, by hand (reverse order of
    :func:`forward`). With ``per_sequence`` also ‖∂loss_b/∂W_Q‖ for each sequence b, (B,)."""
    b, r = y.shape
    d_z = softmax(fw.logits)  # 5) (B, r, C)
    np.put_along_axis(d_z, y[..., None], np.take_along_axis(d_z, y[..., None], -1) - 1, -1)
    d_z = d_z / (b * r)
    g_o = (np.swapaxes(fw.out[:, rows], -1, -2) @ d_z).sum(0)  # (d_v, C)
    d_out = np.zeros_like(fw.out)  # (B, n, d_v)
    d_out[:, rows] = d_z @ params.w_o.T
    d_w = d_out @ np.swapaxes(fw.v, -1, -2)  # 4) (B, n, n)
    d_v = np.swapaxes(fw.weights, -1, -2) @ d_out  # (B, n, d_v)
    a = fw.weights
    d_s = a * (d_w - (d_w * a).sum(axis=-1, keepdims=True))  # 3) (B, n, n); 0 where masked
    if scaled:
        d_s = d_s / np.sqrt(params.w_q.shape[1])  # 2)
    xt = np.swapaxes(x, -1, -2)  # (B, d_model, n)
    # Per-sequence products, then summed: many tiny products stay single-threaded (one large
    # product made OpenBLAS spread ~0.3 Mflop over threads: 20x slower on a loaded machine).
    per_m = xt @ d_s @ x  # (B, d_model, d_model): ∂loss/∂(W_Q W_Kᵀ) per sequence
    g_m = per_m.sum(0)  # (d_model, d_model)
    grads = Params(g_m @ params.w_k, g_m.T @ params.w_q, (xt @ d_v).sum(0), g_o)  # 1)
    seq = None
    if per_sequence:  # sequence b alone: its loss is not divided by B
        kk = params.w_k @ params.w_k.T  # (d_model, d_model); ‖G W_K‖² = Σ (G W_K W_Kᵀ) ∘ G
        seq = b * np.sqrt(np.maximum(((per_m @ kk) * per_m).sum(axis=(1, 2)), 0.0))  # (B,)
    return grads, seq


def loss_and_grads(params: Params, batch: Batch, config: TrainConfig) -> tuple[Forward, Params]:
    """Forward and backward on one batch (the function the gradient check tests)."""
    fw = forward(params, batch.x, batch.y, config.rows, config.scaled, config.mask)
    grads, _ = backward(params, batch.x, batch.y, config.rows, config.scaled, fw)
    return fw, grads


@dataclass(frozen=True)
class AdamState:
    """First and second moment estimates per weight, and the step count."""

    m: tuple[np.ndarray, ...]
    v: tuple[np.ndarray, ...]
    t: int = 0


def adam_init(params: Params) -> AdamState:
    """Zero moments shaped like ``params``."""
    zeros = tuple(np.zeros_like(p) for p in params.arrays())
    return AdamState(zeros, zeros, 0)


def adam_step(
    params: Params, grads: Params, state: AdamState, lr: float
) -> tuple[Params, AdamState]:
    """One Adam update with bias correction (β = 0.9, 0.999; ε = 1e-8)."""
    b1, b2 = ADAM_BETAS
    t = state.t + 1
    m = tuple(b1 * mi + (1 - b1) * g for mi, g in zip(state.m, grads.arrays(), strict=True))
    v = tuple(b2 * vi + (1 - b2) * g * g for vi, g in zip(state.v, grads.arrays(), strict=True))
    new = [
        p - lr * (mi / (1 - b1**t)) / (np.sqrt(vi / (1 - b2**t)) + ADAM_EPS)
        for p, mi, vi in zip(params.arrays(), m, v, strict=True)
    ]
    return Params(*new), AdamState(m, v, t)


# ---- measurements --------------------------------------------------------------------------


def _metrics(fw: Forward, batch: Batch, rows: np.ndarray) -> tuple[float, float]:
    """(accuracy, mean weight on the right position) of one forward pass."""
    acc = float((fw.logits.argmax(axis=-1) == batch.y).mean())
    w = fw.weights[:, rows]  # (B, r, n)
    focus = float(np.take_along_axis(w, batch.right[..., None], axis=-1).mean())
    return acc, focus


def snapshot_steps(steps: int, count: int) -> np.ndarray:
    """The steps at which a run takes a snapshot: 0, about ``count`` evenly spaced ones, and
    ``steps`` (the trained model)."""
    return np.unique(np.round(np.linspace(0, steps, count + 1)).astype(int))


def steps_to(history: History, level: float = 0.95, window: int = 5) -> int | None:
    """The first step from which the mean accuracy of ``window`` consecutive fresh batches
    reaches ``level`` (None if it never does)."""
    acc = history.accuracy
    if len(acc) < window:
        return None
    mean = np.convolve(acc, np.ones(window) / window, mode="valid")  # (completed − window + 1,)
    hit = np.flatnonzero(mean >= level)
    return int(hit[0]) if hit.size else None


def loss_at(history: History, step: int) -> float | None:
    """The loss at ``step`` (None if the run stopped before it)."""
    return float(history.loss[step]) if 0 <= step < history.completed else None


# ---- training ------------------------------------------------------------------------------


def _snapshot(
    step: int,
    fw: Forward,
    seq: np.ndarray,
    batch: Batch,
    params: Params,
    probe: Batch,
    config: TrainConfig,
) -> Snapshot:
    """Measure the model on a batch's forward pass ``fw`` (``seq``: per-sequence gradient
    norms of W_Q, (B,)) and on the probe."""
    rows = config.rows
    pf = forward(params, probe.x, probe.y, rows, config.scaled, config.mask)
    acc, focus = _metrics(fw, batch, rows)
    s = fw.scores[:, rows]  # (B, r, n)
    return Snapshot(
        step,
        pf.weights[0, rows],
        pf.logits[0].argmax(axis=-1),
        fw.loss,
        acc,
        focus,
        float(entropy(fw.weights[:, rows]).mean()),
        float(s[np.isfinite(s)].std()),
        float(np.median(seq)),
    )


def _finite(*arrays: np.ndarray) -> bool:
    return all(np.isfinite(a).all() for a in arrays)


def train_live(config: TrainConfig, every: int = 10) -> Iterator[History]:
    """Train step by step, yielding the run so far every ``every`` steps and once at the
    end (``done=True``). A step whose loss, gradients or new weights are not finite stops
    the run (``diverged_at``); nothing non-finite enters the curves."""
    data = np.random.default_rng([config.seed, 0])
    params = init_params(config, np.random.default_rng([config.seed, 1]))
    tables = embedding_tables(config, np.random.default_rng([config.seed, 2]))
    probe = make_batch(config, np.random.default_rng([config.seed, 3]), tables, 1)
    mask = config.mask
    marks = set(snapshot_steps(config.steps, config.snapshots).tolist())
    state = adam_init(params)
    loss, acc, focus, snaps = [], [], [], []
    diverged = None

    def history(done: bool) -> History:
        curves = (np.array(loss), np.array(acc), np.array(focus))
        return History(config, *curves, tuple(snaps), probe, diverged, done, params)

    def measure(step: int, batch: Batch) -> tuple[Forward, Params]:
        fw = forward(params, batch.x, batch.y, config.rows, config.scaled, mask)
        mark = step in marks
        grads, seq = backward(params, batch.x, batch.y, config.rows, config.scaled, fw, mark)
        if mark and seq is not None and np.isfinite(fw.loss) and np.isfinite(seq).all():
            snaps.append(_snapshot(step, fw, seq, batch, params, probe, config))
        return fw, grads

    with np.errstate(all="ignore"):
        for step in range(config.steps):
            batch = make_batch(config, data, tables)
            fw, grads = measure(step, batch)
            new, state = adam_step(params, grads, state, config.lr)
            if not (np.isfinite(fw.loss) and _finite(*grads.arrays(), *new.arrays())):
                diverged = step
                break
            a, f = _metrics(fw, batch, config.rows)
            loss.append(fw.loss)
            acc.append(a)
            focus.append(f)
            params = new
            if (step + 1) % every == 0 and step + 1 < config.steps:
                yield history(False)
        if diverged is None:
            measure(config.steps, make_batch(config, data, tables))
    yield history(True)


def run(config: TrainConfig) -> History:
    """A whole run of ``config`` (see :func:`train_live`)."""
    for history in train_live(config, every=config.steps):
        if history.done:
            return history
    raise AssertionError("train_live always ends with a finished history")


def train_attention(
    *,
    d_k: int = 16,
    scaled: bool = True,
    lr: float = 3e-3,
    steps: int = 300,
    seed: int = 0,
    **task_options: object,
) -> History:
    """Train one attention layer on a task (default: associative recall with 16 symbols,
    8 pairs, batches of 64) and return its :class:`History`.

    ``task_options`` are the other :class:`TrainConfig` fields: ``task`` ("recall" or
    "max"), ``n_symbols``, ``n_pairs``, ``batch``, ``d_v``, ``causal``, ``snapshots``.
    """
    config = replace(
        TrainConfig(), d_k=d_k, scaled=scaled, lr=lr, steps=steps, seed=seed, **task_options
    )
    return run(config)
