"""The markdown cell ``chapyter-ext agent`` appends for a turn's answer (or the note of a turn cut
short): the question quoted, then the text, with the answer's provenance in its ``chapyter``
metadata (``role: "answer"``, ``source: "agent"``, and ``numbers``: the answer's checked numbers,
which ``chapyter-ext check`` re-derives after a replay)."""

from __future__ import annotations

from typing import Any

from ..contract import METADATA_KEY, SCHEMA_VERSION, utc_now_iso

__all__ = ["answer_cell"]


def answer_cell(
    question: str, text: str, *, model: str, chat_id: str, message_id: str, **extra: Any
) -> Any:
    """The cell: ``> question`` lines, a blank line, ``text``; ``extra`` metadata (``status``,
    ``numbers``) kept when it has a value."""
    import nbformat

    quoted = "\n".join(f"> {line}" for line in question.strip().splitlines())
    metadata = {
        "schema": SCHEMA_VERSION,
        "role": "answer",
        "source": "agent",
        "model": model,
        "created": utc_now_iso(),
        "chat_id": chat_id,
        "message_id": message_id,
        **{key: value for key, value in extra.items() if value},
    }
    return nbformat.v4.new_markdown_cell(
        source=f"{quoted}\n\n{text}", metadata={METADATA_KEY: metadata}
    )
