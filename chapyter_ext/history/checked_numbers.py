"""An agent answer's checked numbers as the history keeps them: bounded, redacted, damaged ones
dropped (a verdict is a mark on the answer, never a reason to lose the message)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_NUMBERS",
    "NOT_FOUND_LINE",
    "NUMBER_STATUSES",
    "clean_numbers",
    "number_lines",
    "redact_numbers",
]

#: Verdicts kept per answer, sources per verdict, and characters per text, label and excerpt.
MAX_NUMBERS = 200
MAX_SOURCES = 3
MAX_NUMBER_TEXT = 80
MAX_LABEL = 120
MAX_EXCERPT = 200
NUMBER_STATUSES = ("found", "not_found", "trivial")


def _source(item: Any) -> dict[str, str] | None:
    if not isinstance(item, dict):
        return None
    kind, label, excerpt = (item.get(key) for key in ("kind", "label", "excerpt"))
    if not (isinstance(kind, str) and isinstance(label, str) and isinstance(excerpt, str)):
        return None
    return {"kind": kind[:20], "label": label[:MAX_LABEL], "excerpt": excerpt[:MAX_EXCERPT]}


def _verdict(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict) or item.get("status") not in NUMBER_STATUSES:
        return None
    text, start, end = item.get("text"), item.get("start"), item.get("end")
    if not isinstance(text, str) or not text:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (start, end)):
        return None
    value = item.get("value")
    where = item.get("where")
    where = where if isinstance(where, list) else []
    sources = [s for s in map(_source, where[:MAX_SOURCES]) if s is not None]
    return {
        "text": text[:MAX_NUMBER_TEXT],
        "start": start,
        "end": end,
        "value": float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0,
        "status": item["status"],
        "where": sources,
    }


def clean_numbers(value: Any) -> tuple[dict[str, Any], ...]:
    """The readable verdicts of ``value`` (``{text, start, end, value, status, where}``)."""
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(v for v in map(_verdict, value[:MAX_NUMBERS]) if v is not None)


def redact_numbers(value: Any, redact: Callable[[str], str]) -> tuple[dict[str, Any], ...]:
    """:func:`clean_numbers`, each source's label and excerpt through ``redact``."""
    return tuple(
        {
            **verdict,
            "where": [
                {**s, "label": redact(s["label"]), "excerpt": redact(s["excerpt"])}
                for s in verdict["where"]
            ],
        }
        for verdict in clean_numbers(value)
    )


#: What a number that matched nothing is called, in the export as in the chat's marks.
NOT_FOUND_LINE = "not found in this turn's outputs"


def number_lines(numbers: Any, span: Callable[[str], str]) -> list[str]:
    """The export's note under an agent answer: how many of its numbers were found, then a
    footnote line per number not found (``span`` writes a number as inline code)."""
    verdicts = clean_numbers(numbers)
    found = sum(v["status"] == "found" for v in verdicts)
    missing = [v for v in verdicts if v["status"] == "not_found"]
    if not found and not missing:
        return []
    lines = [f"*Checked numbers: {found} found, {len(missing)} {NOT_FOUND_LINE}.*"]
    lines += [f"- {span(v['text'])}: {NOT_FOUND_LINE}" for v in missing]
    return ["", *lines]
