"""Presentation helpers and steps of the homework page (pages/17_homework.py).

Every number comes from :mod:`core.homework`; uploads are read by :mod:`ui.uploads`. An
upload lives only in this session's widget state (Streamlit keeps it in memory): nothing is
written to disk, and nothing the student sent is rendered as HTML (names and tokens from an
upload go through :func:`ui.safe.plain`).
"""

import io
import json
import zipfile
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core.findings.homework import (
    NEAR_ZERO,
    Comparison,
    compare,
    sum_range,
    transposed_matches,
    weight_sums,
)
from core.homework import (
    MISTAKE_STEPS,
    STEPS,
    Homework,
    diagnose_homework,
    homework_answer,
    homework_inputs,
    tolerance,
)
from ui import charts
from ui.blocks import lazy_box
from ui.context import PageContext
from ui.exports import npz_bytes
from ui.i18n import Translator
from ui.params import Choice, Int, number, select, slider
from ui.safe import plain
from ui.sentence import more_box
from ui.steps import Controls, Got, View
from ui.uploads import (
    MAX_BYTES,
    Parsed,
    UploadError,
    check_shape,
    drop_batch_axes,
    nonfinite,
    parse_text,
    parse_upload,
    shape_text,
)

EXERCISE = Choice("exercise", "1", ("1", "2", "3", "4"))
PART = Choice("part", "output", ("output", "weights"))
N = Int("n", 6, 2, 16)
D_MODEL = Int("d_model", 8, 2, 32)
D_K = Int("d_k", 4, 1, 16)
HEADS = Int("h", 2, 1, 8)
SEED = Int("seed", 42, 0, 2**32 - 1)
VERDICT_CHART_HEIGHT = 470  # px in presenter mode, the notice beside the chart
# Students: the error chart's share of the width (its metrics beside it) and its height at
# most, so that with the verdict above it it ends within a 1280 x 720 screen.
STUDENT_SHARE, STUDENT_CHART_HEIGHT = 0.6, 300
WARNING_PX = 80  # px the NaN/∞ warning takes above the verdict in presenter mode
UPLOAD_KEY, PASTE_KEY = "hw_upload", "hw_paste"
FROM_UPLOAD = {"token", "names", "name", "ext", "dtype"}  # message parameters the upload wrote
NAMES = {  # array names looked for in an uploaded .npz / JSON object, per part
    "output": ("output", "out", "y"),
    "weights": ("weights", "attn", "attention", "alpha", "w"),
    "probs": ("probs", "p", "softmax", "weights"),
}


@dataclass(frozen=True)
class Checked:
    """One upload held against the exercise."""

    parsed: Parsed
    array: np.ndarray  # what is checked: the upload without leading axes of size 1 (batch)
    batch: UploadError | None  # the note that such axes were dropped
    part: str
    expected: np.ndarray
    tol: float
    diagnosis: str | None  # "correct", a mistake id, or None
    comparison: Comparison | None  # None when the shapes differ
    shape_error: UploadError | None
    transposed_right: bool  # wrong shape, but its transpose is the right answer
    notice: UploadError | None  # NaN/±∞ cells


# ---------------------------------------------------------------------------- controls


def controls(ctx: PageContext, got: Got) -> tuple[Homework, str]:
    """Exercise, sizes and which result is checked, all in the URL. For students the sizes
    fold away in the sidebar (their defaults are the lesson's, and the note says so); on a
    slide they sit in a row inside the settings expander, the note below them."""
    t = ctx.t
    widget = "segmented" if ctx.presenter else "select"  # a sidebar: one row, not three

    def name(e: str) -> str:
        return t(f"homework.ex{e}_short")

    exercise = int(select(ctx, EXERCISE, t("homework.exercise"), name, widget=widget))
    part = None if ctx.presenter else part_control(ctx, exercise)
    with more_box(ctx, t("homework.sizes")):
        count = 5 if exercise == 3 else 4 if exercise < 3 else 2
        cols = st.columns(count) if ctx.presenter else [st.container() for _ in range(count)]
        with cols[0]:
            n = slider(ctx, N, t("homework.n"))
        d_model, d_k, h = D_MODEL.default, D_K.default, HEADS.default
        if exercise < 4:
            with cols[1]:
                d_model = slider(ctx, D_MODEL, "d_model")
            with cols[2]:
                d_k = slider(ctx, D_K, t("homework.d_k"))
        if exercise == 3:
            with cols[3]:
                h = slider(ctx, HEADS, t("homework.h"))
        with cols[-1]:
            seed = number(ctx, SEED, t("homework.seed"))
        if not ctx.presenter:
            st.caption(t("homework.settings_note"))
    hw = Homework(exercise, int(n), int(d_model), int(d_k), int(h), int(seed))
    part = part or part_control(ctx, exercise)
    if ctx.presenter:
        st.caption(t("homework.settings_note"))
    return hw, part


def part_control(ctx: PageContext, exercise: int) -> str:
    """Which result the student checks: the output or the weights (the probabilities in 4)."""
    if exercise == 4:
        return "probs"
    t = ctx.t
    return select(ctx, PART, t("homework.part"), lambda p: t(f"homework.part_{p}"))


@st.cache_data(max_entries=64, show_spinner=False)
def exercise_data(hw: Homework) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The exercise's inputs and its right answers."""
    inputs = homework_inputs(hw)
    return inputs, homework_answer(hw, inputs)


def shapes_table(ctx: PageContext, hw: Homework, arrays: dict[str, np.ndarray]) -> str:
    """A markdown table: every input and result with its live shape and meaning."""
    t = ctx.t
    lines = [f"| | {t('homework.col_shape')} | {t('homework.col_meaning')} |", "|---|---|---|"]
    for name, arr in arrays.items():
        lines.append(f"| `{name}` | `{shape_text(arr.shape)}` | {t(f'homework.arr_{name}')} |")
    return "\n".join(lines)


FORMULAS = {
    1: r"Q=XW^Q,\;K=XW^K,\;V=XW^V,\qquad "
    r"\mathrm{out}=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
    2: r"\mathrm{out}=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V,\qquad "
    r"M_{ij}=\begin{cases}0 & j\le i\\-\infty & j>i\end{cases}",
    3: r"\mathrm{out}=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad"
    r"\mathrm{head}_i=\mathrm{softmax}\!\left(\frac{Q_iK_i^\top}{\sqrt{d_k}}\right)V_i",
    4: r"p_{ij}=\frac{e^{z_{ij}-\max_k z_{ik}}}{\sum_{l} e^{z_{il}-\max_k z_{ik}}}",
}


def inputs_chart(inputs: dict[str, np.ndarray]) -> dict:
    """The exercise's input matrices side by side, each titled with its shape, each on its
    own colour scale (values in the tooltips: the files hold them exactly)."""
    parts = []
    for name, arr in inputs.items():
        rows, cols = [str(i) for i in range(arr.shape[0])], [str(j) for j in range(arr.shape[1])]
        kind = "weights" if arr.dtype == bool else "values"
        cells = {"cell": 22, "annotate": False, "name": f"m_{name}", "live_domain": True}
        parts.append(charts.heatmap({name: arr.astype(float)}, rows, cols, kind, **cells))
    return charts.concat(parts)


# --------------------------------------------------------------------------- downloads


def download_arrays(hw: Homework, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the NPZ holds: the inputs, plus ``h`` for the multi-head exercise."""
    return {**inputs, **({"h": np.array(hw.h)} if hw.exercise == 3 else {})}


def stem(hw: Homework) -> str:
    return f"attention-lab_homework_ex{hw.exercise}"


def csv_zip(inputs: dict[str, np.ndarray]) -> bytes:
    """One CSV per matrix (full precision, the mask as 0/1), zipped."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, arr in inputs.items():
            text = io.StringIO()
            fmt = "%d" if arr.dtype == bool else "%.17g"
            np.savetxt(text, arr.astype(int) if arr.dtype == bool else arr, fmt=fmt, delimiter=",")
            archive.writestr(f"{name}.csv", text.getvalue())
    return buffer.getvalue()


def json_text(hw: Homework, inputs: dict[str, np.ndarray]) -> str:
    """Every array as nested lists (full precision), with the exercise's sizes."""
    sizes = {"exercise": hw.exercise, "n": hw.n, "seed": hw.seed}
    if hw.exercise < 4:
        sizes |= {"d_model": hw.d_model, "d_k": hw.d_k}
    if hw.exercise == 3:
        sizes["h"] = hw.h
    return json.dumps({**sizes, **{k: v.tolist() for k, v in inputs.items()}}, indent=1)


def numpy_literal(inputs: dict[str, np.ndarray]) -> str:
    """The inputs as Python source to paste into a notebook (full precision)."""
    lines = []
    for name, arr in inputs.items():
        if arr.dtype == bool:
            lines.append(f"{name} = np.array({arr.astype(int).tolist()!r}, dtype=bool)")
        else:
            lines.append(f"{name} = np.array({arr.tolist()!r})")
    return "\n".join(lines)


STARTERS = {
    1: (
        "attention(X, W_Q, W_K, W_V)",
        'X, W_Q, W_K, W_V = (data[k] for k in ("X", "W_Q", "W_K", "W_V"))',
        "def attention(X, W_Q, W_K, W_V, mask=None):",
        "output, weights = attention(X, W_Q, W_K, W_V)",
        "output=output, weights=weights",
    ),
    2: (
        "attention(X, W_Q, W_K, W_V, mask)",
        'X, W_Q, W_K, W_V, mask = (data[k] for k in ("X", "W_Q", "W_K", "W_V", "mask"))',
        "def attention(X, W_Q, W_K, W_V, mask=None):",
        "output, weights = attention(X, W_Q, W_K, W_V, mask)",
        "output=output, weights=weights",
    ),
    3: (
        "multi_head(X, W_Q, W_K, W_V, W_O, h)",
        "X, W_Q, W_K, W_V, W_O = (data[k] for k in "
        '("X", "W_Q", "W_K", "W_V", "W_O"))\nh = int(data["h"])',
        "def multi_head(X, W_Q, W_K, W_V, W_O, h):",
        "output, weights = multi_head(X, W_Q, W_K, W_V, W_O, h)",
        "output=output, weights=weights",
    ),
    4: (
        "stable_softmax(logits)",
        'logits = data["logits"]',
        "def stable_softmax(logits):",
        "probs = stable_softmax(logits)",
        "probs=probs",
    ),
}
ANSWER_FILE = "my_answer.npz"


def starter(t: Translator, hw: Homework) -> str:
    """A short script of our own: load the NPZ, call the student's function, save the file
    to upload."""
    call, load, signature, run, saved = STARTERS[hw.exercise]
    return "\n".join(
        [
            f'"""{t("homework.starter_title", ex=hw.exercise)}',
            "",
            t("homework.starter_how", file=ANSWER_FILE),
            '"""',
            "",
            "import numpy as np",
            "",
            f'data = np.load("{stem(hw)}.npz", allow_pickle=False)',
            load,
            "",
            "",
            signature,
            f'    """{t(f"homework.starter_todo{hw.exercise}")}"""',
            f'    raise NotImplementedError("{t("homework.starter_fill", call=call)}")',
            "",
            "",
            run,
            f'np.savez("{ANSWER_FILE}", {saved})',
            f'print("{t("homework.starter_done", file=ANSWER_FILE)}")',
            "",
        ]
    )


def downloads(ctx: PageContext, hw: Homework, inputs: dict[str, np.ndarray]) -> None:
    """NPZ, CSVs, JSON and the starter script, and the inputs as a NumPy literal."""
    t, name = ctx.t, stem(hw)
    arrays = download_arrays(hw, inputs)
    buttons = [
        ("NPZ", lambda: npz_bytes(arrays), f"{name}.npz", "application/octet-stream"),
        ("CSV (zip)", lambda: csv_zip(inputs), f"{name}_csv.zip", "application/zip"),
        ("JSON", lambda: json_text(hw, inputs), f"{name}.json", "application/json"),
        (t("homework.starter"), lambda: starter(t, hw), f"{name}_starter.py", "text/x-python"),
    ]
    for col, (label, data, file_name, mime) in zip(st.columns(4), buttons, strict=True):
        with col:
            style = {"on_click": "ignore", "icon": ":material/download:", "width": "stretch"}
            key = f"hw_dl_{file_name}"
            st.download_button(label, data, file_name=file_name, mime=mime, key=key, **style)
    st.caption(t("homework.download_hint", file=f"{name}.npz", answer=ANSWER_FILE))

    def literal() -> None:
        st.caption(t("homework.literal_hint"))
        st.code(numpy_literal(inputs), language="python", height=260)

    lazy_box(t("homework.literal"), "literal", literal, ":material/content_copy:")


# ----------------------------------------------------------------------------- upload


@dataclass(frozen=True)
class Upload:
    """What the two upload widgets hold: a file, pasted text, or neither."""

    file: UploadedFile | None
    pasted: str


def upload_controls(ctx: PageContext, got: Got) -> Upload:
    """The file uploader and the paste box. Students: in the sidebar, under the step's
    title, beside whatever the page shows (the paste box folded); on a slide: in the step,
    side by side. Drawn on every step (off their own, hidden): the upload lives only in
    these widgets' state, which steps 3 and 4 read."""
    t = ctx.t
    if ctx.presenter:
        file_col, paste_col = st.columns(2)
        with file_col:
            uploaded = _file_box(ctx)
            st.caption(t("homework.upload_pickles"))
        with paste_col:
            pasted = _paste_box(ctx)
        return Upload(uploaded, pasted or "")
    uploaded = _file_box(ctx)
    with st.expander(t("homework.paste"), icon=":material/content_paste:"):
        pasted = _paste_box(ctx, label="collapsed")
    return Upload(uploaded, pasted or "")


# The browser refuses a larger file itself, before the page sees it; up to this size the page
# reads the file and explains in the reader's language (its own limit is MAX_BYTES).
BROWSER_MB = 10


def _file_box(ctx: PageContext) -> UploadedFile | None:
    """The uploader, with every text of its own in the page's language: Streamlit has no
    parameter for them ("Upload", the limits line, the drop hint, an error tooltip), so
    :func:`uploader_css` draws ours over its English ones, and the limits line is a caption.
    It takes every file type: its own type filter would refuse a ``.py`` file with an English
    tooltip; the page refuses it instead, saying why (:mod:`ui.uploads`)."""
    t, limit = ctx.t, MAX_BYTES // 1000
    hint = t("homework.upload_help", limit_kb=limit)
    uploaded = st.file_uploader(
        t("homework.upload_label"),
        key=UPLOAD_KEY,
        max_upload_size=BROWSER_MB,
        help=hint if ctx.presenter else None,
        label_visibility="visible" if ctx.presenter else "collapsed",  # under the box's title
    )
    st.caption(t("homework.upload_limits", limit_kb=limit), help=None if ctx.presenter else hint)
    uploader_css(ctx)
    return uploaded


def _paste_box(ctx: PageContext, label: str = "visible") -> str:
    return st.text_area(
        ctx.t("homework.paste"),
        key=PASTE_KEY,
        height=140,
        label_visibility=label,
        placeholder="[[0.0969, 0.1223, …], …]",
        help=ctx.t("homework.paste_help"),
    )


def _css_text(text: str) -> str:
    """``text`` as a CSS string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def uploader_css(ctx: PageContext) -> None:
    """Streamlit's English texts of the uploader, hidden and replaced by the page's own, each
    found by its stable ``data-testid``: the button's label, the limits line (our caption
    below says it), the hint shown while a file is dragged over, and the tooltip of a file the
    browser refused (over :data:`BROWSER_MB`, or a broken connection)."""
    t = ctx.t
    zone = f'.st-key-{UPLOAD_KEY} [data-testid="stFileUploaderDropzone"]'
    button = _css_text(t("homework.upload_button"))
    drop = _css_text(t("homework.upload_drop"))
    refused = _css_text(t("homework.upload_refused", mb=BROWSER_MB))
    st.html(
        f"""<style>
{zone} [data-testid="stFileUploaderDropzoneInstructions"] {{ display: none; }}
{zone} button [data-testid="stMarkdownContainer"] {{ display: none; }}
{zone} button > div::after {{ content: {button}; margin-left: 0.4rem; }}
{zone} > div:not([data-testid]) > span {{ font-size: 0; }}
{zone} > div:not([data-testid]) > span::after {{ content: {drop}; font-size: 0.875rem; }}
[data-testid="stTooltipErrorContent"] {{ font-size: 0; }}
[data-testid="stTooltipErrorContent"]::after {{ content: {refused}; font-size: 0.875rem; }}
</style>"""
    )


def has_upload() -> bool:
    """Whether the upload widgets hold something (a file, or pasted text), as of the last
    run: the page puts a result above the exercise before it draws either."""
    pasted = st.session_state.get(PASTE_KEY) or ""
    return st.session_state.get(UPLOAD_KEY) is not None or bool(str(pasted).strip())


def read_upload(ctx: PageContext, upload: Upload, part: str, on_screen: bool) -> Parsed | None:
    """The uploaded (else pasted) array, or None; a bad upload gets a translated message
    where the upload widgets are on screen."""
    try:
        if upload.file is not None:
            return parse_upload(upload.file.name, upload.file.getvalue(), NAMES[part])
        if upload.pasted.strip():
            return parse_text(upload.pasted, NAMES[part])
    except UploadError as err:
        if on_screen:
            st.error(error_text(ctx.t, err, part=part), icon=":material/error:")
    return None


def read_summary(t: Translator, parsed: Parsed) -> str:
    """What was read: the array's name (from an .npz or JSON object), shape and dtype."""
    shape, dtype = shape_text(parsed.array.shape), str(parsed.array.dtype)
    if parsed.name is None:
        return t("homework.read", shape=shape, dtype=dtype)
    return t("homework.read_named", name=plain(parsed.name, 40), shape=shape, dtype=dtype)


def error_text(t: Translator, err: UploadError, part: str = "output") -> str:
    """An upload problem in the page's language; text taken from the upload is escaped.
    ``part``: the array checked, named where a message says how to save it."""
    params = {k: plain(v, 60) if k in FROM_UPLOAD else v for k, v in err.params.items()}
    if err.key.startswith("code"):
        params["part"] = part
    return t(f"homework.upload.{err.key}", **params)


def check(hw: Homework, part: str, parsed: Parsed) -> Checked:
    """Shape, NaN/∞, comparison and diagnosis of one parsed upload."""
    inputs, answers = exercise_data(hw)
    expected = answers[part]
    arr, batch = drop_batch_axes(parsed.array, expected.shape)
    tol = tolerance(arr.dtype) + parsed.resolution
    diagnosis = diagnose_homework(hw, inputs, arr, part, tol)
    found = (parsed, arr, batch, part, expected, tol, diagnosis)
    try:
        check_shape(arr, expected.shape)
    except UploadError as err:
        flipped = err.key.endswith("transposed") and transposed_matches(arr, expected, tol)
        return Checked(*found, None, err, flipped, nonfinite(arr))
    return Checked(*found, compare(arr, expected, tol), None, False, nonfinite(arr))


# ---------------------------------------------------------------------------- results


def sci(x: float) -> str:
    """A small error for a metric: ``3.2e-07``, ``0``."""
    return "0" if x == 0 else f"{x:.2g}" if x >= 1e-3 else f"{x:.1e}"


def cell(at: tuple[int, ...]) -> str:
    """An index as shown: ``3`` for a row, ``(5, 2)`` for a cell, ``–`` for none."""
    return "–" if not at else str(at[0]) if len(at) == 1 else shape_text(at)


def verdict(v: View, c: Checked) -> None:
    """Equal or not, then (on a slide) the tolerance and the largest absolute and relative
    error and where, in a row; students get those beside the error chart. Then the chart
    (:func:`details`), when the shapes allow a comparison."""
    t, cmp, lead = v.t, c.comparison, v.lead
    if c.batch is not None:
        lead.info(error_text(t, c.batch), icon=":material/layers:")
    if c.notice is not None:
        lead.warning(error_text(t, c.notice), icon=":material/warning:")
    if c.shape_error is not None:
        lead.error(error_text(t, c.shape_error), icon=":material/straighten:")
        if c.transposed_right:
            lead.info(t("homework.transposed_right"), icon=":material/swap_horiz:")
        return
    assert cmp is not None
    tol = sci(c.tol)
    if cmp.equal:
        lead.success(t("homework.equal", tol=tol), icon=":material/check_circle:")
    else:
        lead.error(
            t("homework.not_equal", tol=tol, bad=cmp.bad_count, total=cmp.bad.size),
            icon=":material/cancel:",
        )
    if v.presenter:
        metrics(v.ctx, c, lead.columns(3))
    details(v, c)


def named(v: View, c: Checked) -> None:
    """Students, beside the error chart above its numbers: the mistake the diagnosis found
    and its fix, so the first screen says what went wrong (the diagnosis step below explains
    it; a slide has that step of its own)."""
    found = c.diagnosis
    if v.presenter or found in (None, "correct"):
        return
    t = v.t
    title, fix = t(f"homework.mistake.{found}.title"), t(f"homework.mistake.{found}.fix")
    v.aside.warning(t("homework.named", mistake=title, fix=fix), icon=":material/bug_report:")


def metrics(ctx: PageContext, c: Checked, places: list[DeltaGenerator]) -> None:
    """The largest absolute and relative error and where, and the tolerance, one in each of
    ``places``."""
    t, cmp = ctx.t, c.comparison
    assert cmp is not None
    at = "homework.at_finite" if c.notice is not None else "homework.at"  # NaN cells: not in

    def where(index: tuple[int, ...], value: float) -> str | None:
        return t(at, cell=cell(index)) if value > 0 else None  # no error: no place to name

    rel_help = t("homework.max_rel_help", near=f"{NEAR_ZERO:g}")
    items = [
        (t("homework.max_abs"), sci(cmp.max_abs), where(cmp.max_abs_at, cmp.max_abs), None),
        (t("homework.max_rel"), sci(cmp.max_rel), where(cmp.max_rel_at, cmp.max_rel), rel_help),
        (t("homework.tolerance"), sci(c.tol), t(f"homework.tol_{c.parsed.source}"), None),
    ]
    for place, (label, value, note, help_text) in zip(places, items, strict=True):
        place.metric(label, value, note, help=help_text, delta_color="off", delta_arrow="off")


def error_chart(t: Translator, error: np.ndarray, tol: float, row_sums: np.ndarray | None) -> dict:
    """Per-cell error (upload − expected) as a heatmap (one panel per head for (h, n, n)),
    and the row sums of uploaded weights beside it."""
    rows = [str(i) for i in range(error.shape[-2])]
    cols = [str(j) for j in range(error.shape[-1])]
    cell_px = 30  # charts.show_cached fits the chart to its room
    title = t("homework.error_title")
    if error.ndim == 3:
        panels = {t("homework.head", i=i + 1): m for i, m in enumerate(error)}
    else:
        panels = {title: error}
    top = float(np.nanmax(np.abs(error))) if np.isfinite(error).any() else 0.0
    top = max(top, tol)  # errors within tolerance stay (nearly) white
    axes = (t("homework.col"), t("homework.row"))
    heat = charts.heatmap(
        panels, rows, cols, "scores", *axes, cell=cell_px, domain=[-top, top], annotate=False
    )
    view = heat.get("spec", heat)  # one panel, or the faceted view of every head
    view["layer"][0]["encoding"]["color"]["legend"] = {"format": ".1e"}
    if error.ndim == 3:
        heat["title"] = title
    if row_sums is None:
        return heat
    sums = np.atleast_2d(row_sums).T if row_sums.ndim == 1 else row_sums.T  # (n, 1) or (n, h)
    labels = ["Σ"] if row_sums.ndim == 1 else [str(i + 1) for i in range(row_sums.shape[0])]
    sums_title = t("homework.row_sums")
    domain = [0, max(1.0, float(np.nanmax(sums, initial=0)))]
    style = {"cell": cell_px, "domain": domain, "name": "sums", "title": sums_title}
    side = charts.heatmap({sums_title: sums}, rows, labels, "weights", **style)
    return charts.concat([heat, side])


def details(v: View, c: Checked) -> None:
    """The error heatmap (with the row sums of weights) and what to notice. On a projector
    side by side (wide, not tall), the chart lower by each note above it (a room the step's
    fixed height cannot say); for students the chart beside the errors' metrics, the notice
    below, so the verdict, its numbers and the chart fit one laptop screen."""
    assert c.comparison is not None
    sums = row_sums(c)
    room = v.room
    if v.presenter:
        notes = sum(note is not None for note in (c.notice, c.batch))
        room = replace(room, height=VERDICT_CHART_HEIGHT - WARNING_PX * notes)
    else:
        named(v, c)
        metrics(v.ctx, c, [v.aside] * 3)
    v.chart(error_chart, v.t, c.comparison.error, c.tol, sums, space=room)
    v.notice(notice_items(v.ctx, c, sums))


def row_sums(c: Checked) -> np.ndarray | None:
    """Row sums of uploaded weights/probabilities: (n,) or (h, n); None for an output."""
    if c.part == "output" or c.comparison is None:
        return None
    return weight_sums(c.array)


def five_steps(t: Translator, step: int | None) -> str:
    """The five steps as badges in a row, the one at fault in red with a bug icon."""
    parts = []
    for i, name in enumerate(STEPS, start=1):
        label = f"{i} {t(f'homework.step_{name}')}"
        parts.append(
            f":red-badge[:material/bug_report: {label}]" if i == step else f":gray-badge[{label}]"
        )
    return " → ".join(parts)


def diagnosis(ctx: PageContext, c: Checked) -> None:
    """The diagnosis: accepted, the matching mistake with its step, or an honest no-match."""
    t = ctx.t
    found = c.diagnosis
    if found == "correct":
        if c.comparison is not None and c.comparison.equal:
            st.success(t("homework.accepted"), icon=":material/task_alt:")
        return
    if found is not None:
        step = MISTAKE_STEPS[found]
        with st.container(border=True):
            st.markdown(f"### :material/bug_report: {t(f'homework.mistake.{found}.title')}")
            st.markdown(
                t("homework.in_step", step=step, name=t(f"homework.step_{STEPS[step - 1]}"))
            )
            st.markdown(five_steps(t, step))
            st.markdown(t(f"homework.mistake.{found}.text"))
            st.markdown(f"**{t('homework.fix')}** {t(f'homework.mistake.{found}.fix')}")
        return
    cmp = c.comparison
    if cmp is None:  # no numbers to hold against the answer's: say so, show no row
        verdict_step = t("homework.s3_title")
        st.info(t("homework.no_match_shape", verdict=verdict_step), icon=":material/help:")
        return
    st.info(t("homework.no_match"), icon=":material/help:")
    if cmp.first_row is not None:
        row = cmp.first_row
        st.markdown(t("homework.first_row", row=cell(row)))
        yours, right = (charts.fmt_list(a[row], 4) for a in (c.array, c.expected))
        st.markdown(t("homework.row_values", yours=yours, right=right))
    if c.part == "output":
        weights = t("homework.part_weights")
        st.caption(t("homework.no_match_output", checking=t("homework.part"), weights=weights))


def notice_items(ctx: PageContext, c: Checked, sums: np.ndarray | None) -> list[str]:
    """What to look at: where the error sits, the row sums, what the tolerance allows."""
    t, cmp = ctx.t, c.comparison
    assert cmp is not None
    items = []
    if not cmp.equal:
        rows = cmp.bad_rows
        shown = ", ".join(cell(r) for r in rows[:8]) + (" …" if len(rows) > 8 else "")
        items.append(t("homework.notice_rows", count=len(rows), rows=shown))
    if sums is not None:
        r = sum_range(sums)
        if not r.nonfinite:
            lo, hi = charts.fmt(r.lo, 4), charts.fmt(r.hi, 4)
            items.append(t("homework.notice_sums", lo=lo, hi=hi))
        else:
            items.append(t("homework.notice_sums_bad", count=r.nonfinite))
    items.append(t("homework.notice_tol", tol=sci(c.tol)))
    return items


# ---------------------------------------------------------------------------- the steps


# Students see every step, one below the other, with these in the sidebar; a slide shows
# each on its own step (the exercise's settings folded), and the steps after it read them.
SETTINGS = Controls(controls, box="homework.settings", slide="lead", fold="homework.settings")
UPLOAD = Controls(upload_controls, box="homework.s2_title", slide="lead")


def order(ctx: PageContext) -> tuple[int, ...]:
    """The steps as students see them: once something is uploaded its result comes first
    (the upload and its verdict on one screen), the exercise below."""
    return (1, 2, 3, 0) if has_upload() else (0, 1, 2, 3)


def heading(v: View, key: str) -> None:
    """A slide keeps its step's heading (students get it from the page's frame)."""
    if v.presenter:
        v.lead.subheader(v.t(key))


def exercise(v: View) -> None:
    """Step 1: the exercise, its inputs and their shapes, and the downloads. On a projector
    the shapes matter (the numbers are on paper): no chart and no downloads, the text below
    the folded settings."""
    t, hw = v.t, v[SETTINGS][0]
    inputs, answers = exercise_data(hw)
    heading(v, "homework.s1_title")
    if not v.presenter:
        v.chart(inputs_chart, inputs)
    text = v.below if v.presenter else v.lead
    text.markdown(t(f"homework.ex{hw.exercise}_task", h=hw.h))
    text.latex(FORMULAS[hw.exercise])
    text.markdown(shapes_table(v.ctx, hw, {**inputs, **answers}))
    if not v.presenter:
        with v.notes:
            downloads(v.ctx, hw, inputs)


def upload(v: View) -> None:
    """Step 2: what to upload, and what was read (or why it could not be)."""
    t, (hw, part) = v.t, v[SETTINGS]
    heading(v, "homework.s2_title")
    task = v.lead.empty()  # what to upload, unless an upload was read
    with v.notes if v.presenter else v.lead:  # a slide: below the uploader
        parsed = read_upload(v.ctx, v[UPLOAD], part, on_screen=True)
    shape = shape_text(exercise_data(hw)[1][part].shape)
    text = t("homework.s2_text", part=t(f"homework.part_{part}"), shape=shape)
    if v.presenter:  # the uploader between the two
        task.markdown(text)
        if parsed is not None:
            v.notes.markdown(read_summary(t, parsed))
    elif parsed is not None:  # students: the verdict comes next, on the same screen
        task.markdown(read_summary(t, parsed))
    else:
        task.markdown(f"{text} {t('homework.s2_side', box=t('homework.s2_title'))}")
        v.notes.caption(t("homework.upload_pickles"))
    if v.presenter or parsed is None:
        v.notes.caption(t("homework.privacy"))


def checked(v: View) -> Checked | None:
    """The upload held against the exercise (read quietly: its own step says what went
    wrong), or None when nothing could be read."""
    hw, part = v[SETTINGS]
    parsed = read_upload(v.ctx, v[UPLOAD], part, on_screen=False)
    return None if parsed is None else check(hw, part, parsed)


def waiting(v: View) -> str:
    """Nothing to check yet: where to upload."""
    t = v.t
    return (
        t("homework.waiting")
        if v.presenter
        else t("homework.waiting_side", box=t("homework.s2_title"))
    )


def verdict_step(v: View) -> None:
    """Step 3: equal or not, the largest errors and where they sit."""
    heading(v, "homework.s3_title")
    c = checked(v)
    if c is None:
        v.lead.info(waiting(v), icon=":material/upload_file:")
        return
    verdict(v, c)


def diagnosis_step(v: View) -> None:
    """Step 4: which common mistake made the result, and the pages behind the steps."""
    heading(v, "homework.s4_title")
    c = checked(v)
    if c is None:
        v.lead.info(waiting(v), icon=":material/upload_file:")
    else:
        with v.lead:
            diagnosis(v.ctx, c)
    v.links("masking", "multi_head", "softmax")
