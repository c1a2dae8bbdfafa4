"""core.training: gradient check, learning, the √d_k effect, determinism, divergence."""

from dataclasses import replace

import numpy as np
import pytest

import core
from core.masks import causal_mask
from core.training import (
    Params,
    TrainConfig,
    adam_init,
    adam_step,
    backward,
    embedding_tables,
    forward,
    loss_and_grads,
    make_batch,
    run,
    steps_to,
    train_live,
)

NAMES = ("w_q", "w_k", "w_v", "w_o")


def _numeric_grad(loss, params: Params, name: str, h: float = 1e-6) -> np.ndarray:
    """Central differences of ``loss(params)`` for every entry of weight ``name``."""
    w = getattr(params, name)
    out = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        plus, minus = w.copy(), w.copy()
        plus[idx] += h
        minus[idx] -= h
        out[idx] = (
            loss(replace(params, **{name: plus})) - loss(replace(params, **{name: minus}))
        ) / (2 * h)
    return out


def _max_rel_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    big = np.abs(analytic) > 1e-4
    assert big.any(), "the check must compare some entries"
    a, n = analytic[big], numeric[big]
    return float((np.abs(a - n) / np.maximum(np.abs(a), np.abs(n))).max())


def _small_layer(masked: bool) -> tuple[Params, np.ndarray, np.ndarray, np.ndarray | None]:
    """Random weights, tokens ``x`` (B, n, d), a target at every row ``y`` (B, n) and the
    causal mask (or None) of a small layer."""
    rng = np.random.default_rng(7)
    b, n, d, d_k, d_v, c = 3, 5, 6, 4, 5, 7
    x = rng.normal(size=(b, n, d))
    y = rng.integers(0, c, (b, n))  # a target at every row: the mask changes the loss
    params = Params(
        rng.normal(0, 0.6, (d, d_k)),
        rng.normal(0, 0.6, (d, d_k)),
        rng.normal(0, 0.6, (d, d_v)),
        rng.normal(0, 0.6, (d_v, c)),
    )
    return params, x, y, causal_mask(n) if masked else None


@pytest.mark.parametrize("scaled", [True, False], ids=["scaled", "unscaled"])
@pytest.mark.parametrize("masked", [False, True], ids=["no_mask", "causal"])
def test_forward_through_w_q_w_k_transposed_equals_plain_attention_on_q_k_v(scaled, masked):
    # forward's shortcut x (W_Q W_Kᵀ) xᵀ against the plain reference (x W_Q)(x W_K)ᵀ
    params, x, y, mask = _small_layer(masked)
    fw = forward(params, x, y, np.arange(x.shape[1]), scaled, mask)
    q, k, v = x @ params.w_q, x @ params.w_k, x @ params.w_v
    out, weights = core.scaled_dot_product_attention(q, k, v, mask, scale=scaled)
    scores = core.apply_mask(core.attention_scores(q, k, scale=scaled), mask)
    np.testing.assert_allclose(fw.scores, scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fw.weights, weights, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fw.out, out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fw.logits, out @ params.w_o, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scaled", [True, False], ids=["scaled", "unscaled"])
@pytest.mark.parametrize("masked", [False, True], ids=["no_mask", "causal"])
def test_analytic_gradients_match_central_differences(scaled, masked):
    params, x, y, mask = _small_layer(masked)
    rows = np.arange(x.shape[1])

    def loss(p: Params) -> float:
        return forward(p, x, y, rows, scaled, mask).loss

    fw = forward(params, x, y, rows, scaled, mask)
    grads, _ = backward(params, x, y, rows, scaled, fw)
    for name in NAMES:
        err = _max_rel_error(getattr(grads, name), _numeric_grad(loss, params, name))
        assert err < 1e-5, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("task", ["recall", "max"])
def test_task_gradients_match_central_differences(task):
    config = TrainConfig(task=task, d_k=3, n_symbols=5, n_pairs=3, batch=4, width=4, d_v=3)
    rng = np.random.default_rng(3)
    batch = make_batch(config, rng, embedding_tables(config, rng))
    params = core.training.init_params(config, rng)
    _, grads = loss_and_grads(params, batch, config)

    def loss(p: Params) -> float:
        return loss_and_grads(p, batch, config)[0].loss

    for name in NAMES:
        assert _max_rel_error(getattr(grads, name), _numeric_grad(loss, params, name)) < 1e-5


def test_per_sequence_gradient_norms_are_each_sequences_own_gradient():
    config = TrainConfig(d_k=4, n_symbols=6, n_pairs=3, batch=5, width=6, d_v=4)
    rng = np.random.default_rng(1)
    tables = embedding_tables(config, rng)
    batch = make_batch(config, rng, tables)
    params = core.training.init_params(config, rng)
    fw = forward(params, batch.x, batch.y, config.rows, True, config.mask)
    _, seq = backward(params, batch.x, batch.y, config.rows, True, fw, per_sequence=True)
    for i in range(config.batch):
        one = forward(
            params, batch.x[i : i + 1], batch.y[i : i + 1], config.rows, True, config.mask
        )
        g, _ = backward(params, batch.x[i : i + 1], batch.y[i : i + 1], config.rows, True, one)
        assert seq[i] == pytest.approx(np.linalg.norm(g.w_q), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_run_learns_to_recall_and_attends_to_the_matching_pair(seed):
    h = core.train_attention(seed=seed)
    assert len(h.loss) == len(h.accuracy) == 300
    assert h.diverged_at is None and h.done
    assert h.accuracy[-10:].mean() >= 0.9
    last = h.snapshots[-1]
    assert last.step == 300
    assert last.accuracy >= 0.9 and last.focus >= 0.8
    first = h.snapshots[0]
    assert first.step == 0 and first.focus < 0.3  # starts spread out …
    assert last.entropy < first.entropy / 3  # … and sharpens
    assert h.loss[-10:].mean() < h.loss[:10].mean() / 10


def test_unscaled_twin_at_dk_256_is_slower_to_95_percent_and_starts_saturated():
    scaled = core.train_attention(d_k=256, scaled=True)
    unscaled = core.train_attention(d_k=256, scaled=False)
    fast, slow = steps_to(scaled), steps_to(unscaled)
    assert fast is not None
    assert slow is None or slow > fast + 20
    s0, u0 = scaled.snapshots[0], unscaled.snapshots[0]
    assert u0.score_std > 8 * s0.score_std  # ≈ √256 = 16 times, same initial weights
    assert u0.entropy < s0.entropy / 3  # a saturated softmax: nearly one-hot at step 0
    assert u0.grad_median < s0.grad_median  # the vanishing gradient of a saturated softmax
    assert unscaled.loss[100] > scaled.loss[100]


def test_at_dk_16_scaled_and_unscaled_both_learn():
    for scaled in (True, False):
        h = core.train_attention(d_k=16, scaled=scaled)
        assert steps_to(h) is not None and h.snapshots[-1].accuracy >= 0.9


def test_runs_are_deterministic_per_seed():
    a, b = core.train_attention(steps=40), core.train_attention(steps=40)
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal(a.snapshots[-1].probe_weights, b.snapshots[-1].probe_weights)
    c = core.train_attention(steps=40, seed=1)
    assert not np.array_equal(a.loss, c.loss)


def test_twin_shares_initial_weights_and_batches():
    a = core.train_attention(steps=5, scaled=True)
    b = core.train_attention(steps=5, scaled=False)
    np.testing.assert_array_equal(a.probe.x, b.probe.x)
    # step 0: the same weights score the same pairs, the unscaled ones 4 = √16 times larger
    assert b.snapshots[0].score_std == pytest.approx(4 * a.snapshots[0].score_std, rel=1e-9)


def test_divergence_stops_the_run_and_keeps_only_finite_numbers():
    h = core.train_attention(lr=1e200, steps=50)
    assert h.diverged_at is not None and h.diverged_at < 50
    assert h.done and h.completed == h.diverged_at < 50
    assert np.isfinite(h.loss).all() and np.isfinite(h.accuracy).all()
    for s in h.snapshots:
        assert np.isfinite([s.loss, s.entropy, s.score_std, s.grad_median]).all()
        assert np.isfinite(s.probe_weights).all()


def test_live_training_yields_growing_runs_and_ends_with_the_full_run():
    config = TrainConfig(steps=60)
    parts = list(train_live(config, every=5))
    assert len(parts) == 12
    assert [p.completed for p in parts] == list(range(5, 61, 5))
    assert [p.done for p in parts] == [False] * 11 + [True]
    np.testing.assert_array_equal(parts[-1].loss, run(config).loss)
    np.testing.assert_array_equal(parts[3].loss, parts[-1].loss[:20])


def test_recall_batch_targets_the_value_stored_under_the_query_key():
    config = TrainConfig()
    rng = np.random.default_rng(0)
    batch = make_batch(config, rng, embedding_tables(config, rng), 50)
    assert batch.x.shape == (50, 9, 32)
    for b in range(50):
        keys, vals = batch.symbols[b], batch.values[b]
        assert len(set(keys[:-1])) == 8  # distinct keys
        j = batch.right[b, 0]
        assert keys[j] == keys[-1] and vals[j] == batch.y[b, 0]
    np.testing.assert_array_equal(batch.x[:, -1, 16:], 0.0)  # the query carries no value


def test_max_batch_targets_the_largest_number_so_far():
    config = TrainConfig(task="max")
    rng = np.random.default_rng(0)
    batch = make_batch(config, rng, embedding_tables(config, rng), 20)
    for b in range(20):
        nums = batch.symbols[b]
        for i in range(config.n):
            assert batch.y[b, i] == nums[: i + 1].max() == nums[batch.right[b, i]]


def test_max_task_learns_with_the_causal_mask():
    h = core.train_attention(task="max")
    assert h.config.masked and h.snapshots[-1].accuracy >= 0.9
    w = h.snapshots[-1].probe_weights  # (n, n): every row
    np.testing.assert_array_equal(w[np.triu_indices(len(w), 1)], 0.0)


def test_recall_query_reads_the_pairs_not_itself():
    h = core.train_attention(steps=3)
    for s in h.snapshots:
        assert s.probe_weights.shape == (1, 9)
        assert s.probe_weights[0, -1] == 0.0
        assert s.probe_weights.sum() == pytest.approx(1.0)


def test_first_adam_step_moves_every_weight_by_lr_against_its_gradient():
    rng = np.random.default_rng(0)
    p = Params(*(rng.normal(size=(3, 2)) for _ in range(4)))
    g = Params(*(rng.normal(size=(3, 2)) for _ in range(4)))
    new, state = adam_step(p, g, adam_init(p), lr=0.01)
    assert state.t == 1
    for a, b, gi in zip(p.arrays(), new.arrays(), g.arrays(), strict=True):
        np.testing.assert_allclose(b - a, -0.01 * np.sign(gi), rtol=1e-6)


def test_steps_to_uses_a_trailing_window():
    h = core.train_attention(steps=12)
    hand = replace(h, accuracy=np.array([0, 1, 1, 1, 1, 0.5, 1, 1, 1, 1, 1, 1.0]))
    assert steps_to(hand, 0.95, window=5) == 6
    assert steps_to(hand, 0.9, window=4) == 1
    assert steps_to(replace(h, accuracy=np.zeros(12))) is None


@pytest.mark.parametrize(
    "bad",
    [{"task": "copy"}, {"d_k": 0}, {"n_pairs": 17}, {"lr": float("nan")}, {"width": 7}],
)
def test_bad_configs_are_refused(bad):
    with pytest.raises(ValueError):
        TrainConfig(**bad)
