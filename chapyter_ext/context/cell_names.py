"""How the chat's context and its chip name a cell: as JupyterLab shows it.

A cell with an execution count that no other cell of the notebook shows is "cell [4]", the
``[4]:`` beside it; any other cell (never run, markdown, or a count shown twice after a
restart) is named by its place from the top, "the 5th cell". The browser sends that count as
the snapshot's ``prompt`` (null otherwise) and names cells the same way in the UI
(``labextension/src/cellNames.ts``); both are tested against ``tests/vectors/cell_names.json``.
"""

from __future__ import annotations

__all__ = ["cell_name", "ordinal"]


def ordinal(n: int) -> str:
    """``n`` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def cell_name(position: int, prompt: int | None = None) -> str:
    """The cell at 1-based ``position`` whose prompt shows ``prompt``: "cell [4]", else
    "the 5th cell"."""
    return f"the {ordinal(position)} cell" if prompt is None else f"cell [{prompt}]"
