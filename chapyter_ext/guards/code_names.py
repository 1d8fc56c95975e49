"""The names a piece of code reads and binds, read from its AST (never run): what the guard
rails compare with the kernel's names (:mod:`.names`)."""

from __future__ import annotations

import ast

from ..parsing.syntax import try_parse_cell

__all__ = ["CodeNames", "code_tree", "literal_key", "read_before_bound", "top_targets"]


def code_tree(code: str) -> ast.Module | None:
    """The AST of ``code`` as IPython runs it, or None when it does not parse."""
    parsed = try_parse_cell(code)
    return parsed[1] if parsed is not None else None


class CodeNames(ast.NodeVisitor):
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
        key = literal_key(node)
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


def literal_key(node: ast.Subscript) -> tuple[str, str] | None:
    """``("df", "col")`` for ``df['col']``; None for anything else."""
    if (
        isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.value.id, node.slice.value
    return None


def top_targets(tree: ast.Module) -> list[ast.expr]:
    """The targets of the top-level assignments of ``tree``."""
    return [
        target
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]


def read_before_bound(tree: ast.Module, names: CodeNames) -> set[str]:
    """Names a statement reads that no earlier statement binds (``c = c + 1`` reads ``c``
    before binding it), nor the statement itself inside (a comprehension's or a function's
    own names). Function and class bodies may use names bound anywhere in the code."""
    bound: set[str] = set()
    unbound: set[str] = set()
    for node in tree.body:
        inner = CodeNames()
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
