"""``%%ai`` and Undo: a snapshot before the generated cell runs, and ``%ai undo`` to put the
variables back as they were then. The snapshot is taken when ``%%ai`` hands the code over to
run (here, or by the frontend right after this cell): nothing runs in between."""

from __future__ import annotations

from typing import Any

#: The turn names of ``%%ai`` runs: ``%%ai 1``, ``%%ai 2``, ...
PREFIX = "%%ai"


def before_generated_cell(shell: Any) -> str | None:
    """Snapshot the kernel before ``%%ai``'s generated cell runs; why not, or None."""
    from .kernel import take
    from .store import store

    kept = store()
    kept.ai_runs += 1
    turn = f"{PREFIX} {kept.ai_runs}"
    answer = take(shell, turn, 0)
    kept.last_ai = turn
    return answer["why"]


def undo(shell: Any) -> str:
    """Restore the variables as they were before the last generated cell ran: one line."""
    from .kernel import release, restore
    from .store import store

    turn = store().last_ai
    if turn is None:
        return "Nothing to undo: no %%ai cell ran generated code in this kernel yet."
    answer = restore(shell, turn, 0)
    if answer["ok"]:
        release(shell, turn)
        store().last_ai = None
    return answer["line"]
