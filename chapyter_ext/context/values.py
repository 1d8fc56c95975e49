"""Short descriptions of values other than whole pandas objects (:mod:`.frames`), redacted and
clipped: scalars, text, containers, arrays, functions, classes, records; and of any value nested
in another (:func:`brief`, :func:`cell_text`).

Nothing heavy is imported: pandas and numpy are recognised through ``sys.modules`` (only when the
user has already imported them). The cost does not grow with the data: a container is described
from its length and first few items, an array from ``a.flat[:k]``; nothing calls a full ``repr``
of a builtin container. Every piece is redacted before it is clipped, so a secret cannot leak
half-cut.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from ..redact import REDACTED, Redactor, is_secret_name
from .text import (
    ARRAY_MODULES,
    MISSING,
    PREVIEW_ITEMS,
    SCALARS,
    STR_MODULES,
    TABLE_MODULES,
    clip,
    count,
    join_items,
    module_root,
    numpy_types,
    one_line,
    pandas_types,
    per_item,
    qualname,
    safe,
    scalar_text,
    type_label,
)

_MAX_DEPTH = 2


# ---------------------------------------------------------------------------------------------
# Values


def brief(value: Any, limit: int, r: Redactor, depth: int) -> str:
    """One-line description of a value nested in another (an item, a key, a default)."""
    if isinstance(value, SCALARS):
        return clip(scalar_text(value), limit)
    if isinstance(value, str):
        return safe(repr(value[: limit + r.margin]), limit, r)
    if isinstance(value, (bytes, bytearray)):
        return safe(repr(bytes(value[: limit + r.margin])), limit, r)
    pandas = pandas_types()
    if pandas is not None:
        frame, series, index = pandas
        if isinstance(value, frame):
            rows, cols = value.shape
            return clip(f"<DataFrame {rows:,}×{cols:,}>", limit)
        if isinstance(value, (series, index)):
            return clip(f"<{type(value).__name__} of {len(value):,} {value.dtype}>", limit)
    arrays = numpy_types()
    if arrays is not None and isinstance(value, arrays[0]):
        return clip(f"<ndarray {tuple(value.shape)} {value.dtype}>", limit)
    if depth >= _MAX_DEPTH and isinstance(value, (Sequence, AbstractSet, Mapping)):
        return clip(f"<{type(value).__name__} of {len(value):,}>", limit)
    return one_line(describe(value, limit, r, depth))


def describe(value: object, limit: int, r: Redactor, depth: int = 0) -> str:
    """The summary of a value without its type, at most ``limit`` characters, redacted."""
    if limit <= 0:
        return ""
    try:
        # Clipped once more: the per-kind code aims at ``limit``; this guarantees it.
        return clip(_describe_unguarded(value, limit, r, depth), limit)
    except Exception:  # any user object may fail in any way; fall back to its type
        return clip(f"<{type_label(value)}>", limit)


def _cls(value: object) -> Any:
    """``type(value)``, typed so that a class's own attributes can be read (``_fields``...)."""
    return type(value)


def _describe_unguarded(value: Any, limit: int, r: Redactor, depth: int) -> str:
    if isinstance(value, SCALARS):
        return clip(scalar_text(value), limit)
    if isinstance(value, str):
        text = repr(value[: limit + r.margin])
        if len(value) <= limit and len(text) <= limit:
            return safe(text, limit, r)
        prefix = f"{len(value):,} chars, "
        return prefix + safe(text, limit - len(prefix), r)
    if isinstance(value, (bytes, bytearray)):
        prefix = f"{len(value):,} bytes, " if len(value) > limit // 2 else ""
        return prefix + safe(repr(bytes(value[: limit + r.margin])), limit - len(prefix), r)

    pandas = pandas_types()
    if pandas is not None and isinstance(value, pandas):
        return brief(value, limit, r, depth)  # a whole one is :mod:`.summaries`' to describe
    arrays = numpy_types()
    if arrays is not None:
        ndarray, generic = arrays
        if isinstance(value, ndarray):
            return _ndarray_body(value, limit, r, depth)
        if isinstance(value, generic):
            return describe(value.item(), limit, r, depth)

    if isinstance(value, type):
        return _class_body(value, limit, r)
    # Any mapping or sequence (os.environ, UserDict, array.array, deque…): its own repr would
    # show every item.
    if isinstance(value, Mapping):
        return _container_body(value, limit, r, depth)
    if isinstance(value, range):
        return clip(repr(value), limit)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return _attrs_body(value, list(_cls(value)._fields), limit, r, depth)
    if isinstance(value, (Sequence, AbstractSet)) or type(value).__name__ == "deque":
        return _container_body(value, limit, r, depth)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return _function_body(value, limit, r)
    if type(value).__name__ == "partial" and module_root(value) == "functools":
        return clip(f"partial({brief(value.func, limit, r, depth + 1)}, …)", limit)

    root = module_root(value)
    if root in ARRAY_MODULES or root in TABLE_MODULES:
        shaped = _shaped_body(value, limit, r)
        if shaped is not None:
            return shaped
    if root in STR_MODULES:
        return safe(str(value), limit, r)

    fields = getattr(type(value), "__dataclass_fields__", None) or getattr(
        type(value), "__attrs_attrs__", None
    )
    if fields is not None:
        names = list(fields) if isinstance(fields, dict) else [a.name for a in fields]
        return _attrs_body(value, names, limit, r, depth)
    if isinstance(value, types.SimpleNamespace) or _cls(value).__repr__ is object.__repr__:
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, dict):
            names = [n for n in itertools.islice(attrs, 64) if not n.startswith("_")]
            return _attrs_body(value, names, limit, r, depth)
        return clip(f"<{type(value).__name__} object>", limit)
    # A library's own repr: bounded by the library (models, dates, paths, estimators…).
    return safe(repr(value), limit, r)


def _container_body(value, limit: int, r: Redactor, depth: int) -> str:
    """``N items: [a, b, …]``; ``(…)`` for a tuple, ``{…}`` for a set, ``{k: v, …}`` a mapping."""
    n = len(value)
    head = count(n, "item")
    if n == 0:
        return head
    if depth >= _MAX_DEPTH or limit < len(head) + 8:
        return clip(head, limit)
    budget = limit - len(head) - 2
    per = per_item(budget, n)
    if isinstance(value, Mapping):
        pairs = itertools.islice(value.items(), PREVIEW_ITEMS)
        items = (_mapping_item(k, v, per, r, depth + 1) for k, v in pairs)
        return head + ": " + join_items(items, n, "{", "}", budget)
    brackets = (
        "()" if isinstance(value, tuple) else "{}" if isinstance(value, (set, frozenset)) else "[]"
    )
    items = (brief(x, per, r, depth + 1) for x in itertools.islice(value, PREVIEW_ITEMS))
    return head + ": " + join_items(items, n, brackets[0], brackets[1], budget)


def _mapping_item(key, value, per: int, r: Redactor, depth: int) -> str:
    shown = brief(key, min(per // 2, 40), r, depth)
    if isinstance(key, str) and is_secret_name(key):
        return f"{shown}: {REDACTED}"
    return f"{shown}: {brief(value, max(8, per - len(shown) - 2), r, depth)}"


def _attrs_body(value, names: list[str], limit: int, r: Redactor, depth: int) -> str:
    name = type(value).__name__
    if depth >= _MAX_DEPTH or limit < len(name) + 6:
        return clip(f"{name}(…)", limit)
    per = per_item(limit - len(name), len(names))

    def items():
        for attr in names[:PREVIEW_ITEMS]:
            if is_secret_name(attr):
                yield f"{attr}={REDACTED}"
                continue
            v = getattr(value, attr, MISSING)
            shown = "?" if v is MISSING else brief(v, max(8, per - len(attr) - 1), r, depth + 1)
            yield f"{attr}={shown}"

    return join_items(items(), len(names), f"{name}(", ")", limit)


def _signature_text(func, r: Redactor, limit: int) -> str:
    import inspect  # lazily: importing inspect costs more than this whole module

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return "(…)"
    parts = []
    star_done = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            text, star_done = f"*{p.name}", True
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        else:
            if p.kind is p.KEYWORD_ONLY and not star_done:
                parts.append("*")
                star_done = True
            text = p.name
            if p.default is not p.empty:
                shown = REDACTED if is_secret_name(p.name) else brief(p.default, 24, r, 1)
                text += "=" + shown
        parts.append(text)
    return join_items(parts, len(parts), "(", ")", limit)


def _doc_line(obj) -> str:
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _is_users(obj) -> bool:
    return getattr(obj, "__module__", None) in (None, "__main__")


def _function_body(func, limit: int, r: Redactor) -> str:
    name = qualname(func)
    if not _is_users(func):
        where = getattr(func, "__module__", None)
        return clip(f"{where}.{name} (imported)" if where else f"{name} (builtin)", limit)
    text = name + _signature_text(func, r, max(10, limit - len(name)))
    doc = _doc_line(func)
    if doc and len(text) + 5 < limit:
        text += " - " + safe(doc, limit - len(text) - 3, r)
    return clip(text, limit)


def _class_body(cls: type, limit: int, r: Redactor) -> str:
    name = qualname(cls)
    if not _is_users(cls):
        return clip(f"{cls.__module__}.{name} (imported)", limit)
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    text = name + (f"({', '.join(bases)})" if bases else "")
    init = cls.__dict__.get("__init__")
    if isinstance(init, types.FunctionType):
        text += ", __init__" + _signature_text(init, r, max(10, limit // 2))
    methods = [
        m for m, v in itertools.islice(cls.__dict__.items(), 64) if callable(v) and m[0] != "_"
    ]
    if methods and len(text) + 12 < limit:
        text += "; methods: " + ", ".join(methods[:12])
    doc = _doc_line(cls)
    if doc and len(text) + 5 < limit:
        text += " - " + safe(doc, limit - len(text) - 3, r)
    return clip(text, limit)


def _shaped_body(value, limit: int, r: Redactor) -> str | None:
    """Tensors, sparse matrices, polars/arrow tables: shape, dtype, columns; never the repr."""
    shape = getattr(value, "shape", None)
    if shape is None:
        return None
    try:
        shape = tuple(shape)
    except TypeError:
        return None
    text = f"shape {shape}"
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        text += f", {dtype}"
    columns = getattr(value, "columns", None)
    if columns is None:
        columns = getattr(value, "column_names", None)
    if isinstance(columns, (list, tuple)):
        shown = [safe(repr(c), 40, r) for c in columns[:40]]
        text += ", columns " + join_items(shown, len(columns), "[", "]", limit - len(text))
    return clip(text, limit)


def _ndarray_body(a, limit: int, r: Redactor, depth: int) -> str:
    head = f"shape {tuple(a.shape)}, {a.dtype}"
    if a.size == 0 or limit < len(head) + 8 or depth >= _MAX_DEPTH:
        return clip(head, limit)
    # ``flat[:k]`` copies k values whatever the array's size or memory layout.
    values = a.flat[:PREVIEW_ITEMS].tolist()
    budget = limit - len(head) - 2
    per = per_item(budget, len(values))
    items = (cell_text(v, per, r, depth + 1) for v in values)
    return head + ": " + join_items(items, a.size, "[", "]", budget)


def cell_text(value, limit: int, r: Redactor, depth: int = 1) -> str:
    """A table cell or array value: short, unquoted when unambiguous."""
    if isinstance(value, float):
        text = format(value, ".6g")
        # Keep 3.0 a float to the reader: "3" would read as an int column.
        return clip(text if any(c in text for c in ".ein") else text + ".0", limit)
    if isinstance(value, str):
        plain = value and value == value.strip() and not any(c in value for c in "|\n\r\t,")
        return safe(value if plain else repr(value[: limit + r.margin]), limit, r)
    if isinstance(value, SCALARS):
        return clip(scalar_text(value), limit)
    if module_root(value) == "pandas" or module_root(value) in STR_MODULES:
        return safe(str(value), limit, r)  # Timestamp, Timedelta, Period, NA: short str()
    return brief(value, limit, r, depth)
