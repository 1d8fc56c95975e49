"""A cell's code as IPython runs it: one place that applies IPython's input transforms and parses.

Every reader of cell code goes through here: the syntax check of generated code
(:func:`check_syntax`), the guard rails (names, repairs, suggestions) and the run policy
(:func:`parse_cell`). ``%magic``, ``%%cell_magic``, ``!shell`` and ``obj?`` are turned into
Python by IPython's ``TransformerManager`` (one, built on first use: IPython is imported only
then); top-level ``await`` is allowed, as IPython allows it.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any

__all__ = [
    "CodeSyntaxError",
    "MagicCallError",
    "calls_ai_magic",
    "check_syntax",
    "parse_cell",
    "syntax_error",
    "transform_cell",
    "try_parse_cell",
]

_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
# A line that calls the %ai / %%ai magic.
_AI_MAGIC = re.compile(r"\s*%%?ai(\s|$)")


@functools.lru_cache(maxsize=1)
def _transformer() -> Any:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def transform_cell(code: str) -> str:
    """``code`` after IPython's input transforms (raises ``SyntaxError`` where they do)."""
    return _transformer().transform_cell(code)


def _parse(source: str) -> ast.Module:
    try:
        return compile(source, "<cell>", "exec", flags=_FLAGS, dont_inherit=True)
    except ValueError as err:  # a NUL byte (Python 3.10 and 3.11; SyntaxError from 3.12)
        raise SyntaxError(str(err)) from None


def parse_cell(code: str) -> tuple[str, ast.Module]:
    """The source IPython runs for ``code`` and its AST: ``code`` itself when it is Python
    (IPython's transforms leave Python as it is), else its transformed source.

    Raises ``SyntaxError`` (the transformed source's) when neither parses, a NUL byte
    included; ``RecursionError`` when Python's parser does.
    """
    try:
        return code, _parse(code)
    except SyntaxError:
        pass
    source = transform_cell(code)
    return source, _parse(source)


def try_parse_cell(code: str) -> tuple[str, ast.Module] | None:
    """:func:`parse_cell`, or None when ``code`` does not parse (``RecursionError`` still
    propagates)."""
    try:
        return parse_cell(code)
    except SyntaxError:
        return None


def syntax_error(code: str) -> SyntaxError | None:
    """Why ``code`` does not parse as an IPython cell, or None when it does."""
    try:
        parse_cell(code)
    except SyntaxError as err:
        return err
    return None


def calls_ai_magic(line: str) -> bool:
    """Whether ``line`` calls the ``%ai`` or ``%%ai`` magic."""
    return _AI_MAGIC.match(line) is not None


def _preview(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class CodeSyntaxError(ValueError):
    """The generated code does not parse. ``str()`` is one line with the line and the reason."""

    def __init__(self, reason: str, lineno: int | None = None, line: str | None = None) -> None:
        self.reason = reason
        self.lineno = lineno
        self.line = line
        where = f" on line {lineno}" if lineno else ""
        shown = f": {_preview(line, 80)}" if line and line.strip() else ""
        super().__init__(f"The generated code has a syntax error{where} ({reason}){shown}")


class MagicCallError(CodeSyntaxError):
    """The generated code calls ``%ai``/``%%ai`` itself: never inserted (it would be a prompt
    that regenerates on every Run All)."""


def check_syntax(code: str) -> None:
    """Raise ``CodeSyntaxError`` unless ``code`` is valid for an IPython cell.

    IPython syntax is first turned into Python by IPython's transforms; the result must parse
    and compile, with top-level ``await`` allowed as IPython allows it (so ``return`` outside a
    function fails). Code that calls ``%ai`` itself is a :class:`MagicCallError`.
    """
    for number, line in enumerate(code.splitlines(), 1):
        # Generated code that asks the model again would regenerate on every Run All.
        if calls_ai_magic(line):
            raise MagicCallError(
                f"The generated code calls %ai itself on line {number}; nothing was inserted. "
                "Rephrase the request."
            )
    try:
        transformed = transform_cell(code)
    except SyntaxError as err:
        raise _code_syntax_error(err, code, code) from None
    try:
        tree = ast.parse(transformed, "<generated code>")
        compile(
            tree,
            "<generated code>",
            "exec",
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True,
        )
    except SyntaxError as err:
        raise _code_syntax_error(err, code, transformed) from None
    except ValueError as err:  # source with a null byte
        raise CodeSyntaxError(str(err)) from None


def _code_syntax_error(err: SyntaxError, code: str, transformed: str) -> CodeSyntaxError:
    lineno = err.lineno
    line = err.text
    original = code.split("\n")
    # Line transforms (%magic, !cmd) keep line numbers: show the line as the model wrote it.
    same_lines = transformed.count("\n") in (code.count("\n"), code.count("\n") + 1)
    if lineno and same_lines and 1 <= lineno <= len(original):
        line = original[lineno - 1]
    return CodeSyntaxError(err.msg or "invalid syntax", lineno, line)
