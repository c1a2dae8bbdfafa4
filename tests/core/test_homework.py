"""core.homework: the exercises' inputs, the catalogue of mistakes and the diagnosis."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import core
from core import homework as hw
from core.multihead import init_multihead, multi_head_attention, multi_head_attention_loop

SIZES = st.tuples(
    st.integers(2, 7),  # n
    st.integers(2, 8),  # d_model
    st.integers(1, 6),  # d_k
    st.integers(0, 2**16),  # seed
)


def lesson_attention(x, w_q, w_k, w_v, causal=False):
    """Attention written out independently of core, as a student would."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w @ v, w


# ------------------------------------------------------------------------------ inputs


def test_default_inputs_are_lesson_002s():
    inputs = hw.homework_inputs(hw.Homework(1))
    x = np.random.default_rng(42).normal(0, 1, (6, 8))
    rng = np.random.default_rng(42)
    w_q, w_k = rng.normal(0, np.sqrt(2 / 12), (8, 4)), rng.normal(0, np.sqrt(2 / 12), (8, 4))
    w_v = rng.normal(0, np.sqrt(2 / 12), (8, 4))
    for name, arr in (("X", x), ("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        np.testing.assert_array_equal(inputs[name], arr)
    answer = hw.homework_answer(hw.Homework(1), inputs)
    out, weights = lesson_attention(x, w_q, w_k, w_v)
    np.testing.assert_allclose(answer["output"], out, atol=1e-12)
    np.testing.assert_allclose(answer["weights"], weights, atol=1e-12)


def test_inputs_equal_what_the_concept_pages_compute():
    cfg = hw.Homework(2, n=6, d_model=8, d_k=4, seed=42)
    inputs = hw.homework_inputs(cfg)
    x = core.embed_tokens(core.tokenize("The cat sat on the mat"), 8, "lesson", 42)
    np.testing.assert_array_equal(inputs["X"], x)
    for got, want in zip(
        (inputs["W_Q"], inputs["W_K"], inputs["W_V"]),
        core.init_projections(8, 4, 4, 42),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(inputs["mask"], core.causal_mask(6))
    out, weights = lesson_attention(*[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], causal=True)
    answer = hw.homework_answer(cfg, inputs)
    np.testing.assert_allclose(answer["weights"], weights, atol=1e-12)
    np.testing.assert_allclose(answer["output"], out, atol=1e-12)


def test_multihead_weights_are_the_multi_head_pages_when_heads_fill_d_model():
    for w_ours, w_page in zip(
        hw.multihead_weights(8, 4, 2, 42), init_multihead(8, 2, 42), strict=True
    ):
        np.testing.assert_array_equal(w_ours, w_page)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 6), st.integers(2, 8), st.integers(1, 4), st.integers(1, 4), st.integers(0, 999)
)
def test_reference_multihead_is_the_per_head_loop(n, d_model, d_k, h, seed):
    cfg = hw.Homework(3, n, d_model, d_k, h, seed)
    inputs = hw.homework_inputs(cfg)
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")]
    out, weights = hw.reference_multihead(*args, h)
    loop_out, loop_w = multi_head_attention_loop(*args, h)
    batched_out, _ = multi_head_attention(*args, h)
    assert out.shape == (n, d_model) and weights.shape == (h, n, n)
    np.testing.assert_allclose(out, loop_out, atol=1e-12)
    np.testing.assert_allclose(out, batched_out, atol=1e-12)
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)


def test_stability_logits_break_the_naive_softmax_but_not_the_stable_one():
    logits = hw.stability_logits(6, 42)
    stable = core.softmax(logits)
    naive = hw.mistake("softmax", "no_max_subtraction").make(logits)
    assert np.isfinite(stable).all()
    np.testing.assert_allclose(stable.sum(axis=1), 1.0)
    broken = ~np.isfinite(naive).all(axis=1)
    assert broken.sum() >= 2  # the ±1000 rows at least
    assert np.abs(logits[broken]).max() > math.log(np.finfo(np.float64).max)
    np.testing.assert_allclose(naive[~broken], stable[~broken], atol=1e-12)


def test_exercise_arrays_per_exercise():
    assert set(hw.homework_inputs(hw.Homework(1))) == {"X", "W_Q", "W_K", "W_V"}
    assert set(hw.homework_inputs(hw.Homework(2))) == {"X", "W_Q", "W_K", "W_V", "mask"}
    three = hw.homework_inputs(hw.Homework(3, d_model=6, d_k=5, h=3))
    assert three["W_Q"].shape == (6, 15) and three["W_O"].shape == (15, 6)
    assert hw.homework_inputs(hw.Homework(4, n=5))["logits"].shape == (5, 5)


@pytest.mark.parametrize("bad", [{"exercise": 5}, {"n": 0}, {"h": 0}])
def test_homework_rejects_impossible_settings(bad):
    with pytest.raises(ValueError):
        hw.Homework(**bad)


# --------------------------------------------------------------------------- catalogue


def test_every_mistake_replaces_stages_that_quote_the_mistaken_line():
    assert hw.changed_stages(hw.Code()) == []
    for m in hw.MISTAKES:
        changed = hw.changed_stages(m.code)
        assert changed, m.id
        assert 1 <= m.step <= 5 and m.step == hw.STAGE_STEPS[changed[0]], m.id
        for stage in changed:
            assert "``" in getattr(m.code, stage).__doc__, (m.id, stage)


def test_the_steps_of_the_mistakes_are_the_catalogs():
    assert hw.MISTAKE_STEPS == {
        "no_scaling": 3,
        "scaled_by_dk": 3,
        "softmax_wrong_axis": 4,
        "scores_transposed": 2,
        "weights_not_output": 5,
        "mask_after_softmax": 4,
        "mask_missing": 4,
        "mask_upper": 4,
        "mask_wrong_sign": 4,
        "own_projections": 1,
        "heads_no_transpose": 1,
        "heads_wrong_order": 5,
        "heads_reversed": 5,
        "wo_forgotten": 5,
        "linear_layout": 1,
        "no_max_subtraction": 4,
    }


def test_the_issues_mistake_ids_are_all_there():
    ids = set(hw.MISTAKE_STEPS)
    assert {
        "no_scaling",
        "scaled_by_dk",
        "softmax_wrong_axis",
        "scores_transposed",
        "weights_not_output",
        "mask_after_softmax",
        "mask_missing",
        "mask_upper",
        "heads_no_transpose",
        "heads_wrong_order",
        "wo_forgotten",
        "linear_layout",
        "no_max_subtraction",
    } <= ids


def _check_own_result(diagnosed, own, correct, results, tol, by_form=False):
    """A mistake's own result is diagnosed as that mistake, or as one that gives the same
    numbers (listed earlier), or as correct when it changes nothing on these inputs. A
    mistake recognised ``by_form`` (own projections: right-looking weights, wrong in every
    row) may stay unnamed when a row came out right anyway (saturated softmax rows: 1 and
    ~1e-8 against 1 and ~1e-11), since nothing then tells it from a partly right answer."""
    if hw.matches(own, correct, tol):
        assert diagnosed == "correct"
        return
    if by_form and diagnosed is None:
        right_rows = ~hw.bad_cells(own, correct, tol).any(axis=-1)
        assert right_rows.any(), "unnamed although every row is wrong"
        return
    assert diagnosed not in (None, "correct")
    assert hw.matches(own, results[diagnosed], tol)


@settings(max_examples=40, deadline=None)
@given(SIZES, st.booleans())
def test_every_attention_mistake_is_recognised_from_its_own_result(sizes, causal):
    n, d_model, d_k, seed = sizes
    cfg = hw.Homework(2 if causal else 1, n, d_model, d_k, seed=seed)
    inputs = hw.homework_inputs(cfg)
    x, w_q, w_k, w_v = (inputs[k] for k in ("X", "W_Q", "W_K", "W_V"))
    mask = inputs.get("mask")
    correct = dict(
        zip(("output", "weights"), hw.reference_attention(x, w_q, w_k, w_v, mask), strict=True)
    )
    made = hw.mistake_results("attention", x, w_q, w_k, w_v, mask)
    results = [(m.id, p) for m, p in made]
    assert {mid for mid, _ in results} >= (
        {"no_scaling", "scaled_by_dk", "mask_upper"} if causal else {"no_scaling"}
    )
    for mistake, parts in made:
        for part, own in parts.items():
            for cast in (np.float64, np.float32):
                got = hw.diagnose_attention(
                    x, w_q, w_k, w_v, own.astype(cast), causal=causal, part=part
                )
                tol = hw.tolerance(cast)
                others = {m: p.get(part) for m, p in results}
                by_form = mistake.recognise is hw.valid_weights
                _check_own_result(got, own, correct[part], others, tol, by_form)


@settings(max_examples=40, deadline=None)
@given(SIZES, st.booleans(), st.sampled_from(["output", "weights", None]))
def test_the_right_answer_is_never_called_a_mistake(sizes, causal, part):
    n, d_model, d_k, seed = sizes
    cfg = hw.Homework(2 if causal else 1, n, d_model, d_k, seed=seed)
    inputs = hw.homework_inputs(cfg)
    answer = hw.homework_answer(cfg, inputs)
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    for name, arr in answer.items():
        if part is not None and name != part:
            continue
        wobble = arr + 1e-9 * np.random.default_rng(seed).standard_normal(arr.shape)
        for candidate in (arr, wobble, arr.astype(np.float32)):
            assert hw.diagnose_attention(*args, candidate, causal=causal, part=part) == "correct"


@settings(max_examples=30, deadline=None)
@given(SIZES, st.booleans())
def test_random_arrays_match_nothing(sizes, causal):
    n, d_model, d_k, seed = sizes
    inputs = hw.homework_inputs(hw.Homework(2 if causal else 1, n, d_model, d_k, seed=seed))
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    rng = np.random.default_rng(seed + 1)
    for shape in ((n, d_k), (n, n)):
        assert hw.diagnose_attention(*args, rng.normal(size=shape), causal=causal) is None
        assert hw.diagnose_attention(*args, rng.random(shape), causal=causal) is None


def test_lesson_settings_name_each_mistake_exactly():
    for causal in (False, True):
        inputs = hw.homework_inputs(hw.Homework(2 if causal else 1))
        args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
        for m in hw.ATTENTION_MISTAKES:
            result = m.make(*args, inputs.get("mask"))
            if result is None:
                assert not causal and m.id.startswith("mask_")
                continue
            part = "output" if m.parts is None else m.parts[0]  # what it is recognised from
            own = hw.as_parts(result)[part]
            assert hw.diagnose_attention(*args, own, causal=causal, part=part) == m.id


def test_weights_given_as_the_output_are_that_mistake_only_when_the_output_is_asked():
    inputs = hw.homework_inputs(hw.Homework(1))
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    weights = hw.homework_answer(hw.Homework(1), inputs)["weights"]
    assert hw.diagnose_attention(*args, weights, part="output") == "weights_not_output"
    assert hw.diagnose_attention(*args, weights, part="weights") == "correct"
    assert hw.diagnose_attention(*args, weights) == "correct"


def test_scaled_by_dk_cannot_be_told_apart_when_d_k_is_one():
    inputs = hw.homework_inputs(hw.Homework(1, d_k=1))
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    out, _ = hw.mistake("attention", "scaled_by_dk").make(*args, None)
    assert hw.diagnose_attention(*args, out) == "correct"


MH_SIZES = st.tuples(
    st.integers(2, 6), st.integers(2, 8), st.integers(1, 4), st.integers(1, 4), st.integers(0, 999)
)


@settings(max_examples=30, deadline=None)
@given(MH_SIZES)
def test_every_multihead_mistake_is_recognised_from_its_own_result(sizes):
    cfg = hw.Homework(3, *sizes)
    inputs = hw.homework_inputs(cfg)
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")]
    correct = dict(zip(("output", "weights"), hw.reference_multihead(*args, cfg.h), strict=True))
    results = [(m.id, p) for m, p in hw.mistake_results("multihead", *args, cfg.h)]
    for _, parts in results:
        for part, own in parts.items():
            got = hw.diagnose_multihead(*args, cfg.h, own, part=part)
            _check_own_result(got, own, correct[part], {m: p.get(part) for m, p in results}, 1e-6)
    for part, arr in correct.items():
        assert hw.diagnose_multihead(*args, cfg.h, arr, part=part) == "correct"
        noise = np.random.default_rng(sizes[-1] + 1).normal(size=arr.shape)  # not X's draw
        assert hw.diagnose_multihead(*args, cfg.h, noise, part=part) is None


def test_multihead_lesson_settings_name_each_mistake():
    cfg = hw.Homework(3)  # d_model 8, d_k 4, h 2: square matrices, so W.T is possible
    inputs = hw.homework_inputs(cfg)
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")]
    for m in hw.MULTIHEAD_MISTAKES:
        part = "output" if m.parts is None else m.parts[0]  # what it is recognised from
        own = hw.as_parts(m.make(*args, cfg.h))[part]
        assert hw.diagnose_multihead(*args, cfg.h, own, part=part) == m.id
    linear = hw.mistake("multihead", "linear_layout")
    assert linear.make(*hw.homework_inputs(hw.Homework(3, d_k=3)).values(), 2) is None


def test_merge_mistakes_leave_the_weights_right():
    cfg = hw.Homework(3)
    inputs = hw.homework_inputs(cfg)
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")]
    for name in ("heads_wrong_order", "heads_reversed", "wo_forgotten"):
        _, weights = hw.mistake("multihead", name).make(*args, cfg.h)
        assert hw.diagnose_multihead(*args, cfg.h, weights, part="weights") == "correct"


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 10), st.integers(0, 999))
def test_softmax_diagnosis(n, seed):
    logits = hw.stability_logits(n, seed)
    assert hw.diagnose_softmax(logits, core.softmax(logits)) == "correct"
    assert hw.diagnose_softmax(logits, core.softmax(logits).astype(np.float32)) == "correct"
    naive, columns = (
        hw.mistake("softmax", name) for name in ("no_max_subtraction", "softmax_wrong_axis")
    )
    for dtype in ("float64", "float32"):
        assert hw.diagnose_softmax(logits, naive.make(logits.astype(dtype))) == "no_max_subtraction"
    assert hw.diagnose_softmax(logits, columns.make(logits)) == "softmax_wrong_axis"
    assert hw.diagnose_softmax(logits, np.random.default_rng(seed).random((n, n))) is None


def test_naive_softmax_is_identical_without_overflow():
    small = np.random.default_rng(0).normal(size=(4, 5))
    naive = hw.mistake("softmax", "no_max_subtraction").make(small)
    assert hw.diagnose_softmax(small, naive) == "correct"


def test_a_non_numeric_candidate_matches_nothing():
    inputs = hw.homework_inputs(hw.Homework(1))
    args = [inputs[k] for k in ("X", "W_Q", "W_K", "W_V")]
    assert hw.diagnose_attention(*args, np.array([["a"] * 4] * 6)) is None


def test_diagnose_homework_dispatches_per_exercise():
    for ex in (1, 2, 3, 4):
        cfg = hw.Homework(ex)
        inputs = hw.homework_inputs(cfg)
        for part, arr in hw.homework_answer(cfg, inputs).items():
            assert hw.diagnose_homework(cfg, inputs, arr, part) == "correct"
    cfg = hw.Homework(2)
    inputs = hw.homework_inputs(cfg)
    wrong = hw.mistake_result(cfg, inputs, "mask_missing", "weights")
    assert hw.diagnose_homework(cfg, inputs, wrong, "weights") == "mask_missing"
    assert (
        hw.mistake_result(
            hw.Homework(1), hw.homework_inputs(hw.Homework(1)), "mask_upper", "output"
        )
        is None
    )


# ------------------------------------------------------------------ the table's rows


def test_one_id_is_one_step_and_rows_that_compare_less_come_last():
    """A shared id (no_scaling in exercises 1 and 3) is one catalog entry with one step; the
    diagnosis takes the first row that recognises an upload, so the rows that hold less than
    every number against it follow every row of their kind that holds them all."""
    for m in hw.MISTAKES:
        assert hw.MISTAKE_STEPS[m.id] == m.step, m.id
        assert m.kind in hw.KINDS.values(), m.id
    for kind in set(hw.KINDS.values()):
        by_numbers = [m.recognise is hw.same for m in hw.MISTAKES if m.kind == kind]
        assert by_numbers == sorted(by_numbers, reverse=True), kind


def _lesson(exercise: int) -> tuple[hw.Homework, dict, tuple]:
    cfg = hw.Homework(exercise)
    inputs = hw.homework_inputs(cfg)
    return cfg, inputs, hw.exercise_args(cfg, inputs)


def tutorial_mask(scores, mask, how: str, dtype):
    """Softmax after a mask line written the way tutorials write it for a mask whose 1s
    mark the keys to hide, here given our mask (True = may attend); computed in ``dtype``
    as a student's NumPy would (a row with every key hidden by ``-inf`` turns NaN)."""
    s = scores.astype(dtype)
    if how == "add":  # scores += mask * -1e9
        s = s + mask.astype(dtype) * dtype(-1e9)
    else:  # masked_fill(mask, -1e9) or masked_fill(mask, -inf)
        s = np.where(mask, dtype(-1e9) if how == "fill" else dtype(-np.inf), s)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("how", ["add", "fill", "-inf"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_mask_with_the_wrong_sign_is_recognised_however_the_line_is_written(how, dtype):
    cfg, inputs, args = _lesson(2)
    x, w_q, w_k, w_v, mask = args
    q, k, v = ((x @ w).astype(dtype) for w in (w_q, w_k, w_v))
    weights = tutorial_mask(q @ k.T / np.sqrt(4), mask, how, dtype)
    _, made = hw.mistake("attention", "mask_wrong_sign").make(*args)
    if how != "add" or dtype == np.float32:  # the row that sees every key comes out otherwise
        assert not hw.matches(weights[-1], made[-1], 1e-4)
    for part, arr in (("weights", weights), ("output", weights @ v)):
        assert hw.diagnose_homework(cfg, inputs, arr, part) == "mask_wrong_sign", part


def test_the_wrong_sign_hides_exactly_the_keys_that_should_be_seen():
    _, inputs, args = _lesson(2)
    _, weights = hw.mistake("attention", "mask_wrong_sign").make(*args)
    mask = inputs["mask"]
    hides = ~mask.all(axis=1)  # every row but the last hides some key
    assert hides.sum() == 5
    assert (weights[hides][mask[hides]] == 0).all()  # exp(−1e9) is 0: the visible keys
    np.testing.assert_allclose(weights[hides].sum(axis=1), 1.0)
    assert weights[0, 0] == 0 and weights[0, 1:].sum() == pytest.approx(1.0)
    assert hw.mistake("attention", "mask_wrong_sign").make(*args[:4], None) is None


def test_rows_a_wrong_sign_leaves_alone_are_not_enough_to_name_it():
    """Only the rows the mistake changes are compared; an upload that is right in one of
    them is not that mistake."""
    cfg, inputs, args = _lesson(2)
    _, made = hw.mistake("attention", "mask_wrong_sign").make(*args)
    partly = made.copy()
    partly[2] = hw.homework_answer(cfg, inputs)["weights"][2]
    assert hw.diagnose_homework(cfg, inputs, partly, "weights") is None


INITS = {  # how a student's class might draw its own projection matrices
    "randn": lambda rng, shape: rng.standard_normal(shape),
    "xavier": lambda rng, shape: rng.normal(0.0, np.sqrt(2 / sum(shape)), shape),
    "linear": lambda rng, shape: rng.uniform(-1, 1, shape) / np.sqrt(shape[0]),  # nn.Linear
}


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([1, 2, 3]),
    st.sampled_from(sorted(INITS)),
    st.integers(0, 2**16),
    st.sampled_from([np.float64, np.float32]),
)
def test_own_random_projections_are_recognised_from_the_weights_only(exercise, init, seed, dtype):
    cfg, inputs, args = _lesson(exercise)
    rng = np.random.default_rng(seed)
    own = [INITS[init](rng, w.shape) for w in args[1:-1]]  # W_Q, W_K, W_V (and W_O)
    # Xavier from the lesson's seed (42) draws the downloaded matrices: that is the right answer
    assume(not all(np.array_equal(o, w) for o, w in zip(own, args[1:-1], strict=True)))
    if exercise == 3:
        output, weights = hw.reference_multihead(args[0], *own, cfg.h)
    else:
        output, weights = hw.reference_attention(args[0], *own, args[-1])
    got = hw.diagnose_homework(cfg, inputs, weights.astype(dtype), "weights")
    assert got == "own_projections"
    assert hw.diagnose_homework(cfg, inputs, output.astype(dtype), "output") is None


@pytest.mark.parametrize("exercise", [1, 2, 3])
def test_own_xavier_matrices_from_the_lessons_seed_are_the_downloaded_ones(exercise):
    """The draw the property above leaves out: a class drawing its own Xavier matrices from
    seed 42 draws the lesson's, and its weights are rightly called correct."""
    cfg, inputs, args = _lesson(exercise)
    rng = np.random.default_rng(42)
    own = [INITS["xavier"](rng, w.shape) for w in args[1:-1]]
    for o, w in zip(own, args[1:-1], strict=True):
        np.testing.assert_array_equal(o, w)
    if exercise == 3:
        _, weights = hw.reference_multihead(args[0], *own, cfg.h)
    else:
        _, weights = hw.reference_attention(args[0], *own, args[-1])
    assert hw.diagnose_homework(cfg, inputs, weights, "weights") == "correct"


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from([1.0, 3.0]))
def test_random_weights_of_the_right_form_are_not_taken_for_other_projections(seed, spread):
    """Softmax rows of random scores are valid weights, but their scores have full rank:
    no queries and keys of width d_k = 4 give them."""
    cfg, inputs, _ = _lesson(1)
    weights = core.softmax(spread * np.random.default_rng(seed).normal(size=(6, 6)))
    assert hw.diagnose_homework(cfg, inputs, weights, "weights") is None


@pytest.mark.parametrize("exercise", [1, 2])
def test_weights_right_in_some_rows_are_not_taken_for_other_projections(exercise):
    cfg, inputs, _ = _lesson(exercise)
    wrong = hw.homework_answer(cfg, inputs)["weights"].copy()
    wrong[-1] = wrong[-1, ::-1]  # a valid row, but not the right one; the others are right
    assert hw.diagnose_homework(cfg, inputs, wrong, "weights") is None


# -------------------------------------------------------------------------- comparison


def test_tolerance_follows_the_dtype():
    assert hw.tolerance(np.float64) == 1e-6
    assert hw.tolerance("float32") == 1e-4
    assert hw.tolerance(np.float16) == 1e-4
    assert hw.tolerance(np.int64) == 1e-6
