"""What a name, a dotted name, a method or a value is, and whether it is allowed: the
allow-list of :mod:`.lists` read as answers (``allowed('numpy.linalg.norm')``), and
:class:`Held`, what an expression may hold."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Iterable
from typing import Any, NamedTuple

from .categories import NETWORK
from .lists import words
from .lists.functions import (
    ALIASES,
    ALLOWED,
    DENIED,
    EFFECT_NAME,
    ENVIRONS,
    FOREIGN_ENDS,
    FOREIGN_MODULES,
    NETWORK_MODULES,
    OPENERS,
    PURE,
    RESULT_KINDS,
    SAFE_DUNDERS,
    SETTING_KEYS,
)
from .lists.labels import MODULE_LABELS, QUAL_LABELS
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
from .lists.types import TYPE_KINDS

BUILTINS = frozenset(vars(builtins)) | {"display", "get_ipython"}
METHOD_LABEL = {name: label for label, names in METHOD_LABELS.items() for name in names}
#: Methods safe only with some arguments (see ``Cell.method_rules``), or that call others.
_RULED = TARGET_WRITERS | frozenset(CALLABLE_METHODS) | RULED_METHODS
#: The kinds of value the cell made itself, or of a known type of data (in-memory methods may
#: change them).
MADE_HERE = frozenset({"data", "path", "file", "buffer", "image", "inst", "fn", "class"})
#: The kinds of value whose calls are not known to be safe: from elsewhere (of unknown type, a
#: parameter, a method's ``self``) or of a known type whose objects are not data.
OPAQUE = words("ext param self typed network response sql store logger process shell trial")
#: What the object a method is called on (or an attribute set on) may come from for the call
#: to pass on its name alone (``LIKELY``): of unknown type, or an attribute of such an object.
GUESSED_ROOTS = frozenset({"ext", "param", "self", "inst", "meth", "own"})


class Held(NamedTuple):
    """What an expression may hold: ``kind`` ``qual`` (a module or a name in one, ``name`` its
    dotted path), ``builtin``, ``fn`` (safe to call), ``class``/``inst``/``self`` (of a class
    defined here, ``name``), ``meth`` (method ``name`` read off an object), ``data``/``path``/
    ``file``/``buffer``/``image`` (made here, or of a known type), ``ext`` (from elsewhere, of
    unknown type), ``param``, ``bad``; of a known type (``known_types``): ``network``,
    ``response``, ``sql``, ``store``, ``logger``, ``process``, ``shell``, ``trial`` (see
    :mod:`.lists.types`) or ``typed`` (a type no list knows, ``name`` the type)."""

    kind: str
    name: str = ""


DATA, EXT, FN = Held("data"), Held("ext"), Held("fn")
#: A function or class an earlier cell of the notebook defined (``known_functions``).
OWN = Held("fn", "own")


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
            return not any(
                (p[:1] == "_" and p not in SAFE_DUNDERS) or p in bad or EFFECT_NAME.match(p)
                for p in rest
            )
    return False


@functools.lru_cache(maxsize=4096)
def label_of(path: str) -> str | None:
    """The category of a refused dotted name or method, if one is known."""
    for label, names in QUAL_LABELS.items():
        if any(path == n or (n[-1] == "*" and path.startswith(n[:-1])) for n in names):
            return label
    head = path.split(".")[0]
    if head in NETWORK_MODULES and not allowed(path):
        return NETWORK
    return METHOD_LABEL.get(path.rsplit(".", 1)[-1]) or MODULE_LABELS.get(head)


_ALIASED = tuple(ALIASES)


def canonical(path: str) -> str:
    """``path`` under the module its names are listed under (``IPython.core.display.HTML``)."""
    if not path.startswith(_ALIASED):
        return path
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
    ruled_here = path in OPENERS or path in SETTING_KEYS or path in ENVIRONS
    return "rule" if ruled_here or path == "numpy.load" else None


@functools.lru_cache(maxsize=1024)
def of_type(described: str) -> Held:
    """What a notebook's name holds, from its ``known_types`` entry: ``"module:<dotted>"`` (a
    module, or a name reached from one as an import binds it) or a type's ``"module.QualName"``
    read through :data:`~.lists.types.TYPE_KINDS` (longest prefix)."""
    if described.startswith("module:"):
        return Held("qual", described[len("module:") :])
    if described == "os._Environ":  # ``env = os.environ`` in an earlier cell
        return Held("qual", "os.environ")
    parts = described.split(".")
    for i in range(len(parts), 0, -1):
        kind = TYPE_KINDS.get(".".join(parts[:i]))
        if kind is not None:
            return Held(kind)
    return Held("typed", described)


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
    if kind == "sql" and method in ("cursor", "execute"):
        return base
    return DATA if kind in MADE_HERE or method in FRESH else EXT


def kind_of(held: Any) -> str:
    """The kind of a :class:`Held`; "" for a binding's source not yet resolved."""
    return held.kind if isinstance(held, Held) else ""
