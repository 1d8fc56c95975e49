"""Reading Python's AST quickly: a node's children, a whole tree, a dotted name, a literal."""

from __future__ import annotations

import ast
import warnings
from typing import Any

from ..parsing.syntax import try_parse_cell
from .lists import words

#: AST fields that never hold a node to check, and nodes without any.
_LEAF_FIELDS = words(
    "ctx id attr arg name names op ops kind type_comment asname module level conversion is_async "
    "simple type_ignores kwd_attrs rest"
)
_LEAF_NODES = (ast.Constant, getattr(ast, "MatchSingleton", ast.Constant))
#: The AST nodes that bind names (``BINDING``: those this Python has).
_BINDING_NODES = words(
    "Assign AnnAssign NamedExpr AugAssign For AsyncFor comprehension With AsyncWith Import "
    "ImportFrom FunctionDef AsyncFunctionDef Lambda ClassDef ExceptHandler MatchAs MatchStar "
    "MatchMapping"
)
BINDING = {
    getattr(ast, n)
    for n in _BINDING_NODES
    if hasattr(ast, n)  # match patterns: Python 3.10+
}

_FIELDS: dict[type, tuple[str, ...]] = {}


def parse(code: str) -> tuple[str, ast.Module] | None:
    """The source IPython runs for a cell and its AST, or None when it does not parse; read
    whatever the process's warning filters (``"\\s"`` in a string warns, and a warning made an
    error would read the cell as one that does not parse)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return try_parse_cell(code)


def children(node: ast.AST) -> list[Any]:
    """What ``node``'s fields hold but its ``ctx``, operators and identifiers: nodes, and the
    None of a dict's ``**`` key or of a missing default (callers skip what is not a node)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        skip = _LEAF_FIELDS if not isinstance(node, _LEAF_NODES) else node._fields
        fields = _FIELDS[type(node)] = tuple(f for f in node._fields if f not in skip)
    kids: list[Any] = []
    for field in fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            kids += value
        elif value is not None:
            kids.append(value)
    return kids


def walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but expression contexts, parents first (a faster ``ast.walk``)."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.AST):
            out.append(node)
            stack += children(node)
    return out


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def literal(node: ast.AST | None) -> str | None:
    """The string a node spells literally, else None."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def is_super(node: ast.AST) -> bool:
    """Whether ``node`` is a ``super()`` call."""
    return isinstance(node, ast.Call) and dotted(node.func) == "super"


def truthy(node: ast.AST | None) -> bool:
    """Whether an argument may be true (``allow_pickle=True``, or a value known at run time)."""
    return node is not None and not (isinstance(node, ast.Constant) and not node.value)
