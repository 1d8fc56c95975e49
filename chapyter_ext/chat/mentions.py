"""@-mentions: what the user named in a message (``mentions`` of a chat or agent request), and
the text they are always sent as, pinned ahead of the rest of the context.

A mention is a kernel variable (its summary: the one the notebook snapshot carries, or the one
the browser read for it through the kernel when the snapshot had none), a notebook cell (its
source and outputs as text, sent by the browser, named as JupyterLab shows it: "cell [4]"), or
a file under the server's root (its head, read here: text only, a few lines under a byte cap).
Paths are contents paths: relative, no ``..``, and a file whose real path (links resolved)
leaves the root is refused. What is stored of a mention is only what names it
(:meth:`Mention.stored`), never its content.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..context.assemble import VariableSummary, as_facts, resolve_facts
from ..context.notebook import NotebookSnapshot
from ..context.selection import render_variable
from ..redact import Redactor

__all__ = [
    "MAX_MENTIONS",
    "Mention",
    "MentionError",
    "mentions_context",
    "parse_mentions",
    "read_file_heads",
]

MAX_MENTIONS = 20
KINDS = ("variable", "cell", "file")
MAX_LABEL = 200
MAX_NAME = 500
MAX_PATH = 1024
#: The most of a cell's source, and of its outputs, that is read (the budget cuts far earlier).
MAX_CELL_TEXT = 20_000
#: A file's head: at most this many bytes, and this many lines of them.
FILE_HEAD_BYTES = 8192
FILE_HEAD_LINES = 40
TITLE = "Mentioned by the user (always sent):"
CLIPPED = "\n[… clipped to fit the context budget]"


class MentionError(ValueError):
    """A mention that cannot be served; ``str()`` is one line naming the field."""


@dataclass(frozen=True)
class Mention:
    """One mention: its kind, its chip's label and what names it; a cell's text as sent."""

    kind: str
    label: str
    name: str = ""
    cell_id: str = ""
    path: str = ""
    source: str = ""
    outputs: str = ""
    #: A variable's summary as the browser read it through the kernel (None: the snapshot's).
    variable: VariableSummary | None = None

    def stored(self) -> dict[str, str]:
        """What the chat history keeps: kind, label and the name, cell id or path."""
        key, value = {"variable": ("name", self.name), "cell": ("cellId", self.cell_id)}.get(
            self.kind, ("path", self.path)
        )
        return {"kind": self.kind, "label": self.label, key: value}


def _string(item: dict, key: str, limit: int, required: bool = False) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise MentionError(f"'mentions[].{key}' must be a non-empty string.")
    if len(value) > limit:
        raise MentionError(f"'mentions[].{key}' is longer than {limit} characters.")
    return value


def _file_path(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":") or ".." in parts:
        raise MentionError(
            f"'mentions[].path' {path!r} must be a path under the server's root (no '..', "
            "not absolute).",
        )
    return "/".join(p for p in parts if p not in ("", "."))


def _variable(value: Any, name: str) -> VariableSummary | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("name") != name:
        raise MentionError("'mentions[].variable' must be the summary of that name.")
    try:  # validated and bounded exactly as the snapshot's variables are
        found = NotebookSnapshot.parse({"path": "-", "variables": [value]}).variables
    except ValueError as err:
        raise MentionError(f"'mentions[].variable': {err}") from None
    return found[0] if found else None


def parse_mentions(value: Any) -> tuple[Mention, ...]:
    """The request's ``mentions`` (absent: none); :class:`MentionError` names what is wrong."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MentionError("'mentions' must be a list.")
    if len(value) > MAX_MENTIONS:
        raise MentionError(f"'mentions' may name at most {MAX_MENTIONS} things.")
    out: list[Mention] = []
    for item in value:
        if not isinstance(item, dict) or item.get("kind") not in KINDS:
            raise MentionError("'mentions[].kind' must be variable, cell or file.")
        kind = item["kind"]
        label = _string(item, "label", MAX_LABEL, required=True)
        if kind == "variable":
            name = _string(item, "name", MAX_NAME, required=True)
            variable = _variable(item.get("variable"), name)
            out.append(Mention(kind, label, name=name, variable=variable))
        elif kind == "cell":
            out.append(
                Mention(
                    kind,
                    label,
                    cell_id=_string(item, "cellId", MAX_NAME, required=True),
                    source=_string(item, "source", MAX_CELL_TEXT),
                    outputs=_string(item, "outputs", MAX_CELL_TEXT),
                )
            )
        else:
            path = _file_path(_string(item, "path", MAX_PATH, required=True))
            out.append(Mention(kind, label, path=path))
    return tuple(out)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _file_head(root: str, path: str) -> str:
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, *path.split("/")))
    if not _inside(real, real_root):
        raise MentionError(
            f"'mentions': {path} leads outside the server's root (a symbolic link); "
            "a mentioned file must stay inside it.",
        )
    if not os.path.isfile(real):
        return f"File {path}: not found under the server's root."
    try:
        with open(real, "rb") as handle:
            data = handle.read(FILE_HEAD_BYTES + 1)
    except OSError as err:
        return f"File {path}: could not be read ({err.strerror or 'error'})."
    whole = len(data) <= FILE_HEAD_BYTES
    data = data[:FILE_HEAD_BYTES]
    try:
        # A character cut in two at the cap is not binary: only the last 3 bytes may be partial.
        text = data.decode("utf-8") if whole else data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as err:
        if whole or err.start < len(data) - 3:
            return f"File {path}: binary, not shown."
        text = data[: err.start].decode("utf-8")
    if "\x00" in text:
        return f"File {path}: binary, not shown."
    lines = text.splitlines()
    shown = lines[:FILE_HEAD_LINES]
    if whole and len(shown) == len(lines):
        return f"File {path} (whole file, {len(lines)} lines):\n" + "\n".join(shown)
    return f"File {path} (first {len(shown)} lines):\n" + "\n".join(shown)


def read_file_heads(mentions: Iterable[Mention], root: str | None) -> dict[str, str]:
    """The head of each mentioned file, as the line the context shows; blocking (run it in a
    thread). A file whose real path leaves ``root`` is refused (:class:`MentionError`)."""
    heads: dict[str, str] = {}
    for mention in mentions:
        if mention.kind != "file" or mention.path in heads:
            continue
        if root is None:
            heads[mention.path] = f"File {mention.path}: this server has no root folder to read."
        else:
            heads[mention.path] = _file_head(root, mention.path)
    return heads


def _variable_block(mention: Mention, snapshot: Any, r: Redactor) -> str:
    found = mention.variable
    if isinstance(snapshot, NotebookSnapshot) and (found is None or not found.summary):
        found = next((v for v in snapshot.variables or () if v.name == mention.name), found)
    if found is None:
        return f"Variable {mention.name}: not among the kernel's variables."
    text = render_variable(resolve_facts(r)(as_facts(found)), 4000, {})
    return f"Variable {mention.name}:\n{text}"


def _cell_block(mention: Mention) -> str:
    text = f"{mention.label[:1].upper()}{mention.label[1:]}:\n{mention.source.rstrip()}"
    if not mention.source.strip():
        text += "(empty, or no longer in the notebook)"
    if mention.outputs.strip():
        text += f"\nOutputs:\n{mention.outputs.rstrip()}"
    return text


def mentions_context(
    mentions: Iterable[Mention],
    snapshot: Any,
    heads: Mapping[str, str],
    budget: int,
    redactor: Redactor,
) -> str:
    """The mentioned items as text within ``budget`` characters, redacted ('' for none).

    Each item gets a fair share of what is left when its turn comes (what a short one leaves
    goes to those after it); one that does not fit is clipped with a note, never dropped.
    """
    blocks: list[str] = []
    for mention in mentions:
        if mention.kind == "variable":
            block = _variable_block(mention, snapshot, redactor)
        elif mention.kind == "cell":
            block = _cell_block(mention)
        else:
            block = heads.get(mention.path, f"File {mention.path}: not read.")
        blocks.append(redactor(block))
    if not blocks or budget <= 0:
        return ""
    out = [TITLE]
    room = budget - len(TITLE)
    for left, block in zip(range(len(blocks), 0, -1), blocks):
        share = room // left - 1
        if len(block) > share:
            block = block[: max(0, share - len(CLIPPED))] + CLIPPED
        out.append(block)
        room -= len(block) + 1
    return "\n".join(out)[:budget]
