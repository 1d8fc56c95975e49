"""What the kernel knows, summarised for a model within a character budget.

Everything here is pure, cheap and bounded:

- Nothing heavy is imported: pandas and numpy are recognised through ``sys.modules`` (only when
  the user has already imported them), IPython through the ``shell`` object handed in.
- The cost does not grow with the data: a DataFrame is described from its shape, its dtypes and
  ``df.iloc[:rows, :columns]``; a container from its length and first few items; an array from
  ``a.flat[:k]``. Nothing calls ``describe()``, ``to_string()``, ``nunique()`` or a full ``repr``
  of a builtin container.
- Secrets never leave (``chapyter_ext.redact``): values of secret-looking names, values of secret
  environment variables and strings that look like API keys are replaced by ``<redacted>``, in
  every piece before it is clipped (so that a secret cannot leak half-cut) and once more over the
  final text (which is where variable names are redacted).
"""

from __future__ import annotations

import builtins
import collections
import itertools
import re
import sys
import types
from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from .redact import REDACTED, Redactor, is_secret_name, redact, secret_values

__all__ = [
    "REDACTED",
    "build_context",
    "describe_variables",
    "is_secret_name",
    "kernel_context",
    "last_error_summary",
    "redact",
    "summarize_dataframe",
    "summarize_value",
    "user_variables",
]

_ELLIPSIS = "…"
_MISSING = object()

# The builtins by name: ``getattr(builtins, name, None)`` raises (and catches) for most names.
_BUILTINS = vars(builtins)
# Names IPython puts in the user namespace for itself (the ``_``-prefixed ones are skipped anyway).
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})

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
_found_types: dict[str, tuple[object, tuple[type, ...]]] = {}


def _library_types(module: str, *names: str) -> tuple[type, ...] | None:
    """Classes of a library the user has imported (or None, also if half-imported)."""
    lib = sys.modules.get(module)
    if lib is None:
        return None
    known = _found_types.get(module)
    if known is not None and known[0] is lib:
        return known[1]
    found = tuple(getattr(lib, name, None) for name in names)
    if not all(isinstance(t, type) for t in found):
        return None  # not cached: the import may still be under way
    _found_types[module] = (lib, found)
    return found


def _pandas_types() -> tuple[type, ...] | None:
    return _library_types("pandas", "DataFrame", "Series", "Index")


def _numpy_types() -> tuple[type, ...] | None:
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


def _brief(value: object, limit: int, r: Redactor, depth: int) -> str:
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


def _describe_unguarded(value: object, limit: int, r: Redactor, depth: int) -> str:
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
    if pandas is not None:
        frame, series, index = pandas
        if isinstance(value, frame):
            return _frame_body(value, max_columns=40, max_rows=3, limit=limit, r=r)
        if isinstance(value, series):
            return _series_body(value, limit, r)
        if isinstance(value, index):
            return _index_body(value, limit, r)
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
        return _attrs_body(value, type(value)._fields, limit, r, depth)
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
    if isinstance(value, types.SimpleNamespace) or type(value).__repr__ is object.__repr__:
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


# ---------------------------------------------------------------------------------------------
# pandas


def _is_default_index(idx) -> bool:
    return (
        type(idx).__name__ == "RangeIndex"
        and getattr(idx, "start", None) == 0
        and getattr(idx, "step", None) == 1
        and idx.name is None
    )


def _label(name, r: Redactor, limit: int = 60) -> str:
    return _safe(repr(name), limit, r)


def _dtype_text(dtype, r: Redactor) -> str:
    text = str(dtype)
    if text != "category":
        return text
    categories = getattr(dtype, "categories", None)
    if categories is None:
        return text
    n = len(categories)
    kind = "ordered category" if getattr(dtype, "ordered", False) else "category"
    if n > 20:
        return f"{kind} ({n:,} categories)"
    labels = [_label(c, r, 30) for c in categories.tolist()]
    return _join_items(labels, n, kind + "[", "]", 240)


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


def _index_brief(idx, r: Redactor, limit: int) -> str:
    kind = type(idx).__name__
    if getattr(idx, "nlevels", 1) > 1:
        levels = [
            f"{_label(name, r, 30)} {level.dtype}"
            for name, level in zip(idx.names[:8], idx.levels[:8])
        ]
        text = _join_items(levels, idx.nlevels, f"{kind} of {len(idx):,} (", ")", limit)
    else:
        text = f"{kind} of {len(idx):,}, {idx.dtype}"
        if idx.name is not None:
            text += f", name {_label(idx.name, r, 40)}"
    if len(idx) and len(text) + 12 < limit:
        first = _cell_text(idx[0], 30, r)
        last = _cell_text(idx[-1], 30, r)
        text += f", {first} … {last}" if len(idx) > 1 else f", {first}"
    return _clip(text, limit)


def _frame_body(df, *, max_columns: int, max_rows: int, limit: int, r: Redactor) -> str:
    n_rows, n_cols = df.shape
    header = f"{n_rows:,} rows × {n_cols:,} columns"
    if limit < len(header) + 16 or n_cols == 0:
        return _clip(header, limit)
    lines = [header]
    remaining = limit - len(header)

    shown = min(n_cols, max(1, max_columns))
    # Whole lists are cheaper than pandas slices; past a few hundred columns the slice wins.
    names = df.columns.tolist()[:shown] if n_cols <= 256 else df.columns[:shown].tolist()
    dtypes = df.dtypes.tolist()[:shown]
    has_more = n_cols > shown
    # Column names and dtypes matter most; then the note on further columns; rows last.
    typed_cap = remaining * (3 if (has_more or max_rows > 0) else 5) // 5
    typed: list[str] = []
    used = len("\ncolumns: ")
    for name, dtype in zip(names, dtypes):
        part = f"{_label(name, r)} {_dtype_text(dtype, r)}"
        if used + len(part) + 2 > typed_cap:
            break
        typed.append(part)
        used += len(part) + 2
    if not typed:  # not even one column fits: name the first ones
        part = f"{_label(names[0], r)} {_dtype_text(dtypes[0], r)}"
        typed.append(_clip(part, max(10, typed_cap - used)))
        used += len(typed[0])
    lines.append("columns: " + ", ".join(typed))
    remaining -= used
    unlisted = n_cols - len(typed)

    show_index = not _is_default_index(df.index)
    if show_index and remaining > 40:
        line = "index: " + _index_brief(df.index, r, min(160, remaining - 1 - 7))
        lines.append(line)
        remaining -= len(line) + 1

    note_reserve = 48 if unlisted else 0
    rows_cap = (remaining - note_reserve) // (2 if unlisted else 1)
    n = min(max_rows, n_rows)
    rows = _rows_text(df, n, names[: len(typed)], show_index, rows_cap, r) if n > 0 else ""
    remaining -= len(rows) + 1 if rows else 0

    if unlisted:
        lines.append(_more_columns(df.columns, len(typed), n_cols, remaining - 1, r))
    if rows:
        lines.append(rows)
    return _clip("\n".join(lines), limit)


def _more_columns(columns, start: int, total: int, limit: int, r: Redactor) -> str:
    unlisted = total - start
    head = f"... and {unlisted:,} more columns"
    if limit < len(head) + 10:
        return _clip(head, limit)
    # Each name takes at least 4 characters ("'x', "), which bounds how many are worth fetching.
    fetch = min(unlisted, limit // 4 + 1)
    names = (_label(n, r, 40) for n in columns[start : start + fetch].tolist())
    return _join_items(names, unlisted, head + ": ", "", limit)


def _rows_text(df, n: int, names: list, show_index: bool, cap: int, r: Redactor) -> str:
    """The first ``n`` rows of the columns ``names`` (the first ones) that fit, one a line."""
    if not names or cap < 40:
        return ""
    title = f"head({n}):"
    width = max(20, (cap - len(title)) // (n + 1) - 1)
    header_cells: list[str] = ["(index)"] if show_index else []
    length = len(header_cells[0]) if show_index else 0
    k = 0
    for name in names:
        cell = _safe(str(name), 20, r)
        if k and length + len(cell) + 3 > width:
            break
        header_cells.append(cell)
        length += len(cell) + 3
        k += 1
    n_cols = df.shape[1]
    if k < n_cols:
        title = f"head({n}), first {k} of {n_cols:,} columns:"
    # Slicing rows only is several times cheaper in pandas than slicing both axes; past a few
    # hundred columns the both-axes slice wins, as it does not convert every column.
    sub = df.iloc[:n] if n_cols <= 256 else df.iloc[:n, :k]
    values = [row[:k] for row in sub.to_numpy(dtype=object).tolist()]
    index = sub.index.tolist() if show_index else None
    out = [title, _clip(" | ".join(header_cells), width)]
    for i, row in enumerate(values):
        cells = [_cell_text(v, 20, r) for v in row]
        if index is not None:
            cells.insert(0, _cell_text(index[i], 24, r))
        out.append(_clip(" | ".join(cells), width))
    text = "\n".join(out)
    return text if len(text) <= cap else _clip(text, cap)


def _series_body(s, limit: int, r: Redactor) -> str:
    text = f"{len(s):,} values, {_dtype_text(s.dtype, r)}"
    if s.name is not None:
        text += f", name {_label(s.name, r, 40)}"
    if len(s) and len(text) + 10 < limit:
        values = s.iloc[:_PREVIEW_ITEMS].to_numpy(dtype=object).tolist()
        budget = limit - len(text) - 2
        per = _per_item(budget, len(values))
        items = (_cell_text(v, per, r) for v in values)
        text += ": " + _join_items(items, len(s), "[", "]", budget)
    if not _is_default_index(s.index) and len(text) + 40 < limit:
        text += "\nindex: " + _index_brief(s.index, r, limit - len(text) - 8)
    return _clip(text, limit)


def _index_body(idx, limit: int, r: Redactor) -> str:
    if getattr(idx, "nlevels", 1) > 1:
        return _index_brief(idx, r, limit)
    text = f"{_count(len(idx), 'value')}, {idx.dtype}"
    if idx.name is not None:
        text += f", name {_label(idx.name, r, 40)}"
    if len(idx) and len(text) + 10 < limit:
        values = idx[:_PREVIEW_ITEMS].tolist()
        budget = limit - len(text) - 2
        items = (_cell_text(v, _per_item(budget, len(values)), r) for v in values)
        text += ": " + _join_items(items, len(idx), "[", "]", budget)
    return _clip(text, limit)


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


def summarize_dataframe(
    df, *, max_columns: int = 40, max_rows: int = 3, max_chars: int = 2000
) -> str:
    """``"DataFrame: …"`` for a pandas DataFrame, at most ``max_chars`` characters, redacted.

    Shape, then the first ``max_columns`` column names exactly (``repr``) with their dtypes (and
    the labels of categoricals with at most 20 categories), then ``... and K more columns: …``
    naming further columns as far as the budget allows, the index when it is not a plain
    ``RangeIndex``, and the first ``max_rows`` rows of the columns that fit. Only the shape,
    ``dtypes`` and ``df.iloc[:max_rows, :k]`` are read, so a 5,000,000-row or 2,000-column frame
    costs about the same as a small one.
    """
    label = _type_label(df)
    r = Redactor()
    try:
        body = _frame_body(
            df,
            max_columns=max_columns,
            max_rows=max_rows,
            limit=max_chars - len(label) - 2,
            r=r,
        )
    except Exception:  # a broken frame subclass still gets a line
        body = "<unavailable>"
    return _clip(f"{label}: {body}", max_chars)


# ---------------------------------------------------------------------------------------------
# Namespaces


def user_variables(user_ns: dict, hidden: Container[str] = ()) -> list[tuple[str, object]]:
    """The user's own names in ``user_ns``, most recently defined first.

    Skipped: names starting with ``_``, IPython's ``In``/``Out``/``exit``/``quit``/
    ``get_ipython``, modules, builtins under their own name, IPython's and ipykernel's helpers,
    and ``hidden`` names. When ``hidden`` is a mapping (IPython's ``shell.user_ns_hidden``), a
    hidden name the user has since rebound to another object counts as the user's, as ``%who``
    does. Order follows the namespace's insertion order, reversed.
    """
    hidden_values = hidden if isinstance(hidden, Mapping) else None
    out = []
    for name in reversed(list(user_ns)):
        if not isinstance(name, str) or name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        value = user_ns.get(name, _MISSING)
        if value is _MISSING:
            continue
        if hidden_values is not None:
            if hidden_values.get(name, _MISSING) is value:
                continue
        elif name in hidden:
            continue
        if isinstance(value, types.ModuleType) or _BUILTINS.get(name, _MISSING) is value:
            continue
        module = getattr(value, "__module__", None) if callable(value) else None
        if isinstance(module, str) and module.startswith(("IPython.", "ipykernel.")):
            continue
        out.append((name, value))
    return out


def describe_variables(
    user_ns: dict, hidden: Container[str] = (), *, budget: int = 3000, secrets: Iterable[str] = ()
) -> list[dict]:
    """``[{"name", "type", "summary"}]`` for the user's variables, for the sidebar chat.

    Most recent first, JSON-able and redacted (values of secret-looking names are
    ``<redacted>``; see ``redact`` for the rest). ``summary`` is the summary without the type.
    The list stops when the characters of names, types and summaries together reach ``budget``.
    """
    variables = user_variables(user_ns, hidden)
    r = Redactor([*secrets, *secret_values(variables)])
    out: list[dict] = []
    used = 0
    for name, value in variables:
        label = _type_label(value)
        room = budget - used - len(name) - len(label)
        if room < 16:
            break
        if is_secret_name(name):
            summary = REDACTED
        else:
            summary = _describe(value, min(_default_chars(value), room), r)
        out.append({"name": name, "type": label, "summary": summary})
        used += len(name) + len(label) + len(summary)
    return out


# ---------------------------------------------------------------------------------------------
# Context for the model


def _variable_line(name: str, value: object, limit: int, r: Redactor) -> str:
    label = _type_label(value)
    head = f"- {name} ({label}): "
    if len(head) + 4 > limit:
        return _clip(f"- {name}", limit)
    if is_secret_name(name):
        return head + REDACTED
    # Continuation lines are indented; leave room for that in multi-line summaries.
    body = _describe(value, max(8, limit - len(head) - 32), r)
    return _clip(head + body.replace("\n", "\n    "), limit)


def _variables_section(variables, limit: int, r: Redactor) -> str:
    title = "Variables (most recent first):"
    if not variables or limit < len(title) + 24:
        return ""
    lines = [title]
    used = len(title)
    for i, (name, value) in enumerate(variables):
        left = len(variables) - i
        reserve = 48 if left > 1 else 0  # for the "... (K more variables)" note
        room = limit - used - 1 - reserve
        cap = min(_default_chars(value), max(0, room))
        # A big summary may not take everything: keep room for a few more names.
        if left > 1:
            cap = min(cap, max(120, room * 2 // 3))
        if cap < 24:
            lines.append(_more_variables(variables[i:], limit - used - 1))
            break
        line = _variable_line(name, value, cap, r)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _more_variables(rest, limit: int) -> str:
    head = f"... ({len(rest):,} more variables"
    names = (name for name, _ in itertools.islice(rest, limit // 3 + 1))
    return _clip(_join_items(names, len(rest), head + ": ", ")", limit), limit)


# A cell as the context shows it: source, summarised output, "In [7]" and the error it raised.
_Cell = collections.namedtuple("_Cell", "source output label error", defaults=(None,))


def _cell_text_block(cell: _Cell, limit: int, r: Redactor) -> str:
    head = f"{cell.label}:"
    extra = []
    if cell.output:
        extra.append(("Out: ", cell.output))
    if cell.error:
        extra.append(("Error: ", cell.error))
    out_cap = min(240, limit // 3)
    tails = [_safe(prefix + text, out_cap, r).replace("\n", "\n    ") for prefix, text in extra]
    src_cap = limit - len(head) - 1 - sum(len(t) + 1 for t in tails)
    source = _clip_lines(cell.source.rstrip(), src_cap, r)
    return _clip("\n".join([head, source, *tails]), limit)


def _clip_lines(source: str, limit: int, r: Redactor) -> str:
    """The first lines of a cell that fit, with a note on how many more there are."""
    if limit <= 0:
        return ""
    window = r(source[: limit + r.margin])
    if len(window) <= limit and len(source) <= limit + r.margin:
        return window
    lines = window.split("\n")
    total = source.count("\n") + 1
    kept: list[str] = []
    used = 0
    for line in lines:
        note = f"# ... ({total - len(kept) - 1:,} more lines)"
        if used + len(line) + 1 + len(note) > limit:
            break
        kept.append(line)
        used += len(line) + 1
    if not kept:
        return _clip(window, limit)
    kept.append(f"# ... ({total - len(kept):,} more lines)")
    return _clip("\n".join(kept), limit)


def _cells_section(cells: list[_Cell], limit: int, r: Redactor) -> str:
    title = "Recent cells (oldest first):"
    if not cells or limit < len(title) + 30:
        return ""
    blocks: list[str] = []
    used = len(title)
    # Newest first while budgeting, so that what is dropped is the oldest.
    for i, cell in enumerate(reversed(cells)):
        left = len(cells) - i
        room = limit - used - 1 - (40 if left > 1 else 0)
        cap = room // left if left > 1 else room
        cap = max(cap, min(room, 120))  # a share too small for anything useful is no use
        if cap < 24:
            break
        block = _cell_text_block(cell, cap, r)
        blocks.append(block)
        used += len(block) + 1
    omitted = len(cells) - len(blocks)
    parts = [title]
    if omitted:
        parts.append(f"... ({omitted} earlier cells not shown)")
    parts.extend(reversed(blocks))
    return _clip("\n".join(parts), limit)


def _assemble(*, error: str | None, variables, cells: list[_Cell], budget: int, r: Redactor) -> str:
    if budget <= 0:
        return ""
    sections: list[str] = []
    remaining = budget
    if error:
        title = "Last error:\n"
        text = title + _safe_middle(
            error.strip(), max(0, min(remaining, budget * 2 // 5)) - len(title), r
        )
        if len(text) > len(title):
            sections.append(text)
            remaining -= len(text) + 2
    # Recent cells are less important than variables, but should not be starved by them.
    cells_reserve = min(_cells_need(cells), remaining * 3 // 10) if cells else 0
    var_text = _variables_section(variables, remaining - cells_reserve, r)
    if var_text:
        sections.append(var_text)
        remaining -= len(var_text) + 2
    cell_text = _cells_section(cells, remaining, r)
    if cell_text:
        sections.append(cell_text)
    text = r("\n\n".join(sections))
    # Redaction can lengthen text ("<redacted>" is longer than a short secret): cut to the budget.
    return _clip(text, budget)


def _cells_need(cells: list[_Cell]) -> int:
    return 30 + sum(
        len(c.source)
        + len(c.label)
        + 8
        + min(len(c.output or ""), 240)
        + min(len(c.error or ""), 240)
        for c in cells
    )


def build_context(
    *,
    variables: list[tuple[str, object]],
    recent_cells: list[tuple[str, str | None]],
    last_error: str | None,
    budget: int,
    secrets: Iterable[str] = (),
) -> str:
    """The text describing the kernel to the model: at most ``budget`` characters, redacted.

    Sections, in order of priority when the budget is short: ``Last error`` (up to two fifths of
    the budget, cut in the middle so both the start and the end survive), ``Variables`` in the
    order given (most recent first, each a type and a short summary; values of secret-looking
    names are ``<redacted>``; cut with ``... (K more variables: a, b, …)``), then ``Recent
    cells`` given oldest first as ``(source, output)`` (the newest kept when cut, with ``...
    (K earlier cells not shown)``). Variables may take at most seven tenths of what the error
    leaves while there are cells to show. ``redact`` is applied to every piece before it is
    clipped and to the final text, with ``secrets`` and the string values of secret-named
    variables as extra verbatim secrets.
    """
    variables = list(variables)
    r = Redactor([*secrets, *secret_values(variables)])
    cells = [_Cell(src, out, "In") for src, out in recent_cells if src and src.strip()]
    return _assemble(error=last_error, variables=variables, cells=cells, budget=budget, r=r)


# ---------------------------------------------------------------------------------------------
# IPython


def _running_count(shell) -> int | None:
    """Execution count of the cell running now, if any.

    IPython hands the running cell's ``ExecutionResult`` to the display hook for the duration of
    the cell (``run_cell`` sets ``displayhook.exec_result`` and clears it after).
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


def _history(shell):
    hm = getattr(shell, "history_manager", None)
    ns = getattr(shell, "user_ns", None) or {}
    inputs = getattr(hm, "input_hist_raw", None)
    if inputs is None:
        inputs = ns.get("In") or []
    outputs = getattr(hm, "output_hist", None)
    if outputs is None:
        outputs = ns.get("Out") or {}
    exceptions = getattr(hm, "exceptions", None) or {}
    return inputs, outputs, exceptions


def _recent_cells(shell, n_cells: int, r: Redactor) -> list[_Cell]:
    inputs, outputs, exceptions = _history(shell)
    current = _running_count(shell)
    cells: list[_Cell] = []
    i = len(inputs) - 1
    stop = max(0, i - 4 * n_cells - 4)  # empty cells are skipped, but not without bound
    while i >= 1 and i > stop and len(cells) < n_cells:
        source = inputs[i]
        if i != current and isinstance(source, str) and source.strip():
            output = outputs.get(i, None) if hasattr(outputs, "get") else None
            error = exceptions.get(i)
            cells.append(
                _Cell(
                    source,
                    _summary_line(output, 240, r) if output is not None else None,
                    f"In [{i}]",
                    f"{error.get('ename')}: {error.get('evalue')}"
                    if isinstance(error, dict)
                    else None,
                )
            )
        i -= 1
    cells.reverse()
    return cells


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _cell_frames(shell, exc: BaseException):
    """Where ``exc`` went through the user's cells.

    Returns (the cell that was running, the innermost cell frame as (count, line, source line),
    the innermost frame outside the cells as "path:line, in name"), each possibly None.
    """
    import linecache

    names = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    if isinstance(exc, SyntaxError) and exc.filename in names:
        count = names[exc.filename]
        return count, (count, exc.lineno, (exc.text or "").strip() or None), None
    running = inner = None
    last = None
    tb = exc.__traceback__
    depth = 0
    # A RecursionError's traceback is thousands of frames: walk it without formatting any.
    while tb is not None and depth < 100_000:
        filename = tb.tb_frame.f_code.co_filename
        if filename in names:
            if running is None:
                running = names[filename]
            inner = (names[filename], tb.tb_lineno, filename)
        last = tb
        tb = tb.tb_next
        depth += 1
    cell = None
    if inner is not None:
        cell = (inner[0], inner[1], linecache.getline(inner[2], inner[1]).strip() or None)
    outside = None
    if last is not None and last.tb_frame.f_code.co_filename not in names:
        code = last.tb_frame.f_code
        path = code.co_filename.replace("\\", "/")
        if "site-packages/" in path:
            path = path.rsplit("site-packages/", 1)[1]
        elif "/" in path:
            path = "/".join(path.split("/")[-2:])
        outside = f"{path}:{last.tb_lineno}, in {code.co_name}"
    return running, cell, outside


def _format_exception(shell, exc: BaseException) -> tuple[int | None, str]:
    etype = type(exc)
    name = etype.__qualname__
    if etype.__module__ not in ("builtins", "__main__"):
        name = f"{etype.__module__}.{name}"
    try:
        message = str(exc)
    except Exception:  # an exception whose __str__ fails still has a type
        message = "<message unavailable>"
    lines = [f"{name}: {message[:2000]}" if message else name]
    running, cell, outside = _cell_frames(shell, exc)
    if cell is not None:
        count, lineno, line = cell
        where = f"In [{count}], line {lineno}"
        if running is not None and running != count:
            where += f" (called from In [{running}])"
        lines.append(f"  at {where}: {line}" if line else f"  at {where}")
    if outside:
        lines.append(f"  raised in {outside}")
    return running, "\n".join(lines)


def _format_stored(count: int, entry: dict) -> str:
    """An error from IPython's history (``history_manager.exceptions``), without the object."""
    text = f"{entry.get('ename')}: {entry.get('evalue')}"
    tb = entry.get("traceback") or []
    plain = _ANSI.sub("", "\n".join(t for t in tb if isinstance(t, str)))
    # IPython 9 prints the user's frame as "Cell In[7], line 3" then "----> 3 code".
    matches = list(re.finditer(rf"Cell In\[{count}\], line (\d+)\n(?:.*\n)*?-*> *\d+ (.*)", plain))
    if matches:
        m = matches[-1]
        text += f"\n  at In [{count}], line {m.group(1)}: {m.group(2).strip()}"
    return text


def _last_error(shell) -> tuple[int | None, str] | None:
    exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    _, _, exceptions = _history(shell)
    stored = max((k for k in exceptions if isinstance(k, int)), default=None)
    if isinstance(exc, BaseException):
        count, text = _format_exception(shell, exc)
        if stored is None or (count is not None and count >= stored):
            return count, text
    if stored is not None:
        entry = exceptions[stored]
        if isinstance(entry, dict):
            return stored, _format_stored(stored, entry)
    return None


def last_error_summary(shell) -> str | None:
    """The kernel's most recent error, or None: type, message, and the failing line.

    Read from ``sys.last_exc``/``sys.last_value`` (which IPython's ``showtraceback`` sets for
    every error it shows), with the user's cell and line found through the traceback frames whose
    file is one of IPython's cell files (``shell.compile._filename_map``); if IPython's history
    (``history_manager.exceptions``, IPython 9) records a later failing cell, that one is used.
    Redacted and clipped to 1,500 characters.
    """
    found = _last_error(shell)
    if found is None:
        return None
    r = Redactor(secret_values(user_variables(getattr(shell, "user_ns", {}) or {})))
    return _safe_middle(found[1], 1500, r)


def kernel_context(
    shell, *, budget: int = 6000, n_cells: int = 5, secrets: Iterable[str] = ()
) -> str:
    """``build_context`` for a live IPython ``InteractiveShell``.

    Variables come from ``shell.user_ns`` (hiding ``shell.user_ns_hidden``): names used in the
    running cell (the request) first, then those used in the recent cells (newest cell first),
    then the rest, each group most recently defined first. Recent
    cells are the last ``n_cells`` non-empty inputs of ``history_manager.input_hist_raw`` with
    their outputs and errors, skipping the cell running now. The last error is included only if
    it happened within the last ``max(n_cells, 1)`` cells (an old error is not what the user is
    asking about). ``secrets`` (e.g. the configured API key) are redacted on top of the usual.
    """
    ns = getattr(shell, "user_ns", None) or {}
    variables = user_variables(ns, getattr(shell, "user_ns_hidden", ()) or ())
    r = Redactor([*secrets, *secret_values(variables)])
    cells = _recent_cells(shell, max(0, n_cells), r)

    # The variables the request itself names (``%%ai plot df``) matter most, then those of the
    # newest cells. Sorting is stable, so each rank keeps its most-recent-first order.
    sources = [cell.source for cell in reversed(cells)]
    running = _running_count(shell)
    inputs = _history(shell)[0]
    if running is not None and 0 < running < len(inputs) and isinstance(inputs[running], str):
        sources.insert(0, inputs[running])
    if sources:
        seen: dict[str, int] = {}
        for rank, source in enumerate(sources):
            for name in re.findall(r"[A-Za-z_]\w*", source[-20_000:]):
                seen.setdefault(name, rank)
        variables.sort(key=lambda item: seen.get(item[0], len(sources)))

    error = None
    found = _last_error(shell)
    if found is not None:
        count, text = found
        latest = _running_count(shell) or getattr(shell, "execution_count", None)
        if count is None or not isinstance(latest, int) or latest - count <= max(n_cells, 1):
            error = text
    return _assemble(error=error, variables=variables, cells=cells, budget=budget, r=r)
