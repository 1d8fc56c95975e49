"""Checking model code against the kernel before it is offered (it is never run to find out):
names, columns, methods and keywords that exist, no made-up data, and for ``%%ai`` what the
request asks for; with cheap repairs (a conventional import, the requested name, the summary's
values copied back dropped, the right first line kept). The kernel is read through
:class:`~.names.KernelNames`: live in the kernel, or the chat's snapshot on the server."""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..parsing.syntax import CodeSyntaxError, check_syntax, try_parse_cell
from .names import KernelNames, LiveNames

# Words that are never a column's name in a request ("the mean of a into b").
STOP_WORDS = frozenset(
    {"a", "an", "the", "of", "in", "into", "to", "from", "with", "and", "or", "by", "is", "are"}
    | {"that", "which", "this", "at", "for", "on", "it", "its"}
)


@dataclass(frozen=True)
class Candidate:
    """A checked candidate: the code (with missing well-known imports added) and what is
    wrong with it (None when it may run)."""

    code: str
    problem: str | None


# Names a small model uses without importing them, and the import that defines each.
_CONVENTIONAL_IMPORTS = {
    "pd": "import pandas as pd",
    "np": "import numpy as np",
    "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns",
}


def check_candidate(
    code: str,
    namespace: Mapping[str, Any] | KernelNames,
    request: str = "",
    *,
    original: str = "",
    shorten: bool = True,
) -> Candidate:
    """Check ``code`` against the kernel's names (``namespace``: the live namespace, or a
    :class:`~.names.KernelNames`) and the ``request`` without running it.

    Refused: code that does not parse (after IPython's transforms) or calls ``%%ai``; code that
    does nothing (only comments, ``pass`` or a bare constant); names read that are neither in
    the namespace, builtins, nor defined or imported in the code (``pd``/``np``/``plt`` and
    standard-library modules get their import added instead); ``df['col']`` or ``df.col``
    read from an existing DataFrame that has no such column (nor gets one in the code); an
    existing variable re-bound to literal sample data (a list, dict or constructor of
    literals), which would destroy the user's data; made-up data when the request is about
    existing variables; code that uses none of the variables the request names; and code
    that does not define the name the request asks for ("... into total", "called data",
    "a function add").

    Statements that re-bind an existing variable to literal data (a small model copies the
    summary's values back) are dropped first. When the whole code fails, its longest run of
    leading statements that passes is taken instead: a small model often writes the right
    first line and then goes on (``shorten``; never for ``original``). ``original``: the
    user's own code the answer changes (Fix, Edit): its statements are the user's, never
    dropped nor refused as made up.
    """
    names = namespace if isinstance(namespace, KernelNames) else LiveNames(namespace)
    mine = _Original.of(original, names)
    code = _drop_made_up(code, names, mine.statements)
    code = _into_target(code, names, request)
    first = _check(code, names, request, mine)
    if first.problem is None or original or not shorten:
        return first
    lines = code.split("\n")
    tree = _parse_transformed(code)
    if tree is None or len(tree.body) < 2:
        return first
    for node in reversed(tree.body[1:]):
        prefix = "\n".join(lines[: node.lineno - 1]).rstrip()
        shorter = _check(prefix, names, request, mine)
        if shorter.problem is None:
            return shorter
    return first


@dataclass(frozen=True)
class _Original:
    """The user's code an answer changes: its statements (normalised), the existing variables
    it reads, the names and columns it sets at the top level; and the kernel's data variables
    (which an answer must not overwrite unless the code did)."""

    statements: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    binds: frozenset[str] = frozenset()
    keys: frozenset[tuple[str, str]] = frozenset()
    data: frozenset[str] = frozenset()
    given: bool = False

    @classmethod
    def of(cls, code: str, namespace: KernelNames) -> _Original:
        tree = _parse_transformed(code) if code.strip() else None
        if tree is None:
            return cls()
        names = _Names()
        names.visit(tree)
        targets = _top_targets(tree)
        data = frozenset(n for n in namespace.names() if namespace.is_data(n))
        return cls(
            frozenset(ast.unparse(node) for node in tree.body),
            frozenset(n for n in names.read if namespace.has(n) and namespace.is_data(n)),
            frozenset(t.id for t in targets if isinstance(t, ast.Name)),
            frozenset(
                k for t in targets if isinstance(t, ast.Subscript) and (k := _literal_key(t))
            ),
            data,
            True,
        )

    def problem(self, tree: ast.Module, names: _Names) -> str | None:
        """What a change drops that the code it changes had (a variable it read, a name or a
        column it set), or a variable of the kernel it overwrites that the code did not: a fix
        changes what the error needs, not what the cell is about."""
        if not self.given:
            return None
        dropped = sorted(self.reads - names.read)
        if dropped:
            return f"it no longer uses {', '.join(dropped)}"
        bound = {t.id for t in _top_targets(tree) if isinstance(t, ast.Name)}
        unset = sorted(self.binds - bound) + [
            f"{name}[{key!r}]" for name, key in sorted(self.keys - names.assigned_keys)
        ]
        if unset:
            return f"it no longer sets {', '.join(unset)}"
        overwritten = sorted((bound & self.data) - self.binds)
        if overwritten:
            return f"it overwrites {', '.join(overwritten)}"
        return None


def _top_targets(tree: ast.Module) -> list[ast.expr]:
    """The targets of the top-level assignments of ``tree``."""
    return [
        target
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]


def _into_target(code: str, namespace: KernelNames, request: str) -> str:
    """The request says where the result goes ("mean of price into avg") and the code puts
    it in one new variable of its own naming: rename that variable."""
    target = requested_target(request)
    tree = _parse_transformed(code)
    if target is None or tree is None:
        return code
    names = _Names()
    names.visit(tree)
    if target in names.defined:
        return code
    new = [
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and not namespace.has(t.id)
    ]
    if len(set(new)) != 1 or target in names.read:
        return code
    return _rename(code, new[0], target)


def _rename(code: str, old: str, new: str) -> str:
    """``code`` with the name ``old`` replaced by ``new`` (not inside strings or comments)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    lines = code.split("\n")
    for tok in reversed(tokens):
        if tok.type == tokenize.NAME and tok.string == old:
            (row, col), (_, end) = tok.start, tok.end
            line = lines[row - 1]
            lines[row - 1] = line[:col] + new + line[end:]
    return "\n".join(lines)


def _drop_made_up(code: str, namespace: KernelNames, mine: frozenset[str] = frozenset()) -> str:
    tree = _parse_transformed(code)
    if tree is None:
        return code
    lines = code.split("\n")
    drop: set[int] = set()
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and ast.unparse(node) not in mine
            and _is_literal_data(node.value, namespace)
            and all(isinstance(t, ast.Name) and namespace.has(t.id) for t in node.targets)
        ):
            drop.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    if not drop or len(drop) == len(lines):
        return code
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


def _check(
    code: str, namespace: KernelNames, request: str, mine: _Original = _Original()
) -> Candidate:
    try:
        check_syntax(code)
    except CodeSyntaxError as err:
        return Candidate(code, str(err))
    tree = _parse_transformed(code)
    if tree is None:
        return Candidate(code, "the code does not parse")
    if not _does_something(tree):
        return Candidate(code, "the code does nothing")
    names = _Names()
    names.visit(tree)
    missing = sorted(
        name
        for name in _read_before_bound(tree, names)
        if name not in namespace and not hasattr(builtins, name)
    )
    imports = [_import_for(name) for name in missing]
    unknown = [name for name, line in zip(missing, imports) if line is None]
    if unknown:
        return Candidate(code, f"it reads undefined name(s) {', '.join(unknown)}")
    if imports:
        code = "\n".join(line for line in imports if line) + "\n" + code
    named = _named_variables(request, namespace)
    problem = (
        _import_problem(tree)
        or _operand_problem(tree, names, namespace)
        or _column_problem(tree, names, namespace)
        or _named_columns_problem(request, names, named, namespace)
        or _clobber_problem(tree, namespace, made_up_ok=not named, mine=mine.statements)
        or (_request_problem(request, code, names, named) if request else None)
        or mine.problem(tree, names)
    )
    return Candidate(code, problem)


_TARGET = re.compile(
    r"\b(?:into|called|named|(?:a|an|the)\s+(?:list|dictionary|dict|function|variable|set|tuple))"
    r"\s+`?([A-Za-z_]\w*)`?",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset({"a", "an", "the", "of", "that", "which", "with", "to", "for", "from"})


def _named_variables(request: str, namespace: KernelNames) -> set[str]:
    """Existing variables (not modules, not hidden) the request mentions by name."""
    words = set(re.findall(r"[A-Za-z_]\w*", request))
    return {word for word in words if namespace.is_data(word)}


_COMPARISON = re.compile(r"(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w.])")
_FUNCTION = re.compile(r"\b(?:function|def|method)\b", re.IGNORECASE)
_DESCENDING = re.compile(r"\b(?:descending|largest first|highest first)\b", re.IGNORECASE)


def requested_target(request: str) -> str | None:
    """The variable the request asks the result to go into ("... into total"), if any."""
    for match in _TARGET.finditer(request):
        if match.group(1).lower() not in _NOT_NAMES:
            return match.group(1)
    return None


def _import_problem(tree: ast.Module) -> str | None:
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


def _named_columns_problem(
    request: str, names: _Names, named: set[str], namespace: KernelNames
) -> str | None:
    """The request names columns of the DataFrames it is about (those it names, else all):
    the code must use them."""
    words = set(re.findall(r"[A-Za-z_]\w*", request))
    frames = {name for name in named if namespace.columns(name) is not None} or {
        name
        for name in namespace.names()
        if not name.startswith("_") and namespace.columns(name) is not None
    }
    for frame in sorted(frames):
        for column in sorted(namespace.columns(frame) or ()):
            if column not in words or column in names.strings | names.attributes:
                continue
            article = column.lower() in STOP_WORDS
            near_operator = re.search(
                rf"(?:[-+*/<>=]\s*\b{re.escape(column)}\b|\b{re.escape(column)}\s*[-+*/<>=])",
                request,
            )
            if not article or near_operator:
                return f"it does not use the column {column!r}"
    return None


def _request_problem(request: str, code: str, names: _Names, named: set[str]) -> str | None:
    target = requested_target(request)
    if target is not None and target not in names.defined:
        return f"it does not define {target}"
    if named and not (named & (names.read | names.defined)):
        return f"it does not use {', '.join(sorted(named))}"
    if names.functions and not _FUNCTION.search(request) and not names.calls & names.functions:
        return "it only defines a function, never called"
    words = {w.lower(): w for w in re.findall(r"[A-Za-z]\w*", request)}
    for text in sorted(names.strings):
        said = words.get(text.lower())
        if said is not None and said != text and said.islower():
            return f"it writes {text!r} where the request says {said!r}"
    numbers = {n.value for n in names.numbers}
    for match in _NUMBER.finditer(request):
        value = float(match.group(1))
        # "1 to 10" is range(1, 11) in Python.
        inclusive = match.start() >= 3 and request[: match.start()].rstrip().endswith(" to")
        if value not in numbers and not (inclusive and value + 1 in numbers):
            return f"it does not use the {match.group(1)} the request gives"
    flat = code.replace(" ", "")
    for op, number in _COMPARISON.findall(request):
        if f"{op}{number}" not in flat:
            return f"it does not test {op} {number}"
    if _DESCENDING.search(request) and not any(
        mark in flat for mark in ("ascending=False", "reverse=True", "[::-1]", "nlargest")
    ):
        return "it does not sort in descending order"
    return None


def _read_before_bound(tree: ast.Module, names: _Names) -> set[str]:
    """Names a statement reads that no earlier statement binds (``c = c + 1`` reads ``c``
    before binding it), nor the statement itself inside (a comprehension's or a function's
    own names). Function and class bodies may use names bound anywhere in the code."""
    bound: set[str] = set()
    unbound: set[str] = set()
    for node in tree.body:
        inner = _Names()
        inner.visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            unbound |= inner.read - names.defined
        else:
            own = set(inner.defined)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                own -= {t.id for t in targets if isinstance(t, ast.Name)}
            unbound |= inner.read - own - bound
        bound |= inner.defined
    return unbound


def _parse_transformed(code: str) -> ast.Module | None:
    parsed = try_parse_cell(code)
    return parsed[1] if parsed is not None else None


def _does_something(tree: ast.Module) -> bool:
    if any(isinstance(node, ast.Raise) for node in tree.body):
        return False  # a correction that only raises the error again
    return any(
        not isinstance(node, ast.Pass)
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        for node in tree.body
    )


def _import_for(name: str) -> str | None:
    if name in _CONVENTIONAL_IMPORTS:
        return _CONVENTIONAL_IMPORTS[name]
    if name in getattr(sys, "stdlib_module_names", ()) and not name.startswith("_"):
        return f"import {name}"
    return None


class _Names(ast.NodeVisitor):
    """Names the code reads and names it binds (anywhere: order is not checked), and the
    DataFrame columns it assigns (``x['c'] = ...``)."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.defined: set[str] = set()
        self.assigned_keys: set[tuple[str, str]] = set()
        self.functions: set[str] = set()
        self.calls: set[str] = set()
        self.strings: set[str] = set()
        self.attributes: set[str] = set()
        self.numbers: list[ast.Constant] = []

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            self.calls.add(node.func.id)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.strings.add(node.value)
        elif isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            self.numbers.append(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.attributes.add(node.attr)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        (self.read if isinstance(node.ctx, ast.Load) else self.defined).add(node.id)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = _literal_key(node)
        if key is not None and not isinstance(node.ctx, ast.Load):
            self.assigned_keys.add(key)
        self.generic_visit(node)

    def _bind(self, name: str) -> None:
        self.defined.add(name)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name)
        self.functions.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._bind(node.arg)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.defined.update(node.names)

    visit_Nonlocal = visit_Global


def _literal_key(node: ast.Subscript) -> tuple[str, str] | None:
    """``("df", "col")`` for ``df['col']``; None for anything else."""
    if (
        isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.value.id, node.slice.value
    return None


# Arithmetic no container supports (``+`` and ``*`` concatenate and repeat; ``%`` formats text).
_NO_CONTAINER_OPS = {ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**"}
_CONTAINERS = (list, tuple, dict, set, frozenset, str)


_NUMBERS = (int, float, bool)
# Builtins that take a sequence (their first argument is iterated).
_TAKES_SEQUENCE = frozenset(
    {"sum", "len", "sorted", "list", "tuple", "set", "max", "min", "enumerate", "any", "all"}
)


def _operand_problem(tree: ast.Module, names: _Names, namespace: KernelNames) -> str | None:
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


def _column_problem(tree: ast.Module, names: _Names, namespace: KernelNames) -> str | None:
    rebound = names.defined
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = _literal_key(node)
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


def _missing_column_method(call: ast.Call, names: _Names, namespace: KernelNames) -> str | None:
    """``df['col'].method(...)`` where an existing DataFrame's column has no such method
    (``sales['city'].lower()``: that is ``.str.lower()``)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript)):
        return None
    key = _literal_key(func.value)
    if key is None or key[0] in names.defined or key in names.assigned_keys:
        return None
    column = namespace.column_type(key[0], key[1])
    if column is None:
        return None
    return None if hasattr(column, func.attr) else func.attr


def _missing_method(func: ast.expr, names: _Names, namespace: KernelNames) -> bool:
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


def _unknown_keyword(call: ast.Call, names: _Names, namespace: KernelNames) -> str | None:
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


def _is_literal_data(node: ast.expr, namespace: KernelNames) -> bool:
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


def _clobber_problem(
    tree: ast.Module,
    namespace: KernelNames,
    *,
    made_up_ok: bool,
    mine: frozenset[str] = frozenset(),
) -> str | None:
    for node in tree.body:
        if ast.unparse(node) in mine:
            continue  # the user's own statement, kept from the code the answer changes
        if isinstance(node, ast.Assign) and _is_literal_data(node.value, namespace):
            for target in node.targets:
                if isinstance(target, ast.Name) and namespace.has(target.id):
                    return f"it replaces the existing {target.id} with made-up data"
            if not made_up_ok and isinstance(node.value, ast.Call):
                return "it makes up data instead of using the variables named"
    return None
