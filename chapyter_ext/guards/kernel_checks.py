"""Checks of code against the kernel's names, read without running anything: imports that
exist, names it reads, operands of the right type, columns, methods and keywords that exist,
and no made-up data in place of the user's."""

from __future__ import annotations

import ast
import sys

from .code_names import CodeNames, literal_key
from .names import KernelNames

__all__ = [
    "clobber_problem",
    "column_problem",
    "does_something",
    "import_for",
    "import_problem",
    "is_literal_data",
    "operand_problem",
]

# Names a small model uses without importing them, and the import that defines each.
_CONVENTIONAL_IMPORTS = {
    "pd": "import pandas as pd",
    "np": "import numpy as np",
    "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns",
}


def import_problem(tree: ast.Module) -> str | None:
    """An import of a module that is not installed, or of a name an imported module lacks."""
    from importlib.util import find_spec

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        else:
            continue
        for module in modules:
            try:
                # The top-level package only: a dotted name would import its parent.
                found = find_spec(module.partition(".")[0]) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return f"there is no module {module}"
        if isinstance(node, ast.ImportFrom) and node.module in sys.modules:
            loaded = sys.modules[node.module]
            for alias in node.names:
                if (
                    alias.name != "*"
                    and not hasattr(loaded, alias.name)
                    and _find_spec(f"{node.module}.{alias.name}") is None
                ):
                    return f"{node.module} has no {alias.name}"
    return None


def _find_spec(name: str) -> object | None:
    from importlib.util import find_spec

    try:
        return find_spec(name)
    except (ImportError, ValueError):
        return None


def does_something(tree: ast.Module) -> bool:
    if any(isinstance(node, ast.Raise) for node in tree.body):
        return False  # a correction that only raises the error again
    return any(
        not isinstance(node, ast.Pass)
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        for node in tree.body
    )


def import_for(name: str) -> str | None:
    if name in _CONVENTIONAL_IMPORTS:
        return _CONVENTIONAL_IMPORTS[name]
    if name in getattr(sys, "stdlib_module_names", ()) and not name.startswith("_"):
        return f"import {name}"
    return None


# Arithmetic no container supports (``+`` and ``*`` concatenate and repeat; ``%`` formats text).
_NO_CONTAINER_OPS = {ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**"}
_CONTAINERS = (list, tuple, dict, set, frozenset, str)


_NUMBERS = (int, float, bool)
# Methods of a numeric column that give numbers again.
_KEEPS_NUMBERS = frozenset(
    {"round", "abs", "sum", "mean", "median", "min", "max", "std", "cumsum", "clip", "fillna"}
)
# Builtins that take a sequence (their first argument is iterated).
_TAKES_SEQUENCE = frozenset(
    {"sum", "len", "sorted", "list", "tuple", "set", "max", "min", "enumerate", "any", "all"}
)


def operand_problem(tree: ast.Module, names: CodeNames, namespace: KernelNames) -> str | None:
    """An existing variable used in a way its type refuses: arithmetic on a container
    (``nums / 2``), text added to a number (``total + 'x'``), a number iterated
    (``sum(total)``)."""

    def kind(node: ast.expr) -> type | None:
        if isinstance(node, ast.Name) and node.id not in names.defined:
            return namespace.value_type(node.id)
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        ):
            return str
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return {"str": str, "repr": str}.get(node.func.id)
        # A numeric column (``df['temp']``, ``df['temp'].round(1)``): numbers.
        while (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _KEEPS_NUMBERS
        ):
            node = node.func.value
        key = literal_key(node) if isinstance(node, ast.Subscript) else None
        if key is not None and key[0] not in names.defined and namespace.column_is_number(*key):
            return float
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _NO_CONTAINER_OPS:
            for side in (node.left, node.right):
                found = kind(side) if isinstance(side, ast.Name) else None
                if found is not None and found in _CONTAINERS:
                    op = _NO_CONTAINER_OPS[type(node.op)]
                    return f"{ast.unparse(side)} is a {found.__name__}: it has no {op}"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = kind(node.left), kind(node.right)
            if {left, right} & {str} and {left, right} & set(_NUMBERS):
                return "it adds text and a number"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _TAKES_SEQUENCE
            and node.func.id not in names.defined
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and kind(node.args[0]) in _NUMBERS
        ):
            return f"{node.args[0].id} is a number: {node.func.id}() needs a sequence"
    return None


def column_problem(tree: ast.Module, names: CodeNames, namespace: KernelNames) -> str | None:
    rebound = names.defined
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = literal_key(node)
            if key is None or key in names.assigned_keys or key[0] in rebound:
                continue
            columns = namespace.columns(key[0])
            if columns is not None and key[1] not in columns:
                return f"{key[0]} has no column {key[1]!r}"
        elif isinstance(node, ast.Call) and (bad := _missing_column_method(node, names, namespace)):
            return f"a column has no method {bad!r}"
        elif isinstance(node, ast.Call) and _missing_method(node.func, names, namespace):
            return f"{ast.unparse(node.func)} does not exist"
        elif isinstance(node, ast.Call) and (bad := _unknown_keyword(node, names, namespace)):
            return f"{ast.unparse(node.func)} takes no argument {bad!r}"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            frame = node.value.id
            if frame in rebound or not isinstance(node.ctx, ast.Load):
                continue
            columns = namespace.columns(frame)
            if columns is None or node.attr in columns or (frame, node.attr) in names.assigned_keys:
                continue
            kind = namespace.value_type(frame)
            if kind is not None and not hasattr(kind, node.attr):
                return f"{frame} has no column or attribute {node.attr!r}"
    return None


def _missing_column_method(call: ast.Call, names: CodeNames, namespace: KernelNames) -> str | None:
    """``df['col'].method(...)`` where an existing DataFrame's column has no such method
    (``sales['city'].lower()``: that is ``.str.lower()``)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript)):
        return None
    key = literal_key(func.value)
    if key is None or key[0] in names.defined or key in names.assigned_keys:
        return None
    column = namespace.column_type(key[0], key[1])
    if column is None:
        return None
    return None if hasattr(column, func.attr) else func.attr


def _missing_method(func: ast.expr, names: CodeNames, namespace: KernelNames) -> bool:
    """``x.method(...)`` where ``x`` is an existing module or variable that has no such
    attribute (``df.append`` in pandas 2, ``pd.to_csv``). Looked up on the type, except for
    modules and DataFrame columns, so no property of the user's object runs."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    name, attr = func.value.id, func.attr
    if not namespace.has(name) or (name, attr) in names.assigned_keys:
        return False
    if namespace.is_module(name):
        module = namespace.module(name)
        return module is not None and not hasattr(module, attr)
    if attr in (namespace.columns(name) or ()):
        return False
    kind = namespace.value_type(name)
    return kind is not None and not hasattr(kind, attr)


def _unknown_keyword(call: ast.Call, names: CodeNames, namespace: KernelNames) -> str | None:
    """A keyword argument the called method or module function does not take
    (``df.drop(columns=[...], on_index=...)``); None when it cannot be told."""
    import inspect

    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    name = func.value.id
    if not namespace.has(name) or name in names.defined:
        return None
    owner = namespace.module(name) if namespace.is_module(name) else namespace.value_type(name)
    target = getattr(owner, func.attr, None) if owner is not None else None
    if target is None or not callable(target):
        return None
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg not in parameters:
            return keyword.arg
    return None


_LITERALS = (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.Set)


def is_literal_data(node: ast.expr, namespace: KernelNames) -> bool:
    """A literal container, or a constructor called with literal containers
    (``pd.DataFrame({...})``, ``np.array([...])``); not a method of an existing variable
    (``df.rename(columns={...})`` works on the data)."""
    if isinstance(node, (ast.List, ast.Dict, ast.Tuple, ast.Set)):
        return True
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return False
    root = node.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and namespace.has(root.id) and not namespace.is_module(root.id):
        return False
    values = [*node.args, *(k.value for k in node.keywords)]
    return all(isinstance(v, _LITERALS) for v in values) and any(
        not isinstance(v, ast.Constant) for v in values
    )


def clobber_problem(
    tree: ast.Module,
    namespace: KernelNames,
    *,
    made_up_ok: bool,
    mine: frozenset[str] = frozenset(),
) -> str | None:
    for node in tree.body:
        if ast.unparse(node) in mine:
            continue  # the user's own statement, kept from the code the answer changes
        if isinstance(node, ast.Assign) and is_literal_data(node.value, namespace):
            for target in node.targets:
                if isinstance(target, ast.Name) and namespace.has(target.id):
                    return f"it replaces the existing {target.id} with made-up data"
            if not made_up_ok and isinstance(node.value, ast.Call):
                return "it makes up data instead of using the variables named"
    return None
