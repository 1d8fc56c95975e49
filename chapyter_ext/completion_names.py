"""The kernel's names for inline completion: what ``df.`` may continue with, cheaply.

Run in the kernel by the browser (a silent user expression, like the chat's variable summary),
so it must be fast and bounded whatever the namespace holds: no ``repr`` of values, only names,
types, DataFrame columns, dict keys (strings), function signatures and a few attributes.
Nothing here imports pandas or numpy; objects are recognised by their type's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

#: Most names listed, characters per summary, columns/keys per variable.
MAX_NAMES = 60
MAX_SUMMARY = 200
MAX_ITEMS = 30


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"


def _items(values: Any) -> str:
    names = [str(v) for _, v in zip(range(MAX_ITEMS), values)]
    return ", ".join(names)


def summarize(value: Any) -> str:
    """A short summary of ``value`` that names what may follow a dot or a bracket."""
    kind = type(value).__name__
    try:
        if kind == "DataFrame" and hasattr(value, "columns"):
            shape = getattr(value, "shape", ("?", "?"))
            return _clip(f"{shape[0]} rows; columns: {_items(value.columns)}")
        if kind == "Series" and hasattr(value, "name"):
            return _clip(f"{len(value)} values, name {value.name!r}, dtype {value.dtype}")
        if kind == "ndarray":
            return _clip(f"shape {value.shape}, dtype {value.dtype}")
        if isinstance(value, Mapping):
            keys = [k for _, k in zip(range(MAX_ITEMS), value.keys())]
            return _clip(f"{len(value)} keys: {_items(repr(k) for k in keys)}")
        if isinstance(value, (list, tuple, set)):
            return f"{len(value)} items"
        if isinstance(value, (int, float, bool)) or value is None:
            return repr(value)[:40]
        if isinstance(value, str):
            return f"str of {len(value)} chars"
        if inspect.isclass(value):
            return _clip(f"class {value.__name__}")
        if callable(value):
            try:
                return _clip(f"{getattr(value, '__name__', kind)}{inspect.signature(value)}")
            except (TypeError, ValueError):
                return "callable"
    except Exception:  # a value whose attributes raise: its type is enough
        return ""
    return ""


def completion_names(
    user_ns: Mapping[str, Any], hidden: Mapping[str, Any] | None = None
) -> list[dict[str, str]]:
    """The user's names, newest first: ``[{"name", "type", "summary"}]``, at most
    ``MAX_NAMES``; modules, private names and IPython's own are left out."""
    hidden = hidden or {}
    found: list[dict[str, str]] = []
    for name in reversed(list(user_ns)):
        if name.startswith("_") or name in hidden or name in ("In", "Out", "exit", "quit"):
            continue
        value = user_ns[name]
        if inspect.ismodule(value):
            continue
        found.append({"name": name, "type": type(value).__name__, "summary": summarize(value)})
        if len(found) >= MAX_NAMES:
            break
    return found
