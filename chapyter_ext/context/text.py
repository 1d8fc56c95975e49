"""The pieces every summary is made of: text clipped to a budget after redaction (so a secret is
never left half-cut), lists joined within a budget, the label of a value's type, and the
classes of pandas and numpy when the user has imported them (never imported here)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any

from ..redact import Redactor

ELLIPSIS = "…"
MISSING = object()


# How many items of a container, or values of an array, are worth showing.
PREVIEW_ITEMS = 6


def clip(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def safe(text: str, limit: int, r: Redactor) -> str:
    """Redact, then clip: redacting over a margin past the cut so no secret is left half-cut."""
    if limit <= 0:
        return ""
    window = text[: limit + r.margin]
    return clip(r(window), limit)


def safe_middle(text: str, limit: int, r: Redactor) -> str:
    """Like ``safe`` but keeps the start and the end (where a traceback's point is)."""
    if limit <= 0:
        return ""
    if len(text) <= limit + r.margin:
        text = r(text)
        if len(text) <= limit:
            return text
    else:
        text = r(text[: limit + r.margin]) + "\n" + r(text[-(limit + r.margin) :])
    if limit < 20:
        return clip(text, limit)
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return text[:head] + ELLIPSIS + text[len(text) - tail :]


def one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def module_root(obj: object) -> str:
    return (getattr(type(obj), "__module__", None) or "").partition(".")[0]


def type_label(value: object) -> str:
    if isinstance(value, type):
        return "class"
    if isinstance(
        value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.LambdaType)
    ):
        return "method" if isinstance(value, types.MethodType) else "function"
    return qualname(type(value))


def qualname(obj: object) -> str:
    """``Outer.Inner``, but not ``test.<locals>.Inner``: the locals part is noise to a model."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or "?"
    return name.rsplit("<locals>.", 1)[-1] if isinstance(name, str) else "?"


# module name -> (the module, its classes): asked for every value summarised.
# (Any: mypy cannot know the library's classes, and narrowing to them must not hide attributes.)
_found_types: dict[str, tuple[object, tuple[Any, ...]]] = {}


def library_types(module: str, *names: str) -> tuple[Any, ...] | None:
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


def pandas_types() -> tuple[Any, ...] | None:
    return library_types("pandas", "DataFrame", "Series", "Index")


def numpy_types() -> tuple[Any, ...] | None:
    return library_types("numpy", "ndarray", "generic")


SCALARS = (bool, int, float, complex, type(None))
# Libraries whose array-likes have a cheap ``shape``/``dtype`` and a repr we do not want to pay for.
ARRAY_MODULES = frozenset(
    {"torch", "tensorflow", "jax", "jaxlib", "cupy", "dask", "xarray", "scipy", "sparse", "mlx"}
)
TABLE_MODULES = frozenset({"polars", "pyarrow"})
# Standard-library types whose str() is short and informative.
STR_MODULES = frozenset({"datetime", "pathlib", "uuid", "ipaddress", "decimal", "fractions"})


def scalar_text(value: object) -> str:
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


def join_items(items: Iterable[str], total: int, opener: str, closer: str, limit: int) -> str:
    """``opener a, b, c closer``, stopping at ``limit`` with "…" when items remain."""
    out = opener
    count = 0
    for item in items:
        sep = ", " if count else ""
        # Leave room for ", …" and the closer.
        if len(out) + len(sep) + len(item) + len(closer) + 3 > limit:
            out += sep + ELLIPSIS
            return out + closer
        out += sep + item
        count += 1
    if count < total:
        out += (", " if count else "") + ELLIPSIS
    return out + closer


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def per_item(limit: int, n: int) -> int:
    return max(12, (limit - 4) // max(1, min(n, PREVIEW_ITEMS)))
