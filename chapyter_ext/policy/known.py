"""The notebook's own functions: those its cells defined (consented to when they ran), and the
names a step rebinds (which makes a known function unknown again)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from ..parsing.syntax import try_parse_cell


def defined_functions(sources: Iterable[str]) -> frozenset[str]:
    """The names cells' code defines at the top level with ``def``, ``class`` or
    ``name = lambda ...`` (IPython syntax; a cell that does not parse is skipped)."""
    names: set[str] = set()
    for source in sources:
        try:
            parsed = try_parse_cell(source)
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
        parsed = try_parse_cell(source)
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
