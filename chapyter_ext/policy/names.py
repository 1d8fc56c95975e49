"""What a name, a dotted name, a method or a value is, and whether it is allowed: the
allow-list of :mod:`.lists` read as answers (``allowed('numpy.linalg.norm')``), and
:class:`Held`, what an expression may hold."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Iterable
from typing import Any, NamedTuple

from .categories import NETWORK
from .lists.functions import (
    ALIASES,
    ALLOWED,
    DENIED,
    EFFECT_NAME,
    FOREIGN_ENDS,
    FOREIGN_MODULES,
    NETWORK_MODULES,
    OPENERS,
    PURE,
    QUAL_LABELS,
    RESULT_KINDS,
    SAFE_DUNDERS,
)
from .lists.methods import (
    ACCESSOR_STEMS,
    CALLABLE_METHODS,
    FRESH,
    KIND_METHODS,
    METHOD_LABELS,
    PATH_RESULTS,
    RULED_METHODS,
    SAFE_METHODS,
    TARGET_WRITERS,
)

BUILTINS = frozenset(vars(builtins)) | {"display", "get_ipython"}
METHOD_LABEL = {name: label for label, names in METHOD_LABELS.items() for name in names}
#: Methods safe only with some arguments (see ``Cell.method_rules``), or that call others.
_RULED = TARGET_WRITERS | frozenset(CALLABLE_METHODS) | RULED_METHODS
#: The kinds of value the cell made itself (in-memory methods may change them).
MADE_HERE = frozenset({"data", "path", "file", "buffer", "image", "inst", "fn", "class"})


class Held(NamedTuple):
    """What an expression may hold: ``kind`` ``qual`` (a module or a name in one, ``name`` its
    dotted path), ``builtin``, ``fn`` (safe to call), ``class``/``inst``/``self`` (of a class
    defined here, ``name``), ``meth`` (method ``name`` read off an object), ``data``/``path``/
    ``file``/``buffer``/``image`` (made here), ``ext`` (from elsewhere), ``param``, ``bad``."""

    kind: str
    name: str = ""


DATA, EXT, FN = Held("data"), Held("ext"), Held("fn")


def dunder(name: str) -> bool:
    """A dunder name (``__class__``) but the harmless ones (``__name__``)."""
    return len(name) > 4 and name[:2] == name[-2:] == "__" and name not in SAFE_DUNDERS


def safe_method(name: str, plain: bool = False) -> bool:
    """A method allowed on any receiver (``plain``: whatever its arguments, as when it is called
    by name: ``df.agg('sum')``)."""
    safe = name in SAFE_METHODS or (name[:4] in ("get_", "set_") and name[4:] in ACCESSOR_STEMS)
    return safe and not (plain and name in _RULED)


@functools.lru_cache(maxsize=8192)
def allowed(path: str) -> bool:
    """Whether the dotted name ``path`` ("numpy.linalg.norm", "os.remove") is allowed."""
    if path in ALLOWED:
        return True
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in DENIED:
            return False
        if prefix in PURE:
            bad, rest = PURE[prefix], parts[i:]
            if any(p in FOREIGN_MODULES for p in rest[:-1]) or FOREIGN_ENDS.intersection(rest[-1:]):
                return False  # through a module it imports: matplotlib.subprocess.run
            return not any(p[:1] == "_" or p in bad or EFFECT_NAME.match(p) for p in rest)
    return False


@functools.lru_cache(maxsize=4096)
def label_of(path: str) -> str | None:
    """The category of a refused dotted name or method, if one is known."""
    for label, names in QUAL_LABELS.items():
        if any(path == n or (n[-1] == "*" and path.startswith(n[:-1])) for n in names):
            return label
    if path.split(".")[0] in NETWORK_MODULES and not allowed(path):
        return NETWORK
    return METHOD_LABEL.get(path.rsplit(".", 1)[-1])


def canonical(path: str) -> str:
    """``path`` under the module its names are listed under (``IPython.core.display.HTML``)."""
    for alias, real in ALIASES.items():
        if path.startswith(alias + "."):
            return real + path[len(alias) :]
    return path


def under(path: str, names: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``names`` or inside one."""
    return any(path == n or path.startswith(n + ".") for n in names)


def ruled(path: str) -> str | None:
    """Module names allowed by a rule of ``module_call``, not by the allow-list."""
    if path.startswith(("statsmodels.formula.api.", "patsy.")) or path.endswith(".from_formula"):
        return "formula"
    return "rule" if path in OPENERS or path == "numpy.load" else None


def member(base: Held, attr: str) -> Held:
    """What ``base.attr`` holds."""
    if base.kind == "qual":
        return Held("qual", f"{base.name}.{attr}")
    if base.kind == "bad" or (base.kind == "path" and attr in ("parent", "parents")):
        return base
    return Held("meth", attr)


def result(base: Held, method: str | None = None) -> Held:
    """What calling ``base`` (or its ``method``) returns."""
    kind, name = base.kind, base.name
    if kind == "qual":
        path = canonical(f"{name}.{method}" if method else name)
        return Held(RESULT_KINDS.get(path) or ("file" if path in OPENERS else "data"))
    if method is None:
        if kind in ("builtin", "class"):
            return (
                Held("file")
                if name == "open"
                else (Held("inst", name) if kind == "class" else DATA)
            )
        return EXT if kind in ("ext", "param", "meth", "self", "bad") else DATA
    if kind == "path":
        return Held("file") if method == "open" else (base if method in PATH_RESULTS else DATA)
    if kind == "bad" or (kind == "image" and method in KIND_METHODS["image"]):
        return base
    return DATA if kind in MADE_HERE or method in FRESH else EXT


def kind_of(held: Any) -> str:
    """The kind of a :class:`Held`; "" for a binding's source not yet resolved."""
    return held.kind if isinstance(held, Held) else ""
