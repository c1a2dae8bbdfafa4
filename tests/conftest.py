"""Shared by every test: NumPy's BLAS runs on one thread, set before NumPy is imported.

The real-model checks compare our float32 forward passes with the reference framework's
at the level of float32 rounding (e.g. attention within 5e-6 of transformers). A
multi-threaded BLAS sums in another order and moves the last bits: measured on SmolLM2's
20-token sentence, attention differs by up to 5.3e-6 with two OpenBLAS threads and 4.1e-6
with one. One thread makes every run sum the same way (and avoids BLAS threads fighting
the browser tests' servers for the two cores). Servers the tests start inherit it.
"""

import atexit
import importlib
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import pytest
from hypothesis import settings

# Hypothesis's per-example deadline is a timing check, and timings belong in bench/: on a
# shared 2-core machine a property took 439 ms once (200 ms deadline) and 34 ms when rerun.
settings.register_profile("lab", deadline=None)
settings.load_profile("lab")

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# Ask the class keeps its answers and the lecturer key in a data directory (default: under
# the home folder): every page run by a test, and every server a test starts, uses a
# throwaway one instead. A test that needs its own sets ATTENTION_LAB_DATA itself.
os.environ["ATTENTION_LAB_DATA"] = tempfile.mkdtemp(prefix="attention-lab-test-data-")
atexit.register(shutil.rmtree, os.environ["ATTENTION_LAB_DATA"], ignore_errors=True)
os.environ.pop("ATTENTION_LAB_STORE", None)

T = TypeVar("T")
FIXTURES = Path(__file__).resolve().parent / "fixtures"  # the real models' reference outputs


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` (pyproject.toml) keep an ``xdist_group``'s tests on one worker.

    xdist sends a group to one worker by the ``@<group>`` it appends to each test's id on the
    worker; pytest 9.2 keeps the id in another field, so that append no longer takes and the
    tests spread over both workers, each setting up the module's shared fixture again (e.g.
    test_sinks's model run, test_deploy's replicas). Known upstream: pytest-xdist issue 1386.
    Here the suffix is set where pytest 9.2 reads it, and a pytest on which it would still not
    take stops the run instead of letting the groups spread silently."""
    if not getattr(config.option, "loadgroup", False):  # set on an xdist worker only
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
        if not names:
            continue
        suffix = "@" + "_".join(sorted(names))
        if not item.nodeid.endswith(suffix) and hasattr(item, "_id"):  # pytest >= 9.2
            item._id = type(item._id).parse(item.nodeid + suffix)
        if not item.nodeid.endswith(suffix):
            raise pytest.UsageError(f"xdist_group not applied to {item.nodeid} (see conftest)")


def optional_module(name: str) -> ModuleType:
    """Import an optional extra. Missing: skipped on a developer's machine with the reason,
    but a failure under CI (``CI`` set, as .ci/run does; it installs
    requirements-optional.txt)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        hint = f"{name} is an optional extra: pip install -r requirements-optional.txt"
        if os.environ.get("CI"):
            pytest.fail(f"CI must install it ({hint})")
        pytest.skip(hint)


@cache
def read_fixture(path: Path) -> dict:
    """The arrays of a reference file (``FIXTURES / "minilm_reference.npz"``), read once."""
    import numpy as np  # here: NumPy loads after the BLAS setting above

    with np.load(path, allow_pickle=False) as f:
        return dict(f)


@cache
def smollm2():
    """SmolLM2-135M (``models.smollm.load()``: ~540 MB of float32, 1-3 s), read once per test
    process and shared by the tests that run it directly (tests/models, tests/app/test_decoder;
    the pages under AppTest keep theirs in ``ui.loaded``). Each of those four modules read its
    own copy before: four copies and loads per xdist worker. Its weights are read-only views."""
    from models import smollm  # here: NumPy loads after the BLAS setting above

    return smollm.load()


TINY_IDS = [3, 17, 4, 4, 42, 9, 0, 21]  # a prompt for tiny_llama()


@cache
def tiny_llama():
    """A random Llama-style model in float64 (3 layers, 6 query heads sharing 2 key/value
    heads, a vocabulary of 50), so checks of ``core.llama`` and ``core.batching`` are tight
    and quick. Its config is ``tiny_llama().config``."""
    import numpy as np  # here: NumPy loads after the BLAS setting above

    import core.llama as llama

    cfg = llama.LlamaConfig(
        n_layers=3, d_model=24, n_heads=6, n_kv_heads=2, d_ff=40, vocab=50, eps=1e-5, rope_base=1e4
    )
    rng = np.random.default_rng(0)
    d, f, hd = cfg.d_model, cfg.d_ff, cfg.d_head

    def w(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.3, shape)

    layers = tuple(
        llama.LayerWeights.of(
            attn_norm=1 + w(d) * 0.1,
            qkv=(w(d, cfg.n_heads * hd), w(d, cfg.n_kv_heads * hd), w(d, cfg.n_kv_heads * hd)),
            w_o=w(cfg.n_heads * hd, d),
            ffn_norm=1 + w(d) * 0.1,
            gate_up=(w(d, f), w(d, f)),
            w_down=w(f, d),
        )
        for _ in range(cfg.n_layers)
    )
    return llama.LlamaWeights(cfg, w(cfg.vocab, d), layers, 1 + w(d) * 0.1)


def wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float,
    poll: float = 0.2,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """Wait until ``condition()`` is true and return its value: a condition, never a fixed
    time. It is asked again every ``poll`` seconds (``pause``: how to wait meanwhile, e.g.
    ``lambda s: page.wait_for_timeout(s * 1000)`` so Playwright delivers a page's events);
    still false after ``timeout`` seconds, the test fails naming ``what`` it waited for."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:g} s: {what}")
        pause(poll)
    return value


@pytest.fixture(scope="session", autouse=True)
def _component_scan_once_per_process() -> Iterator[None]:
    """Streamlit's component scan, done once per test process instead of once per AppTest.

    Each new ``AppTest`` (streamlit 1.67: ``AppTest._run`` ->
    ``BidiComponentManager.discover_and_register_components``) reads the metadata of every
    installed distribution in search of v2 component manifests: about half of tests/app's
    CPU time (tests/app/test_softmax.py, 48 pages: 10-12 s of CPU with a scan per page, 5 s
    with one scan). The installed packages cannot change while the tests run, so the scan's
    answer (a list of manifests, empty for this app) is kept and each AppTest still registers
    it in its own fresh manager. A Streamlit that moves the scanner only loses the speed-up
    (with a warning)."""
    try:
        from streamlit.components.v2 import manifest_scanner as scanner

        scan = scanner.scan_component_manifests
    except (ImportError, AttributeError) as error:
        warnings.warn(f"AppTest's component scan is not cached: {error}", stacklevel=1)
        yield
        return
    found = cache(scan)
    scanner.scan_component_manifests = lambda *args, **kwargs: list(found(*args, **kwargs))
    yield
    scanner.scan_component_manifests = scan
