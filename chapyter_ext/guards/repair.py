"""Cheap repairs of a failing cell, read from its error, for the small-model profile's Fix:
what a tiny model gets wrong most and a lookup gets right. Each repair is one small edit of
the user's code with a sentence saying what changed; the caller checks it like any answer
(:func:`~.verdict.check_code`) before offering it.

- ``NameError``: a conventional import (``np``, ``pd``, ...), or the closest existing name
  (``prnt`` -> ``print``, ``totl`` -> ``total``).
- ``KeyError`` on a DataFrame or a dict: the closest column or key (``'prise'`` -> ``'price'``).
- ``AttributeError``: the closest attribute of that object's class, module or columns
  (``groupy`` -> ``groupby``, ``apend`` -> ``append``).
- ``ModuleNotFoundError``: the closest well-known module that is installed (``pandsa``).
- ``IndexError``: one past the end (``x[len(x)]``, ``x[3]`` of 3 items, ``range(len(x) + 1)``).
- ``TypeError`` adding text and a number: the number through ``str()``.
- ``SyntaxError``: a bracket never closed, a missing ``:``, an unterminated string.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import io
import keyword
import re
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..parsing.syntax import syntax_error
from .names import KernelNames

__all__ = ["Repair", "repairs", "tokens_until_error"]

# Names a cell uses without importing them, and the import that defines each.
CONVENTIONAL_IMPORTS = {
    "pd": "import pandas as pd",
    "np": "import numpy as np",
    "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns",
}
# Modules a misspelt import is matched against (those installed here are kept).
_WELL_KNOWN_MODULES = (
    "pandas",
    "numpy",
    "matplotlib",
    "seaborn",
    "scipy",
    "sklearn",
    "statistics",
    "math",
    "json",
    "random",
    "datetime",
    "collections",
    "itertools",
    "re",
    "os",
    "sys",
    "pathlib",
    "csv",
    "time",
)
_CUTOFF = 0.75


@dataclass(frozen=True)
class Repair:
    """The whole new code of the cell and one sentence saying what changed."""

    code: str
    explanation: str


def repairs(source: str, error: Mapping[str, Any], names: KernelNames) -> list[Repair]:
    """The repairs ``error`` (``ename``, ``evalue``, ``traceback``) suggests for the cell
    ``source``, most likely first; [] when none applies."""
    ename = str(error.get("ename", ""))
    evalue = str(error.get("evalue", ""))
    found: list[Repair | None] = []
    if syntax_error(source) is not None:
        found.extend(_syntax(source))
    elif ename == "NameError":
        found.extend(_name(source, evalue, names))
    elif ename == "KeyError":
        found.extend(_key(source, evalue, names))
    elif ename == "AttributeError":
        found.extend(_attribute(source, evalue, names))
    elif ename == "ModuleNotFoundError":
        found.append(_module(source, evalue))
    elif ename == "IndexError":
        found.extend(_index(source, names))
    elif ename == "TypeError" and ("concatenate str" in evalue or "'str'" in evalue):
        found.append(_to_text(source, names))
    seen: set[str] = set()
    out = []
    for repair in found:
        if repair is not None and repair.code != source and repair.code not in seen:
            seen.add(repair.code)
            out.append(repair)
    return out


# -- names ---------------------------------------------------------------------------------


def _quoted(evalue: str) -> str | None:
    match = re.search(r"'([^']+)'", evalue)
    return match.group(1) if match else None


def _closest(word: str, choices: Iterable[str]) -> str | None:
    choices = sorted({c for c in choices if c and c != word})
    lower = {c.lower(): c for c in choices}
    if word.lower() in lower:
        return lower[word.lower()]  # only the case differs
    found = difflib.get_close_matches(word, choices, n=1, cutoff=_CUTOFF)
    return found[0] if found else None


def _defined_in(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def _name(source: str, evalue: str, names: KernelNames) -> list[Repair | None]:
    bad = _quoted(evalue)
    if bad is None:
        return []
    if bad in CONVENTIONAL_IMPORTS:
        line = CONVENTIONAL_IMPORTS[bad]
        return [Repair(f"{line}\n{source}", f"`{bad}` was never imported: added `{line}`.")]
    said = re.search(r"Did you mean: '([^']+)'", evalue)
    pool = [
        *names.names(),
        *(n for n in dir(builtins) if not n.startswith("_")),
        *_defined_in(source),
    ]
    good = said.group(1) if said else _closest(bad, pool)
    if good is None or keyword.iskeyword(good):
        return []
    code = _replace_names(source, bad, good)
    return [Repair(code, f"`{bad}` is not defined: `{good}` is the closest name.")]


def _replace_names(source: str, old: str, new: str) -> str:
    """``source`` with the name ``old`` (not an attribute, not in strings) now ``new``."""
    return _edit_tokens(
        source,
        lambda tok, prev: tok.type == tokenize.NAME and tok.string == old and prev != ".",
        new,
    )


def _edit_tokens(source: str, match: Any, new: str) -> str:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    lines = source.split("\n")
    prev = ""
    edits = []
    for tok in tokens:
        if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT):
            prev = ""
            continue
        if match(tok, prev):
            edits.append(tok)
        prev = tok.string
    for tok in reversed(edits):
        (row, col), (end_row, end) = tok.start, tok.end
        if row != end_row:
            continue
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[end:]
    return "\n".join(lines)


# -- keys and attributes -------------------------------------------------------------------


def _subscripted(source: str, key: str) -> list[str]:
    """The names subscripted with the string ``key`` in ``source`` (``sales['prise']``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [
        node.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == key
    ]


def _key(source: str, evalue: str, names: KernelNames) -> list[Repair | None]:
    try:
        key = ast.literal_eval(evalue.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        key = _quoted(evalue)
    if not isinstance(key, str):
        return []
    out: list[Repair | None] = []
    for owner in dict.fromkeys(_subscripted(source, key)):
        columns = names.columns(owner)
        choices = columns if columns is not None else names.keys(owner)
        good = _closest(key, choices or ())
        if good is None:
            continue
        code = _edit_tokens(
            source,
            lambda tok, prev: (
                tok.type == tokenize.STRING and prev == "[" and _string_value(tok.string) == key
            ),
            repr(good),
        )
        what = "column" if columns is not None else "key"
        out.append(Repair(code, f"`{owner}` has no {what} {key!r}: {good!r} is the closest."))
    return out


def _string_value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _attribute(source: str, evalue: str, names: KernelNames) -> list[Repair | None]:
    match = re.search(r"has no attribute '([^']+)'", evalue)
    if match is None:
        return []
    bad = match.group(1)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    owners = {
        node.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == bad and isinstance(node.value, ast.Name)
    }
    out: list[Repair | None] = []
    for owner in sorted(owners):
        pool: set[str] = set(names.columns(owner) or ())
        module = names.module(owner) if names.is_module(owner) else None
        kind = None if module is not None else names.value_type(owner) or _class_named(evalue)
        for thing in (module, kind):
            if thing is not None:
                pool.update(a for a in dir(thing) if not a.startswith("_"))
        good = _closest(bad, pool)
        if good is None:
            continue
        code = _edit_tokens(
            source,
            lambda tok, prev: tok.type == tokenize.NAME and tok.string == bad and prev == ".",
            good,
        )
        out.append(Repair(code, f"`{owner}` has no attribute `{bad}`: `{good}` is the closest."))
    return out


def _class_named(evalue: str) -> type | None:
    """The builtin class an AttributeError names ("'list' object has no attribute ...")."""
    match = re.match(r"'(\w+)' object has no attribute", evalue)
    found = getattr(builtins, match.group(1), None) if match else None
    return found if isinstance(found, type) else None


def _module(source: str, evalue: str) -> Repair | None:
    from importlib.util import find_spec

    bad = _quoted(evalue)
    if bad is None or "." in bad:
        return None
    good = _closest(bad, _WELL_KNOWN_MODULES)
    if good is None:
        return None
    try:
        if find_spec(good) is None:
            return None
    except (ImportError, ValueError):
        return None
    pattern = re.compile(rf"^(\s*(?:import|from)\s+){re.escape(bad)}\b", re.MULTILINE)
    code = pattern.sub(rf"\g<1>{good}", source)
    return Repair(code, f"there is no module `{bad}`: `{good}` is the closest.")


# -- one past the end ------------------------------------------------------------------------


def _index(source: str, names: KernelNames) -> list[Repair | None]:
    out: list[Repair | None] = []
    # range(len(x) + 1) walks one past the end.
    plus_one = re.compile(r"range\(\s*len\((\w+)\)\s*\+\s*1\s*\)")
    if plus_one.search(source):
        code = plus_one.sub(r"range(len(\1))", source)
        out.append(Repair(code, "`range(len(x) + 1)` goes one past the end: now `range(len(x))`."))
    # x[len(x)] is one past the end.
    at_len = re.compile(r"\b(\w+)\[\s*len\(\1\)\s*\]")
    if at_len.search(source):
        code = at_len.sub(r"\1[-1]", source)
        out.append(Repair(code, "`x[len(x)]` is one past the end: the last item is `x[-1]`."))
    # x[3] of a list of 3 items.
    literal = re.compile(r"\b(\w+)\[\s*(\d+)\s*\]")
    for name, number in dict.fromkeys(literal.findall(source)):
        size = names.length(name)
        if size is not None and int(number) == size and size > 0:
            code = re.sub(rf"\b{re.escape(name)}\[\s*{number}\s*\]", f"{name}[-1]", source)
            out.append(
                Repair(
                    code,
                    f"`{name}` has {size} items (indices 0 to {size - 1}): "
                    f"the last one is `{name}[-1]`.",
                )
            )
    return out


# -- text and numbers ----------------------------------------------------------------------


def _to_text(source: str, names: KernelNames) -> Repair | None:
    """``'total: ' + n`` with ``n`` a number: ``'total: ' + str(n)``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = source.split("\n")
    edits: list[tuple[int, int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            continue
        for text, other in ((node.left, node.right), (node.right, node.left)):
            if (
                _is_text(text)
                and isinstance(other, ast.Name)
                and names.value_type(other.id) in (int, float, bool)
                and other.lineno == other.end_lineno
            ):
                edits.append((other.lineno, other.col_offset, other.end_col_offset or 0, other.id))
    if not edits:
        return None
    for row, start, end, name in sorted(set(edits), reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + f"str({name})" + line[end:]
    return Repair(
        "\n".join(lines), "Text and a number cannot be added: the number goes through `str()`."
    )


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


# -- syntax --------------------------------------------------------------------------------

_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _syntax(source: str) -> list[Repair | None]:
    err = syntax_error(source)
    if err is None:
        return []
    message = err.msg or ""
    lines = source.split("\n")
    out: list[Repair | None] = []
    if "never closed" in message or "unexpected EOF" in message or "was not closed" in message:
        closers = _unclosed(source)
        if closers:
            for row in range(len(lines) - 1, -1, -1):
                if not lines[row].strip():
                    continue
                candidate = lines[:]
                candidate[row] = (
                    _before_comment(candidate[row]) + closers + _comment(candidate[row])
                )
                out.append(
                    Repair("\n".join(candidate), f"A bracket was never closed: added `{closers}`.")
                )
                break
    elif "expected ':'" in message and err.lineno and 1 <= err.lineno <= len(lines):
        candidate = lines[:]
        row = err.lineno - 1
        candidate[row] = _before_comment(candidate[row]).rstrip() + ":" + _comment(candidate[row])
        out.append(Repair("\n".join(candidate), f"Line {err.lineno} needed a `:` at its end."))
    elif "unterminated string" in message and err.lineno and 1 <= err.lineno <= len(lines):
        row = err.lineno - 1
        line = lines[row]
        quote = _open_quote(line)
        if quote:
            body = line.rstrip()
            stripped = body.rstrip(")]}")
            for text in (stripped + quote + body[len(stripped) :], body + quote):
                candidate = lines[:]
                candidate[row] = text
                out.append(
                    Repair("\n".join(candidate), f"A string on line {err.lineno} was never closed.")
                )
    return [r for r in out if r is not None and syntax_error(r.code) is None]


def _unclosed(source: str) -> str:
    """The closing brackets ``source`` lacks, innermost first ("" if none or unbalanced)."""
    stack: list[str] = []
    # The tokenizer stops at the end of input inside brackets: what it read is enough.
    tokens = tokens_until_error(source)
    for tok in tokens:
        if tok.type != tokenize.OP:
            continue
        if tok.string in _CLOSERS:
            stack.append(_CLOSERS[tok.string])
        elif tok.string in _CLOSERS.values() and (not stack or stack.pop() != tok.string):
            return ""
    return "".join(reversed(stack))


def tokens_until_error(source: str) -> list[tokenize.TokenInfo]:
    """The tokens of ``source`` as far as the tokenizer gets (an unfinished or broken cell
    stops it: what came before is still worth reading)."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            out.append(tok)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def _comment(line: str) -> str:
    at = _comment_start(line)
    return "  " + line[at:].strip() if at is not None else ""


def _before_comment(line: str) -> str:
    at = _comment_start(line)
    return line[:at].rstrip() if at is not None else line.rstrip()


def _comment_start(line: str) -> int | None:
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return i
    return None


def _open_quote(line: str) -> str:
    quote = ""
    for char in line:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
    return quote
