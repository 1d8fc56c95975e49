"""Summaries of single values: the type and a short description, redacted and clipped.

Nothing heavy is imported: pandas and numpy are recognised through ``sys.modules`` (only when the
user has already imported them). The cost does not grow with the data: a container is described
from its length and first few items, an array from ``a.flat[:k]``; nothing calls a full ``repr``
of a builtin container. pandas objects are described by :mod:`.frames`, loaded on first use.
Every piece is redacted before it is clipped, so a secret cannot leak half-cut.
"""

from __future__ import annotations

import itertools
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from ..redact import REDACTED, Redactor, is_secret_name

_ELLIPSIS = "…"
_MISSING = object()

# Default characters for one variable's summary, by kind.
_FRAME_CHARS = 2000
_SERIES_CHARS = 600
_VALUE_CHARS = 300

# How many items of a container, or values of an array, are worth showing.
_PREVIEW_ITEMS = 6
_MAX_DEPTH = 2


# ---------------------------------------------------------------------------------------------
# Clipping


def _clip(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + _ELLIPSIS


def _safe(text: str, limit: int, r: Redactor) -> str:
    """Redact, then clip: redacting over a margin past the cut so no secret is left half-cut."""
    if limit <= 0:
        return ""
    window = text[: limit + r.margin]
    return _clip(r(window), limit)


def _safe_middle(text: str, limit: int, r: Redactor) -> str:
    """Like ``_safe`` but keeps the start and the end (where a traceback's point is)."""
    if limit <= 0:
        return ""
    if len(text) <= limit + r.margin:
        text = r(text)
        if len(text) <= limit:
            return text
    else:
        text = r(text[: limit + r.margin]) + "\n" + r(text[-(limit + r.margin) :])
    if limit < 20:
        return _clip(text, limit)
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return text[:head] + _ELLIPSIS + text[len(text) - tail :]


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


# ---------------------------------------------------------------------------------------------
# Values


def _module_root(obj: object) -> str:
    return (getattr(type(obj), "__module__", None) or "").partition(".")[0]


def _type_label(value: object) -> str:
    if isinstance(value, type):
        return "class"
    if isinstance(
        value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.LambdaType)
    ):
        return "method" if isinstance(value, types.MethodType) else "function"
    return _qualname(type(value))


def _qualname(obj: object) -> str:
    """``Outer.Inner``, but not ``test.<locals>.Inner``: the locals part is noise to a model."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or "?"
    return name.rsplit("<locals>.", 1)[-1] if isinstance(name, str) else "?"


# module name -> (the module, its classes): asked for every value summarised.
# (Any: mypy cannot know the library's classes, and narrowing to them must not hide attributes.)
_found_types: dict[str, tuple[object, tuple[Any, ...]]] = {}


def _library_types(module: str, *names: str) -> tuple[Any, ...] | None:
    """Classes of a library the user has imported (or None, also if half-imported)."""
    lib = sys.modules.get(module)
    if lib is None:
        return None
    known = _found_types.get(module)
    if known is not None and known[0] is lib:
        return known[1]
    found = tuple(t for t in (getattr(lib, name, None) for name in names) if isinstance(t, type))
    if len(found) != len(names):
        return None  # not cached: the import may still be under way
    _found_types[module] = (lib, found)
    return found


def _pandas_types() -> tuple[Any, ...] | None:
    return _library_types("pandas", "DataFrame", "Series", "Index")


def _numpy_types() -> tuple[Any, ...] | None:
    return _library_types("numpy", "ndarray", "generic")


_SCALARS = (bool, int, float, complex, type(None))
# Libraries whose array-likes have a cheap ``shape``/``dtype`` and a repr we do not want to pay for.
_ARRAY_MODULES = frozenset(
    {"torch", "tensorflow", "jax", "jaxlib", "cupy", "dask", "xarray", "scipy", "sparse", "mlx"}
)
_TABLE_MODULES = frozenset({"polars", "pyarrow"})
# Standard-library types whose str() is short and informative.
_STR_MODULES = frozenset({"datetime", "pathlib", "uuid", "ipaddress", "decimal", "fractions"})


def _scalar_text(value: object) -> str:
    # The builtin reprs, also for subclasses: numpy 2's float64 repr is "np.float64(3.5)".
    if value is None or isinstance(value, bool):
        return "None" if value is None else bool.__repr__(value)
    if isinstance(value, int):
        if value.bit_length() > 256:
            # str() of a huge int is quadratic (and refused past 4300 digits).
            return f"<int of about {int(value.bit_length() * 0.30103) + 1} digits>"
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, complex):
        return complex.__repr__(value)
    return repr(value)


def _brief(value: Any, limit: int, r: Redactor, depth: int) -> str:
    """One-line description of a value nested in another (an item, a key, a default)."""
    if isinstance(value, _SCALARS):
        return _clip(_scalar_text(value), limit)
    if isinstance(value, str):
        return _safe(repr(value[: limit + r.margin]), limit, r)
    if isinstance(value, (bytes, bytearray)):
        return _safe(repr(bytes(value[: limit + r.margin])), limit, r)
    pandas = _pandas_types()
    if pandas is not None:
        frame, series, index = pandas
        if isinstance(value, frame):
            rows, cols = value.shape
            return _clip(f"<DataFrame {rows:,}×{cols:,}>", limit)
        if isinstance(value, (series, index)):
            return _clip(f"<{type(value).__name__} of {len(value):,} {value.dtype}>", limit)
    arrays = _numpy_types()
    if arrays is not None and isinstance(value, arrays[0]):
        return _clip(f"<ndarray {tuple(value.shape)} {value.dtype}>", limit)
    if depth >= _MAX_DEPTH and isinstance(value, (Sequence, AbstractSet, Mapping)):
        return _clip(f"<{type(value).__name__} of {len(value):,}>", limit)
    return _one_line(_describe(value, limit, r, depth))


def _describe(value: object, limit: int, r: Redactor, depth: int = 0) -> str:
    """The summary of a value without its type, at most ``limit`` characters, redacted."""
    if limit <= 0:
        return ""
    try:
        # Clipped once more: the per-kind code aims at ``limit``; this guarantees it.
        return _clip(_describe_unguarded(value, limit, r, depth), limit)
    except Exception:  # any user object may fail in any way; fall back to its type
        return _clip(f"<{_type_label(value)}>", limit)


def _cls(value: object) -> Any:
    """``type(value)``, typed so that a class's own attributes can be read (``_fields``...)."""
    return type(value)


def _describe_unguarded(value: Any, limit: int, r: Redactor, depth: int) -> str:
    if isinstance(value, _SCALARS):
        return _clip(_scalar_text(value), limit)
    if isinstance(value, str):
        text = repr(value[: limit + r.margin])
        if len(value) <= limit and len(text) <= limit:
            return _safe(text, limit, r)
        prefix = f"{len(value):,} chars, "
        return prefix + _safe(text, limit - len(prefix), r)
    if isinstance(value, (bytes, bytearray)):
        prefix = f"{len(value):,} bytes, " if len(value) > limit // 2 else ""
        return prefix + _safe(repr(bytes(value[: limit + r.margin])), limit - len(prefix), r)

    pandas = _pandas_types()
    if pandas is not None and isinstance(value, pandas):
        from . import frames  # the pandas part, loaded once a pandas object is summarised

        return frames.pandas_body(value, pandas, limit, r)
    arrays = _numpy_types()
    if arrays is not None:
        ndarray, generic = arrays
        if isinstance(value, ndarray):
            return _ndarray_body(value, limit, r, depth)
        if isinstance(value, generic):
            return _describe(value.item(), limit, r, depth)

    if isinstance(value, type):
        return _class_body(value, limit, r)
    # Any mapping or sequence (os.environ, UserDict, array.array, deque…): its own repr would
    # show every item.
    if isinstance(value, Mapping):
        return _container_body(value, limit, r, depth)
    if isinstance(value, range):
        return _clip(repr(value), limit)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return _attrs_body(value, list(_cls(value)._fields), limit, r, depth)
    if isinstance(value, (Sequence, AbstractSet)) or type(value).__name__ == "deque":
        return _container_body(value, limit, r, depth)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return _function_body(value, limit, r)
    if type(value).__name__ == "partial" and _module_root(value) == "functools":
        return _clip(f"partial({_brief(value.func, limit, r, depth + 1)}, …)", limit)

    root = _module_root(value)
    if root in _ARRAY_MODULES or root in _TABLE_MODULES:
        shaped = _shaped_body(value, limit, r)
        if shaped is not None:
            return shaped
    if root in _STR_MODULES:
        return _safe(str(value), limit, r)

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
        return _clip(f"<{type(value).__name__} object>", limit)
    # A library's own repr: bounded by the library (models, dates, paths, estimators…).
    return _safe(repr(value), limit, r)


def _join_items(items: Iterable[str], total: int, opener: str, closer: str, limit: int) -> str:
    """``opener a, b, c closer``, stopping at ``limit`` with "…" when items remain."""
    out = opener
    count = 0
    for item in items:
        sep = ", " if count else ""
        # Leave room for ", …" and the closer.
        if len(out) + len(sep) + len(item) + len(closer) + 3 > limit:
            out += sep + _ELLIPSIS
            return out + closer
        out += sep + item
        count += 1
    if count < total:
        out += (", " if count else "") + _ELLIPSIS
    return out + closer


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _per_item(limit: int, n: int) -> int:
    return max(12, (limit - 4) // max(1, min(n, _PREVIEW_ITEMS)))


def _container_body(value, limit: int, r: Redactor, depth: int) -> str:
    """``N items: [a, b, …]``; ``(…)`` for a tuple, ``{…}`` for a set, ``{k: v, …}`` a mapping."""
    n = len(value)
    head = _count(n, "item")
    if n == 0:
        return head
    if depth >= _MAX_DEPTH or limit < len(head) + 8:
        return _clip(head, limit)
    budget = limit - len(head) - 2
    per = _per_item(budget, n)
    if isinstance(value, Mapping):
        pairs = itertools.islice(value.items(), _PREVIEW_ITEMS)
        items = (_mapping_item(k, v, per, r, depth + 1) for k, v in pairs)
        return head + ": " + _join_items(items, n, "{", "}", budget)
    brackets = (
        "()" if isinstance(value, tuple) else "{}" if isinstance(value, (set, frozenset)) else "[]"
    )
    items = (_brief(x, per, r, depth + 1) for x in itertools.islice(value, _PREVIEW_ITEMS))
    return head + ": " + _join_items(items, n, brackets[0], brackets[1], budget)


def _mapping_item(key, value, per: int, r: Redactor, depth: int) -> str:
    shown = _brief(key, min(per // 2, 40), r, depth)
    if isinstance(key, str) and is_secret_name(key):
        return f"{shown}: {REDACTED}"
    return f"{shown}: {_brief(value, max(8, per - len(shown) - 2), r, depth)}"


def _attrs_body(value, names: list[str], limit: int, r: Redactor, depth: int) -> str:
    name = type(value).__name__
    if depth >= _MAX_DEPTH or limit < len(name) + 6:
        return _clip(f"{name}(…)", limit)
    per = _per_item(limit - len(name), len(names))

    def items():
        for attr in names[:_PREVIEW_ITEMS]:
            if is_secret_name(attr):
                yield f"{attr}={REDACTED}"
                continue
            v = getattr(value, attr, _MISSING)
            shown = "?" if v is _MISSING else _brief(v, max(8, per - len(attr) - 1), r, depth + 1)
            yield f"{attr}={shown}"

    return _join_items(items(), len(names), f"{name}(", ")", limit)


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
                shown = REDACTED if is_secret_name(p.name) else _brief(p.default, 24, r, 1)
                text += "=" + shown
        parts.append(text)
    return _join_items(parts, len(parts), "(", ")", limit)


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
    name = _qualname(func)
    if not _is_users(func):
        where = getattr(func, "__module__", None)
        return _clip(f"{where}.{name} (imported)" if where else f"{name} (builtin)", limit)
    text = name + _signature_text(func, r, max(10, limit - len(name)))
    doc = _doc_line(func)
    if doc and len(text) + 5 < limit:
        text += " - " + _safe(doc, limit - len(text) - 3, r)
    return _clip(text, limit)


def _class_body(cls: type, limit: int, r: Redactor) -> str:
    name = _qualname(cls)
    if not _is_users(cls):
        return _clip(f"{cls.__module__}.{name} (imported)", limit)
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
        text += " - " + _safe(doc, limit - len(text) - 3, r)
    return _clip(text, limit)


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
        shown = [_safe(repr(c), 40, r) for c in columns[:40]]
        text += ", columns " + _join_items(shown, len(columns), "[", "]", limit - len(text))
    return _clip(text, limit)


def _ndarray_body(a, limit: int, r: Redactor, depth: int) -> str:
    head = f"shape {tuple(a.shape)}, {a.dtype}"
    if a.size == 0 or limit < len(head) + 8 or depth >= _MAX_DEPTH:
        return _clip(head, limit)
    # ``flat[:k]`` copies k values whatever the array's size or memory layout.
    values = a.flat[:_PREVIEW_ITEMS].tolist()
    budget = limit - len(head) - 2
    per = _per_item(budget, len(values))
    items = (_cell_text(v, per, r, depth + 1) for v in values)
    return head + ": " + _join_items(items, a.size, "[", "]", budget)


def _cell_text(value, limit: int, r: Redactor, depth: int = 1) -> str:
    """A table cell or array value: short, unquoted when unambiguous."""
    if isinstance(value, float):
        text = format(value, ".6g")
        # Keep 3.0 a float to the reader: "3" would read as an int column.
        return _clip(text if any(c in text for c in ".ein") else text + ".0", limit)
    if isinstance(value, str):
        plain = value and value == value.strip() and not any(c in value for c in "|\n\r\t,")
        return _safe(value if plain else repr(value[: limit + r.margin]), limit, r)
    if isinstance(value, _SCALARS):
        return _clip(_scalar_text(value), limit)
    if _module_root(value) == "pandas" or _module_root(value) in _STR_MODULES:
        return _safe(str(value), limit, r)  # Timestamp, Timedelta, Period, NA: short str()
    return _brief(value, limit, r, depth)


# ---------------------------------------------------------------------------------------------
# Public summaries


def _default_chars(value: object) -> int:
    pandas = _pandas_types()
    if pandas is not None:
        if isinstance(value, pandas[0]):
            return _FRAME_CHARS
        if isinstance(value, pandas[1]):
            return _SERIES_CHARS
    return _VALUE_CHARS


def _summary_line(value: object, limit: int, r: Redactor) -> str:
    label = _type_label(value)
    if limit < len(label) + 4:
        return _clip(label, limit)
    return f"{label}: {_describe(value, limit - len(label) - 2, r)}"


def summarize_value(value: object, *, max_chars: int = 300) -> str:
    """``"type: short summary"`` of one value, at most ``max_chars`` characters, redacted.

    DataFrames give their shape, exact column names with dtypes and a few rows; Series and Index
    their length, dtype and first values; numpy arrays their shape, dtype and first values;
    containers their length and first items (recursively, briefly); strings their length and a
    clipped preview; user functions and classes their signature. The cost does not depend on the
    size of the value, and a value whose summary fails is shown by its type name.
    """
    return _summary_line(value, max_chars, Redactor())
