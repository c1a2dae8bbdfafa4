"""The homework page in Chromium, as a student uses it: download the NPZ and the starter
script, run a wrong implementation (no √d_k scaling), upload its file, read the diagnosis;
then upload the right answer and see it accepted."""

import re
import subprocess
import sys

import pytest

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
    page.get_by_text(t("homework.mistake.no_scaling.title")).scroll_into_view_if_needed()
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
