"""ui.uploads: every accepted format parses, every bad upload gets its own message key."""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

from ui.i18n import LANGUAGES, Translator
from ui.uploads import (
    MAX_BYTES,
    MAX_NUMBERS,
    UploadError,
    check_shape,
    drop_batch_axes,
    nonfinite,
    parse_text,
    parse_upload,
)

ARRAY = np.random.default_rng(7).normal(size=(6, 4))


def npy(arr: np.ndarray, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def error_of(fn, *args) -> UploadError:
    with pytest.raises(UploadError) as info:
        fn(*args)
    return info.value


# ------------------------------------------------------------------------------ accepted


def test_npy_round_trips_and_keeps_float32():
    parsed = parse_upload("out.npy", npy(ARRAY))
    np.testing.assert_array_equal(parsed.array, ARRAY)
    assert parsed.source == "npy" and parsed.resolution == 0.0
    assert parse_upload("out.npy", npy(ARRAY.astype(np.float32))).array.dtype == np.float32


def test_npz_by_name_or_the_only_array():
    both = npz(output=ARRAY, weights=ARRAY[:, :2])
    parsed = parse_upload("my_answer.npz", both, ("weights",))
    assert parsed.name == "weights"
    np.testing.assert_array_equal(parsed.array, ARRAY[:, :2])
    assert parse_upload("a.npz", npz(anything=ARRAY)).name == "anything"


def test_npz_with_several_arrays_and_no_wanted_name_lists_them():
    err = error_of(parse_upload, "a.npz", npz(a=ARRAY, b=ARRAY), ("output",))
    assert err.key == "npz_many" and err.params["names"] == "a, b"


def test_csv_with_every_separator_and_full_width_commas():
    rows = ARRAY.round(6)
    plain = "\n".join(",".join(f"{v:.6f}" for v in r) for r in rows)
    for text in (plain, *(plain.replace(",", sep) for sep in ("\t", " ", "，", ";"))):
        parsed = parse_upload("out.csv", text.encode())
        np.testing.assert_allclose(parsed.array, rows)
        assert parsed.resolution == pytest.approx(5e-7)


def test_savetxt_output_and_a_utf8_bom():
    buf = io.BytesIO()
    np.savetxt(buf, ARRAY, delimiter=",")
    parsed = parse_upload("out.csv", b"\xef\xbb\xbf" + buf.getvalue())
    np.testing.assert_array_equal(parsed.array, ARRAY)


def test_json_lists_and_objects():
    parsed = parse_upload("out.json", json.dumps(ARRAY.tolist()).encode())
    np.testing.assert_array_equal(parsed.array, ARRAY)
    named = parse_upload("out.json", json.dumps({"output": ARRAY.tolist()}).encode(), ("output",))
    assert named.name == "output"


def test_numpy_printouts_repr_and_str():
    for text in (repr(ARRAY), str(ARRAY), f"x = np.{ARRAY!r}"):
        parsed = parse_text(text)
        np.testing.assert_allclose(parsed.array, ARRAY, atol=1e-8)
        assert parsed.resolution <= 5e-9


def test_numpy_repr_with_exact_ones_and_zeros():
    arr = np.array([[1.0, 0.0], [0.43880227, 0.56119773]])
    parsed = parse_text(repr(arr))
    np.testing.assert_allclose(parsed.array, arr)
    assert parsed.resolution == pytest.approx(5e-9)


def test_pytorch_printouts():
    text = "tensor([[0.0969, 0.1223],\n        [0.1876, 0.1504]], dtype=torch.float64)"
    parsed = parse_text(text)
    np.testing.assert_allclose(parsed.array, [[0.0969, 0.1223], [0.1876, 0.1504]])
    assert parsed.array.dtype == np.float64 and parsed.resolution == pytest.approx(5e-5)
    default = parse_text("tensor([[0.0969, 0.1223]], grad_fn=<SoftmaxBackward0>)")
    assert default.array.dtype == np.float32  # PyTorch prints no dtype for float32


def test_three_dimensional_printout_for_head_weights():
    heads = np.random.default_rng(1).random((2, 3, 3))
    np.testing.assert_allclose(parse_text(repr(heads)).array, heads, atol=1e-8)


# ---------------------------------------------------------------------- refused, by key


@pytest.mark.parametrize(
    ("name", "data", "key"),
    [
        ("out.npy", b"", "empty"),
        ("out.csv", b"   \n  ", "empty"),
        ("out.pkl", pickle.dumps(ARRAY), "pickle"),
        ("out.npy", pickle.dumps(ARRAY), "pickle"),
        ("weights.pt", b"PK\x03\x04 torch zip", "pickle"),
        ("out.npy", npy(np.array([1, "a"], dtype=object), allow_pickle=True), "object_dtype"),
        ("out.npy", npy(np.array(["a", "b"])), "not_numeric"),
        ("out.npy", npy(np.ones(3) + 1j), "not_numeric"),
        ("out.npy", npy(ARRAY)[:-40], "npy_bad"),
        ("out.npy", b"\x93NUMPY\x09\x00garbage", "npy_bad"),
        ("out.npy", b"not numpy at all", "npy_bad"),
        ("out.npz", b"PK\x03\x04 broken zip", "npz_bad"),
        ("out.xlsx", b"1,2,3", "unsupported"),
        ("out.csv", b"\xff\xfe\x00\x01", "not_text"),
        ("out.csv", b"0.1234,0.5678\n0.1234,oops", "bad_number"),
        ("out.csv", b"0.1234,0.5678\n0.1234", "ragged_line"),
        ("out.txt", b"[[0.1234, 0.5678], [0.1234]]", "ragged_at"),
        ("out.txt", b"[[0.1234, 0.5678]", "brackets"),
        ("out.txt", b"[[[[0.1234]]]]", "too_deep"),
        ("out.txt", b"[[0.1234, ..., 0.5678]]", "ellipsis"),
        ("out.csv", b"0.1,0.2\n0.3,0.4", "low_precision"),
        ("out.json", b"[[0.1234, 0.5", "json_bad"),
        ("out.json", b'[[0.1234, "x"]]', "json_type"),
        ("out.json", b'{"a": [[0.1234]], "b": [[0.5678]]}', "npz_many"),
        ("out.json", b"[" * 5000 + b"]" * 5000, "too_deep"),
    ],
)
def test_bad_uploads_get_their_own_message(name, data, key):
    assert error_of(parse_upload, name, data).key == key


@pytest.mark.parametrize(
    ("name", "data", "key", "params"),
    [
        ("solve.py", b"import numpy as np\n", "code", {"ext": ".py"}),
        ("SOLVE.PY", b"[[0.1234]]", "code", {"ext": ".py"}),  # by its type, whatever it holds
        ("homework.ipynb", b'{"cells": []}', "code", {"ext": ".ipynb"}),
        ("out.txt", b"from numpy import save\nsave('out.npy', x)", "code_text", {}),
        ("out.csv", b"# my answer\ndef attention(X):\n    pass", "code_text", {}),
    ],
)
def test_code_instead_of_its_result_gets_its_own_message(name, data, key, params):
    err = error_of(parse_upload, name, data)
    assert (err.key, err.params) == (key, params)


@pytest.mark.parametrize(
    "text",
    ["import numpy as np\nout = attention(X)", "  def attention(X, W_Q):\n    ...",
     "class Attention:\n    pass"],
)  # fmt: skip
def test_pasted_code_is_told_apart_from_pasted_numbers(text):
    assert error_of(parse_text, text).key == "code_text"


def test_printed_arrays_that_name_their_variable_are_not_code():
    assert parse_text("out = np.array([[0.1234, 0.5678]])").array.shape == (1, 2)
    assert parse_text("tensor([[0.1234, 0.5678]], dtype=torch.float64)").array.shape == (1, 2)


def test_npz_with_pickled_member_or_without_arrays():
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(ARRAY))
    assert error_of(parse_upload, "model.npz", z.getvalue()).key == "pickle"
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert error_of(parse_upload, "x.npz", z.getvalue()).key == "npz_empty"


def test_oversized_upload_is_refused_before_parsing():
    err = error_of(parse_upload, "out.csv", b"0" * (MAX_BYTES + 1))
    assert err.key == "too_big" and err.params["limit_kb"] == MAX_BYTES // 1000
    assert error_of(parse_text, "0," * (MAX_BYTES // 2 + 1)).key == "too_big"


def test_too_many_numbers_in_text_json_and_npy():
    many = ",".join(["0.1234"] * (MAX_NUMBERS + 1))
    assert error_of(parse_upload, "out.csv", many.encode()).key == "too_many"
    assert error_of(parse_upload, "out.json", f"[{many}]".encode()).key == "too_many"
    err = error_of(parse_upload, "out.npy", npy(np.zeros(MAX_NUMBERS + 1)))
    assert err.key == "too_many" and err.params["count"] == MAX_NUMBERS + 1


def test_npz_bomb_declaring_a_huge_shape_is_refused_without_allocating():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (200_000, 200_000)}
    )  # 320 GB if it were allocated
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("output.npy", header.getvalue() + b"\0" * 1000)
    err = error_of(parse_upload, "bomb.npz", z.getvalue())
    assert err.key == "member_too_big"
    assert err.params["shape"] == "(200000, 200000)" and err.params["name"] == "output"


def test_wrong_shape_and_transposed_shape():
    err = error_of(check_shape, ARRAY.T, (6, 4))
    assert err.key == "shape_transposed"
    assert err.params == {"expected": "(6, 4)", "found": "(4, 6)"}
    err = error_of(check_shape, np.zeros((6, 6)), (6, 4))
    assert err.key == "shape" and err.params["found"] == "(6, 6)"
    assert error_of(check_shape, np.zeros(24), (6, 4)).params["found"] == "(24,)"
    check_shape(ARRAY, (6, 4))  # no error


@pytest.mark.parametrize("lead", [(1,), (1, 1)])
def test_a_batch_of_one_is_dropped_with_a_notice(lead):
    inner, notice = drop_batch_axes(ARRAY.reshape(*lead, 6, 4), (6, 4))
    np.testing.assert_array_equal(inner, ARRAY)
    assert notice.key == "batch_axis"
    assert notice.params == {"found": "(" + "1, " * len(lead) + "6, 4)", "expected": "(6, 4)"}


def test_only_leading_axes_of_size_one_beyond_the_answer_are_dropped():
    for arr, expected in [
        (ARRAY, (6, 4)),  # nothing extra
        (np.zeros((2, 6, 4)), (6, 4)),  # a real batch of two: the shape check says so
        (np.zeros((1, 6, 4)), (1, 6, 4)),  # one head's weights: the axis belongs to the answer
        (np.zeros((6, 4, 1)), (6, 4)),  # a trailing axis is not a batch
    ]:
        same, notice = drop_batch_axes(arr, expected)
        assert same is arr and notice is None, arr.shape
    transposed, notice = drop_batch_axes(ARRAY.T[None], (6, 4))
    assert transposed.shape == (4, 6) and notice.params["expected"] == "(4, 6)"
    assert error_of(check_shape, transposed, (6, 4)).key == "shape_transposed"


def test_nan_and_inf_are_reported_with_their_position():
    arr = ARRAY.copy()
    arr[2, 3], arr[4, 0], arr[5, 1] = np.nan, np.inf, -np.inf
    notice = nonfinite(arr)
    assert notice.key == "nonfinite" and notice.params["count"] == 3
    assert notice.params["cells"] == "(2, 3) NaN, (4, 0) +∞, (5, 1) −∞"
    assert nonfinite(ARRAY) is None
    parsed = parse_text("[[0.1234, nan], [inf, -inf]]")
    assert nonfinite(parsed.array).params["count"] == 3


def test_many_nonfinite_cells_are_shortened():
    notice = nonfinite(np.full((4, 4), np.nan), shown=2)
    assert notice.params["count"] == 16 and notice.params["cells"].endswith(", …")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_key_is_translated_with_its_parameters(lang):
    t = Translator(lang)
    cases = [
        error_of(parse_upload, "out.csv", b"0" * (MAX_BYTES + 1)),
        error_of(parse_upload, "out.csv", b"0.1234,0.5678\n0.1234,oops"),
        error_of(parse_upload, "out.npy", npy(np.zeros(MAX_NUMBERS + 1))),
        error_of(check_shape, ARRAY.T, (6, 4)),
        nonfinite(np.array([[np.nan]])),
        error_of(parse_upload, "solve.py", b"import numpy"),
        error_of(parse_text, "import numpy"),
        drop_batch_axes(ARRAY[None], (6, 4))[1],
    ]
    extra = {"part": "weights"}  # the page names the checked array where it says how to save it
    texts = [
        t(f"homework.upload.{e.key}", **e.params, **(extra if e.key.startswith("code") else {}))
        for e in cases
    ]
    assert "oops" in texts[1] and "(4, 6)" in texts[3] and "NaN" in texts[4]
    assert ".py" in texts[5] and 'np.save("weights.npy", weights)' in texts[5]
    assert "print(weights)" in texts[6]
    assert "(1, 6, 4)" in texts[7] and "(6, 4)" in texts[7]
