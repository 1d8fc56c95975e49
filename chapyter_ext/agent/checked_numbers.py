"""The numbers of an agent's final answer, checked against what its turn saw.

What a turn saw, as :class:`~chapyter_ext.numbers.Seen` texts named the way a person finds them
again: each step's result as the model was told it (a cell's outputs: ``cell [4] output``; a
read or an MCP tool's result: its title), and the context sent with the question, line by line
under its headings (a variable's summary: ``df summary``; a cell of the context: ``In [3]``).
Both drivers (the server's turn and ``chapyter-ext agent``) call :func:`answer_numbers`; the
verdicts go to the browser with ``done``, to the history with the answer and to the answer
cell's provenance. The user's own question is not a source: a number the model only repeated
from it is "not found", on the safe side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..numbers import Seen, check_numbers
from .actions import StepRecord
from .tools import OP_RUN_CELL

__all__ = ["MAX_VERDICTS", "answer_numbers", "context_seen", "turn_seen"]

#: Verdicts kept for one answer (an answer with more numbers is a table: its first ones).
MAX_VERDICTS = 200
_VARIABLE = re.compile(r"- ([A-Za-z_][\w.]*) \(")
_IN = re.compile(r"In \[(\d+)\]:")
_HEADING = re.compile(r"(\S[^\n]{0,78}):\s*$")
_CONTEXT = "notebook context"


def _step_seen(record: StepRecord) -> Seen | None:
    if not record.shown.strip():
        return None
    if record.op == OP_RUN_CELL or record.kind == "run_code":
        count = record.execution_count
        label = f"cell [{count}] output" if count is not None else "a step's output"
        return Seen("output", label, record.shown)
    title = record.title or record.kind
    if record.server and not title.startswith(f"{record.server} · "):
        title = f"{record.server} · {title}"
    return Seen("tool", title, record.shown)


def _context_lines(context: str) -> Iterator[tuple[str, str, str]]:
    """Each line of the context with the kind and label of the part it belongs to."""
    kind, label = "variable", _CONTEXT
    for line in context.splitlines():
        variable = _VARIABLE.match(line)
        cell = _IN.match(line)
        if variable:
            kind, label = "variable", f"{variable.group(1)} summary"
        elif cell:
            kind, label = "output", f"In [{cell.group(1)}] (context)"
        elif not line.startswith((" ", "\t")) and (heading := _HEADING.match(line)):
            kind, label = "variable", f"{heading.group(1)} (context)"
        yield kind, label, line


def context_seen(context: str | None) -> list[Seen]:
    """The context sent with the question, cut into the parts it names (consecutive lines of
    one variable, one cell, one titled block)."""
    if not context:
        return []
    parts: list[Seen] = []
    lines: list[str] = []
    current: tuple[str, str] | None = None
    for kind, label, line in _context_lines(context):
        if current is not None and (kind, label) != current:
            parts.append(Seen(*current, "\n".join(lines)))
            lines = []
        current = (kind, label)
        lines.append(line)
    if current is not None:
        parts.append(Seen(*current, "\n".join(lines)))
    return [part for part in parts if part.text.strip()]


def turn_seen(context: str | None, steps: Iterable[StepRecord]) -> list[Seen]:
    """Everything the turn saw: its steps' results first, then the context."""
    seen = [part for part in map(_step_seen, steps) if part is not None]
    return seen + context_seen(context)


def answer_numbers(
    answer: str, context: str | None, steps: Iterable[StepRecord]
) -> tuple[dict[str, Any], ...]:
    """The verdicts of ``answer``'s numbers (JSON, at most :data:`MAX_VERDICTS`) against what
    the turn saw."""
    if not answer.strip():
        return ()
    verdicts = check_numbers(answer, turn_seen(context, steps))
    return tuple(verdict.to_json() for verdict in verdicts[:MAX_VERDICTS])
