"""Reading a student's uploaded or pasted result into a float array, safely.

Accepted: ``.npy``; ``.npz`` (the array with the expected name, or the only one); ``.csv``,
``.tsv`` and ``.txt`` (comma, tab, space or semicolon separated, Chinese full-width commas
too); ``.json`` (nested lists, or an object of them); pasted text, including NumPy's and
PyTorch's printed arrays (``array([[…]])``, ``tensor([[…]])``, ``[[0.1 0.2] [0.3 0.4]]``).
The page's uploader lets every file through (its own type filter speaks only English), so
the type is judged here: code (a ``.py`` file, or text that reads like Python) gets a message
of its own, saying that the page reads the arrays the code produced, never the code.

Safety, before anything is parsed: at most :data:`MAX_BYTES` bytes and
:data:`MAX_NUMBERS` numbers. NumPy files are never unpickled (``allow_pickle=False``); the
``.npy`` header of every file (also inside an ``.npz``) is read first, so an array that
declares a huge shape is refused without allocating it, and an object array is refused.
Nothing is written anywhere: the bytes are read in memory and dropped.

Problems raise :class:`UploadError`, which carries a catalog key (``homework.upload.<key>``)
and its parameters, so the page shows a translated message. No Streamlit here.
"""

import io
import json
import math
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_BYTES = 1_000_000
MAX_NUMBERS = 10_000
MAX_MEMBERS = 64  # arrays in one .npz
MAX_NDIM = 3
MIN_DECIMALS = 4  # printed numbers need at least this many digits to be judged
MAX_HEADER = 10_000  # bytes of a .npy header
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"
PICKLE_EXTENSIONS = (".pkl", ".pickle", ".pt", ".pth", ".bin", ".ckpt")
TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
EXTENSIONS = (".npy", ".npz", ".json", *TEXT_EXTENSIONS)
# Code instead of its result: the page never runs it, and says how to save the arrays instead.
CODE_EXTENSIONS = (".py", ".pyw", ".ipynb")
_CODE = re.compile(r"^\s*(?:import\s+\w|from\s+[\w.]+\s+import\b|def\s+\w+\s*\(|class\s+\w+)", re.M)

# Full-width and typographic characters a Chinese keyboard or a document puts in numbers.
_NORMALISE = str.maketrans(dict(zip("，、；［］（）－−　＋．", ",,;[]()-- +.", strict=True)))
_NUMBER = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<int>\d+)\.?(?P<frac>\d*)|\.(?P<frac2>\d+))(?:[eE](?P<exp>[+-]?\d+))?"
    r"|[+-]?(?:nan|inf|infinity)",
    re.IGNORECASE,
)
_COUNT = re.compile(r"(?<![\w.])[+-]?(?:\d|\.\d|nan\b|inf)", re.IGNORECASE)
_TOKENS = re.compile(r"\[|\]|[^\s,;\[\]]+")
_PREFIX = re.compile(
    r"^\s*(?:[A-Za-z_]\w*\s*=\s*)?(?:(?:np|numpy|torch)\.)?(?:array|tensor)?\(?\s*$"
)
_SUFFIX = re.compile(r"^[\s\w.,=()<>'\":-]*$")


class UploadError(ValueError):
    """An upload that cannot be used: ``key`` names the message, ``params`` fill it in."""

    def __init__(self, key: str, **params: object) -> None:
        super().__init__(f"{key}: {params}")
        self.key = key
        self.params = params


@dataclass(frozen=True)
class Parsed:
    """A parsed upload."""

    array: np.ndarray  # float64, or float32 for a float32/float16 file or tensor printout
    source: str  # "npy", "npz", "json" or "text"
    name: str | None  # the array's name inside an .npz or a JSON object
    resolution: float  # half a unit in the last printed digit; 0.0 for binary files


# ------------------------------------------------------------------------- entry points


def parse_upload(filename: str, data: bytes, prefer: Sequence[str] = ()) -> Parsed:
    """An uploaded file's array. ``prefer``: array names to pick in an .npz or JSON object."""
    if len(data) > MAX_BYTES:
        raise UploadError(
            "too_big", size_kb=math.ceil(len(data) / 1000), limit_kb=MAX_BYTES // 1000
        )
    if not data.strip():
        raise UploadError("empty")
    ext = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if data.startswith(b"\x80") or ext in PICKLE_EXTENSIONS:
        raise UploadError("pickle")
    if ext in CODE_EXTENSIONS:
        raise UploadError("code", ext=ext)
    if data.startswith(NPY_MAGIC):
        return Parsed(_read_npy(io.BytesIO(data), None), "npy", None, 0.0)
    if data.startswith(ZIP_MAGIC):
        name, array = _read_npz(data, prefer)
        return Parsed(array, "npz", name, 0.0)
    if ext in (".npy", ".npz"):
        raise UploadError("npy_bad")
    if ext not in (".json", *TEXT_EXTENSIONS):
        raise UploadError("unsupported", ext=ext or filename, allowed=", ".join(EXTENSIONS))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UploadError("not_text") from None
    return _parse_json(text, prefer) if ext == ".json" else parse_text(text, prefer)


def parse_text(text: str, prefer: Sequence[str] = ()) -> Parsed:
    """Pasted or uploaded text: a JSON object, a NumPy/PyTorch printout or rows of numbers."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise UploadError(
            "too_big", size_kb=math.ceil(len(text.encode()) / 1000), limit_kb=MAX_BYTES // 1000
        )
    text = text.lstrip("\ufeff").translate(_NORMALISE).strip()
    if not text:
        raise UploadError("empty")
    if _CODE.search(text):
        raise UploadError("code_text")
    _check_count(len(_COUNT.findall(text)))
    if text.startswith("{"):
        return _parse_json(text, prefer)
    if "..." in text or "…" in text:
        raise UploadError("ellipsis")
    if "[" in text:
        rows, numbers, float32 = _bracketed(text)
    else:
        (rows, numbers), float32 = _rows(text), False
    array = np.array(rows, dtype=np.float32 if float32 else np.float64)
    return Parsed(array, "text", None, _resolution(numbers))


def check_shape(array: np.ndarray, expected: tuple[int, ...]) -> None:
    """Raise ``shape`` (or ``shape_transposed`` for a transposed matrix) if the shapes differ."""
    found = tuple(array.shape)
    if found == tuple(expected):
        return
    params = {"expected": shape_text(expected), "found": shape_text(found)}
    if found[::-1] == tuple(expected):
        raise UploadError("shape_transposed", **params)
    raise UploadError("shape", **params)


def drop_batch_axes(
    array: np.ndarray, expected: tuple[int, ...]
) -> tuple[np.ndarray, UploadError | None]:
    """``array`` without the leading axes of size 1 that ``expected`` does not have (a batch
    of one: ``x[None]``, ``unsqueeze(0)``, a Keras model's output), and a notice saying so;
    the array unchanged and None when it has no such axes."""
    extra = array.ndim - len(expected)
    if extra <= 0 or array.shape[:extra] != (1,) * extra:
        return array, None
    inner = array.reshape(array.shape[extra:])
    found, kept = shape_text(array.shape), shape_text(inner.shape)
    return inner, UploadError("batch_axis", found=found, expected=kept)


def nonfinite(array: np.ndarray, shown: int = 5) -> UploadError | None:
    """A notice naming the first ``shown`` NaN/±∞ cells (row, column, …), or None."""
    where = np.argwhere(~np.isfinite(array))
    if not len(where):
        return None
    cells = []
    for idx in where[:shown]:
        value = float(array[tuple(idx)])
        kind = "NaN" if math.isnan(value) else ("+∞" if value > 0 else "−∞")
        cells.append(f"{shape_text(tuple(int(i) for i in idx))} {kind}")
    listed = ", ".join(cells) + (", …" if len(where) > shown else "")
    return UploadError("nonfinite", count=len(where), cells=listed)


def shape_text(shape: tuple[int, ...]) -> str:
    """``(6, 4)``; ``(6,)`` for one axis."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


# ------------------------------------------------------------------------ NumPy files


def _check_count(count: int) -> None:
    if count > MAX_NUMBERS:
        raise UploadError("too_many", count=count, limit=MAX_NUMBERS)


def _header(fp: io.BufferedIOBase) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype from a .npy header, without reading the data."""
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fp, max_header_size=MAX_HEADER)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fp, max_header_size=MAX_HEADER)
        else:
            raise UploadError("npy_bad")
    except UploadError:
        raise
    except (ValueError, OSError, EOFError, SyntaxError):
        raise UploadError("npy_bad") from None
    return tuple(int(s) for s in shape), dtype


def _read_npy(fp: io.BufferedIOBase, name: str | None) -> np.ndarray:
    """One .npy stream: header checks first, then the data (never unpickled)."""
    start = fp.tell()
    shape, dtype = _header(fp)
    if dtype.hasobject:
        raise UploadError("object_dtype")
    if dtype.kind not in "fiub":
        raise UploadError("not_numeric", dtype=str(dtype))
    count = math.prod(shape)
    if count > MAX_NUMBERS:
        if name is not None:
            raise UploadError(
                "member_too_big", name=name, shape=shape_text(shape), count=count, limit=MAX_NUMBERS
            )
        raise UploadError("too_many", count=count, limit=MAX_NUMBERS)
    fp.seek(start)
    try:
        array = np.lib.format.read_array(fp, allow_pickle=False, max_header_size=MAX_HEADER)
    except (ValueError, OSError, EOFError):
        raise UploadError("npy_bad") from None
    keep32 = dtype.kind == "f" and dtype.itemsize <= 4
    return np.asarray(array, dtype=np.float32 if keep32 else np.float64)


def _read_npz(data: bytes, prefer: Sequence[str]) -> tuple[str, np.ndarray]:
    """The chosen array of an .npz: by a preferred name, else the only array."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise UploadError("npz_bad") from None
    if any(i.filename.endswith((".pkl", ".pickle")) for i in infos):
        raise UploadError("pickle")
    arrays = [i for i in infos if i.filename.endswith(".npy")]
    if not arrays:
        raise UploadError("npz_empty")
    if len(infos) > MAX_MEMBERS:
        raise UploadError("npz_bad")
    names = {i.filename[: -len(".npy")]: i for i in arrays}
    lower = {k.lower(): k for k in names}
    picked = next((lower[p.lower()] for p in prefer if p.lower() in lower), None)
    if picked is None and len(names) == 1:
        picked = next(iter(names))
    if picked is None:
        listed = ", ".join(sorted(names)[:12])
        raise UploadError("npz_many", names=listed, wanted=" / ".join(prefer))
    try:
        with archive.open(names[picked]) as member:
            buffer = io.BytesIO(member.read(MAX_NUMBERS * 8 + MAX_HEADER + 1))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise UploadError("npz_bad") from None
    return picked, _read_npy(buffer, picked)


# ------------------------------------------------------------------------------ text


def _parse_number(token: str, line: int) -> float:
    if not _NUMBER.fullmatch(token):
        raise UploadError("bad_number", token=token[:24], line=line)
    return float(token)


def _bracketed(text: str) -> tuple[list, list[str], bool]:
    """A printed array: nested lists of numbers, the number tokens, and whether the
    printout says float32 (``dtype=float32``, or a PyTorch tensor without float64)."""
    first, last = text.index("["), text.rfind("]")
    prefix, suffix = text[:first], text[last + 1 :]
    if last < first or not _PREFIX.match(prefix) or not _SUFFIX.match(suffix) or "[" in suffix:
        raise UploadError("brackets")
    float32 = (
        "float32" in suffix
        or "float16" in suffix
        or ("tensor" in prefix and "float64" not in suffix)
    )
    stack: list[list] = [[]]
    numbers: list[str] = []
    for match in _TOKENS.finditer(text, first, last + 1):
        token = match.group()
        if token == "[":
            if len(stack) > MAX_NDIM:
                raise UploadError("too_deep", limit=MAX_NDIM)
            stack.append([])
        elif token == "]":
            if len(stack) == 1:
                raise UploadError("brackets")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(_parse_number(token, text.count("\n", 0, match.start()) + 1))
            numbers.append(token)
    if len(stack) != 1 or len(stack[0]) != 1:
        raise UploadError("brackets")
    nested = stack[0][0]
    _check_rectangular(nested, "")
    return nested, numbers, float32


def _check_rectangular(node: list | float, path: str) -> int:
    """Depth of a nested list; raises ``ragged`` (with where) if rows differ in length."""
    if not isinstance(node, list):
        return 0
    if not node:
        raise UploadError("empty")
    depths = {_check_rectangular(child, f"{path}[{i}]") for i, child in enumerate(node)}
    lengths = {len(c) for c in node if isinstance(c, list)}
    if len(depths) > 1 or len(lengths) > 1:
        first = len(node[0]) if isinstance(node[0], list) else 1
        bad = next(
            i
            for i, c in enumerate(node)
            if (len(c) if isinstance(c, list) else 1) != first
            or isinstance(c, list) != isinstance(node[0], list)
        )
        found = len(node[bad]) if isinstance(node[bad], list) else 1
        raise UploadError("ragged_at", where=f"{path}[{bad}]", expected=first, found=found)
    return depths.pop() + 1


def _rows(text: str) -> tuple[list, list[str]]:
    """Rows of numbers, one row per line (comment lines starting with # are skipped), and
    the number tokens as written."""
    rows, tokens, width = [], [], None
    for line_no, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cells = [c for c in re.split(r"[\s,;]+", line) if c]
        row = [_parse_number(c, line_no) for c in cells]
        if width is not None and len(row) != width:
            raise UploadError("ragged_line", line=line_no, expected=width, found=len(row))
        width = len(row)
        rows.append(row)
        tokens.extend(cells)
    if not rows:
        raise UploadError("empty")
    return rows, tokens


def _resolution(numbers: list[str]) -> float:
    """Half a unit in the last digit the numbers were printed with: NumPy drops trailing
    zeros (``1.``, ``0.5``), so the finest number shows the printer's precision. Refuses
    (``low_precision``) numbers printed with fewer than :data:`MIN_DECIMALS` digits."""
    fixed, sci = [], []
    for token in numbers:
        m = _NUMBER.fullmatch(token)
        if m is None or (m.group("int") is None and m.group("frac2") is None):
            continue  # nan / inf
        decimals = len(m.group("frac") or m.group("frac2") or "")
        (sci if m.group("exp") else fixed).append((decimals, int(m.group("exp") or 0)))
    found = []
    if fixed:
        found.append(0.5 * 10.0 ** -max(d for d, _ in fixed))
    if sci:
        digits = max(d for d, _ in sci)
        found.append(max(0.5 * 10.0 ** (e - digits) for _, e in sci))
    if not found:
        return 0.0
    resolution = max(found)
    if resolution > 0.5 * 10.0**-MIN_DECIMALS:
        decimals = max(0, -round(math.log10(2 * resolution)))
        raise UploadError("low_precision", decimals=decimals, need=MIN_DECIMALS)
    return resolution


# ------------------------------------------------------------------------------ JSON


def _reject_constant(name: str) -> float:
    return float(name)  # NaN, Infinity, -Infinity: reported later with their position


def _parse_json(text: str, prefer: Sequence[str]) -> Parsed:
    """Nested lists of numbers, or an object mapping names to them."""
    _check_count(len(_COUNT.findall(text)))
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise UploadError("json_bad", line=err.lineno, column=err.colno) from None
    except RecursionError:
        raise UploadError("too_deep", limit=MAX_NDIM) from None
    name = None
    if isinstance(value, dict):
        lower = {str(k).lower(): k for k in value}
        name = next((lower[p.lower()] for p in prefer if p.lower() in lower), None)
        if name is None and len(value) == 1:
            name = next(iter(value))
        if name is None:
            listed = ", ".join(sorted(map(str, value))[:12])
            raise UploadError("npz_many", names=listed, wanted=" / ".join(prefer))
        value = value[name]
    if not isinstance(value, list):
        raise UploadError("json_type")
    _check_json_tree(value, 1)
    _check_rectangular(value, "")
    numbers = [repr(v) for v in _leaves(value)]
    return Parsed(np.array(value, dtype=np.float64), "json", name, _json_resolution(numbers))


def _check_json_tree(node: list, depth: int) -> None:
    if depth > MAX_NDIM:
        raise UploadError("too_deep", limit=MAX_NDIM)
    for child in node:
        if isinstance(child, list):
            _check_json_tree(child, depth + 1)
        elif isinstance(child, bool) or not isinstance(child, int | float):
            raise UploadError("json_type")


def _leaves(node: list) -> list:
    return [x for c in node for x in (_leaves(c) if isinstance(c, list) else [c])]


def _json_resolution(numbers: list[str]) -> float:
    """JSON from ``json.dumps`` holds full precision; rounded numbers are judged like text."""
    return _resolution([n for n in numbers if "." in n or "e" in n.lower()])
