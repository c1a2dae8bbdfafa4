"""AppTest of the homework page: downloads, upload and paste, verdict and diagnosis, both
languages, presenter mode."""

import io
import json
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import homework as hw
from tests.app.conftest import order, texts, visible, visible_of
from ui import charts
from ui.exports import npz_bytes
from ui.i18n import Translator
from ui.safe import plain
from ui.uploads import MAX_BYTES, parse_upload
from ui.views import homework as hv

PAGE = "pages/17_homework.py"


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def lesson(exercise: int = 1, **sizes: int) -> tuple[hw.Homework, dict, dict]:
    cfg = hw.Homework(exercise, **sizes)
    inputs = hw.homework_inputs(cfg)
    return cfg, inputs, hw.homework_answer(cfg, inputs)


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader[0].upload(name, data)
    return at.run()


def errors(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in at.error)


def waiting(t: Translator) -> str:
    """What steps 3 and 4 say to a student before anything is uploaded."""
    return t("homework.waiting_side", box=t("homework.s2_title"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_opens_with_the_lesson_exercise(page, lang):
    at = page(PAGE, lang=lang)
    assert not at.exception
    t = Translator(lang)
    assert at.title[0].value == t("homework.title")
    body = texts(at)
    assert waiting(t) in body
    assert "`(6, 8)`" in body and "`(6, 4)`" in body  # X and the output, from the live shapes
    assert len(at.file_uploader) == 1 and len(at.text_area) == 1


def test_the_numpy_literal_is_drawn_only_once_its_box_is_opened(page):
    """The code viewer's frontend is 1.5 MB of JavaScript: a page load must not need it."""
    at = page(PAGE, lang="en")
    label = Translator("en")("homework.literal")
    assert not next(e for e in at.expander if e.label == label).children
    assert not at.code
    at.session_state["fold_literal"] = True
    at.run()
    code = next(e for e in at.expander if e.label == label).code
    namespace = {"np": np}
    exec(code[0].value, namespace)  # the inputs, as a student pastes them
    np.testing.assert_array_equal(namespace["X"], lesson()[1]["X"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_scaling_upload_is_diagnosed_then_the_right_answer_accepted(page, lang):
    t = Translator(lang)
    _, inputs, answer = lesson()
    wrong_out, wrong_w = hw.mistake("attention", "no_scaling").make(
        inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], None
    )
    at = upload(page(PAGE, lang=lang), "my_answer.npz", npz(output=wrong_out, weights=wrong_w))
    assert not at.exception
    body = texts(at)
    assert t("homework.mistake.no_scaling.title") in body
    assert t("homework.in_step", step=3, name=t("homework.step_scale")) in body
    assert errors(at).startswith(t("homework.not_equal", tol="1.0e-06", bad=24, total=24)[:4])
    at.file_uploader[0].set_value(None)
    at = upload(at.run(), "right.npz", npz(output=answer["output"], weights=answer["weights"]))
    assert not at.exception
    assert t("homework.accepted") in [s.value for s in at.success]
    assert t("homework.mistake.no_scaling.title") not in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_wrong_result_names_its_mistake_and_fix_above_the_error_chart(page, lang):
    """A student's first screen after an upload: the verdict, the chart of the errors and,
    beside it above its numbers, the mistake and its fix (the diagnosis step below explains
    it in full)."""
    t = Translator(lang)
    _, inputs, _ = lesson()
    wrong, _ = hw.mistake("attention", "no_scaling").make(
        inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], None
    )
    at = upload(page(PAGE, lang=lang), "mine.npz", npz(output=wrong))
    line = t(
        "homework.named",
        mistake=t("homework.mistake.no_scaling.title"),
        fix=t("homework.mistake.no_scaling.fix"),
    )
    assert [w.value for w in at.warning] == [line]
    shown = order(at)
    # beside the chart, above its numbers (the column beside it comes after it)
    assert shown.index("chart") < shown.index("Warning") < shown.index("Metric")
    slide = upload(page(PAGE, lang=lang, present="1", step="3"), "mine.npz", npz(output=wrong))
    assert not slide.warning  # a slide names it on the diagnosis step


def test_pasted_numpy_printout_of_the_weights_is_accepted(page):
    _, _, answer = lesson()
    at = page(PAGE, part="weights")
    at.text_area[0].input(np.array2string(answer["weights"], precision=10, separator=", ")).run()
    assert not at.exception
    t = Translator("en")
    assert t("homework.accepted") in [s.value for s in at.success]
    sums = [frame for frame in at.get("vega_lite_chart")]
    assert sums, "error heatmap and row sums are drawn"
    assert "1.0000" in texts(at)  # the row sums in the notice, computed from the upload


def test_pasted_pytorch_tensor_at_four_decimals_is_judged_at_that_precision(page):
    _, _, answer = lesson()
    rows = ",\n        ".join(
        "[" + ", ".join(f"{v:.4f}" for v in r) + "]" for r in answer["output"]
    )
    at = page(PAGE)
    at.text_area[0].input(f"tensor([{rows}])").run()
    assert Translator("en")("homework.accepted") in [s.value for s in at.success]
    assert "5.0e-05" in texts(at) or any("1.5e-04" in m.value for m in at.metric)


def test_transposed_upload_says_so_and_that_it_would_be_right(page):
    _, _, answer = lesson()
    at = upload(page(PAGE, lang="zh"), "out.npy", _npy(answer["output"].T))
    t = Translator("zh")
    assert t("homework.upload.shape_transposed", expected="(6, 4)", found="(4, 6)") in errors(at)
    assert t("homework.transposed_right") in [i.value for i in at.info]


def _npy(arr: np.ndarray, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_uploads_show_a_translated_message_and_no_traceback(page, lang):
    t = Translator(lang)
    at = page(PAGE, lang=lang)
    cases = [
        ("out.npy", _npy(np.array([1, "a"], dtype=object), allow_pickle=True), "object_dtype"),
        ("out.npy", b"\x80\x04pickle renamed", "pickle"),  # the uploader lets no .pkl in
        ("out.csv", b"", "empty"),
    ]
    assert t("homework.upload_pickles") in [c.value for c in at.caption]
    for name, data, key in cases:
        at.file_uploader[0].set_value((name, data, "application/octet-stream"))
        at.run()
        assert not at.exception
        assert errors(at) == t(f"homework.upload.{key}")
        assert waiting(t) in texts(at)


def test_an_uploaded_name_is_escaped_not_rendered(page):
    at = upload(page(PAGE), "a.npz", npz(**{"<b>x</b>": np.zeros((6, 4)), "z": np.ones((6, 4))}))
    shown = errors(at)
    assert "<b>" not in shown and r"\<b\>" in shown


def test_float32_upload_is_judged_at_1e_4(page):
    _, _, answer = lesson()
    at = upload(page(PAGE), "out.npy", _npy(answer["output"].astype(np.float32)))
    assert Translator("en")("homework.accepted") in [s.value for s in at.success]
    assert any(m.value == "1.0e-04" for m in at.metric)


def test_causal_exercise_with_the_mask_after_the_softmax(page):
    cfg, inputs, _ = lesson(2)
    _, weights = hw.mistake("attention", "mask_after_softmax").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "mask")]
    )
    at = upload(page(PAGE, exercise="2", part="weights"), "w.npy", _npy(weights))
    body = texts(at)
    t = Translator("en")
    assert t("homework.mistake.mask_after_softmax.title") in body
    lo = charts.fmt(float(weights.sum(axis=1).min()), 4)
    assert lo in body  # the row sums < 1 are named in the notice
    assert cfg.exercise == 2


def test_multi_head_exercise_recognises_a_forgotten_w_o(page):
    cfg, inputs, _ = lesson(3)
    out, _ = hw.mistake("multihead", "wo_forgotten").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")], cfg.h
    )
    at = upload(page(PAGE, exercise="3", lang="zh"), "o.npy", _npy(out))
    assert Translator("zh")("homework.mistake.wo_forgotten.title") in texts(at)


def test_softmax_exercise_reports_nan_cells_and_the_missing_max_shift(page):
    cfg, inputs, _ = lesson(4)
    naive = hw.mistake("softmax", "no_max_subtraction").make(inputs["logits"])
    at = upload(page(PAGE, exercise="4"), "p.npz", npz(probs=naive))
    t = Translator("en")
    warnings = [w.value for w in at.warning]
    assert any("NaN" in w and "(2, " in w for w in warnings)  # position of the first NaN row
    assert t("homework.mistake.no_max_subtraction.title") in texts(at)
    assert cfg.n == 6


def test_no_match_is_said_honestly_with_the_first_departing_row(page):
    _, _, answer = lesson()
    wrong = answer["output"].copy()
    wrong[3, 1] += 0.25
    at = upload(page(PAGE), "out.npy", _npy(wrong))
    t = Translator("en")
    assert t("homework.no_match") in [i.value for i in at.info]
    assert t("homework.first_row", row="3") in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_mask_added_with_the_wrong_sign_is_named(page, lang):
    """``scores + mask * -1e9`` from a tutorial whose 1s mark the hidden keys: the output
    of exercise 2 is named as that mistake, in step 4."""
    cfg, inputs, _ = lesson(2)
    output, _ = hw.mistake("attention", "mask_wrong_sign").make(*hw.exercise_args(cfg, inputs))
    at = upload(page(PAGE, lang=lang, exercise="2"), "out.npy", _npy(output))
    t = Translator(lang)
    body = texts(at)
    assert t("homework.mistake.mask_wrong_sign.title") in body
    assert t("homework.in_step", step=4, name=t("homework.step_softmax")) in body
    assert t("homework.no_match") not in body


def test_errors_against_weights_of_zero_stay_readable_numbers(page):
    """The wrong-sign weights put 1 where the right weight is 0: the largest relative error
    leaves such cells to the absolute error instead of reporting 1 / 0 ≈ 4.5e+307."""
    cfg, inputs, _ = lesson(2)
    _, weights = hw.mistake("attention", "mask_wrong_sign").make(*hw.exercise_args(cfg, inputs))
    at = upload(page(PAGE, exercise="2", part="weights"), "w.npy", _npy(weights))
    assert Translator("en")("homework.mistake.mask_wrong_sign.title") in texts(at)
    shown = [m.value for m in at.metric]
    assert shown[:2] == ["1", "1"], shown  # largest absolute, largest relative error
    assert not [v for v in shown if re.search(r"e\+|nan|inf", v, re.IGNORECASE)], shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_weights_from_own_projection_matrices_ask_about_the_downloaded_ones(page, lang):
    """A class that draws its own W_Q, W_K, W_V: its weights are valid, wrong in every row
    and of the scores' low rank, so the page names the likely cause and asks; its output
    alone tells nothing, and the page says to check the weights."""
    _, inputs, _ = lesson()
    rng = np.random.default_rng(3)
    own = [rng.standard_normal(inputs[k].shape) for k in ("W_Q", "W_K", "W_V")]
    output, weights = hw.reference_attention(inputs["X"], *own, None)
    t = Translator(lang)
    at = upload(page(PAGE, lang=lang, part="weights"), "w.npy", _npy(weights))
    body = texts(at)
    assert t("homework.mistake.own_projections.title") in body
    assert t("homework.mistake.own_projections.fix") in body
    assert t("homework.in_step", step=1, name=t("homework.step_project")) in body
    at = upload(page(PAGE, lang=lang), "out.npy", _npy(output))
    body = texts(at)
    assert t("homework.mistake.own_projections.title") not in body
    assert t("homework.no_match") in [i.value for i in at.info]
    checking, weights = t("homework.part"), t("homework.part_weights")
    hint = t("homework.no_match_output", checking=checking, weights=weights)
    assert hint in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_batch_of_one_is_dropped_said_and_checked(page, lang):
    """A (1, 6, 4) answer, as ``x[None]`` or a batched model gives: the page says it drops
    the leading axis, then judges and diagnoses the (6, 4) inside."""
    _, inputs, answer = lesson()
    t = Translator(lang)
    said = t("homework.upload.batch_axis", found="(1, 6, 4)", expected="(6, 4)")
    at = upload(page(PAGE, lang=lang), "out.npy", _npy(answer["output"][None]))
    assert said in [i.value for i in at.info]
    assert t("homework.accepted") in [s.value for s in at.success]
    wrong, _ = hw.mistake("attention", "no_scaling").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], None
    )
    at = upload(page(PAGE, lang=lang), "out.npy", _npy(wrong[None]))
    assert said in [i.value for i in at.info]
    body = texts(at)
    assert t("homework.mistake.no_scaling.title") in body
    assert t("homework.no_match") not in body
    assert errors(at) == t("homework.not_equal", tol="1.0e-06", bad=24, total=24)  # no shape error


def test_a_wrong_shape_that_matches_nothing_shows_no_row_to_compare(page):
    """The no-match message promises a row to compare only when there is one: with a shape
    the answer does not have, it says to fix the shape first."""
    t = Translator("en")
    at = upload(page(PAGE), "out.npy", _npy(np.zeros((6, 5))))
    infos = [i.value for i in at.info]
    assert t("homework.no_match_shape", verdict=t("homework.s3_title")) in infos
    assert t("homework.no_match") not in infos
    assert t("homework.first_row", row="0")[:20] not in texts(at)


def test_sizes_come_from_the_url_and_bad_values_fall_back(page):
    at = page(PAGE, exercise="3", n="5", d_model="6", d_k="2", h="3")
    body = texts(at)
    assert "`(6, 6)`" in body and "`(5, 6)`" in body and "`(3, 5, 5)`" in body
    at = page(PAGE, exercise="9", n="-1")
    assert not at.exception and len(at.warning) == 2
    assert "`(6, 4)`" in texts(at)


def test_presenter_mode_shows_one_step_and_the_diagnosis_readably(page):
    _, inputs, _ = lesson()
    wrong, _ = hw.mistake("attention", "no_scaling").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], None
    )
    at = page(PAGE, present="1", step="2", lang="zh")
    at = upload(at, "w.npz", npz(output=wrong))
    at.query_params["step"] = "4"
    at.run()
    shown = " ".join(str(getattr(e, "value", "")) for e in visible_of(at, "Markdown"))
    t = Translator("zh")
    assert t("homework.mistake.no_scaling.title") in shown
    assert ":red-badge[" in shown  # the faulty step is marked among the five
    assert not visible_of(at, "vega_lite_chart")  # the verdict's chart is on its own step


def test_students_see_every_step_and_a_slide_draws_only_its_own(page, monkeypatch):
    _, _, answer = lesson(3, n=5, h=4)
    checks = []
    real = hv.check
    monkeypatch.setattr(hv, "check", lambda *a: checks.append(a) or real(*a))
    pasted = np.array2string(answer["output"], precision=12, separator=", ")
    at = page(PAGE, exercise="3", n="5", h="4")  # a student: upload and verdict on one screen
    at.text_area[0].input(pasted).run()
    assert Translator("en")("homework.accepted") in [s.value for s in at.success]
    assert at.get("vega_lite_chart") and "| `W_O` |" in texts(at)  # step 1, below the result
    assert Translator("en")("steps.next") not in [b.label for b in at.button], "no step bar"
    checks.clear()
    at = page(PAGE, exercise="3", n="5", h="4", present="1", step="2")  # a slide: the upload
    at.text_area[0].input(pasted).run()
    assert not at.get("vega_lite_chart") and not at.success and not at.metric
    assert not checks, "the upload is read on its step, checked on the next two"
    assert "| `W_O` |" not in texts(at)  # step 1's shapes table
    at.query_params["step"] = "4"  # the step bar turns the slide; the upload's widgets stay
    at.run()
    assert Translator("en")("homework.accepted") in [s.value for s in at.success]
    assert not at.get("vega_lite_chart") and len(checks) == 1
    assert at.slider(key="h").value == 4 and at.slider(key="n").value == 5  # step 1's controls
    assert at.query_params["h"] == "4" and at.query_params["exercise"] == "3"


PAGE_CONTROLS = {  # widget kind -> the keys of the page's own controls
    "selectbox": {"_choice_exercise"},
    "button_group": {"_choice_part"},
    "slider": {"n", "d_model", "d_k"},
    "number_input": {"seed"},
    "file_uploader": {hv.UPLOAD_KEY},
    "text_area": {hv.PASTE_KEY},
}


def _control_keys(block, kind: str) -> set[str]:
    return {w.key for w in getattr(block, kind)} & PAGE_CONTROLS[kind]


@pytest.mark.parametrize("present", ["0", "1"])
def test_students_have_every_control_in_the_sidebar_a_slide_in_its_steps(page, present):
    """A student has the settings and the upload in the sidebar, on screen beside whatever
    the page shows; on a slide they stay in the main area (the settings in their expander,
    the upload in its step)."""
    at = page(PAGE, present=present, step="1" if present == "1" else None)
    students = present == "0"
    for kind, keys in PAGE_CONTROLS.items():
        if kind == "selectbox" and not students:
            keys = set()  # a slide picks the exercise on a segmented control
        assert _control_keys(at.sidebar, kind) == (keys if students else set()), kind
        assert _control_keys(at.main, kind) == (set() if students else keys), kind
    if not students:
        assert at.button_group(key="_choice_exercise").value == "1"


def _order(at: AppTest, *probes) -> list[int]:
    """Where in the main area's visible elements the first element matching each probe is."""
    shown = visible(at.main)
    return [next(i for i, e in enumerate(shown) if probe(e)) for probe in probes]


def test_a_students_result_comes_first_with_the_exercise_below_it(page):
    """Before an upload the exercise comes first; once something is uploaded, its verdict
    and diagnosis are at the top, beside the upload in the sidebar, the exercise below."""
    _, inputs, _ = lesson()
    wrong, _ = hw.mistake("attention", "no_scaling").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], None
    )
    t = Translator("en")
    table = lambda e: "| `W_Q` |" in str(getattr(e, "value", ""))  # noqa: E731
    at = page(PAGE)
    info = lambda e: getattr(e, "value", None) == waiting(t)  # noqa: E731
    first_table, first_wait = _order(at, table, info)
    assert first_table < first_wait
    at = upload(at, "mine.npz", npz(output=wrong))
    verdict = lambda e: type(e).__name__ == "Error"  # noqa: E731
    mistake = lambda e: t("homework.mistake.no_scaling.title") in str(getattr(e, "value", ""))  # noqa: E731
    first_verdict, first_mistake, then_table = _order(at, verdict, mistake, table)
    assert first_verdict < first_mistake < then_table
    assert t("homework.read_named", name="output", shape="(6, 4)", dtype="float64") in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_is_refused_saying_the_page_reads_the_arrays_and_how_to_save_them(page, lang):
    """The uploader takes every file type (its own filter would answer a .py file with an
    English tooltip): the page says, in its language, that it reads arrays, never code."""
    t = Translator(lang)
    at = upload(page(PAGE, lang=lang, part="weights"), "solve.py", b"import numpy as np\n")
    assert not at.exception
    shown = errors(at)
    assert shown == t("homework.upload.code", ext=plain(".py", 60), part="weights")  # markdown
    assert 'np.save("weights.npy", weights)' in shown and "np.savez(" in shown
    at.file_uploader[0].set_value(None)
    at.text_area[0].input("def attention(X):\n    return X\n").run()
    assert errors(at) == t("homework.upload.code_text", part="weights")
    assert waiting(t) in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_uploader_takes_every_type_and_states_its_limits_in_the_page_language(page, lang):
    t = Translator(lang)
    at = page(PAGE, lang=lang)
    widget = at.file_uploader[0].proto
    assert list(widget.type) == [], "no type filter in the browser: the page judges the type"
    assert widget.max_upload_size_mb == hv.BROWSER_MB
    limits = t("homework.upload_limits", limit_kb=MAX_BYTES // 1000)
    assert limits in [c.value for c in at.sidebar.caption]
    css = "\n".join(str(h.proto.body) for h in at.get("html"))
    for key in ("upload_button", "upload_drop"):  # drawn over Streamlit's English ones
        assert t(f"homework.{key}") in css
    assert t("homework.upload_refused", mb=hv.BROWSER_MB) in css
    assert 'stFileUploaderDropzoneInstructions"] { display: none; }' in css


# ------------------------------------------------------------------------------ downloads


def test_downloads_hold_the_exact_inputs(tmp_path):
    cfg, inputs, _ = lesson(3)
    arrays = hv.download_arrays(cfg, inputs)
    with np.load(io.BytesIO(npz_bytes(arrays)), allow_pickle=False) as data:
        assert set(data.files) == {"X", "W_Q", "W_K", "W_V", "W_O", "h"}
        np.testing.assert_array_equal(data["W_O"], inputs["W_O"])
        assert int(data["h"]) == cfg.h
    with zipfile.ZipFile(io.BytesIO(hv.csv_zip(inputs))) as archive:
        x = np.loadtxt(io.StringIO(archive.read("X.csv").decode()), delimiter=",")
    np.testing.assert_array_equal(x, inputs["X"])
    loaded = json.loads(hv.json_text(cfg, inputs))
    assert loaded["h"] == cfg.h and np.array_equal(loaded["W_Q"], inputs["W_Q"])
    namespace = {"np": np}
    exec(hv.numpy_literal(inputs), namespace)  # what a student pastes into a notebook
    np.testing.assert_array_equal(namespace["W_V"], inputs["W_V"])


def test_mask_downloads_as_booleans_and_zero_one_csv():
    cfg, inputs, _ = lesson(2)
    namespace = {"np": np}
    exec(hv.numpy_literal(inputs), namespace)
    assert namespace["mask"].dtype == bool
    np.testing.assert_array_equal(namespace["mask"], inputs["mask"])
    with zipfile.ZipFile(io.BytesIO(hv.csv_zip(inputs))) as archive:
        assert archive.read("mask.csv").decode().splitlines()[0] == "1,0,0,0,0,0"
    assert cfg.exercise == 2


@pytest.mark.parametrize("exercise", [1, 2, 3, 4])
def test_starter_script_runs_and_writes_the_file_to_upload(tmp_path, exercise):
    cfg, inputs, answer = lesson(exercise)
    (tmp_path / f"{hv.stem(cfg)}.npz").write_bytes(npz_bytes(hv.download_arrays(cfg, inputs)))
    script = hv.starter(Translator("zh"), cfg)
    assert "NotImplementedError" in script and "allow_pickle=False" in script
    reference = "    return __import__('core.homework').homework.reference_"  # not in core's face
    body = {
        1: reference + "attention(X, W_Q, W_K, W_V, mask)",
        2: reference + "attention(X, W_Q, W_K, W_V, mask)",
        3: reference + "multihead(X, W_Q, W_K, W_V, W_O, h)",
        4: "    return __import__('core').softmax(logits)",
    }[exercise]
    filled = re.sub(r"    raise NotImplementedError\(.*\)", body, script)
    (tmp_path / "solve.py").write_text(filled, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "solve.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(hv.__file__).rsplit("/ui/", 1)[0]},
    )
    assert run.returncode == 0, run.stderr
    data = (tmp_path / hv.ANSWER_FILE).read_bytes()
    for part in answer:
        parsed = parse_upload(hv.ANSWER_FILE, data, hv.NAMES[part])
        assert hv.check(cfg, part, parsed).diagnosis == "correct"


def test_formulas_use_only_known_tex_commands():
    """A command glued to the next letter (``\\qquadM``) renders as a red KaTeX error."""
    layout = {"mathrm", "left", "right", "frac", "sqrt", "top", "qquad", "quad"}
    known = layout | {"begin", "end", "cases"} | {"le", "infty", "dots", "max", "sum"}
    for formula in hv.FORMULAS.values():
        used = set(re.findall(r"\\([A-Za-z]+)", formula))
        assert used <= known, used - known
