"""What every page gets from the shell: its id, language, translator, presenter flag and the
places the shell keeps for it. Its own module so that every ``ui`` module can take a context
without importing the shell (``ui/`` has no import cycle: tests/test_project.py)."""

from dataclasses import dataclass

from streamlit.delta_generator import DeltaGenerator

from ui.i18n import Translator


@dataclass(frozen=True)
class PageContext:
    """What a page needs from the shell."""

    page: str
    lang: str
    t: Translator
    presenter: bool
    notices: DeltaGenerator  # top-of-page slot for warnings about bad input
    controls: DeltaGenerator  # where the page's controls go (students: the sidebar)

    def warn(self, text: str) -> None:
        """Show a short warning at the top of the page."""
        self.notices.warning(text, icon=":material/warning:")
