"""``chapyter-ext check``'s look at answers' numbers: does each recorded answer still agree with
the outputs of the notebook it answered?

``chapyter-ext agent`` records each number of its answer with its verdict in the answer cell's
``chapyter`` metadata (``numbers``). After a replay (nbclient, papermill) the outputs above the
answer are new; a number that was found in an output when the answer was written and is found
in none now is one the data no longer backs. Each such answer is one line naming its numbers.
Numbers found only in what is not in the file (a variable's summary, an MCP tool's result) are
not re-derived: the file cannot say. Pure: no kernel, no network.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .contract import cell_source, chapyter_metadata
from .numbers import FOUND, Seen, SeenIndex, check_numbers

__all__ = ["MAX_NAMED", "answer_text", "number_drift", "output_texts"]

#: Numbers named in one answer's line; the rest are counted.
MAX_NAMED = 5


def answer_text(source: str) -> str:
    """The answer of an answer cell's source: what follows the quoted question (the text the
    recorded numbers' spans point into)."""
    lines = source.split("\n")
    start = 0
    while start < len(lines) and lines[start].startswith(">"):
        start += 1
    if start < len(lines) and not lines[start].strip():
        start += 1
    return "\n".join(lines[start:])


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def output_texts(cell: Any) -> Iterator[str]:
    """What a code cell shows as text: streams, plain-text results and displays, errors."""
    outputs = cell.get("outputs")
    for output in outputs if isinstance(outputs, list) else ():
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream":
            yield _joined(output.get("text"))
        elif kind == "error":
            yield f"{output.get('ename', '')}: {output.get('evalue', '')}"
        elif isinstance(output.get("data"), dict):
            yield _joined(output["data"].get("text/plain"))


def _outputs_above(cells: list[Any], end: int) -> list[Seen]:
    seen = []
    for position, cell in enumerate(cells[:end], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = "\n".join(output_texts(cell))
        if text.strip():
            count = cell.get("execution_count")
            label = f"cell [{count}] output" if isinstance(count, int) else f"cell {position}"
            seen.append(Seen("output", label, text))
    return seen


def _found_in_outputs(number: Any) -> bool:
    return (
        isinstance(number, dict)
        and number.get("status") == FOUND
        and isinstance(number.get("text"), str)
        and any(isinstance(w, dict) and w.get("kind") == "output" for w in number.get("where", []))
    )


def number_drift(nb: Any) -> list[tuple[int, str]]:
    """Each recorded answer whose numbers no longer match: ``(cell index, message)``."""
    cells = list(nb.get("cells") or [])
    drift = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        meta = chapyter_metadata(cell)
        recorded = meta.get("numbers")
        if meta.get("role") != "answer" or not isinstance(recorded, list):
            continue
        before = [n for n in recorded if _found_in_outputs(n)]
        if not before:
            continue
        text = answer_text(cell_source(cell))
        now = {
            (v.text, v.start)
            for v in check_numbers(text, SeenIndex(_outputs_above(cells, index)))
            if v.status == FOUND
        }
        lost = [n["text"] for n in before if (n["text"], n.get("start")) not in now]
        if lost:
            named = ", ".join(lost[:MAX_NAMED])
            more = f" and {len(lost) - MAX_NAMED} more" if len(lost) > MAX_NAMED else ""
            drift.append(
                (
                    index,
                    f"the answer's numbers no longer match the outputs above it: {named}{more} "
                    "(found when it was answered, not now)",
                )
            )
    return drift
