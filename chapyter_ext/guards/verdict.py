"""Whether model code may be offered as runnable: the one decision behind Fix, Edit, Apply to
cell, chat code blocks, agent steps (and ``%%ai``'s small-model candidates, through
:func:`~.candidate.check_candidate`).

Any model: the code is not only lines of a Markdown list (``- 12.`` parses, but is prose), it
parses as an IPython cell (IPython's transforms, ``%%ai`` calls refused) and, for a change of
the user's code, changes something. With the small-model profile (the
bundled model): also the names, columns, methods and keywords it reads exist in the kernel,
it makes up no data in place of the user's, a change keeps what the code it changes read and
set and overwrites no other variable, and a fix changes the statement that raised (or adds
something before it). Code that fails is not offered as runnable; :attr:`Verdict.problem`
says why, in a few words.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..parsing.code_blocks import markdown_list
from ..parsing.syntax import CodeSyntaxError, MagicCallError, check_syntax
from ..tracebacks import failing_line
from .candidate import check_candidate
from .names import KernelNames

__all__ = ["LIST_PROBLEM", "Verdict", "check_code", "same_code", "syntax_problem"]

#: Why lines of a Markdown list are not offered as code (the browser says it in the same words).
LIST_PROBLEM = "it is a Markdown list, not code"


@dataclass(frozen=True)
class Verdict:
    """The code to offer (with missing conventional imports added) and whether it may run;
    ``problem``: why not ("" when it may)."""

    code: str
    runnable: bool
    problem: str = ""


def same_code(a: str, b: str) -> bool:
    """Whether two cells hold the same code, but for white space at line ends and blank
    lines at either end."""
    return _normal(a) == _normal(b)


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.replace("\r\n", "\n").split("\n")).strip()


def check_code(
    code: str,
    names: KernelNames | None = None,
    *,
    small: bool = False,
    original: str | None = None,
    request: str = "",
    error: Mapping[str, Any] | None = None,
    as_is: bool = False,
) -> Verdict:
    """The guard rails for ``code`` a model wrote (see the module's docstring).

    ``names``: the kernel's names (None: unknown, only the syntax is checked); ``small``: the
    answer comes from a small model (the bundled one), checked against ``names`` too;
    ``original``: the cell the code replaces (Fix, Edit, Apply to cell); ``request``: a
    ``%%ai`` request (what it asks for is checked too); ``error``: the error ``original``
    raised (a fix of it: with ``small``, the statement that raised must change); ``as_is``:
    the code will run exactly as given (a chat block, an agent step), so a repair the checks
    would make (an import added, made-up data dropped) makes it not runnable instead.
    """
    if not code.strip():
        return Verdict(code, False, "there is no code")
    if markdown_list(code):
        # `- 12.` parses (a negative number), yet it is a list the model meant as prose.
        return Verdict(code, False, LIST_PROBLEM)
    try:
        check_syntax(code)
    except CodeSyntaxError as err:
        return Verdict(code, False, syntax_problem(err))
    if original is not None and same_code(code, original):
        return Verdict(code, False, "it changes nothing")
    if small and names is not None:
        checked = check_candidate(code, names, request, original=original or "", shorten=False)
        if checked.problem is not None:
            return Verdict(checked.code, False, checked.problem)
        if as_is and checked.code != code:
            # As shown it would fail: say what it lacks.
            added = checked.code[: -len(code)] if checked.code.endswith(code) else ""
            lines = "; ".join(added.strip().splitlines())
            problem = f"it needs {lines} first" if lines else "it replaces data with made-up values"
            return Verdict(code, False, problem)
        if original is not None and same_code(checked.code, original):
            return Verdict(checked.code, False, "it changes nothing")
        if original is not None and error is not None:
            if keeps_failure(checked.code, original, error):
                return Verdict(checked.code, False, "it keeps the code that raised the error")
            wider = wider_change(checked.code, original, error)
            if wider:
                return Verdict(checked.code, False, wider)
        return Verdict(checked.code, True)
    return Verdict(code, True)


def keeps_failure(code: str, original: str, error: Mapping[str, Any]) -> bool:
    """Whether a fix ``code`` still runs what raised in ``original``: the statement the
    traceback names (else every statement) comes unchanged with nothing new before it, or a
    computation of constants in it (``int('abc')``, ``1 / 0``), which fails whatever comes
    around it, is kept."""
    try:
        old, new = ast.parse(original).body, ast.parse(code).body
    except SyntaxError:
        return False
    line = failing_line(error)
    if line is None:
        failed = len(old) - 1  # unknown: only a fix that keeps all of it, in order, keeps it
        suspects = old
    else:
        at = [i for i, node in enumerate(old) if node.lineno <= line <= (node.end_lineno or line)]
        if not at:
            return False
        failed = at[0]
        suspects = [old[failed]]
    head = [ast.dump(node) for node in old[: failed + 1]]
    if [ast.dump(node) for node in new[: failed + 1]] == head:
        return True
    constant = {ast.dump(n) for s in suspects for n in ast.walk(s) if _of_constants(n)}
    return any(ast.dump(n) in constant for s in new for n in ast.walk(s) if _of_constants(n))


#: How alike the statement that raised and its fix must be (difflib's ratio): a small model's
#: rewrite of the whole line is a new idea, not a fix.
_ALIKE = 0.5


def wider_change(code: str, original: str, error: Mapping[str, Any]) -> str:
    """Why fix ``code`` changes more than the error needs ("" when it does not): the other
    statements of ``original`` must stay as they were (imports may come first), none may be
    added, and the statement that raised must stay recognisable."""
    import difflib

    try:
        old, new = ast.parse(original).body, ast.parse(code).body
    except SyntaxError:
        return _wider_lines(code, original)
    while new and len(new) > len(old) and isinstance(new[0], (ast.Import, ast.ImportFrom)):
        new = new[1:]
    if len(new) != len(old):
        return "it changes more than the code that raised the error"
    line = failing_line(error)
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if ast.dump(a) != ast.dump(b)]
    failed = [i for i, n in enumerate(old) if line and n.lineno <= line <= (n.end_lineno or line)]
    if failed and any(i not in failed for i in changed):
        return "it changes more than the code that raised the error"
    for i in changed:
        before, after = ast.unparse(old[i]), ast.unparse(new[i])
        if difflib.SequenceMatcher(None, before, after).ratio() < _ALIKE:
            return "it rewrites the code instead of fixing it"
    return ""


def _wider_lines(code: str, original: str) -> str:
    """:func:`wider_change` for an ``original`` that does not parse (a syntax error): the
    same lines, each still recognisable."""
    import difflib

    old = [line for line in original.split("\n") if line.strip()]
    new = [line for line in code.split("\n") if line.strip()]
    if len(old) != len(new):
        return "it changes more than the code that raised the error"
    for before, after in zip(old, new):
        if difflib.SequenceMatcher(None, before.strip(), after.strip()).ratio() < _ALIKE:
            return "it rewrites the code instead of fixing it"
    return ""


def _of_constants(node: ast.AST) -> bool:
    """A call or an operation whose inputs are all constants: ``int('abc')``, ``1 / 0``."""
    if isinstance(node, ast.Call):
        args = [*node.args, *(k.value for k in node.keywords)]
        return bool(args) and all(isinstance(a, ast.Constant) for a in args)
    if isinstance(node, ast.BinOp):
        return isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)
    return False


def syntax_problem(err: Exception) -> str:
    """A :class:`~chapyter_ext.parsing.CodeSyntaxError` as a few words: "it does not parse
    (line 2: '(' was never closed)"; a call of ``%%ai`` says so."""
    if isinstance(err, MagicCallError):
        return "it calls %ai itself"
    reason = getattr(err, "reason", "") or "invalid syntax"
    lineno = getattr(err, "lineno", None)
    return (
        f"it does not parse (line {lineno}: {reason})"
        if lineno
        else f"it does not parse ({reason})"
    )
