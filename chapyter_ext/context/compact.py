"""The kernel summary as a small model reads it best: one line per variable and the columns of
DataFrames as subscripts ready to copy (``df['a'] int64``), nothing else. The small prompts of
``%%ai`` and Fix send it."""

from __future__ import annotations

import re

__all__ = ["NO_VARIABLES", "as_subscripts", "compact_summary"]

#: What the summary says of a kernel with no variables.
NO_VARIABLES = "(no variables yet)"


def as_subscripts(name: str, columns: list[str]) -> str:
    """``'a' int64`` as ``df['a'] int64``: the way to read the column, ready to copy."""
    shown = []
    for column in columns:
        label, _, dtype = column.rpartition(" ")
        shown.append(f"{name}[{label}] {dtype}")
    return ", ".join(shown)


_COLUMN = re.compile(r"^'(.+)' (\S+)$")


def compact_summary(context: str | None) -> str | None:
    """The kernel summary as a small model reads it best: one line per variable and the
    columns of DataFrames (``'name' dtype``), nothing else (no headings, no sample rows,
    which a small model copies as made-up data)."""
    if not context:
        return None
    kept: list[str] = []
    columns: list[str] | None = None
    frame = ""
    for line in context.split("\n"):
        if line.startswith("- "):
            if columns:
                kept.append("    columns: " + as_subscripts(frame, columns))
            kept.append(line)
            frame = line[2:].split(" ", 1)[0]
            columns = [] if "(DataFrame)" in line else None
        elif columns is not None and line.startswith(" "):
            text = line.strip().removeprefix("columns:").strip()
            if text.startswith("head(") or " | " in text:
                kept.append("    columns: " + as_subscripts(frame, columns))
                columns = None
                continue
            parts = [text.split(":")[0]] if ": " in text else text.split(", ")
            columns.extend(p.strip() for p in parts if _COLUMN.match(p.strip()))
    if columns:
        kept.append("    columns: " + as_subscripts(frame, columns))
    return "\n".join(kept) or None
