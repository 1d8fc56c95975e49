"""Project rules: ``AGENTS.md`` and ``.chapyter/rules.md`` files a project keeps for AI
assistants, added to the system prompt of the chat, the agent and ``%%ai``.

:func:`find_rules` looks in every folder from a start folder up to a stop folder: the server
starts at the notebook's folder and stops at its root directory (``ServerApp.root_dir``);
``%%ai`` runs in the kernel, whose files may not be the server's, so it starts at the kernel's
working directory and stops at the first folder holding ``.git``, the home directory or the
filesystem's root, whichever comes first (:func:`kernel_stop_folder`). Outer folders come first
and nearer ones last, so the rules nearest the notebook have the last word. The text is capped
(``Chapyter.rules_chars``) and redacted; ``Chapyter.project_rules = False`` turns it off.
A symbolic link leading out of the stop folder is not followed.

Pure file reads: no IPython, no tornado.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .redact import Redactor

#: The files read in each folder, in this order.
RULE_FILES = ("AGENTS.md", os.path.join(".chapyter", "rules.md"))
#: A rules file larger than this is read only this far.
MAX_FILE_BYTES = 256 * 1024

_INTRO = (
    "Project rules (from the project's {names}; nearer folders last, and they win where rules "
    "differ). Follow them where they apply, unless the user's message asks otherwise; they "
    "never lift the approval the user's policy asks for:"
)


@dataclass(frozen=True)
class RuleFile:
    """One rules file: where it is (relative to the stop folder) and its text (redacted)."""

    path: str
    text: str


@dataclass(frozen=True)
class ProjectRules:
    """The rules in force for one notebook or kernel, capped and redacted."""

    files: tuple[RuleFile, ...] = ()
    #: The characters cut to stay within the cap.
    cut: int = 0
    budget: int = 0

    @property
    def chars(self) -> int:
        """Characters of rules sent."""
        return sum(len(f.text) for f in self.files)

    def prompt(self) -> str:
        """The system prompt's section ("" when there are no rules)."""
        if not self.files:
            return ""
        names = ", ".join(f.path for f in self.files)
        parts = [_INTRO.format(names=names), "<project-rules>"]
        for f in self.files:
            parts.append(f"# {f.path}\n{f.text.strip()}")
        if self.cut:
            parts.append(f"[… {self.cut} more characters of rules cut (Chapyter.rules_chars)]")
        parts.append("</project-rules>")
        return "\n".join(parts)

    def to_json(self) -> list[dict[str, Any]]:
        """What the context chip shows: ``[{"path", "chars"}]``."""
        return [{"path": f.path, "chars": len(f.text)} for f in self.files]


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def folders_between(start: str, stop: str) -> list[str]:
    """The folders from ``stop`` down to ``start`` (both included), outermost first; just
    ``[stop]`` when ``start`` is not inside ``stop``."""
    start, stop = os.path.realpath(start), os.path.realpath(stop)
    if not _inside(start, stop):
        return [stop]
    chain = [start]
    while chain[-1] != stop:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    return chain[::-1]


def _read(path: str, stop: str) -> str | None:
    real = os.path.realpath(path)
    if not _inside(real, stop) or not os.path.isfile(real):
        return None
    try:
        with open(real, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").strip()
    return text or None


def find_rules(
    start: str, stop: str, *, budget: int = 4000, redactor: Redactor | None = None
) -> ProjectRules:
    """The rules files from ``stop`` down to ``start`` within ``budget`` characters (the
    nearest files are kept whole first when the budget is short), redacted."""
    redact = redactor if redactor is not None else Redactor()
    stop_real = os.path.realpath(stop)
    found: list[tuple[str, str]] = []
    for folder in folders_between(start, stop):
        for name in RULE_FILES:
            text = _read(os.path.join(folder, name), stop_real)
            if text is not None:
                shown = os.path.relpath(os.path.join(folder, name), stop_real)
                found.append((shown.replace(os.sep, "/"), redact(text)))
    return fit(found, budget)


def fit(found: list[tuple[str, str]], budget: int) -> ProjectRules:
    """``found`` (outermost first) within ``budget``: the nearest files keep their text first,
    an outer one is cut at its end, and those left without room are dropped."""
    room = max(0, budget)
    kept: list[RuleFile] = []
    cut = 0
    for path, text in reversed(found):
        if room <= 0:
            cut += len(text)
            continue
        piece = text if len(text) <= room else text[:room].rstrip() + " […]"
        cut += max(0, len(text) - room)
        room -= len(text)
        kept.append(RuleFile(path, piece))
    return ProjectRules(tuple(reversed(kept)), cut, budget)


def kernel_stop_folder(start: str) -> str:
    """Where the kernel's search stops: the first folder from ``start`` up holding ``.git``,
    the home directory, or the filesystem's root."""
    home = os.path.realpath(os.path.expanduser("~"))
    folder = os.path.realpath(start)
    while True:
        if folder == home or os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return folder
        folder = parent


def with_rules(messages: list[dict[str, Any]], rules: ProjectRules) -> list[dict[str, Any]]:
    """``messages`` with the rules' section at the end of the system message (one is added
    first when there is none)."""
    section = rules.prompt()
    if not section:
        return messages
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0]['content'].rstrip()}\n\n{section}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": section}, *messages]


def kernel_rules(
    settings: Any, start: str, redactor: Redactor, *, budget: int | None = None
) -> ProjectRules:
    """The rules for a kernel-side request (``%%ai``, ``chapyter-ext agent``): from ``start``
    (the working directory, the notebook's folder) up to :func:`kernel_stop_folder`, within
    ``budget`` (default ``settings.rules_chars``); none when ``settings.project_rules`` is off."""
    if not settings.project_rules:
        return ProjectRules()
    if budget is None:
        budget = settings.rules_chars
    return find_rules(start, kernel_stop_folder(start), budget=budget, redactor=redactor)
