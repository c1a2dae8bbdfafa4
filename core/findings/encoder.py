"""What the real-encoder page points out, computed from a sentence's tokens and weights.

The page (``ui/views/encoder.py``) turns each finding into a translated sentence; the
numbers and the choices of token come from here, so they can be tested without a browser.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.bert import head_ranking, key_share
from core.interpret import rollout, uniform_baseline
from core.multihead import average_heads

WORD_START = "▁"  # SentencePiece's mark for a piece that starts a word (a space before it)


def bare(piece: str) -> str:
    """A piece as a word: without SentencePiece's word-start mark (``▁它`` -> ``它``)."""
    return piece.removeprefix(WORD_START)


@dataclass(frozen=True)
class WordPlace:
    """Where a word sits among a sentence's pieces."""

    index: int | None  # the piece that is the word itself (word-start mark aside)
    inside: int | None  # else the first piece that holds the word with more around it

    @property
    def merged(self) -> bool:
        """Whether the word is only part of a larger piece (it cannot be picked alone)."""
        return self.index is None and self.inside is not None


def place_of(tokens: Sequence[str], word: str) -> WordPlace:
    """Find ``word`` among ``tokens``: as a piece of its own, else inside a larger one.

    ``"它"`` in ``[…, "因为它", "太", …]`` is inside piece 8: the model reads 因为它 as one
    token, so no row of the attention belongs to 它 alone.
    """
    pieces = [bare(tok) for tok in tokens]
    if word in pieces:
        return WordPlace(pieces.index(word), None)
    inside = next((i for i, p in enumerate(pieces) if word and word in p), None)
    return WordPlace(None, inside)


# Pronouns the page follows by default: the personal ones first (the last one in the
# sentence: the one with the most words before it that it could refer to), the
# demonstratives only in a sentence without one. English is matched as whole words (any
# case), Chinese also inside a larger piece (因为它, 她说).
PRONOUNS = (
    ("it", "its", "they", "them", "their", "he", "him", "his", "she", "her"),
    ("它", "它们", "他", "他们", "她", "她们"),
)
DEMONSTRATIVES = ("this", "这")
NOT_PRONOUNS = ("其他", "其它", "吉他")  # pieces that hold 他/它 as part of another word
# The lesson's question: its pronoun and the word it asks about. Only there does the page
# pick a target by itself; in any other sentence it does not guess what a pronoun means.
LESSON_PAIRS = (("it", "animal"), ("它", "动物"))


@dataclass(frozen=True)
class Pronoun:
    """The pronoun whose row the page follows: the piece that is it, or that holds it."""

    word: str  # the pronoun as written (它, it)
    index: int  # the piece that is the pronoun or holds it
    piece: str  # that piece as the tokenizer wrote it (▁it, 因为它)

    @property
    def merged(self) -> bool:
        """Whether the piece holds more than the pronoun (因为它): no row is its alone."""
        return bare(self.piece).lower() != self.word.lower()


def _whole_word(tokens: Sequence[str], i: int, sentencepiece: bool) -> bool:
    """Whether Latin piece ``i`` is a word of its own, not a part of a longer one (``it`` of
    ``edit``): SentencePiece marks a word's first piece with ▁, WordPiece its later ones
    with ##; the next piece must not go on with letters."""
    if sentencepiece and not tokens[i].startswith(WORD_START):
        return False
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if after.startswith("##"):
        return False
    return not (sentencepiece and after[:1].isascii() and after[:1].isalpha())


def _pronoun_in(
    tokens: Sequence[str], i: int, words: Sequence[str], sentencepiece: bool
) -> str | None:
    """The pronoun of ``words`` that piece ``i`` is or holds (the longest: 它们 before 它)."""
    piece = bare(tokens[i])
    if piece.isascii():
        found = piece.lower() in words and _whole_word(tokens, i, sentencepiece)
        return piece if found else None
    if any(other in piece for other in NOT_PRONOUNS):
        return None
    held = [w for w in words if not w.isascii() and w in piece]
    return max(held, key=len) if held else None


def find_pronoun(tokens: Sequence[str], sentencepiece: bool) -> Pronoun | None:
    """The pronoun whose row the page follows, or None if the sentence has none.

    The last personal pronoun (it, they, 它, 他们 …) as a piece of its own or inside a
    larger piece; else the last demonstrative (this, 这); special tokens never match.
    ``sentencepiece``: the pieces are SentencePiece's (▁ starts a word), else WordPiece's.
    """
    personal = tuple(w for group in PRONOUNS for w in group)
    for words in (personal, DEMONSTRATIVES):
        for i in reversed(range(len(tokens))):
            word = _pronoun_in(tokens, i, words, sentencepiece)
            if word is not None:
                return Pronoun(word, i, tokens[i])
    return None


@dataclass(frozen=True)
class Question:
    """What the page asks of a sentence by default: whose row (the pronoun's piece) and
    which key (only the lesson's word; None: the student picks it)."""

    pronoun: Pronoun | None
    target: int | None


def question(tokens: Sequence[str], sentencepiece: bool) -> Question:
    """The default query and target of a sentence.

    The query is the pronoun's piece (:func:`find_pronoun`). The target is chosen only for
    the lesson's question: the pronoun is ``it``/``它`` and ``animal``/``动物`` is a piece
    of its own. Otherwise None: which word a pronoun refers to is what the student asks
    the model, and the page, which knows no grammar, does not guess it.
    """
    pronoun = find_pronoun(tokens, sentencepiece)
    if pronoun is None:
        return Question(None, None)
    for it, animal in LESSON_PAIRS:
        if pronoun.word.lower() == it:
            target = place_of(tokens, animal).index
            if target is not None:
                return Question(pronoun, target)
    return Question(pronoun, None)


@dataclass(frozen=True)
class WeightShift:
    """How one query's weights moved between two sentences of equal length (B − A)."""

    target: float  # change on the target key
    special: float  # change on the special tokens together (<s>, </s> or [CLS], [SEP])
    others: float  # change on every other key
    top: int  # the key, neither target nor special, that gained most (-1 if none)
    top_gain: float  # its change


def weight_shift(
    row_a: np.ndarray, row_b: np.ndarray, target: int, special: Sequence[int]
) -> WeightShift:
    """Where the weight of a query went when one word of its sentence changed.

    ``row_a``, ``row_b`` ``(n,)``: the query's weights in sentence A and B (each sums to 1,
    so the three changes sum to 0). Answers "the weight 它 loses on 动物: does it go to
    马路, or is it parked on the special tokens?".
    """
    diff = np.asarray(row_b, dtype=np.float64) - np.asarray(row_a, dtype=np.float64)  # (n,)
    special_mask = np.zeros(diff.shape, dtype=bool)
    special_mask[list(special)] = True
    rest = ~special_mask
    rest[target] = False
    gains = np.where(rest, diff, -np.inf)
    top = int(gains.argmax()) if rest.any() else -1
    return WeightShift(
        target=float(diff[target]),
        special=float(diff[special_mask & (np.arange(diff.size) != target)].sum()),
        others=float(diff[rest].sum()),
        top=top,
        top_gain=float(diff[top]) if top >= 0 else 0.0,
    )


HIDDEN_RATIO = 2.0  # a head with this many times its layer's mean is a specialist
RARE_MEDIAN = 0.05  # half the heads put less than this on a key: most do not make the link


def rare_link(ranked: np.ndarray) -> bool:
    """Whether most heads do not make a link: the median head's weight (``ranked``, every
    head's, :func:`core.bert.head_ranking`) is below :data:`RARE_MEDIAN`."""
    return float(np.median(ranked)) < RARE_MEDIAN


@dataclass(frozen=True)
class Specialist:
    """Averaging hides the specialist: the head that links query and key most, against the
    mean of its layer's heads (what a view averaging the heads would show)."""

    layer: int
    head: int
    weight: float  # that head's weight from the query to the key
    mean: float  # the mean of its layer's heads

    @property
    def ratio(self) -> float:
        """How many times the layer mean the specialist puts there."""
        return self.weight / max(self.mean, 1e-9)

    @property
    def hidden(self) -> bool:
        """Whether averaging hides it: it puts at least :data:`HIDDEN_RATIO` times its
        layer's mean there (a head near the mean is no specialist)."""
        return self.ratio >= HIDDEN_RATIO


def specialist(attention: np.ndarray, i: int, j: int) -> Specialist:
    """The best head for query ``i`` → key ``j`` and its layer's mean.

    Shapes: ``attention`` ``(L, h, n, n)``.
    """
    order, weights = head_ranking(attention, i, j)
    layer, head = (int(x) for x in order[0])
    mean = float(average_heads(attention[layer])[i, j])
    return Specialist(layer, head, float(weights[0]), mean)


MUCH_PARKED = 0.25  # a layer's mean weight on a key that is "much of the weight"


@dataclass(frozen=True)
class Parked:
    """How much weight the heads park on one key (the opening special token): a place a
    head puts weight when it has nothing to link, not a meaning."""

    per_layer: np.ndarray  # (L,) mean over the layer's heads and all queries
    low_layer: int
    high_layer: int
    top_head: tuple[int, int]  # (layer, head) that parks most
    top: float  # its mean weight on the key

    @property
    def much(self) -> bool:
        """Whether "much of the weight" sits there: a layer puts at least
        :data:`MUCH_PARKED` of its weight on the key (on average)."""
        return float(self.per_layer[self.high_layer]) >= MUCH_PARKED


def parked(attention: np.ndarray, j: int = 0) -> Parked:
    """The weight every head puts on key ``j``, averaged over all queries.

    Shapes: ``attention`` ``(L, h, n, n)``.
    """
    share = key_share(attention, j)  # (L, h)
    per_layer = share.mean(axis=1)  # (L,)
    top = np.unravel_index(int(share.argmax()), share.shape)
    return Parked(
        per_layer,
        int(per_layer.argmin()),
        int(per_layer.argmax()),
        (int(top[0]), int(top[1])),
        float(share[top]),
    )


def favourite_flips(attention_a: np.ndarray, attention_b: np.ndarray, i: int, ib: int) -> int:
    """In how many heads query ``i`` (``ib`` in sentence B) has another favourite key in B
    than in A. Sentences of equal length (keys match by position).

    Shapes: ``attention_a``, ``attention_b`` ``(L, h, n, n)``.
    """
    return int((attention_a[:, :, i].argmax(-1) != attention_b[:, :, ib].argmax(-1)).sum())


@dataclass(frozen=True)
class Spread:
    """How far one changed word's effect spreads in one head: B − A of its weights."""

    rise: tuple[int, int]  # (query, key) of the largest rise
    rise_by: float
    fall: tuple[int, int]  # (query, key) of the largest fall
    fall_by: float
    moved: int  # rows with a weight that moves by more than the threshold
    moved_cells: int  # weights that move by more than the threshold
    rows: int

    @property
    def largest(self) -> tuple[tuple[int, int], float]:
        """The cell that moves most either way, and by how much (signed)."""
        return (
            (self.rise, self.rise_by)
            if self.rise_by >= -self.fall_by
            else (self.fall, self.fall_by)
        )


def spread(diff: np.ndarray, threshold: float) -> Spread:
    """The largest rise and fall in ``diff`` = B − A, and how many rows move visibly.

    Shapes: ``diff`` ``(m, m)``, or ``(1, m)`` for one query's row.
    """
    up = np.unravel_index(int(diff.argmax()), diff.shape)
    down = np.unravel_index(int(diff.argmin()), diff.shape)
    visible = np.abs(diff) > threshold  # (m, m) or (1, m)
    return Spread(
        (int(up[0]), int(up[1])),
        float(diff[up]),
        (int(down[0]), int(down[1])),
        float(diff[down]),
        int(visible.any(axis=1).sum()),
        int(visible.sum()),
        diff.shape[0],
    )


@dataclass(frozen=True, eq=False)
class Flow:
    """Where one query token's attention goes after the last layer, three ways: the last
    layer's raw attention averaged over its heads, attention rollout through every layer
    (Abnar & Zuidema 2020) and the uniform baseline. Each row is over all ``n`` tokens of
    the sentence, special ones included, and sums to 1."""

    raw: np.ndarray  # (n,) the query's row of the last layer, mean over the heads
    rolled: np.ndarray  # (n,) the query's row of the rollout after the last layer
    uniform: np.ndarray  # (n,) 1/n on every token

    @property
    def rows(self) -> np.ndarray:
        """The three rows stacked, raw, rollout, uniform: ``(3, n)``."""
        return np.stack([self.raw, self.rolled, self.uniform])


def flow(attention: np.ndarray, query: int, residual: float = 0.5) -> Flow:
    """Query ``query``'s row of the last layer's head-averaged attention, of the rollout
    after the last layer (:func:`core.interpret.rollout` with this ``residual`` share), and
    of the uniform baseline (:func:`core.interpret.uniform_baseline`, no mask: an encoder
    attends over every token).

    Shapes: ``attention`` ``(L, h, n, n)`` -> :class:`Flow` of three ``(n,)`` rows.
    """
    n = attention.shape[-1]
    return Flow(
        average_heads(attention[-1])[query],
        rollout(attention, residual)[-1, query],
        uniform_baseline(n)[query],
    )


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """The total variation distance between two distributions over the same tokens: half
    the sum of the absolute differences, 0 when they are equal, 1 when they share nothing
    (from the uniform one over ``n`` tokens, at most 1 − 1/n: all weight on one token).

    Shapes: ``p``, ``q`` ``(n,)``, each summing to 1 -> a float in [0, 1].
    """
    return 0.5 * float(np.abs(np.asarray(p, dtype=float) - np.asarray(q, dtype=float)).sum())


def favourites(row: np.ndarray, skip: Sequence[int] = (), digits: int = 3) -> tuple[int, ...]:
    """The tokens ``row`` puts most weight on, leaving out the positions in ``skip`` (the
    special tokens: the favourite words): every token whose weight, printed with ``digits``
    decimals, reads as the largest's (0.25001 and 0.24999 both read 0.250: a tie, not a
    winner); in token order, empty if ``skip`` leaves none.

    Shapes: ``row`` ``(n,)``.
    """
    kept = np.ones(len(row), dtype=bool)
    kept[list(skip)] = False
    printed = np.round(np.asarray(row, dtype=float), digits)  # (n,) as the page prints them
    if not kept.any():
        return ()
    return tuple(int(k) for k in np.flatnonzero(kept & (printed == printed[kept].max())))


def rank_of(row: np.ndarray, j: int, digits: int = 3) -> int:
    """Token ``j``'s place in ``row`` by weight as printed with ``digits`` decimals: 1 for
    the largest, ties sharing the better place (one more than the number of weights that
    print larger).

    Shapes: ``row`` ``(n,)``.
    """
    printed = np.round(np.asarray(row, dtype=float), digits)  # (n,)
    return 1 + int((printed > printed[j]).sum())


@dataclass(frozen=True)
class FlowFacts:
    """What the rollout step points out about a :class:`Flow`, read as the page prints its
    numbers (three decimals)."""

    raw_top: tuple[int, ...]  # the tokens raw attention puts most weight on (ties: all)
    rolled_top: tuple[int, ...]  # the same for rollout
    raw_words: tuple[int, ...]  # raw attention's favourites among the words (no special token)
    rolled_words: tuple[int, ...]
    raw_special: float  # the weight on the special tokens together
    rolled_special: float
    raw_distance: float  # total variation distance from the uniform baseline
    rolled_distance: float

    @property
    def shared(self) -> tuple[int, ...]:
        """The top tokens raw attention and rollout have in common (none: they disagree)."""
        return tuple(k for k in self.raw_top if k in self.rolled_top)

    @property
    def farther(self) -> str | None:
        """Which row is farther from uniform, ``"raw"`` or ``"rollout"``; None when their
        distances print alike (three decimals)."""
        raw, rolled = round(self.raw_distance, 3), round(self.rolled_distance, 3)
        if raw == rolled:
            return None
        return "raw" if raw > rolled else "rollout"


def flow_facts(f: Flow, special: Sequence[int]) -> FlowFacts:
    """The favourites of raw attention and rollout (over every token, and over the words:
    the ``special`` positions left out), their weight on the special tokens, and how far
    each is from the uniform baseline (:func:`total_variation`).

    Shapes: ``f``'s rows ``(n,)``; ``special`` positions in ``0..n-1``.
    """
    special = list(special)
    return FlowFacts(
        favourites(f.raw),
        favourites(f.rolled),
        favourites(f.raw, special),
        favourites(f.rolled, special),
        float(f.raw[special].sum()),
        float(f.rolled[special].sum()),
        total_variation(f.raw, f.uniform),
        total_variation(f.rolled, f.uniform),
    )
