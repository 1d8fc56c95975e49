"""Positions offered for values: a request to sort something ("prices sorted by price
descending", "the three largest km") asks for the values in that order, and code that sorts
their positions instead (``x.argsort()``, ``np.argsort(x)``, ``sorted(range(len(x)), ...)``,
``sorted(df.index, ...)``) runs and shows a list of numbers that looks like an answer. Unless
the request asks for positions (an index, a rank, the order of), such code is refused."""

from __future__ import annotations

import ast
import re

__all__ = ["positions_problem"]

_SORTS = re.compile(
    r"\b(?:sort|sorts|sorted|sorting|order|ordered|ascending|descending|largest|smallest"
    r"|highest|lowest|top|bottom)\b",
    re.IGNORECASE,
)
_ASKS_POSITIONS = re.compile(
    r"\b(?:positions?|index|indices|indexes|argsort|ranks?|ranking|ranked|order\s+of"
    r"|row\s+numbers?|which)\b",
    re.IGNORECASE,
)


def positions_problem(request: str, tree: ast.Module) -> str | None:
    """Why the code gives positions where ``request`` asks for sorted values, or None."""
    if not _SORTS.search(request) or _ASKS_POSITIONS.search(request):
        return None
    for node in ast.walk(tree):
        what = _sorted_positions(node) if isinstance(node, ast.Call) else None
        if what:
            return f"it sorts positions ({what}), not the values"
    return None


def _sorted_positions(call: ast.Call) -> str | None:
    """What ``call`` sorts when it sorts positions (``argsort``, ``range(len(x))``)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "argsort":
        return "argsort"
    if not (isinstance(func, ast.Name) and func.id == "sorted" and call.args):
        return None
    first = call.args[0]
    # sorted(range(len(x)), key=...) and sorted(df.index, key=...): the labels, not the rows.
    positions = (
        isinstance(first, ast.Call)
        and isinstance(first.func, ast.Name)
        and first.func.id == "range"
        and len(first.args) == 1
        and isinstance(first.args[0], ast.Call)
        and isinstance(first.args[0].func, ast.Name)
        and first.args[0].func.id == "len"
    ) or (isinstance(first, ast.Attribute) and first.attr == "index")
    return ast.unparse(first) if positions else None
