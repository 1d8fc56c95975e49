"""What one cell's analysis finds, and how it walks: the reasons kept (one per category, at the
strongest level found), the refusals that name a category, the name-based guesses (``LIKELY``),
and the dispatch of every node to its ``c_<type>`` check (pass 2, :mod:`.checks`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from .categories import INSTALLS, SHELL, UNPROVEN
from .levels import KNOWN, LIKELY, RANK, UNPROVEN_LEVEL, Reason
from .lists.types import KIND_LABELS
from .names import GUESSED_ROOTS, label_of
from .tree import BINDING, children, literal, walk
from .values import Values

_SNIPPET = 60
#: A line as the parser counts them (``\r\n``, ``\r`` or ``\n`` ends one; form feeds do not).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
#: Node types checked by a handler of another name.
_ALIASES = {
    ast.BinOp: "c_text",
    ast.JoinedStr: "c_text",
    ast.AsyncFunctionDef: "c_FunctionDef",
    ast.AsyncWith: "c_With",
    ast.ImportFrom: "c_Import",
}


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


class Findings(Values):
    """One cell's findings, kept in ``found`` (category -> :class:`~.levels.Reason`), and the
    walk of pass 2: a node is checked by the ``c_<type>`` method of the class (``HANDLERS``),
    else its children are."""

    #: Node type -> the ``c_<type>`` method that checks it, for each subclass.
    HANDLERS: ClassVar[dict[type, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        handlers = {
            getattr(ast, name[2:]): getattr(cls, name)
            for name in dir(cls)
            if name.startswith("c_") and hasattr(ast, name[2:])
        }
        handlers.update({t: getattr(cls, n) for t, n in _ALIASES.items() if hasattr(cls, n)})
        cls.HANDLERS = handlers

    def __init__(
        self,
        source: str,
        found: dict[str, Reason],
        known: frozenset[str],
        types: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(known, types)
        self.source, self.found = source, found
        self.lines: list[str] | None = None  # the source's lines, split when first needed
        self.quiet = 0  # > 0 where strings are shown or compared, not fetched
        self.tree: ast.Module = ast.Module([], [])  # the cell's, once ``run``

    def run(self, tree: ast.Module) -> None:
        """Both passes over a parsed cell: what every name may hold, then every statement."""
        self.tree = tree
        for node in walk(tree):
            if node.__class__ in BINDING:
                self.bind_node(node)
        for stmt in tree.body:
            self.check(stmt)

    def check(self, node: ast.AST, ctx: str = "value") -> None:
        """Check ``node`` read as a ``value``, the ``base`` of an attribute or item, a callee,
        or a ``func`` handed over to be called."""
        handler = self.HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, ctx)
        elif isinstance(node, ast.AST):
            for child in children(node):
                self.check(child)

    def flag(
        self, category: str, node: ast.AST | str, verb: str = "", level: str = "", tail: str = ""
    ) -> None:
        """One reason per category, the first found of the strongest level: enough to decide,
        short to read. ``verb``: "calls `x`, which is not known to be safe" (with ``tail``:
        "calls `s.get` on an object from an earlier cell"); ``level``: by default
        ``UNPROVEN_LEVEL`` for ``UNPROVEN``, else ``KNOWN``."""
        level = level or (UNPROVEN_LEVEL if category == UNPROVEN else KNOWN)
        old = self.found.get(category)
        if old is None or RANK[level] > RANK[old.level]:
            text = node if isinstance(node, str) else self.segment(node)
            what = _snippet(text or ast.unparse(node))  # type: ignore[arg-type]
            if tail:
                text = f"{verb} `{what}` {tail}"
            elif verb:
                text = f"{verb} `{what}`, which is {UNPROVEN}"
            else:
                text = f"{category}: {what}"
            self.found[category] = Reason(category, text, level)

    def segment(self, node: ast.AST) -> str | None:
        """``ast.get_source_segment``, with the cell's lines split once (it splits them on each
        call, which cost more than the rest of the analysis)."""
        if self.lines is None:
            self.lines = _LINES.findall(self.source)
        try:
            first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return None
        if end is None or last is None or last >= len(self.lines):
            return None
        lines = [line.encode() for line in self.lines[first : last + 1]]
        if first == last:
            return lines[0][start:end].decode()
        lines[0], lines[-1] = lines[0][start:], lines[-1][:end]
        return b"".join(lines).decode()

    def refuse(self, path: str, node: ast.AST | str, verb: str = "calls") -> None:
        """``path`` (a dotted name or a method) is not allowed: say which category, if known."""
        label = label_of(path)
        if label == SHELL and isinstance(node, ast.Call):
            words = " ".join(s for a in ast.walk(node) for s in [literal(a)] if s).split()
            if "install" in words and {"pip", "pip3", "conda", "mamba"} & set(words):
                label = INSTALLS
        if label:
            self.flag(label, node)
        else:
            self.flag(UNPROVEN, node.func if isinstance(node, ast.Call) else node, verb)

    def refuse_method(self, kind: str, name: str, node: ast.AST) -> None:
        """Method ``name`` of an object of ``kind`` is not allowed: its kind's category, the
        method's, or not known to be safe."""
        labels = KIND_LABELS.get(kind, {})
        label = labels.get(name) or labels.get("*")
        if label:
            self.flag(label, node)
        else:
            self.refuse(name, node)

    def guess(self, category: str, node: ast.AST, verb: str) -> None:
        """Allowed by a name-based guess only (``LIKELY``) when the object the code calls or
        changes is of unknown type: from an earlier cell, a parameter, an attribute of one."""
        if category in self.found:
            return  # one LIKELY reason per category, and nothing stronger comes from here
        callee = node.func if isinstance(node, ast.Call) else node
        root = callee
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not any(h.kind in GUESSED_ROOTS for h in self.values(root)):
            return  # an attribute of a value made here (``df2.plot.bar()``): its own rules
        if isinstance(root, ast.Name) and root.id not in self.bindings:
            tail = "on an object from an earlier cell"
        else:
            tail = "on an object of unknown type"
        self.flag(category, callee, verb, LIKELY, tail)
