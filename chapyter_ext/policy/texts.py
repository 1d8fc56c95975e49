"""What the strings of a cell spell (literal, or folded from pieces by :func:`~.values.fold`):
a URL or content that fetches from another host when shown (the network), a format field that
reaches a dunder (``'{0.__class__.__init__.__globals__}'.format(x)``), a ``/proc`` path (the
process inspected), a file that holds credentials (``'~/.aws/credentials'``, also joined from
parts: ``Path.home() / '.ssh' / 'id_rsa'``; the redactor's rule,
:func:`~chapyter_ext.redact.is_secret_file`). What shown content fetches is the one rule of
:mod:`chapyter_ext.untrusted.remote_content`."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from ..redact import is_secret_file
from ..untrusted.remote_content import remote_host, remote_resources
from .categories import DYNAMIC, NETWORK, OTHER_CODE, PROBES, SECRETS
from .findings import Findings
from .levels import KNOWN, UNPROVEN_LEVEL
from .lists.functions import ACTIVE_HTML, URL
from .names import dunder
from .tree import children
from .values import fold

#: A ``str.format`` field (Jinja's ``{{ x }}`` too): what it reads, up to a conversion or spec.
_FIELD = re.compile(r"\{([^{}!:]*)")
_DUNDER = re.compile(r"__\w+__")
#: A path into the process's own files (``/proc/self/status``, ``/proc/1234/maps``, cgroups).
_PROC = re.compile(
    r"^(?:file://)?/(?:proc|sys/fs/cgroup)(?:/\S*)?$|/proc/(?:self|thread-self|\d|\x00)"
)
#: What shown content could fetch with: an address without a scheme, in markup, CSS or Markdown.
_SCHEMELESS = re.compile(r"//|\\\\|/\\|\\/")
_MARKUP = re.compile(r"<|url\s*\(|@import|\]\s*[(\[]|image-set|\\", re.IGNORECASE)
#: Run-time parts of a folded text (NUL) read as an address when they stand where one does.
_UNKNOWN_ADDRESS = "//unknown.invalid/"
_MIMES = ("text/html", "text/markdown", "text/css")
#: Functions that join a path from parts (``os.path.join(home, '.config', 'gcloud')``).
PATH_JOINERS = frozenset({"os.path.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})


def fetches(text: str, mime: str) -> str | None:
    """Whether ``text`` shown as ``mime`` fetches from another host: ``KNOWN`` when the text
    names one, ``UNPROVEN_LEVEL`` when a part known only at run time stands where an address
    does (``<img src="{url}">``: a run tells), else None."""
    if remote_resources(text, mime):
        return KNOWN
    if "\x00" in text and remote_resources(text.replace("\x00", _UNKNOWN_ADDRESS), mime):
        return UNPROVEN_LEVEL
    return None


def address(text: str) -> str | None:
    """:func:`fetches` for one address (``Image(url=...)``)."""
    if remote_host(text):
        return KNOWN
    return (
        UNPROVEN_LEVEL
        if "\x00" in text and remote_host(text.replace("\x00", _UNKNOWN_ADDRESS))
        else None
    )


class Texts(Findings):
    """The strings of a cell: URLs, shown content, format fields, process paths."""

    def c_Constant(self, node: ast.Constant, ctx: str) -> None:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str):
            self.spelled(value, node)

    def c_text(self, node: ast.AST, ctx: str) -> None:
        """A string made of pieces (``'ht' + 'tps://'``, an f-string), or a path joined with
        ``/`` (``Path.home() / '.config' / 'gcloud'``: the one path)."""
        op = getattr(node, "op", None)
        if isinstance(op, ast.Div):
            self.joined_path([node.left, node.right], node)  # type: ignore[attr-defined]
        elif not isinstance(op, ast.Sub):
            self.url(node)
        for child in children(node):
            self.check(child)

    def c_Lambda(self, node: ast.Lambda, ctx: str) -> None:
        outer, self.quiet = self.quiet, 0  # what it returns goes where its caller puts it
        for child in children(node):
            self.check(child)
        self.quiet = outer

    def c_Compare(self, node: ast.Compare, ctx: str) -> None:
        self.quiet += 1  # ``url == 'https://...'`` fetches nothing
        for child in children(node):
            self.check(child)
        self.quiet -= 1

    def url(self, node: ast.AST) -> None:
        """The string ``node`` folds to, checked as a literal is."""
        text = fold(node, self)
        if text is not None:
            self.spelled(text, node)

    def spelled(self, text: str, node: ast.AST) -> None:
        """What a string spells, wherever it is: a format field reaching a dunder, a path of
        ``/proc``; where it is not only shown or compared, a URL, fetching content or a file
        that holds credentials."""
        if not self.quiet and is_secret_file(text):
            self.flag(SECRETS, node)
        if "/" not in text and "{" not in text and "\\" not in text:
            return  # most strings: a column's name, a label, a format spec
        if "{" in text:
            self.format_fields(text, node)
        if ("/proc" in text or "/sys/" in text) and _PROC.search(text):
            self.flag(PROBES, node)
        if not self.quiet and URL.search(text):
            self.flag(NETWORK, node)
        elif ("//" in text or "\\" in text) and _SCHEMELESS.search(text) and _MARKUP.search(text):
            for mime in _MIMES:  # markup that fetches, even where it is only shown
                if fetches(text, mime) == KNOWN:
                    self.flag(NETWORK, node)
                    break

    def joined_path(self, parts: Sequence[ast.AST], node: ast.AST) -> None:
        """Parts of a path joined (``/``, ``os.path.join``, ``joinpath``): a credentials file?"""
        if not self.quiet and is_secret_file("/".join(self.path_text(p) for p in parts)):
            self.flag(SECRETS, node)

    def path_text(self, node: ast.AST) -> str:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return f"{self.path_text(node.left)}/{self.path_text(node.right)}"
        text = fold(node, self)
        return "\x00" if text is None else text

    def format_fields(self, text: str, node: ast.AST) -> None:
        """``'{0.__class__}'.format(x)`` reads ``x.__class__``: a format field (or a template's)
        that reaches a dunder, or an attribute known only at run time, looks names up."""
        for field in _FIELD.findall(text):
            attributes = [a.strip() for a in field.split(".")[1:]]
            if any(dunder(a) or "\x00" in a for a in attributes) or any(
                dunder(d) for d in _DUNDER.findall(field)
            ):
                self.flag(DYNAMIC, node)
                return

    def shown(self, node: ast.AST | None, mime: str, call: ast.AST) -> None:
        """Content the browser renders as ``mime`` (``HTML(...)``): script runs other code, an
        address on another host opens the network; content known only at run time is for a run
        to tell."""
        self.shown_text(fold(node, self), mime, call)

    def shown_text(self, text: str | None, mime: str, call: ast.AST | str) -> None:
        """:meth:`shown` for the text itself (``%%markdown``'s body); None: not known."""
        if text is None:
            self.flag(OTHER_CODE, call, level=UNPROVEN_LEVEL)
            return
        if ACTIVE_HTML.search(text) or "<\x00" in text:
            self.flag(OTHER_CODE, call)
        level = fetches(text, mime)
        if level:
            self.flag(NETWORK, call, level=level)

    def addresses(self, nodes: Any, call: ast.AST) -> None:
        """Strings a display fetches when shown (``Image(url=...)``, a URL in ``JSON(...)``):
        one on another host opens the network."""
        for node in nodes:
            for piece in ast.walk(node) if isinstance(node, ast.AST) else ():
                text = fold(piece, self) if isinstance(piece, ast.expr) else None
                level = address(text) if text is not None else None
                if level:
                    self.flag(NETWORK, call, level=level)
