"""Checking model code against the kernel before it is offered (it is never run to find out):
names, columns, methods and keywords that exist, no made-up data, and for ``%%ai`` what the
request asks for; with cheap repairs (a conventional import, the requested name, the summary's
values copied back dropped, the right first line kept). The kernel is read through
:class:`~.names.KernelNames`: live in the kernel, or the chat's snapshot on the server."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..parsing.syntax import CodeSyntaxError, check_syntax
from .code_names import CodeNames, code_tree, literal_key, read_before_bound, top_targets
from .iteration import frame_iteration_problem
from .kernel_checks import (
    clobber_problem,
    column_problem,
    does_something,
    import_for,
    import_problem,
    is_literal_data,
    operand_problem,
)
from .names import KernelNames, LiveNames
from .positions import positions_problem
from .rebinding import change_problem, keep_data, show_result
from .request import named_columns_problem, named_variables, request_problem, requested_target

__all__ = ["Candidate", "check_candidate"]


@dataclass(frozen=True)
class Candidate:
    """A checked candidate: the code (with missing well-known imports added) and what is
    wrong with it (None when it may run)."""

    code: str
    problem: str | None


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

    For a ``request`` (not a change of ``original``): a name that is a slip of a variable the
    request names reads that variable (``trip`` -> ``trips``); an existing variable is never
    re-bound to something derived from it unless the request asks to change it (a new name
    instead), nor changed in place (refused); and the code ends by showing its result
    (:mod:`.rebinding`).
    """
    names = namespace if isinstance(namespace, KernelNames) else LiveNames(namespace)
    mine = _Original.of(original, names)
    code = _drop_made_up(code, names, mine.statements)
    code = _into_target(code, names, request)
    code = _named_slips(code, names, request)
    # For a request (not a change of the user's code): a new name, never the user's data.
    keep = bool(request) and not original
    if keep:
        code = keep_data(code, names, request)
    first = _check(code, names, request, mine)
    if first.problem is None or original or not shorten:
        return first
    lines = code.split("\n")
    tree = code_tree(code)
    if tree is None or len(tree.body) < 2:
        return first
    for node in reversed(tree.body[1:]):
        prefix = "\n".join(lines[: node.lineno - 1]).rstrip()
        shorter = _check(prefix, names, request, mine)
        if shorter.problem is None:
            return Candidate(show_result(shorter.code), None) if keep else shorter
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
        tree = code_tree(code) if code.strip() else None
        if tree is None:
            return cls()
        names = CodeNames()
        names.visit(tree)
        targets = top_targets(tree)
        data = frozenset(n for n in namespace.names() if namespace.is_data(n))
        return cls(
            frozenset(ast.unparse(node) for node in tree.body),
            frozenset(n for n in names.read if namespace.has(n) and namespace.is_data(n)),
            frozenset(t.id for t in targets if isinstance(t, ast.Name)),
            frozenset(k for t in targets if isinstance(t, ast.Subscript) and (k := literal_key(t))),
            data,
            True,
        )

    def problem(self, tree: ast.Module, names: CodeNames) -> str | None:
        """What a change drops that the code it changes had (a variable it read, a name or a
        column it set), or a variable of the kernel it overwrites that the code did not: a fix
        changes what the error needs, not what the cell is about."""
        if not self.given:
            return None
        dropped = sorted(self.reads - names.read)
        if dropped:
            return f"it no longer uses {', '.join(dropped)}"
        bound = {t.id for t in top_targets(tree) if isinstance(t, ast.Name)}
        unset = sorted(self.binds - bound) + [
            f"{name}[{key!r}]" for name, key in sorted(self.keys - names.assigned_keys)
        ]
        if unset:
            return f"it no longer sets {', '.join(unset)}"
        overwritten = sorted((bound & self.data) - self.binds)
        if overwritten:
            return f"it overwrites {', '.join(overwritten)}"
        return None


def _into_target(code: str, namespace: KernelNames, request: str) -> str:
    """The request says where the result goes ("mean of price into avg") and the code puts
    it in one new variable of its own naming: rename that variable."""
    target = requested_target(request)
    tree = code_tree(code)
    if target is None or tree is None:
        return code
    names = CodeNames()
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


def _named_slips(code: str, namespace: KernelNames, request: str) -> str:
    """The code reads a name that does not exist and is a slip of a variable the request
    names (``trip`` for ``trips``, ``reading`` for ``readings``): read that variable."""
    import difflib

    named = sorted(named_variables(request, namespace)) if request else []
    tree = code_tree(code) if named else None
    if tree is None:
        return code
    names = CodeNames()
    names.visit(tree)
    for name in sorted(read_before_bound(tree, names)):
        if name in namespace or hasattr(builtins, name):
            continue
        close = difflib.get_close_matches(name, named, n=1, cutoff=0.8)
        if close and close[0] not in names.defined:
            code = _rename(code, name, close[0])
    return code


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
    tree = code_tree(code)
    if tree is None:
        return code
    lines = code.split("\n")
    drop: set[int] = set()
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and ast.unparse(node) not in mine
            and is_literal_data(node.value, namespace)
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
    tree = code_tree(code)
    if tree is None:
        return Candidate(code, "the code does not parse")
    if not does_something(tree):
        return Candidate(code, "the code does nothing")
    names = CodeNames()
    names.visit(tree)
    missing = sorted(
        name
        for name in read_before_bound(tree, names)
        if name not in namespace and not hasattr(builtins, name)
    )
    imports = [import_for(name) for name in missing]
    unknown = [name for name, line in zip(missing, imports) if line is None]
    if unknown:
        return Candidate(code, f"it reads undefined name(s) {', '.join(unknown)}")
    if imports:
        code = "\n".join(line for line in imports if line) + "\n" + code
    named = named_variables(request, namespace)
    problem = (
        import_problem(tree)
        or operand_problem(tree, names, namespace)
        or column_problem(tree, names, namespace)
        or frame_iteration_problem(tree, namespace)
        or named_columns_problem(request, names, named, namespace)
        or clobber_problem(tree, namespace, made_up_ok=not named, mine=mine.statements)
        or (request_problem(request, code, names, named) if request else None)
        or (positions_problem(request, tree) if request else None)
        or (change_problem(tree, namespace, request) if request and not mine.given else None)
        or mine.problem(tree, names)
    )
    return Candidate(code, problem)
