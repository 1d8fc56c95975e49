"""One value's summary, whatever it is: whole pandas objects by :mod:`.frames`, everything else
by :mod:`.values`; the ``type: summary`` line, each kind's default length, and the short form
inline completion reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..redact import Redactor
from . import values
from .frames import pandas_body
from .text import clip, pandas_types, type_label

__all__ = [
    "completion_summary",
    "default_chars",
    "describe",
    "summarize_value",
    "summary_line",
]

# Default characters for one variable's summary, by kind.
_FRAME_CHARS = 2000
_SERIES_CHARS = 600
_VALUE_CHARS = 300


def describe(value: object, limit: int, r: Redactor) -> str:
    """The summary of ``value`` without its type, at most ``limit`` characters, redacted."""
    pandas = pandas_types()
    if pandas is None or not isinstance(value, pandas) or limit <= 0:
        return values.describe(value, limit, r)
    try:
        return clip(pandas_body(value, pandas, limit, r), limit)
    except Exception:  # any user object may fail in any way; fall back to its type
        return clip(f"<{type_label(value)}>", limit)


def default_chars(value: object) -> int:
    """Characters a summary of ``value`` gets by default: more for tables."""
    pandas = pandas_types()
    if pandas is not None:
        if isinstance(value, pandas[0]):
            return _FRAME_CHARS
        if isinstance(value, pandas[1]):
            return _SERIES_CHARS
    return _VALUE_CHARS


def summary_line(value: object, limit: int, r: Redactor) -> str:
    """``type: summary`` of ``value`` within ``limit`` characters."""
    label = type_label(value)
    if limit < len(label) + 4:
        return clip(label, limit)
    return f"{label}: {describe(value, limit - len(label) - 2, r)}"


def summarize_value(value: object, *, max_chars: int = 300) -> str:
    """``"type: short summary"`` of one value, at most ``max_chars`` characters, redacted.

    DataFrames give their shape, exact column names with dtypes and a few rows; Series and Index
    their length, dtype and first values; numpy arrays their shape, dtype and first values;
    containers their length and first items (recursively, briefly); strings their length and a
    clipped preview; user functions and classes their signature. The cost does not depend on the
    size of the value, and a value whose summary fails is shown by its type name.
    """
    return summary_line(value, max_chars, Redactor())


# ---------------------------------------------------------------------------------------------
# The short form inline completion reads (run in the kernel after every cell: names only)

#: Characters per completion summary, and columns or keys listed in one.
COMPLETION_SUMMARY = 200
COMPLETION_ITEMS = 30


def _clip_summary(text: str) -> str:
    return text if len(text) <= COMPLETION_SUMMARY else text[: COMPLETION_SUMMARY - 1] + "…"


def _first_items(values: Any) -> str:
    return ", ".join(str(v) for _, v in zip(range(COMPLETION_ITEMS), values))


def completion_summary(value: Any) -> str:
    """What may follow ``value``'s name after a dot or a bracket, cheaply (no ``repr`` of the
    value; pandas and numpy recognised by their type's name, never imported): a DataFrame's
    columns, a dict's keys, a function's signature, a container's length."""
    import inspect

    kind = type(value).__name__
    try:
        if kind == "DataFrame" and hasattr(value, "columns"):
            shape = getattr(value, "shape", ("?", "?"))
            return _clip_summary(f"{shape[0]} rows; columns: {_first_items(value.columns)}")
        if kind == "Series" and hasattr(value, "name"):
            return _clip_summary(f"{len(value)} values, name {value.name!r}, dtype {value.dtype}")
        if kind == "ndarray":
            return _clip_summary(f"shape {value.shape}, dtype {value.dtype}")
        if isinstance(value, Mapping):
            keys = [k for _, k in zip(range(COMPLETION_ITEMS), value.keys())]
            return _clip_summary(f"{len(value)} keys: {_first_items(repr(k) for k in keys)}")
        if isinstance(value, (list, tuple, set)):
            return f"{len(value)} items"
        if isinstance(value, (int, float, bool)) or value is None:
            return repr(value)[:40]
        if isinstance(value, str):
            return f"str of {len(value)} chars"
        if inspect.isclass(value):
            return _clip_summary(f"class {value.__name__}")
        if callable(value):
            try:
                return _clip_summary(
                    f"{getattr(value, '__name__', kind)}{inspect.signature(value)}"
                )
            except (TypeError, ValueError):
                return "callable"
    except Exception:  # a value whose attributes raise: its type is enough
        return ""
    return ""
