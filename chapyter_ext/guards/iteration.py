"""A DataFrame iterated as if it gave its rows: ``for row in prices`` (or a comprehension
over it) gives the column names, strings, so ``row['qty']`` or ``row.qty`` on them raises, or,
behind a condition that never holds, quietly gives an empty answer. Refused; ``iterrows()``,
``itertuples()`` or the column itself say what was meant."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .names import KernelNames

__all__ = ["frame_iteration_problem"]


def frame_iteration_problem(tree: ast.Module, namespace: KernelNames) -> str | None:
    """Why the code reads a column from the column names it gets by iterating an existing
    DataFrame, or None."""
    for node in ast.walk(tree):
        for target, iterated, scope in _loops(node):
            if not (isinstance(target, ast.Name) and isinstance(iterated, ast.Name)):
                continue
            columns = namespace.columns(iterated.id)
            if columns is None:
                continue
            if any(_reads_column(part, target.id, columns) for part in scope):
                return (
                    f"it iterates over {iterated.id}, which gives its column names, not its "
                    f"rows (use {iterated.id}.iterrows() or a column)"
                )
    return None


def _loops(node: ast.AST) -> Iterable[tuple[ast.expr, ast.expr, list[ast.AST]]]:
    """(loop variable, what it iterates, the code that sees it) of a loop or comprehension."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        yield node.target, node.iter, list(node.body)
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        results: list[ast.AST] = (
            [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        )
        for index, generator in enumerate(node.generators):
            later = [part for g in node.generators[index + 1 :] for part in (g.iter, *g.ifs)]
            yield generator.target, generator.iter, [*results, *generator.ifs, *later]


def _reads_column(part: ast.AST, name: str, columns: set[str]) -> bool:
    for node in ast.walk(part):
        if isinstance(node, ast.Subscript) and _is(node.value, name):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return True
        if isinstance(node, ast.Attribute) and _is(node.value, name) and node.attr in columns:
            return True
    return False


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
