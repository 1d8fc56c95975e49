"""``%%ai --run`` where no frontend runs the code (terminal IPython, a kernel without
chapyter-ext's JupyterLab extension): the code runs here once the magic's cell is done, as a
cell of its own (its own ``In[n]`` and ``Out[n]``, as if typed), and while it raises and
retries remain the model is asked for a correction, which runs in turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .replay import Retry

__all__ = ["error_output", "run_after_this_cell", "run_and_correct"]


def error_output(shell: Any, exc: BaseException) -> dict:
    """An exception raised by code run here, as an error output (``ename``, ``evalue``,
    ``traceback`` frames as IPython formats them)."""
    try:
        frames = shell.InteractiveTB.structured_traceback(type(exc), exc, exc.__traceback__)
    except Exception:
        frames = []
    return {"ename": type(exc).__name__, "evalue": str(exc), "traceback": list(frames)}


def run_after_this_cell(shell: Any, then: Callable[[], None]) -> None:
    """Call ``then`` once, when the cell running now is done (IPython's ``post_run_cell``):
    in a kernel its output shows below this cell's."""

    def run(result: Any = None) -> None:
        shell.events.unregister("post_run_cell", run)
        then()

    shell.events.register("post_run_cell", run)


def run_and_correct(
    shell: Any, code: str, cap: int, correct: Callable[[Retry], str | None]
) -> None:
    """Run ``code`` here; while it raises and fewer than ``cap`` retries were asked for,
    ``correct(retry)`` gives the corrected code to run (None: stop; it said why)."""
    for attempt in range(1, cap + 2):
        outcome = shell.run_cell(code, store_history=True)
        exc = outcome.error_in_exec
        if exc is None or isinstance(exc, KeyboardInterrupt):
            if attempt > 1 and exc is None:
                print(f"✓ fixed after {attempt - 1} retr{'y' if attempt == 2 else 'ies'}")
            return
        if attempt > cap:
            if cap:
                print(f"✗ still failing after {cap} retr{'y' if cap == 1 else 'ies'}")
            return
        corrected = correct(Retry(attempt, code, error_output(shell, exc)))
        if corrected is None:
            return
        code = corrected
