"""Questions a lecturer asks the class (Ask the class, :mod:`ui.ask`): what a question is and
where each page's questions are found.

A question belongs to a step (``Step(..., question=view.ASK_BEST)``) and is declared in the
page's view: its id ``"<page>.<name>"`` (the store's question id), what kind of answer it
takes (a token of a sentence, one of a few choices, or a number), its options with labels
in a language, and its truth, computed by ``core`` (the right option, the model's own
attention row over the tokens, the right number). A question is asked about one fixed
setting, which its text names (the lesson's sentence, head, d_k …), so every screen that
shows it, the lecturer's and each student's in their own language, computes the same
options and the same truth from the id alone, whatever the lecturer's controls show.

Its words are catalog keys under the page's section: ``<page>.ask.<name>.text`` (the
question), ``<page>.ask.<name>.why`` (one line shown with the truth after the reveal).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ui.i18n import Translator

Kind = Literal["token", "choice", "number"]
KINDS = ("token", "choice", "number")


@dataclass(frozen=True)
class Option:
    """One answer a student may tap: its id (what the store keeps) and its label."""

    id: str
    label: str


@dataclass(frozen=True)
class Truth:
    """What the class's answers are shown against after the reveal (computed by core)."""

    right: frozenset[str] = frozenset()  # the right options' ids (token and choice questions)
    # the model's own attention row over the options (a token question): id -> weight
    weights: Mapping[str, float] = field(default_factory=dict)
    number: float | None = None  # the right number (a number question)
    tolerance: float = 0.0  # a number answer this close to ``number`` counts as right

    @staticmethod
    def of_row(row: Sequence[float]) -> Truth:
        """A token question's truth: a model's attention ``row`` over the token positions
        (the option ids "0", "1", …) and its largest weight's position (ties: the first)."""
        weights = {str(j): float(w) for j, w in enumerate(row)}
        top = max(range(len(weights)), key=lambda j: weights[str(j)])
        return Truth(right=frozenset({str(top)}), weights=weights)

    def is_right(self, answer: str) -> bool:
        """Whether ``answer`` (as the store keeps it) is right."""
        if self.number is None:
            return answer in self.right
        try:
            return abs(float(answer) - self.number) <= self.tolerance
        except ValueError:
            return False


@dataclass(frozen=True)
class Question:
    """A question on a step. ``options(t)``: the answers a student may tap, labelled in
    ``t``'s language, the same ids in every language (None for a number question);
    ``truth()``: the truth, from core."""

    id: str  # "<page>.<name>"
    kind: Kind
    truth: Callable[[], Truth]
    options: Callable[[Translator], Sequence[Option]] | None = None

    def __post_init__(self) -> None:
        page, _, name = self.id.partition(".")
        if not page or not name or "." in name:
            raise ValueError(f"a question's id is '<page>.<name>', not {self.id!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: unknown kind {self.kind!r}")
        if (self.options is None) != (self.kind == "number"):
            raise ValueError(f"{self.id}: a number question has no options, the others do")

    @property
    def page(self) -> str:
        """The page the question belongs to."""
        return self.id.partition(".")[0]

    @property
    def key(self) -> str:
        """The catalog prefix of its words: ``<page>.ask.<name>``."""
        page, _, name = self.id.partition(".")
        return f"{page}.ask.{name}"

    def text(self, t: Translator) -> str:
        """The question, in ``t``'s language."""
        return t(f"{self.key}.text")

    def why(self, t: Translator) -> str:
        """What the truth shows, one line, in ``t``'s language."""
        return t(f"{self.key}.why")

    def labelled(self, t: Translator) -> tuple[Option, ...]:
        """The options in ``t``'s language (none for a number question)."""
        return tuple(self.options(t)) if self.options else ()


def choices(key: str, ids: Sequence[str]) -> Callable[[Translator], tuple[Option, ...]]:
    """The options of a choice question: ``ids``, labelled by the catalog's ``<key>.<id>``."""
    return lambda t: tuple(Option(i, t(f"{key}.{i}")) for i in ids)


def tokens(words: Callable[[], Sequence[str]]) -> Callable[[Translator], tuple[Option, ...]]:
    """The options of a token question: one per token of ``words()``, its id the token's
    position (tokens repeat; positions do not), its label the token and, when the token is
    there twice, its position."""

    def options(_: Translator) -> tuple[Option, ...]:
        listed = list(words())
        twice = {w for w in listed if listed.count(w) > 1}
        return tuple(
            Option(str(i), f"{w} ({i})" if w in twice else w) for i, w in enumerate(listed)
        )

    return options


def page_questions(page: str) -> tuple[Question, ...]:
    """The questions a page's view declares (its ``QUESTIONS``; none if it has no view or
    none there). Found from the id, so a student's screen needs only the question's id."""
    try:
        view = importlib.import_module(f"ui.views.{page}")
    except ModuleNotFoundError:
        return ()
    return tuple(getattr(view, "QUESTIONS", ()))


def find(question_id: str) -> Question | None:
    """The question with this id (None: no page declares it, e.g. a round left in the store
    by an older version of the app)."""
    page = question_id.partition(".")[0]
    if not page.isidentifier():
        return None
    return next((q for q in page_questions(page) if q.id == question_id), None)
