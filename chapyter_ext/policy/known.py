"""What the notebook's names are: its own functions (those its cells defined, consented to when
they ran), the names a step rebinds (which makes a known function unknown again), and what each
name holds (``known_types`` of :func:`~.decide.analyse`), from a kernel's namespace or read
from cells' imports."""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

from .tree import parse


def defined_functions(sources: Iterable[str]) -> frozenset[str]:
    """The names cells' code defines at the top level with ``def``, ``class`` or
    ``name = lambda ...`` (IPython syntax; a cell that does not parse is skipped)."""
    names: set[str] = set()
    for source in sources:
        try:
            parsed = parse(source)
        except RecursionError:
            parsed = None  # a cell Python cannot parse defines nothing
        stack = list(parsed[1].body) if parsed else []
        while stack:  # module-level statements, inside if/try/with/for too
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    stack.extend(getattr(node, field, None) or [])
    return frozenset(names)


def bound_names(source: str) -> frozenset[str]:
    """Every name ``source`` may bind or delete, at any depth (a step that rebinds a known
    function's name makes it unknown)."""
    try:
        parsed = parse(source)
    except RecursionError:
        parsed = None
    names: set[str] = set()
    for node in ast.walk(parsed[1]) if parsed else ():
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return frozenset(names)


def namespace_functions(namespace: dict[str, Any]) -> frozenset[str]:
    """The functions and classes of a kernel's namespace that the user's own cells defined
    (IPython runs cells in module ``__main__``): they were consented to when their cell ran."""
    names = set()
    for name, value in list(namespace.items()):
        if name.startswith("_") or not callable(value):
            continue
        own = isinstance(value, type) or type(value).__name__ == "function"
        if own and getattr(value, "__module__", None) == "__main__":
            names.add(name)
    return frozenset(names)


#: IPython's own names in a kernel's namespace (its history and helpers, not the user's).
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def _public_name(value: Any) -> str | None:
    """The shortest dotted name a module exposes ``value`` under (``sklearn.linear_model.
    LinearRegression`` for a class defined in ``sklearn.linear_model._base``), if any."""
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        found: Any = sys.modules.get(".".join(parts[:i]))
        for attribute in qualname.split("."):
            found = getattr(found, attribute, None)
        if found is value:
            return f"{'.'.join(parts[:i])}.{qualname}"
    return None


def namespace_types(namespace: Mapping[str, Any]) -> dict[str, str]:
    """What the names of a kernel's namespace hold, as ``known_types``: ``"module:<dotted>"``
    for a module, or for a function or class reached from one (as ``import`` and ``from ...
    import`` bind them); else the type of the value, ``"module.QualName"``. Private names,
    IPython's own and the user's functions (``known_functions``' job) are left out."""
    found: dict[str, str] = {}
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if isinstance(value, types.ModuleType):
            found[name] = f"module:{value.__name__}"
            continue
        if getattr(value, "__module__", None) == "__main__" and callable(value):
            continue
        public = _public_name(value) if callable(value) else None
        kind = type(value)
        found[name] = f"module:{public}" if public else f"{kind.__module__}.{kind.__qualname__}"
    return found


def imported_types(sources: Iterable[str]) -> dict[str, str]:
    """What the top-level imports of cells bind, as ``known_types`` (``{"np": "module:numpy",
    "LinearRegression": "module:sklearn.linear_model.LinearRegression"}``): a kernel's answer
    for those names, read without one. A later binding of a name by anything else drops it."""
    found: dict[str, str] = {}
    for source in sources:
        try:
            parsed = parse(source)
        except RecursionError:
            parsed = None
        for node in parsed[1].body if parsed else ():
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    found[bound] = f"module:{alias.name if alias.asname else bound}"
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = f"module:{node.module}.{alias.name}"
            else:
                for name in bound_names(ast.unparse(node)) if _binds(node) else ():
                    found.pop(name, None)
    return found


def _binds(node: ast.stmt) -> bool:
    return isinstance(
        node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.FunctionDef, ast.ClassDef, ast.For)
    )
