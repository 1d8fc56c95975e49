"""A plan as the history keeps it: the numbered steps a ``/plan`` answer proposed, or those an
agent turn followed, each ``{text, status, note}``; bounded, damaged steps dropped, every text
redacted like the rest of a message.

A proposed plan's steps are ``proposed`` (the user may still edit them); a plan an agent turn
ran starts ``pending`` and its steps become ``done``, ``failed`` or ``skipped`` as the turn
marks them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PLAN_STATUSES = ("proposed", "pending", "done", "failed", "skipped")
#: Steps of one plan, characters of a step's text and of its note.
MAX_PLAN_STEPS = 30
MAX_PLAN_STEP_CHARS = 1000
MAX_PLAN_NOTE_CHARS = 300


def plan_step(text: str, status: str = "proposed", note: str = "") -> dict[str, str]:
    """One step as it is kept."""
    return {
        "text": text[:MAX_PLAN_STEP_CHARS],
        "status": status,
        "note": note[:MAX_PLAN_NOTE_CHARS],
    }


def clean_plan(value: Any) -> tuple[dict[str, str], ...]:
    """The readable steps of ``value``: not an object, no text, an unknown status: dropped;
    bounded in number and length."""
    if not isinstance(value, (list, tuple)):
        return ()
    steps = []
    for item in value[:MAX_PLAN_STEPS]:
        if not isinstance(item, dict):
            continue
        text, status, note = item.get("text"), item.get("status"), item.get("note", "")
        if not isinstance(text, str) or not text.strip() or status not in PLAN_STATUSES:
            continue
        steps.append(plan_step(text, status, note if isinstance(note, str) else ""))
    return tuple(steps)


def redact_plan(
    plan: tuple[dict[str, Any], ...], redact: Callable[[str], str]
) -> tuple[dict[str, str], ...]:
    """``plan`` cleaned, its texts and notes through ``redact``."""
    return tuple(
        plan_step(redact(step["text"]), step["status"], redact(step["note"]))
        for step in clean_plan(plan)
    )


#: How the export marks each status.
_MARKS = {
    "proposed": "",
    "pending": "[ ]",
    "done": "[x]",
    "failed": "[failed]",
    "skipped": "[skipped]",
}


def plan_lines(plan: tuple[dict[str, Any], ...], one_line: Callable[[str], str]) -> list[str]:
    """The plan as a Markdown numbered list (``one_line`` makes a text safe on one line)."""
    lines = []
    for n, step in enumerate(clean_plan(plan), 1):
        mark = _MARKS[step["status"]]
        note = f" ({one_line(step['note'])})" if step["note"].strip() else ""
        lines.append(f"{n}. {mark + ' ' if mark else ''}{one_line(step['text'])}{note}")
    return lines
