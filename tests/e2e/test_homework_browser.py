"""The homework page in Chromium, as a student uses it: download the NPZ and the starter
script, run a wrong implementation (no √d_k scaling), upload its file, read the diagnosis;
then upload the right answer and see it accepted; a mask with the wrong sign is named and
an answer with a batch axis of one is checked without it. On a laptop the upload and its verdict
share one screen, and in Chinese the uploader shows no English of Streamlit's own."""

import re
import subprocess
import sys

import numpy as np
import pytest

from core import homework as hw
from tests.e2e.conftest import shot, wait_idle
from ui.i18n import Translator

BODY = """    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T{scale}
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w @ V, w"""


def _download(page, label: re.Pattern, folder):
    button = page.locator('[data-testid="stDownloadButton"] button').filter(has_text=label)
    with page.expect_download() as info:
        button.click()
    target = folder / info.value.suggested_filename
    info.value.save_as(target)
    return target


def _run_student_code(starter: str, body: str, folder, name: str):
    code = re.sub(r"    raise NotImplementedError\(.*\)", lambda _: body, starter)
    (folder / f"{name}.py").write_text(code, encoding="utf-8")
    run = subprocess.run([sys.executable, f"{name}.py"], cwd=folder, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    answer = folder / f"{name}_answer.npz"
    (folder / "my_answer.npz").rename(answer)
    return answer


def _upload(page, path, expect: str) -> str:
    """Upload ``path`` and wait until ``expect`` is on screen (the rerun has finished)."""
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    page.get_by_text(expect).first.wait_for(timeout=60_000)
    wait_idle(page)
    return page.locator('[data-testid="stMain"]').inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_student_uploads_a_wrong_then_a_right_answer(server, open_app, tmp_path, lang) -> None:
    t = Translator(lang)
    page = open_app(server, f"/homework?lang={lang}", width=1366, height=900)
    npz = _download(page, re.compile("NPZ"), tmp_path)
    assert npz.name == "attention-lab_homework_ex1.npz"
    starter = _download(page, re.compile(re.escape(t("homework.starter"))), tmp_path).read_text()

    wrong = _run_student_code(starter, BODY.format(scale=""), tmp_path, "wrong")
    text = _upload(page, wrong, t("homework.mistake.no_scaling.title"))
    assert t("homework.mistake.no_scaling.title") in text
    assert t("homework.step_scale") in text
    assert t("homework.accepted") not in text
    page.locator("h3").filter(
        has_text=t("homework.mistake.no_scaling.title")
    ).scroll_into_view_if_needed()
    shot(page, f"homework_no_scaling_{lang}")

    right = _run_student_code(
        starter, BODY.format(scale=" / np.sqrt(K.shape[1])"), tmp_path, "right"
    )
    text = _upload(page, right, t("homework.accepted"))
    assert t("homework.accepted") in text
    assert t("homework.mistake.no_scaling.title") not in text
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text(t("homework.accepted")).scroll_into_view_if_needed()
    shot(page, f"homework_accepted_{lang}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_wrong_sign_mask_and_a_batch_of_one_are_read_as_the_page_says(
    server, open_app, tmp_path, lang
) -> None:
    """Exercise 2's output made with ``scores + mask * -1e9`` is named; the right answer
    saved with a leading batch axis is accepted, with a note that the axis was dropped."""
    t = Translator(lang)
    cfg = hw.Homework(2)
    inputs = hw.homework_inputs(cfg)
    wrong, _ = hw.mistake("attention", "mask_wrong_sign").make(*hw.exercise_args(cfg, inputs))
    np.save(tmp_path / "masked.npy", wrong)
    np.save(tmp_path / "batched.npy", hw.homework_answer(cfg, inputs)["output"][None])
    page = open_app(server, f"/homework?lang={lang}&exercise=2", 1366, 768)
    text = _upload(page, tmp_path / "masked.npy", t("homework.mistake.mask_wrong_sign.title"))
    assert t("homework.in_step", step=4, name=t("homework.step_softmax")).replace("**", "") in text
    assert t("homework.no_match") not in text
    heading = page.locator("h3").filter(has_text=t("homework.mistake.mask_wrong_sign.title"))
    heading.scroll_into_view_if_needed()
    shot(page, f"homework_mask_wrong_sign_{lang}")

    text = _upload(page, tmp_path / "batched.npy", t("homework.accepted"))
    said = t("homework.upload.batch_axis", found="(1, 6, 4)", expected="(6, 4)")
    assert said.replace("`", "") in text
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text(said.split("`")[0]).first.scroll_into_view_if_needed()
    shot(page, f"homework_batch_{lang}")


def _in_view(page, selector: str) -> bool:
    """Whether the first visible element matching ``selector`` lies inside the viewport."""
    return page.evaluate(
        """(sel) => { const e = [...document.querySelectorAll(sel)]
             .find((x) => x.getBoundingClientRect().height > 0);
           if (!e) return false;
           const r = e.getBoundingClientRect();
           return r.top >= -2 && r.left >= -2 && r.bottom <= innerHeight + 2
             && r.right <= innerWidth + 2; }""",
        selector,
    )


@pytest.mark.parametrize(("lang", "size"), [("en", (1280, 720)), ("zh", (1366, 768))])
def test_the_upload_and_its_verdict_share_one_laptop_screen(
    server, open_app, tmp_path, lang, size
) -> None:
    """The uploader sits in the sidebar; once a file is read, its verdict, the numbers and
    the error chart come first in the main area, all without scrolling."""
    t = Translator(lang)
    cfg = hw.Homework(1)
    inputs = hw.homework_inputs(cfg)
    wrong, _ = hw.mistake("attention", "no_scaling").make(
        *[inputs[k] for k in ("X", "W_Q", "W_K", "W_V")], None
    )
    path = tmp_path / "mine.npz"
    np.savez(path, output=wrong)
    page = open_app(server, f"/homework?lang={lang}", *size)
    _upload(page, path, t("homework.mistake.no_scaling.title"))
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stVegaLiteChart"] .marks')
    wait_idle(page)
    shot(page, f"homework_verdict_{lang}_{size[0]}")  # before the checks: a failure's too
    for name, selector in [
        ("the uploader", '[data-testid="stSidebar"] [data-testid="stFileUploader"]'),
        ("the verdict", '[data-testid="stMain"] [data-testid="stAlertContentError"]'),
        ("the error chart", '[data-testid="stMain"] [data-testid="stVegaLiteChart"]'),
        ("the largest error", '[data-testid="stMain"] [data-testid="stMetric"]'),
        ("the mistake and its fix", '[data-testid="stMain"] [data-testid="stAlertContentWarning"]'),
    ]:
        assert _in_view(page, selector), f"{name} is off the {size[0]}x{size[1]} screen"


# Every text a reader sees in the uploader and in a tooltip: text nodes drawn at a size
# (not an icon's ligature name, not a 1 px screen-reader text), and the text our CSS draws.
SEEN = """() => {
  const roots = [...document.querySelectorAll(
    '[data-testid="stFileUploader"], [data-testid="stTooltipErrorContent"]')];
  const out = [];
  for (const root of roots) {
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const e = n.parentElement;
      if (!e || !n.textContent.trim() || e.closest('[data-testid="stIconMaterial"]')) continue;
      const r = e.getBoundingClientRect();
      if (parseFloat(getComputedStyle(e).fontSize) === 0 || r.width <= 1 || r.height <= 1
          || !e.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
      out.push(n.textContent.trim());
    }
    for (const e of [root, ...root.querySelectorAll('*')])
      for (const pseudo of ['::before', '::after']) {
        const c = getComputedStyle(e, pseudo).content;
        if (c.startsWith('"') && c.length > 2 && e.checkVisibility()) out.push(JSON.parse(c));
      }
  }
  return out;
}"""
STREAMLIT_ENGLISH = (
    "Upload",
    "Browse",
    "Drag and drop",
    "per file",
    "Limit",
    "NPY, NPZ",
    "not allowed",
    "File must be",
    "Add files",
    "Error",
)


def _english(texts: list[str], files: tuple[str, ...]) -> list[str]:
    """English words left in ``texts``, besides file names, extensions and sizes."""
    left = []
    for text in texts:
        for name in files:
            text = text.replace(name, " ")
        text = re.sub(r"\.\w+|\b\d+(\.\d+)?\s*(kB|KB|MB|B)\b|\bkB\b", " ", text)
        left += re.findall(r"[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*", text)
    return left


def test_in_chinese_the_uploader_shows_no_english_of_its_own(server, open_app, tmp_path) -> None:
    """Streamlit has no parameter for its uploader's texts; the page hides them (found by
    their data-testid) and draws its own, takes every file type so a .py file gets the page's
    message instead of an English tooltip, and translates the tooltip of a file the browser
    refuses. Checked on the four faces a student meets: empty, a file dragged over, a file
    too big for the browser (its tooltip shown) and a .py file."""
    t = Translator("zh")
    page = open_app(server, "/homework?lang=zh", 1366, 768)
    zone = page.locator('[data-testid="stFileUploaderDropzone"]')
    seen = page.evaluate(SEEN)
    assert t("homework.upload_button") in seen
    assert (
        t("homework.upload_limits", limit_kb=1000)
        in page.locator('[data-testid="stSidebar"]').inner_text()
    )
    faces = {"empty": seen}

    drag = page.evaluate_handle(
        "() => { const d = new DataTransfer(); d.items.add(new File(['1'], 'a.npy')); return d; }"
    )
    zone.dispatch_event("dragenter", {"dataTransfer": drag})
    zone.locator("> div:not([data-testid])").wait_for(timeout=5_000)  # the drop hint
    faces["dragged"] = page.evaluate(SEEN)
    assert t("homework.upload_drop") in faces["dragged"]
    zone.dispatch_event("dragleave", {"dataTransfer": drag})

    big = {
        "name": "big.npy",
        "mimeType": "application/octet-stream",
        "buffer": b"0" * (11 * 1024 * 1024),
    }
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(files=[big])
    chip = page.locator('[data-testid="stFileChip"]').first
    chip.wait_for(timeout=10_000)
    chip.hover()
    page.locator('[data-testid="stTooltipErrorContent"]').wait_for(timeout=5_000)
    faces["refused"] = page.evaluate(SEEN)
    assert t("homework.upload_refused", mb=10) in faces["refused"]
    page.locator('[data-testid="stFileChipDeleteBtn"] button').first.click()
    wait_idle(page)

    code = tmp_path / "solve.py"
    code.write_text("import numpy as np\n", encoding="utf-8")
    _upload(page, code, "np.savez(")
    faces["code"] = page.evaluate(SEEN)
    message = page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]')
    assert "检查器从不运行代码" in message.inner_text() and "np.save(" in message.inner_text()
    body = page.locator("body").inner_text()
    assert "not allowed" not in body and "Drag and drop" not in body
    shot(page, "homework_code_zh")

    for face, texts in faces.items():
        assert not _english(texts, ("big.npy", "solve.py")), (face, texts)
        assert not [w for w in STREAMLIT_ENGLISH if any(w in x for x in texts)], (face, texts)
