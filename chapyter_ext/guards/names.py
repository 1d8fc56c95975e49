"""The kernel's names as the guard rails read them: the live namespace (``%%ai`` runs in the
kernel) or the chat's notebook snapshot (the server, which never sees the kernel: it may be
remote). Both answer the same questions; the snapshot answers "unknown" (None) where it cannot
tell, and a check skips what is unknown rather than refusing on a guess.

Nothing here runs the user's code: values are looked at through their type (``hasattr`` on the
class), except a DataFrame's column (its ``__getitem__``), as the ``%%ai`` check always did.
The snapshot's modules are looked into only when this process has them loaded already or they
are well-known libraries (a module named by the notebook is never imported here).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..context.assemble import VariableSummary

__all__ = ["KernelNames", "LiveNames", "SnapshotNames", "frame_columns", "snapshot_names"]

# What IPython puts in every namespace that the snapshot leaves out (user_variables hides it).
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "display"})
# Modules a snapshot may name that this process may import to look into (cheap, no side
# effects on import); anything else only if already loaded here.
_LOOKABLE = frozenset(
    {"numpy", "pandas", "math", "statistics", "random", "re", "json", "datetime", "collections"}
    | {"itertools", "functools", "string", "time", "os", "pathlib", "csv", "decimal"}
)
# The snapshot lists at most this many modules (context.fact_cache.module_aliases): past it, a
# name that is missing may still be a module.
_MODULES_LISTED = 40
_ITEMS = re.compile(r"^(\d[\d,]*) items?\b")


def frame_columns(value: Any) -> set[str] | None:
    """The column names of a pandas DataFrame (without importing pandas), else None."""
    cls = type(value)
    if cls.__name__ != "DataFrame" or not cls.__module__.startswith("pandas"):
        return None
    try:
        return {str(c) for c in value.columns}
    except Exception:
        return None


class KernelNames:
    """What a check may ask about the kernel's names. ``known`` False: nothing is known (the
    kernel could not be read), and every name counts as present (``in``)."""

    known = True

    def __contains__(self, name: object) -> bool:
        raise NotImplementedError

    def has(self, name: str) -> bool:
        """Whether ``name`` surely exists (``in`` also says yes for what cannot be told)."""
        return name in self

    def names(self) -> Iterable[str]:
        """Every name known (for close-match repairs)."""
        raise NotImplementedError

    def is_module(self, name: str) -> bool:
        """Whether ``name`` holds a module."""
        raise NotImplementedError

    def module(self, name: str) -> Any | None:
        """The module ``name`` holds, when this process can look into it."""
        return None

    def columns(self, name: str) -> set[str] | None:
        """All the columns of the DataFrame ``name`` holds; None when not one or not known."""
        return None

    def value_type(self, name: str) -> type | None:
        """The class of the value ``name`` holds, when this process has it."""
        return None

    def column_type(self, frame: str, column: str) -> type | None:
        """The class of ``frame[column]``, when known."""
        return None

    def column_is_number(self, frame: str, column: str) -> bool:
        """Whether ``frame[column]`` surely holds numbers (a numeric dtype, not bool)."""
        return False

    def is_data(self, name: str) -> bool:
        """Whether ``name`` holds data the user made (not a module, function or class)."""
        return False

    def keys(self, name: str) -> set[str] | None:
        """The string keys of the dict ``name`` holds, when known."""
        return None

    def length(self, name: str) -> int | None:
        """The length of the list or tuple ``name`` holds, when known."""
        return None


class LiveNames(KernelNames):
    """The kernel's own namespace (``shell.user_ns``)."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace

    def __contains__(self, name: object) -> bool:
        return name in self.namespace

    def names(self) -> Iterable[str]:
        return [n for n in self.namespace if isinstance(n, str)]

    def is_module(self, name: str) -> bool:
        return name in self.namespace and type(self.namespace[name]).__name__ == "module"

    def module(self, name: str) -> Any | None:
        return self.namespace[name] if self.is_module(name) else None

    def columns(self, name: str) -> set[str] | None:
        return frame_columns(self.namespace.get(name))

    def value_type(self, name: str) -> type | None:
        return type(self.namespace[name]) if name in self.namespace else None

    def column_type(self, frame: str, column: str) -> type | None:
        columns = self.columns(frame)
        if columns is None or column not in columns:
            return None
        try:
            return type(self.namespace[frame][column])
        except Exception:
            return None

    def column_is_number(self, frame: str, column: str) -> bool:
        if column not in (self.columns(frame) or ()):
            return False
        try:
            return str(getattr(self.namespace[frame][column], "dtype", "")).startswith(
                ("int", "float", "uint", "Int", "Float", "UInt")
            )
        except Exception:
            return False

    def is_data(self, name: str) -> bool:
        value = self.namespace.get(name)
        return (
            name in self.namespace
            and not name.startswith("_")
            and type(value).__name__ != "module"
            and not callable(value)
        )

    def keys(self, name: str) -> set[str] | None:
        value = self.namespace.get(name)
        return {k for k in value if isinstance(k, str)} if isinstance(value, dict) else None

    def length(self, name: str) -> int | None:
        value = self.namespace.get(name)
        return len(value) if isinstance(value, (list, tuple)) else None


class SnapshotNames(KernelNames):
    """The variables of the chat's notebook snapshot (``describe_variables``, read by the
    browser through the notebook's kernel). ``variables`` None: the kernel could not tell."""

    def __init__(self, variables: Sequence[VariableSummary] | None) -> None:
        self._vars = {v.name: v for v in variables or ()}
        modules = sum(1 for v in variables or () if v.type == "module")
        # Hidden names (a leading "_") are never listed: nothing is known about them.
        self.known = variables is not None and modules < _MODULES_LISTED

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        # Names the snapshot never lists are taken to exist: unknown is not missing.
        return (
            not self.known or name in self._vars or name in _IPYTHON_NAMES or name.startswith("_")
        )

    def has(self, name: str) -> bool:
        return name in self._vars

    def names(self) -> Iterable[str]:
        return list(self._vars)

    def is_module(self, name: str) -> bool:
        found = self._vars.get(name)
        return found is not None and found.type == "module"

    def module(self, name: str) -> Any | None:
        found = self._vars.get(name)
        if found is None or found.type != "module":
            return None
        return _look_into(found.summary)

    def columns(self, name: str) -> set[str] | None:
        found = self._vars.get(name)
        if found is None or found.type != "DataFrame" or found.detail is None:
            return None
        detail = found.detail
        if detail.total != len(detail.facts):
            return None  # a wide frame: only its first columns were sent
        columns = {_label(f.label) for f in detail.facts}
        return None if None in columns else {c for c in columns if c is not None}

    def value_type(self, name: str) -> type | None:
        found = self._vars.get(name)
        return _class_of(found.type) if found is not None else None

    def column_type(self, frame: str, column: str) -> type | None:
        columns = self.columns(frame)
        if columns is None or column not in columns:
            return None
        return _class_of("Series")

    def is_data(self, name: str) -> bool:
        found = self._vars.get(name)
        return (
            found is not None
            and not name.startswith("_")
            and found.type not in ("module", "function", "class", "method", "type")
            and not found.type.endswith("function")
        )

    def keys(self, name: str) -> set[str] | None:
        found = self._vars.get(name)
        if found is None or found.type != "dict":
            return None
        if found.detail is not None and found.detail.total == len(found.detail.facts):
            keys = {_label(f.label) for f in found.detail.facts}
            return {k for k in keys if k is not None}
        _, _, shown = found.summary.partition(": ")
        try:
            value = ast.literal_eval(shown)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None  # cut short ("…"), or not literal
        return {k for k in value if isinstance(k, str)} if isinstance(value, dict) else None

    def length(self, name: str) -> int | None:
        found = self._vars.get(name)
        if found is None or found.type not in ("list", "tuple"):
            return None
        match = _ITEMS.match(found.summary)
        return int(match.group(1).replace(",", "")) if match else None


def _label(text: str) -> str | None:
    """A fact's label (``'price'``) as the column name; None when it is not a string key."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


_BUILTIN_TYPES = {
    t.__name__: t for t in (int, float, str, bytes, list, dict, tuple, set, frozenset, bool)
}


def _class_of(label: str) -> type | None:
    """The class a snapshot's type label names, when this process has it: builtins, and the
    pandas and numpy classes when those are installed here."""
    if label in _BUILTIN_TYPES:
        return _BUILTIN_TYPES[label]
    where = {"DataFrame": "pandas", "Series": "pandas", "ndarray": "numpy"}.get(label)
    module = _look_into(where) if where else None
    found = getattr(module, label, None) if module is not None else None
    return found if isinstance(found, type) else None


def _look_into(module: str) -> Any | None:
    """The module named ``module`` if it is loaded here, or a well-known one installed here."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        return loaded
    if module not in _LOOKABLE:
        return None
    import importlib

    try:
        return importlib.import_module(module)
    except Exception:
        return None


def snapshot_names(context: Any) -> SnapshotNames:
    """The names of a request's ``context``: a notebook snapshot's variables; anything else
    (text, None) knows none."""
    from ..context.notebook import NotebookSnapshot

    variables = context.variables if isinstance(context, NotebookSnapshot) else None
    return SnapshotNames(variables)
