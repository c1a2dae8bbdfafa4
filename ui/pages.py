"""The page registry: ids, files and navigation sections, in reading order.

A later issue adds a page by adding its file under ``pages/`` and one entry here (and its
``nav.<id>`` catalog keys). Entries whose file does not exist yet are not linked.
"""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageInfo:
    """One page of the app."""

    id: str  # catalog key under nav.*, and the page's name in code
    file: str  # path relative to the project root, as st.page_link wants it
    section: str  # catalog key under nav.section.*
    icon: str  # a Material icon shown in the navigation

    @property
    def url_path(self) -> str:
        """The page's address: ``/`` for the home page, ``/softmax`` for pages/4_softmax.py."""
        if self.file == "dashboard.py":
            return "/"
        return "/" + Path(self.file).stem.split("_", 1)[1]


PAGES = (
    PageInfo("home", "dashboard.py", "start", ":material/home:"),
    PageInfo("lookup", "pages/1_lookup.py", "concepts", ":material/search:"),
    PageInfo("qkv", "pages/2_qkv.py", "concepts", ":material/call_split:"),
    PageInfo("scaling", "pages/3_scaling.py", "concepts", ":material/straighten:"),
    PageInfo("softmax", "pages/4_softmax.py", "concepts", ":material/bar_chart:"),
    PageInfo("weighted_sum", "pages/5_weighted_sum.py", "concepts", ":material/functions:"),
    PageInfo("masking", "pages/6_masking.py", "practice", ":material/visibility_off:"),
    PageInfo("multi_head", "pages/7_multi_head.py", "practice", ":material/view_column:"),
    PageInfo("kv_cache", "pages/8_kv_cache.py", "practice", ":material/memory:"),
    PageInfo("encoder", "pages/9_encoder.py", "models", ":material/travel_explore:"),
    PageInfo("decoder", "pages/10_decoder.py", "models", ":material/edit_note:"),
    PageInfo("rope", "pages/13_rope.py", "today", ":material/rotate_right:"),
    PageInfo("gqa", "pages/14_gqa.py", "today", ":material/group_work:"),
    PageInfo("flash", "pages/15_flash.py", "today", ":material/bolt:"),
    PageInfo("sinks", "pages/16_sinks.py", "today", ":material/anchor:"),
    PageInfo("training", "pages/11_training.py", "exercises", ":material/model_training:"),
    PageInfo("homework", "pages/12_homework.py", "exercises", ":material/task_alt:"),
)
SECTIONS = ("start", "concepts", "practice", "models", "today", "exercises", "reference")


@cache
def available_pages() -> tuple[PageInfo, ...]:
    """The registered pages whose script exists (looked up once per process: the sidebar and
    the links between pages ask on every rerun)."""
    return tuple(p for p in PAGES if (ROOT / p.file).exists())


def page_info(page_id: str) -> PageInfo:
    """Look a page up by id (KeyError if unknown)."""
    for p in PAGES:
        if p.id == page_id:
            return p
    raise KeyError(page_id)
