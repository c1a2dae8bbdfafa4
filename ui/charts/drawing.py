"""From a chart to the screen: themed, fitted to its room, drawn, and cached per input.

:func:`show` draws a chart (a Vega-Lite dict) in the house theme (:func:`to_spec`), fitted
to its room (:func:`ui.charts.sizing.fit`), with ``st.vega_lite_chart``.
:func:`show_cached` does the same for ``builder(*args, **kwargs)`` and builds, fits and
converts its data for the browser once per distinct input (Streamlit's data cache, keyed on
the pickled inputs, the presenter flag and the room: each caller gets its own copy, so
sessions share nothing mutable). The spec they return carries the chart's data, so the
exports (PNG/SVG, and :func:`ui.charts.specs.table` for the CSV) are made from the very
chart on screen.
"""

import hashlib
import io
import pickle
from collections.abc import Callable

import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util

from ui.charts.sizing import Room, fit, room
from ui.charts.theme import theme_config
from ui.context import PageContext
from ui.i18n import Translator

# The Vega-Lite major version Streamlit's frontend and vl-convert (the exports) draw.
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"


def to_spec(chart: dict, presenter: bool) -> dict:
    """A finished Vega-Lite spec in the house theme, sized by its own width and height (axes
    and legends come on top: ``autosize: pad``)."""
    spec = dict(chart)
    spec["config"] = {**spec.get("config", {}), **theme_config(presenter)}
    spec.setdefault("$schema", SCHEMA)
    spec.setdefault("autosize", {"type": "pad", "contains": "padding"})
    return spec


# How Vega draws a chart in the browser. For students, on a canvas: a slider step redraws
# one bitmap per chart instead of rewriting hundreds of SVG nodes, which cut a step's
# main-thread work by 8-23 % on /masking, /weighted_sum and /qkv (bench/RESULTS.md,
# session 7). A canvas has no element per mark, so the ARIA description Vega-Lite writes
# for every mark (a string built from all its fields, per cell, through Vega's expression
# interpreter, on every data swap) reaches no one there: off ("aria": false; ~13 % of
# /qkv's Vega work per step, session 10). On a slide, SVG with those descriptions:
# presenter mode scales a chart too wide for a laptop's column with CSS (vector-sharp on a
# projector), and its text stays measurable in the DOM.
def _drawn(spec: dict, presenter: bool) -> dict:
    if presenter:
        return spec
    config = {**spec.get("config", {}), "aria": False}
    return {**spec, "config": config, "usermeta": {"embedOptions": {"renderer": "canvas"}}}


def _draw(spec: dict, key: str | None, presenter: bool) -> None:
    st.vega_lite_chart(spec=_drawn(spec, presenter), theme=None, key=key, width="content")


def show(
    ctx: PageContext,
    chart: dict,
    key: str | None = None,
    *,
    space: Room | None = None,
) -> dict:
    """Draw ``chart`` in the house theme, fitted to ``space`` (default: :func:`room`, the
    whole page width), and return the spec as drawn (for exports)."""
    spec = fit(to_spec(chart, ctx.presenter), space or room(ctx))
    _draw(spec, key, ctx.presenter)
    return spec


Builder = Callable[..., dict]  # a chart builder: inputs -> a Vega-Lite dict


class _KeyPickler(pickle.Pickler):
    """Pickles a chart's inputs for :func:`_input_key`; a :class:`Translator` as its language."""

    def reducer_override(self, obj: object) -> object:
        if isinstance(obj, Translator):
            return Translator, (obj.lang,)
        return NotImplemented


def _input_key(builder: Builder, *inputs: object) -> str:
    """One short key for a builder and its inputs (arrays, labels, tables, a Translator…).

    Streamlit's own argument hashing walks every argument in Python (and looks the
    function's signature up once per argument): ~1–2 ms a chart on every rerun. A pickle is
    made in C and is a faithful copy of the values, so equal keys mean equal inputs.
    """
    buf = io.BytesIO()
    try:
        _KeyPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(inputs)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(f"the inputs of {_key(builder)} must be plain values: {e}") from e
    return f"{_key(builder)}:{hashlib.blake2b(buf.getbuffer(), digest_size=20).hexdigest()}"


def _arrow(values: object) -> bytes:
    """A dataset in the Arrow form ``st.vega_lite_chart`` sends. Records go straight to
    Arrow (~2 ms for a 64 × 64 heatmap; through pandas, Streamlit's default, ~100×
    longer); anything else, or records Arrow cannot type, the default way."""
    if isinstance(values, list) and values and all(isinstance(r, dict) for r in values):
        try:
            return dataframe_util.convert_anything_to_arrow_bytes(pa.Table.from_pylist(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return dataframe_util.convert_anything_to_arrow_bytes(values)


@st.cache_data(max_entries=256, show_spinner=False)
def _fitted(key: str, _job: tuple[Builder, tuple, dict, bool, Room]) -> tuple[dict, dict]:
    """``builder(*args, **kwargs)`` of ``_job`` themed and :func:`fit` to the room (the spec
    as drawn, data inline, for the exports) and the same with its datasets already in the
    Arrow form ``st.vega_lite_chart`` sends (it passes bytes through instead of converting
    every dataset on every rerun): once per ``key`` (builder, inputs, presenter flag and
    room, :func:`_input_key`), so a rerun with the same inputs skips all three."""
    builder, args, kwargs, presenter, space = _job
    fitted = fit(to_spec(builder(*args, **kwargs), presenter), space)
    arrow = {name: _arrow(values) for name, values in fitted.get("datasets", {}).items()}
    return fitted, {**fitted, "datasets": arrow} if arrow else fitted


def _key(builder: Builder) -> str:
    name = f"{builder.__module__}.{builder.__qualname__}"
    if "<" in name:  # a lambda or a nested function: its name would not identify it
        raise TypeError(f"chart builders must be module-level functions, not {name}")
    return name


def show_cached(
    ctx: PageContext,
    builder: Builder,
    *args: object,
    space: Room | None = None,
    **kwargs: object,
) -> dict:
    """:func:`show` the chart ``builder(*args, **kwargs)``, built, fitted and its data
    converted for the browser once per distinct input. ``space`` is where it must fit
    (default: :func:`room`, the page width).

    ``builder`` is a module-level function (its module and name identify it in the cache)
    of picklable inputs: arrays, tables, labels, translated titles, a :class:`Translator`.
    Returns the themed spec as drawn, data inline, for the exports: a fresh copy on every
    call, so callers may change it.
    """
    job = (builder, args, kwargs, ctx.presenter, space or room(ctx))
    fitted, drawn = _fitted(_input_key(builder, *job[1:]), job)
    _draw(drawn, None, ctx.presenter)
    return fitted
