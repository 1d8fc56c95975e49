"""What a stored user message keeps of what it @-mentioned: ``{kind, label}`` and the one key
that names the thing (``name`` of a variable, ``cellId`` of a cell, ``path`` of a file), never
what was sent of it; at most :data:`MAX_MENTIONS`, a damaged one dropped on read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_MENTIONS = 20
MAX_TEXT = 1024
#: The key that names the thing, per kind.
KEYS = {"variable": "name", "cell": "cellId", "file": "path"}
KIND_WORDS = {"variable": "variable", "cell": "cell", "file": "file"}


def clean_mentions(value: Any) -> tuple[dict[str, str], ...]:
    """The readable mentions of ``value`` (kind, label and its key only)."""
    if not isinstance(value, (list, tuple)):
        return ()
    out = []
    for item in value[:MAX_MENTIONS]:
        if not isinstance(item, dict) or item.get("kind") not in KEYS:
            continue
        key = KEYS[item["kind"]]
        label, named = item.get("label"), item.get(key)
        if not isinstance(label, str) or not label or not isinstance(named, str) or not named:
            continue
        out.append({"kind": item["kind"], "label": label[:MAX_TEXT], key: named[:MAX_TEXT]})
    return tuple(out)


def redact_mentions(
    mentions: tuple[dict[str, str], ...], redact: Callable[[str], str]
) -> tuple[dict[str, str], ...]:
    """The mentions with their labels and names redacted (a file may be named after a secret)."""
    return tuple(
        {key: value if key == "kind" else redact(value) for key, value in mention.items()}
        for mention in clean_mentions(mentions)
    )


def mention_lines(mentions: tuple[dict[str, str], ...], label: Callable[[str], str]) -> list[str]:
    """The export's lines for a message's mentions: ``> Mentioned: variable `df`, cell
    `cell [4]`, file `data/sales.csv```; ``label`` writes a (redacted) label as inline code."""
    items = [f"{KIND_WORDS[m['kind']]} {label(m['label'])}" for m in clean_mentions(mentions)]
    return [">", "> Mentioned: " + ", ".join(items)] if items else []
