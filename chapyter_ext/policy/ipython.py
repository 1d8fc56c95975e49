"""IPython's syntax: a cell's magics and ``!cmd`` checked by what they do (``%pip`` installs,
``%%bash`` runs shell commands, ``%who`` reads), once :mod:`chapyter_ext.parsing.syntax` has read
the cell as IPython runs it."""

from __future__ import annotations

import ast
import re

from ..parsing.syntax import calls_ai_magic, try_parse_cell
from .categories import INSTALLS, MAGIC_CALL, OTHER_CODE, SHELL, STATE, UNPROVEN, VARIABLES, WRITES
from .checks import Checks
from .lists.magics import (
    EXTENSION_MAGICS,
    HARMLESS_MAGICS,
    INSTALL_COMMAND,
    INSTALL_MAGICS,
    KNOWN_EXTENSIONS,
    PYTHON_MAGICS,
    SHELL_MAGICS,
    STATE_MAGICS,
    VALUE_OPTIONS,
    VARIABLE_MAGICS,
    WRITE_MAGICS,
    WRITE_OPTION_MAGICS,
    WRITE_OPTIONS,
)
from .names import FN, kind_of
from .tree import dotted, literal


def _without_options(line: str) -> str:
    """The code of a ``%timeit -n 10 -r 3 f()`` line, without its options."""
    words = line.split(" ")
    while words and words[0].startswith("-"):
        if words.pop(0) in VALUE_OPTIONS and words:
            words.pop(0)
    return " ".join(words)


class IPythonSyntax(Checks):
    """IPython's syntax in a cell, read after IPython's transform made it Python: magics and
    ``!cmd`` are ``get_ipython()`` calls, whose Python (``%timeit f()``, ``%%capture``'s body,
    ``{expr}`` in a magic's line) is classified in turn."""

    @classmethod
    def classify_into(cls, code: str, found: dict[str, str], known: frozenset[str]) -> None:
        """Add to ``found`` why ``code`` (a cell, or the Python of a magic) may need approval."""
        if any(calls_ai_magic(line) for line in code.splitlines()):
            found.setdefault("magic", MAGIC_CALL)
        try:
            parsed = try_parse_cell(code)
            if parsed is not None:
                cls(parsed[0], found, known).run(parsed[1])
        except RecursionError:
            found.setdefault(UNPROVEN, f"nests too deeply to check, so it is {UNPROVEN}")

    def ipython(self, node: ast.Call) -> bool:
        """``get_ipython().system(...)`` and friends: magics and ``!cmd`` after the transform."""
        func = node.func
        owner = func.value if isinstance(func, ast.Attribute) else None
        if (
            not (isinstance(func, ast.Attribute) and isinstance(owner, ast.Call))
            or dotted(owner.func) != "get_ipython"
        ):
            return False
        args = [literal(a) for a in node.args]
        if func.attr in ("system", "getoutput"):
            command = args[0] if args and args[0] is not None else "…"
            self.flag(INSTALLS if INSTALL_COMMAND.match(command) else SHELL, f"!{command}")
        elif func.attr in ("run_line_magic", "run_cell_magic") and args and None not in args:
            self.magic(args[0] or "", func.attr == "run_cell_magic", [a or "" for a in args[1:]])
        else:
            return False
        return True

    def magic(self, name: str, cell: bool, rest: list[str]) -> None:
        line, body = rest[0] if rest else "", rest[1] if cell and len(rest) > 1 else ""
        shown = f"{'%%' if cell else '%'}{name} {line}".strip()
        shown += ": " + body.strip().split("\n")[0] if body.strip() else ""
        words = set(line.split())
        if name == "ai":
            self.found.setdefault("magic", MAGIC_CALL)
        elif name in INSTALL_MAGICS:
            self.flag(INSTALLS, shown)
        elif name in SHELL_MAGICS:
            self.flag(SHELL, shown)
        elif name in STATE_MAGICS or (name == "env" and ("=" in line or len(words) > 1)):
            self.flag(STATE, shown)
        elif name in VARIABLE_MAGICS:
            self.flag(VARIABLES, shown)
        elif name in WRITE_MAGICS or (name in WRITE_OPTION_MAGICS and WRITE_OPTIONS & words):
            self.flag(WRITES, shown)
        elif name not in HARMLESS_MAGICS or (
            name in EXTENSION_MAGICS and not words <= KNOWN_EXTENSIONS
        ):
            self.flag(OTHER_CODE, shown)
        made = [
            n for n, s in self.bindings.items() if all(v == FN or kind_of(v) == "class" for v in s)
        ]
        known = self.known | set(made)  # the cell's own functions, checked with it
        if name == "aimport":
            for module in line.replace(",", " ").split():
                self.importable(module.lstrip("-"))
        elif name in PYTHON_MAGICS:
            if name != "capture":  # %%capture's line names a variable
                self.classify_into(_without_options(line), self.found, known)
            self.classify_into(body, self.found, known)
        for expr in re.findall(r"\{([^{}]+)\}", "" if name in PYTHON_MAGICS else line):
            self.classify_into(expr, self.found, known)  # IPython expands {expr} in magic lines
