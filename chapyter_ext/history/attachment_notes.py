"""What a stored user message keeps of the files attached to it: ``{name, type, size}`` per
file, never the data, at most :data:`MAX_NOTES`; a damaged note is dropped on read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_NOTES = 10
MAX_NAME = 255


def clean_attachments(value: Any) -> tuple[dict[str, Any], ...]:
    """The readable notes of ``value`` (name, type, size only; anything else is dropped)."""
    if not isinstance(value, (list, tuple)):
        return ()
    notes = []
    for note in value[:MAX_NOTES]:
        if not isinstance(note, dict):
            continue
        name, mime, size = note.get("name"), note.get("type"), note.get("size")
        if not isinstance(name, str) or not name or not isinstance(mime, str):
            continue
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            continue
        notes.append({"name": name[:MAX_NAME], "type": mime[:MAX_NAME], "size": size})
    return tuple(notes)


def redact_attachments(
    notes: tuple[dict[str, Any], ...], redact: Callable[[str], str]
) -> tuple[dict[str, Any], ...]:
    """The notes with their names redacted (a file may be named after a secret)."""
    return tuple({**note, "name": redact(note["name"])} for note in clean_attachments(notes))


def attachment_lines(notes: tuple[dict[str, Any], ...], name: Callable[[str], str]) -> list[str]:
    """The export's lines for a message's files: ``> Attached: `a.csv` (text/csv, 1200 bytes)``;
    ``name`` writes a (redacted) name as inline code."""
    files = [
        f"{name(n['name'])} ({name(n['type'])}, {n['size']} bytes)"
        for n in clean_attachments(notes)
    ]
    return [">", "> Attached: " + ", ".join(files)] if files else []
