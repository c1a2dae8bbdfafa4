"""The page registry: ids, navigation sections and icons, in reading order.

A page is its file ``pages/<N>_<id>.py`` and one entry here (plus its ``nav.<id>`` catalog
keys). The entry's place in :data:`PAGES` is the page's place in the navigation and on the
clicker's walk; ``N`` only sorts the folder and follows the same order
(tests/test_project.py). The file is found from the id, so the number is written once, in
the file's name. Entries whose file does not exist (yet) are not linked.
"""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = "dashboard.py"  # the entrypoint: the home page


@dataclass(frozen=True)
class PageInfo:
    """One page of the app."""

    id: str  # catalog key under nav.*, the page's name in code and its address
    section: str  # catalog key under nav.section.*
    icon: str  # a Material icon shown in the navigation
    # a page of the lecture: on the clicker's walk (Next leads through these in order);
    # /join, where students answer the lecturer's questions, is not
    lesson: bool = True

    @property
    def file(self) -> str:
        """The page's script relative to the project root, as ``st.page_link`` wants it:
        ``pages/4_softmax.py`` for "softmax" (:data:`HOME` for the home page)."""
        return HOME if self.id == "home" else _page_files().get(self.id, f"pages/{self.id}.py")

    @property
    def url_path(self) -> str:
        """The page's address: ``/`` for the home page, ``/softmax`` for pages/4_softmax.py."""
        return "/" if self.id == "home" else f"/{self.id}"


PAGES = (
    PageInfo("home", "start", ":material/home:"),
    PageInfo("lookup", "concepts", ":material/search:"),
    PageInfo("qkv", "concepts", ":material/call_split:"),
    PageInfo("scaling", "concepts", ":material/straighten:"),
    PageInfo("softmax", "concepts", ":material/bar_chart:"),
    PageInfo("weighted_sum", "concepts", ":material/functions:"),
    PageInfo("masking", "practice", ":material/visibility_off:"),
    PageInfo("multi_head", "practice", ":material/view_column:"),
    PageInfo("kv_cache", "practice", ":material/memory:"),
    PageInfo("encoder", "models", ":material/travel_explore:"),
    PageInfo("decoder", "models", ":material/edit_note:"),
    PageInfo("block", "models", ":material/account_tree:"),
    PageInfo("rope", "today", ":material/rotate_right:"),
    PageInfo("gqa", "today", ":material/group_work:"),
    PageInfo("flash", "today", ":material/bolt:"),
    PageInfo("sinks", "today", ":material/anchor:"),
    PageInfo("training", "exercises", ":material/model_training:"),
    PageInfo("homework", "exercises", ":material/task_alt:"),
    PageInfo("join", "start", ":material/how_to_vote:", lesson=False),
)
SECTIONS = ("start", "concepts", "practice", "models", "today", "exercises", "reference")


@cache
def _page_files() -> dict[str, str]:
    """Each page script's id (the name after the number and the first ``_``) and path."""
    return {
        p.stem.split("_", 1)[1]: p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "pages").glob("*_*.py"))
    }


@cache
def available_pages() -> tuple[PageInfo, ...]:
    """The registered pages whose script exists (looked up once per process: the sidebar and
    the links between pages ask on every rerun)."""
    return tuple(p for p in PAGES if (ROOT / p.file).exists())


@cache
def lesson_pages() -> tuple[PageInfo, ...]:
    """The available pages of the lecture, in the clicker's order (no /join)."""
    return tuple(p for p in available_pages() if p.lesson)


def page_info(page_id: str) -> PageInfo:
    """Look a page up by id (KeyError if unknown)."""
    for p in PAGES:
        if p.id == page_id:
            return p
    raise KeyError(page_id)


def in_section(section: str) -> tuple[PageInfo, ...]:
    """The available pages of one navigation section, in order (e.g. "today")."""
    return tuple(p for p in available_pages() if p.section == section)
