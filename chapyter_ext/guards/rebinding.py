"""The user's data stays as it was unless the request asks to change it, and the code shows
what it computed: the small-model profile's rule for code offered from a request (``%%ai``
candidates, the chat's code blocks).

- A top-level assignment whose target is an existing variable of the kernel and whose value
  reads that same variable (``prices = prices.loc[prices['qty'] > 1]``), for a request that
  does not ask to change it, gets a new name made from the request (``prices_qty_gt_1``),
  used by the statements after it too; the code then ends by showing it.
- A change in place of an existing variable (``prices['qty'] = ...``, ``nums.sort()``,
  ``inplace=True``, ``del``) for such a request is refused (:func:`change_problem`): another
  candidate is asked for.
- Code that ends with an assignment gets the assigned name as a last line, so the cell shows
  its result (:func:`show_result`).

A request asks to change a variable when it says so with a verb (change, modify, update,
replace, drop, remove, delete, overwrite, rename, fill, add, set, keep, sort, ... or "in
place"), or puts its result into it ("... into prices"); when it names variables, only those.
Everything here reads the code's AST and never runs it.
"""

from __future__ import annotations

import ast
import keyword
import re

from ..parsing.fences import PYTHON_LANGS, fence_spans, span_code
from .names import KernelNames
from .request import STOP_WORDS, requested_target

__all__ = [
    "asks_to_change",
    "change_problem",
    "fresh_name",
    "keep_data",
    "keep_data_in_answer",
    "show_result",
]

# Verbs by which a request asks to change a variable, as an imperative ("sort prices", not
# "prices sorted by price", which asks to see them so).
_CHANGE = re.compile(
    r"\b(?:change|modify|update|replace|drop|overwrite|remove|delete|rename|fill|add|append"
    r"|insert|(?<!a )(?<!the )set|keep|convert|reset|clean|sort|reverse|shuffle|strip|assign"
    r"|in[\s-]?place)s?\b",
    re.IGNORECASE,
)
# Methods that change their object in place: of the built-in containers, and of pandas
# objects (``inplace=True`` aside).
_IN_PLACE: dict[type, frozenset[str]] = {
    list: frozenset({"sort", "reverse", "append", "extend", "insert", "remove", "pop", "clear"}),
    dict: frozenset({"update", "pop", "popitem", "clear", "setdefault"}),
    set: frozenset({"add", "discard", "remove", "pop", "clear", "update"}),
}
_IN_PLACE_PANDAS = frozenset({"insert", "pop", "update"})
# Words of a request that say nothing about the result, left out of a new name.
_FILLER = STOP_WORDS | {
    "rows", "row", "where", "whose", "column", "columns", "values", "value", "show", "me",
    "give", "get", "all", "only", "each", "every", "than", "as", "what", "how", "many", "much",
    "please", "list", "new", "result", "find", "compute", "calculate", "return", "be", "has",
}  # fmt: skip
_OPERATORS = {">=": "ge", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", "<": "lt"}
_WORDS = re.compile(r">=|<=|==|!=|[<>]|[A-Za-z_]\w*|\d+(?:\.\d+)?")
#: Words of the request a new name takes at most.
_NAME_WORDS = 3


def asks_to_change(request: str, name: str, namespace: KernelNames) -> bool:
    """Whether ``request`` asks to change the variable ``name``."""
    if requested_target(request) == name:
        return True
    verb = _CHANGE.search(request)
    if verb is None:
        return False
    # The variable changed is the first one named after the verb ("update sales with the
    # rows of prices": sales), else any named, else any.
    after = [w for w in re.findall(r"[A-Za-z_]\w*", request[verb.end() :]) if namespace.is_data(w)]
    if after:
        return name == after[0]
    named = {w for w in re.findall(r"[A-Za-z_]\w*", request) if namespace.is_data(w)}
    return not named or name in named


def fresh_name(name: str, request: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A new name for what the code derives from ``name``, made from the request's words
    ("rows of prices where qty > 1" -> ``prices_qty_gt_1``), not in ``taken``."""
    parts: list[str] = []
    for word in _WORDS.findall(request):
        if word in _OPERATORS:
            parts.append(_OPERATORS[word])
        elif word[0].isdigit():
            parts.append(word.replace(".", "_"))
        elif (
            word.lower() not in _FILLER
            and word != name
            and word.isascii()
            and not _CHANGE.fullmatch(word)
        ):
            parts.append(word.lower())
    base = "_".join([name, *parts[:_NAME_WORDS]]) if parts else f"{name}_result"
    if not base.isidentifier() or keyword.iskeyword(base):
        base = f"{name}_result"
    found, n = base, 2
    while found in taken:
        found, n = f"{base}_{n}", n + 1
    return found


def _bound_names(tree: ast.Module) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _reads(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(node)
    )


def _char_col(line: str, byte_col: int) -> int:
    """An AST column (UTF-8 bytes) as a position in the ``str`` line."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def keep_data(code: str, namespace: KernelNames, request: str) -> str:
    """``code`` with each top-level re-binding of an existing variable to something derived
    from it (a request that does not ask to change it) given a new name instead, the
    statements after it reading the new name; then :func:`show_result`. Code that does not
    parse as plain Python comes back as it is."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    taken = set(namespace.names()) | _bound_names(tree)
    edits: list[tuple[int, int, int, str]] = []  # (line, start, end, new text), 1-based lines
    renamed: dict[str, str] = {}
    for node in tree.body:
        # The statements after a renamed binding read the new name.
        for old, new in renamed.items():
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id == old:
                    edits.append((n.lineno, n.col_offset, n.end_col_offset or 0, new))
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AugAssign) and node.lineno == node.end_lineno:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name) or target.id in renamed:
            continue
        name = target.id
        derived = isinstance(node, ast.AugAssign) or _reads(value, name)
        if not (namespace.has(name) and namespace.is_data(name)) or not derived:
            continue
        if asks_to_change(request, name, namespace):
            continue
        new = fresh_name(name, request, taken)
        taken.add(new)
        renamed[name] = new
        if isinstance(node, ast.AugAssign):
            # ``x += 1`` becomes ``x_new = x + 1``: the old value is read, never changed.
            value = ast.BinOp(ast.Name(name, ast.Load()), node.op, node.value)
            assign = ast.Assign([ast.Name(new, ast.Store())], value)
            statement = ast.unparse(ast.fix_missing_locations(assign))
            edits.append((node.lineno, node.col_offset, -1, statement))
        else:
            edits.append((target.lineno, target.col_offset, target.end_col_offset or 0, new))
    lines = code.split("\n")
    for row, start, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        begin = _char_col(line, start)
        stop = len(line) if end < 0 else _char_col(line, end)
        lines[row - 1] = line[:begin] + text + line[stop:]
    return show_result("\n".join(lines))


def show_result(code: str) -> str:
    """``code`` ending by showing what it computed: when its last statement assigns a name
    (or a column or attribute of one), that name as a last line."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    if not tree.body:
        return code
    last = tree.body[-1]
    if isinstance(last, ast.Assign) and len(last.targets) == 1:
        target: ast.expr = last.targets[0]
    elif isinstance(last, (ast.AugAssign, ast.AnnAssign)):
        target = last.target
    else:
        return code
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    if not isinstance(target, ast.Name):
        return code
    return code.rstrip() + "\n" + target.id


def _changed_in_place(node: ast.stmt, namespace: KernelNames) -> str | None:
    """The variable a top-level statement changes in place, if any."""

    def base(expr: ast.expr) -> str | None:
        while isinstance(expr, (ast.Subscript, ast.Attribute)):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (ast.Subscript, ast.Attribute)):
                return base(target)
    if isinstance(node, ast.Delete):
        for target in node.targets:
            found = base(target)
            if found:
                return found
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if isinstance(call.func, ast.Attribute):
            inplace = any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in call.keywords
            )
            owner = base(call.func.value)
            if owner is not None and (inplace or _mutates(call.func.attr, owner, namespace)):
                return owner
    return None


def _mutates(method: str, name: str, namespace: KernelNames) -> bool:
    kind = namespace.value_type(name)
    if kind is None:
        return False
    if kind.__module__.startswith("pandas"):
        return method in _IN_PLACE_PANDAS
    return any(issubclass(kind, base) and method in names for base, names in _IN_PLACE.items())


def change_problem(tree: ast.Module, namespace: KernelNames, request: str) -> str | None:
    """Why the code may not run for ``request``: it changes in place an existing variable the
    request does not ask to change (None when it does not)."""
    for node in tree.body:
        name = _changed_in_place(node, namespace)
        if (
            name is not None
            and namespace.has(name)
            and namespace.is_data(name)
            and not asks_to_change(request, name, namespace)
        ):
            return f"it changes {name}, which the request does not ask for"
    return None


def keep_data_in_answer(text: str, namespace: KernelNames | None, request: str) -> str:
    """A chat answer with :func:`keep_data` applied to each of its Python (or untagged) fenced
    code blocks: what **Insert below** takes is what the guard rails checked."""
    if namespace is None or not request.strip():
        return text
    lines = text.split("\n")
    for span in reversed(fence_spans(lines)):
        if (span.lang and span.lang not in PYTHON_LANGS) or not span.closed:
            continue
        code = span_code(lines, span)
        kept = keep_data(code, namespace, request)
        if kept != code:
            pad = " " * span.indent
            lines[span.start + 1 : span.end] = [
                pad + line if line else line for line in kept.split("\n")
            ]
    return "\n".join(lines)
