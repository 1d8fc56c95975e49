"""IPython's syntax: a cell's magics and ``!cmd`` checked by what they do (``%pip`` installs,
``%%bash`` runs shell commands, ``%who`` reads), once :mod:`chapyter_ext.parsing.syntax` has read
the cell as IPython runs it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from ..parsing.syntax import calls_ai_magic
from .categories import (
    INSTALLS,
    MAGIC_CALL,
    NETWORK,
    OTHER_CODE,
    PROBES,
    SHELL,
    STATE,
    UNPROVEN,
    VARIABLES,
    WRITES,
)
from .checks import Checks
from .levels import KNOWN, UNPROVEN_LEVEL, Reason
from .lists.functions import MATPLOTLIB_MAGIC
from .lists.magics import (
    CONFIG_CLASSES,
    CONFIG_TRAITS,
    EXTENSION_MAGICS,
    HARMLESS_MAGICS,
    INSTALL_COMMAND,
    INSTALL_MAGICS,
    KNOWN_EXTENSIONS,
    PYTHON_MAGICS,
    SHELL_MAGICS,
    SHOWN_MAGICS,
    STATE_MAGICS,
    VALUE_OPTIONS,
    VARIABLE_MAGICS,
    WRITE_MAGICS,
    WRITE_OPTION_MAGICS,
    WRITE_OPTIONS,
)
from .names import FN, kind_of
from .tree import dotted, literal, parse


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
    def classify_into(
        cls,
        code: str,
        found: dict[str, Reason],
        known: frozenset[str],
        types: Mapping[str, str] | None = None,
        secret_names: Iterable[str] = (),
    ) -> None:
        """Add to ``found`` why ``code`` (a cell, or the Python of a magic) may need approval;
        ``types``: what the notebook's names hold (``known_types`` of :func:`~.decide.analyse`),
        ``secret_names``: the caller's extra secret variable names."""
        if any(calls_ai_magic(line) for line in code.splitlines()):
            found.setdefault(MAGIC_CALL, Reason(MAGIC_CALL, MAGIC_CALL, KNOWN))
        try:
            parsed = parse(code)
            if parsed is not None:
                cls(parsed[0], found, known, types, secret_names=secret_names).run(parsed[1])
        except RecursionError:
            text = f"nests too deeply to check, so it is {UNPROVEN}"
            found.setdefault(UNPROVEN, Reason(UNPROVEN, text, UNPROVEN_LEVEL))

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
            self.shell_secrets(command, f"!{command}")
            self.flag(INSTALLS if INSTALL_COMMAND.match(command) else SHELL, f"!{command}")
        elif func.attr in ("run_line_magic", "run_cell_magic") and args and None not in args:
            self.magic(args[0] or "", func.attr == "run_cell_magic", [a or "" for a in args[1:]])
        else:
            return False
        return True

    def config(self, line: str, shown: str, known: frozenset[str]) -> None:
        """``%config Class.trait = value``: a display setting, or a change of the session (of
        chapyter-ext's own settings: the trial's machinery); the value is Python it runs."""
        match = re.match(r"\s*([\w.]+)\s*=(.*)", line, re.S)
        if match is None:
            return  # ``%config`` or ``%config Class`` lists settings
        target, value = match.group(1), match.group(2)
        if target.startswith("Chapyter"):
            self.flag(PROBES, shown)
        elif target.split(".")[0] not in CONFIG_CLASSES and target not in CONFIG_TRAITS:
            self.flag(STATE, shown)
        self.magic_python(value.strip(), known)

    def magic(self, name: str, cell: bool, rest: list[str]) -> None:
        made = [
            n for n, s in self.bindings.items() if all(v == FN or kind_of(v) == "class" for v in s)
        ]
        known = self.known | set(made)  # the cell's own functions, checked with it
        line, body = rest[0] if rest else "", rest[1] if cell and len(rest) > 1 else ""
        shown = f"{'%%' if cell else '%'}{name} {line}".strip()
        shown += ": " + body.strip().split("\n")[0] if body.strip() else ""
        words = set(line.split())
        if name == "ai":
            self.found.setdefault(MAGIC_CALL, Reason(MAGIC_CALL, MAGIC_CALL, KNOWN))
        elif name in INSTALL_MAGICS:
            self.flag(INSTALLS, shown)
        elif name in SHELL_MAGICS:
            self.shell_secrets(f"{line}\n{body}", shown)
            self.flag(SHELL, shown)
        elif name == "env" and "=" not in line and len(words) < 2:
            self.env_magic(line, shown)
        elif name in STATE_MAGICS or (name == "env" and ("=" in line or len(words) > 1)):
            self.flag(STATE, shown)
        elif name in VARIABLE_MAGICS:
            self.flag(VARIABLES, shown)
        elif name in WRITE_MAGICS or (name in WRITE_OPTION_MAGICS and WRITE_OPTIONS & words):
            self.flag(WRITES, shown)
        elif name in SHOWN_MAGICS and cell:
            self.shown_text(body, SHOWN_MAGICS[name], shown)
        elif name == "matplotlib" and line.split() and line.split()[0] not in MATPLOTLIB_MAGIC:
            self.flag(NETWORK if "webagg" in line.lower() else OTHER_CODE, shown)
        elif name == "config":
            self.config(line, shown, known)
        elif name not in HARMLESS_MAGICS or (
            name in EXTENSION_MAGICS and not words <= KNOWN_EXTENSIONS
        ):
            self.flag(OTHER_CODE, shown)
        if name == "aimport":
            for module in line.replace(",", " ").split():
                self.importable(module.lstrip("-"))
        elif name in PYTHON_MAGICS:
            if name != "capture":  # %%capture's line names a variable
                self.magic_python(_without_options(line), known)
            self.magic_python(body, known)
        for expr in re.findall(r"\{([^{}]+)\}", "" if name in PYTHON_MAGICS else line):
            self.magic_python(expr, known)  # IPython expands {expr}

    def magic_python(self, code: str, known: frozenset[str]) -> None:
        """The Python of a magic, classified into this cell's findings."""
        self.classify_into(code, self.found, known, self.types, self.secret_names)
