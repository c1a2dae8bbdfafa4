"""URL-shareable controls with validation.

Every control that shapes a view is created through these helpers: the widget is bound to a
query parameter (``bind="query-params"``), so the address bar always restores the view,
also on a freshly started server. Before the widget is drawn, the raw URL value is checked
against the same spec; an invalid one (``?d_model=-3``, ``?heads=abc``, ``?seed=1e99``,
``?temperature=nan``) produces a short translated warning, and the widget falls back to
its default.
"""

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from ui.context import PageContext
from ui.safe import plain

_INT = re.compile(r"[+-]?\d{1,12}")


@dataclass(frozen=True)
class Int:
    """An integer control in ``[lo, hi]``."""

    key: str
    default: int
    lo: int
    hi: int

    def parse(self, raw: str) -> int | None:
        """The value ``raw`` stands for, or None if it is not an integer in range."""
        if not _INT.fullmatch(raw.strip()):
            return None
        value = int(raw)
        return value if self.lo <= value <= self.hi else None


@dataclass(frozen=True)
class Float:
    """A finite float control in ``[lo, hi]``."""

    key: str
    default: float
    lo: float
    hi: float

    def parse(self, raw: str) -> float | None:
        """The value ``raw`` stands for, or None if it is not a finite float in range."""
        try:
            value = float(raw)
        except ValueError:
            return None
        return value if math.isfinite(value) and self.lo <= value <= self.hi else None


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of raw string tokens (the URL holds the token, not a label)."""

    key: str
    default: str
    options: tuple[str, ...]

    def parse(self, raw: str) -> str | None:
        """``raw`` if it is one of the options."""
        return raw if raw in self.options else None


@dataclass(frozen=True)
class Text:
    """Free text up to ``max_len`` characters."""

    key: str
    default: str
    max_len: int = 200

    def parse(self, raw: str) -> str | None:
        """``raw`` if it is not too long."""
        return raw if len(raw) <= self.max_len else None


@dataclass(frozen=True)
class Flag:
    """An on/off control; the URL holds ``true`` or ``false``."""

    key: str
    default: bool

    def parse(self, raw: str) -> bool | None:
        """True/False for the spellings Streamlit writes, else None."""
        return {"true": True, "false": False}.get(raw.lower())


@dataclass(frozen=True)
class Many:
    """Any number of a fixed set of raw tokens (none too); the URL holds them joined by
    ``.`` in the options' order (``?off=2.5``)."""

    key: str
    options: tuple[str, ...]
    default: tuple[str, ...] = ()

    def parse(self, raw: str) -> tuple[str, ...] | None:
        """The options ``raw`` names, in the options' order, or None if it names another."""
        picked = [x for x in raw.split(".") if x] if raw else []
        if any(x not in self.options for x in picked):
            return None
        return tuple(o for o in self.options if o in picked)


Spec = Int | Float | Choice | Text | Flag | Many
_OWNED = "_control_keys"  # session state: the keys of every control this session has drawn


def _owned(key: str) -> str:
    """``key``, remembered as a control's (so :func:`forget_controls` finds it)."""
    st.session_state.setdefault(_OWNED, set()).add(key)
    return key


def forget_controls() -> None:
    """Drop every control value this session keeps, so each control starts again from the
    URL or its default. The shell calls it when a session moves to another page: pages share
    control names (``d_model``, ``seed``, ``temp``), and Streamlit keeps a widget's value
    across a page change, so without this a value moved on one page would open the next
    page (and enter its URL). Only the language and presenter mode travel between pages."""
    for key in st.session_state.get(_OWNED, ()):
        for name in (key, _choice_widget_key_of(key), _seen_key(key)):
            if name in st.session_state:
                del st.session_state[name]


def check_url(ctx: PageContext, spec: Spec, default_label: str | None = None) -> None:
    """Warn (translated) when the URL holds a value for ``spec`` that cannot be used (the
    warning names ``default_label``, if given, as what is shown instead)."""
    raw = st.query_params.get(spec.key)
    if raw is None or spec.parse(raw) is not None:
        return
    default = plain(spec.default) if default_label is None else plain(default_label)
    if isinstance(spec, Text):  # too long: not echoed (it may be any length), cut by the box
        ctx.warn(ctx.t("params.too_long", name=spec.key, limit=spec.max_len))
    else:
        ctx.warn(ctx.t("params.invalid", name=spec.key, value=plain(raw, 24), default=default))


def _fit_range(spec: Int | Float) -> None:
    """Keep a control's value inside its range when the range depends on another control
    (/flash's query row on the number of keys, /training's snapshot on the steps): a value
    left above the new end moves to it, in the widget and in the URL, instead of Streamlit
    refusing the widget (StreamlitValueAboveMaxError)."""
    value = st.session_state.get(spec.key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return
    if spec.lo <= value <= spec.hi:
        return
    fitted = type(spec.default)(min(max(value, spec.lo), spec.hi))
    st.session_state[spec.key] = fitted
    if spec.key in st.query_params:
        st.query_params[spec.key] = str(fitted)


def slider(
    ctx: PageContext, spec: Int | Float, label: str, step: float | None = None, **kw: object
) -> int | float:
    """A URL-bound slider (its value kept inside a range that may have shrunk)."""
    _fit_range(spec)
    check_url(ctx, spec)
    return st.slider(
        label,
        spec.lo,
        spec.hi,
        spec.default,
        step=step,
        key=_owned(spec.key),
        bind="query-params",
        **kw,
    )


def index_slider(ctx: PageContext, spec: Int, label: str, **kw: object) -> int:
    """A URL-bound position slider; with a single position (no range to slide) just 0."""
    if spec.hi <= spec.lo:
        check_url(ctx, spec)
        return spec.lo
    return int(slider(ctx, spec, label, **kw))


def number(ctx: PageContext, spec: Int, label: str, **kw: object) -> int:
    """A URL-bound integer box (for seeds and other wide ranges)."""
    _fit_range(spec)
    check_url(ctx, spec)
    return st.number_input(
        label,
        spec.lo,
        spec.hi,
        spec.default,
        step=1,
        key=_owned(spec.key),
        bind="query-params",
        **kw,
    )


def _choice_widget_key(spec: Choice) -> str:
    return _choice_widget_key_of(spec.key)


def _choice_widget_key_of(key: str) -> str:
    return f"_choice_{key}"


def _seen_key(key: str) -> str:
    """Where :func:`text` keeps the default its box last showed."""
    return f"_default_{key}"


def _write_choice(spec: Choice, value: str) -> None:
    """Put a choice's raw token in the URL (dropped when it is the default)."""
    if value == spec.default:
        st.query_params.pop(spec.key, None)
    elif st.query_params.get(spec.key) != value:
        st.query_params[spec.key] = value


def _choice_changed(spec: Choice) -> None:
    value = st.session_state.get(_choice_widget_key(spec))
    _write_choice(spec, value if value in spec.options else spec.default)


def select(
    ctx: PageContext,
    spec: Choice,
    label: str,
    format_func: Callable[[str], str] = str,
    widget: str = "segmented",
    **kw: object,
) -> str:
    """A URL-synced choice among raw tokens: ``widget`` is "segmented", "select" or "radio".

    Not ``bind="query-params"``: a bound widget writes its *displayed label* to the URL, so
    a translated label would end up in the link. Here the URL holds the raw token
    (``?embedding=stable``) in every language, and is the single source of truth.
    """
    check_url(ctx, spec)
    value = spec.parse(st.query_params.get(spec.key, spec.default)) or spec.default
    key = _choice_widget_key(spec)
    _owned(spec.key)
    st.session_state[key] = value
    common = {
        "format_func": format_func,
        "key": key,
        "on_change": _choice_changed,
        "args": (spec,),
        **kw,
    }
    if widget == "segmented":
        st.segmented_control(label, spec.options, required=True, **common)
    elif widget == "radio":
        st.radio(label, spec.options, **common)
    else:
        st.selectbox(label, spec.options, **common)
    _write_choice(spec, value)
    return value


def _many_changed(spec: Many) -> None:
    picked = st.session_state.get(_choice_widget_key_of(spec.key)) or []
    _write_many(spec, tuple(o for o in spec.options if o in picked))


def _write_many(spec: Many, value: tuple[str, ...]) -> None:
    """Put the picked tokens in the URL (dropped when they are the default)."""
    if value == spec.default:
        st.query_params.pop(spec.key, None)
    elif st.query_params.get(spec.key) != ".".join(value):
        st.query_params[spec.key] = ".".join(value)


def pick_many(
    ctx: PageContext,
    spec: Many,
    label: str,
    format_func: Callable[[str], str] = str,
    default_label: str | None = None,
    **kw: object,
) -> tuple[str, ...]:
    """A URL-synced choice of any number of raw tokens, as pills (the URL holds the raw
    tokens in every language, as :func:`select`'s does); a bad link warns, naming
    ``default_label`` as what is shown instead."""
    check_url(ctx, spec, default_label)
    value = spec.parse(st.query_params.get(spec.key, ".".join(spec.default)))
    value = spec.default if value is None else value
    key = _choice_widget_key_of(spec.key)
    _owned(spec.key)
    st.session_state[key] = list(value)
    st.pills(
        label,
        spec.options,
        selection_mode="multi",
        format_func=format_func,
        key=key,
        on_change=_many_changed,
        args=(spec,),
        **kw,
    )
    _write_many(spec, value)
    return value


def select_or_none(
    ctx: PageContext,
    spec: Choice,
    label: str,
    format_func: Callable[[str], str] = str,
    placeholder: str = "",
    **kw: object,
) -> str | None:
    """A URL-synced select box that starts empty (``placeholder`` shown) until the user
    picks one of ``spec.options``: None while empty. ``spec.default`` is ``""``, no option:
    an empty box keeps nothing in the URL, a bad URL value warns and leaves it empty. For a
    choice with no defensible default (/encoder's target token in a student's sentence)."""
    check_url(ctx, spec, placeholder)
    value = spec.parse(st.query_params.get(spec.key, ""))
    key = _choice_widget_key(spec)
    _owned(spec.key)
    st.session_state[key] = value
    common = {"format_func": format_func, "key": key, "on_change": _choice_changed, **kw}
    st.selectbox(label, spec.options, placeholder=placeholder, args=(spec,), **common)
    _write_choice(spec, value or spec.default)
    return value


def assign(spec: Spec, value: object) -> None:
    """Set a control's value from code (e.g. a "load example" button callback)."""
    if isinstance(spec, Choice):
        _write_choice(spec, str(value))
    else:
        st.session_state[spec.key] = value


def toggle(ctx: PageContext, spec: Flag, label: str, **kw: object) -> bool:
    """A URL-bound on/off toggle."""
    check_url(ctx, spec)
    return st.toggle(label, spec.default, key=_owned(spec.key), bind="query-params", **kw)


def text(ctx: PageContext, spec: Text, label: str, **kw: object) -> str:
    """A URL-bound single-line text box; an over-long URL value is cut to its first
    ``spec.max_len`` characters (with a warning).

    A default may depend on other controls (/encoder's sentence on its model and language):
    a box still showing its previous default follows the new one, a box the user typed in
    keeps its text.
    """
    # A text too long for the box: on a page's first run Streamlit seeds a bound box from
    # the URL whatever the session state says, and cuts it to max_chars (check_url says so).
    check_url(ctx, spec)
    seen_key = _seen_key(spec.key)
    seen = st.session_state.get(seen_key)
    st.session_state[seen_key] = spec.default
    if seen not in (None, spec.default) and st.session_state.get(spec.key, seen) == seen:
        st.session_state[spec.key] = spec.default
        st.query_params.pop(spec.key, None)
    return st.text_input(
        label, spec.default, max_chars=spec.max_len, key=_owned(spec.key), bind="query-params", **kw
    )


def divisor_choice(key: str, n: int, default: int) -> Choice:
    """A choice among the divisors of ``n`` (e.g. head counts for ``d_model``)."""
    options = tuple(str(d) for d in range(1, n + 1) if n % d == 0)
    return Choice(key, str(default) if str(default) in options else options[0], options)


def options_of(values: Sequence[object]) -> tuple[str, ...]:
    """Raw URL tokens for a list of values."""
    return tuple(str(v) for v in values)
