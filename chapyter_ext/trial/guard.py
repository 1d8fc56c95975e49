"""The guard of a step that runs unasked after a clean trial: while that one cell runs, any
attempt (:func:`~.attempts.attempt_of`: a write, a connection, a lookup, a process, native
code) raises ``PermissionError`` before it happens.

A trial sees one run; the real run could differ (chance, time, a step that tells a trial from
the kernel). The trial said the step tries nothing, so the guard holds it to that: what runs
unasked is what the trial showed. The driver **arms** the guard with the exact code right
before it runs the cell (:func:`arm`, a silent request); IPython's ``pre_run_cell`` turns it on
only for a cell whose source is that code, ``post_run_cell`` turns it off, and any other cell
disarms it. It watches the thread that runs the cell and every thread started while it runs
(they would carry the step's work past its end); the kernel's own threads are left alone.

One audit hook per kernel, installed on first use (audit hooks cannot be removed): off, it
returns at its first comparison.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from .attempts import attempt_of

#: The kernel's one guard (None until the first :func:`arm`).
_guard: _Guard | None = None


class GuardStop(PermissionError):
    """The guard stopped a step; ``str()`` is the one line its cell shows."""


class _Guard:
    def __init__(self, shell: Any) -> None:
        self.armed: str | None = None
        self.active = False
        self.thread = 0
        #: Threads alive when the guarded cell started (the kernel's own).
        self.known: frozenset[int] = frozenset()
        #: Threads started by guarded cells, watched until they end.
        self.started: set[int] = set()
        self.stopped: list[str] = []
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_run_cell", self.post_run_cell)
        get_ident, classify = threading.get_ident, attempt_of

        def hook(event: str, args: tuple) -> None:
            if not (self.active or self.started):
                return
            ident = get_ident()
            if self.active and ident != self.thread and ident not in self.known:
                self.started.add(ident)  # born while the step ran: its work
            elif not (self.active and ident == self.thread) and ident not in self.started:
                return
            attempt = classify(event, args)
            if attempt is not None:
                self.stopped.append(attempt.line)
                raise GuardStop(
                    f"chapyter-ext stopped this step: it {attempt.line}, which its confined "
                    "trial did not show; nothing was done."
                )

        sys.addaudithook(hook)

    def pre_run_cell(self, info: Any) -> None:
        code, self.armed = self.armed, None
        raw = getattr(info, "raw_cell", None)
        if code is not None and isinstance(raw, str) and raw.rstrip() == code.rstrip():
            self.thread = threading.get_ident()
            self.known = frozenset(t.ident for t in threading.enumerate() if t.ident)
            self.stopped = []
            self.active = True

    def post_run_cell(self, result: Any = None) -> None:
        alive = {t.ident for t in threading.enumerate() if t.ident}
        if self.active:  # threads born while the step ran carry its work on
            self.started |= alive - self.known - {self.thread}
        self.active = False
        self.started &= alive


def arm(shell: Any, code: str) -> dict[str, Any]:
    """Guard the next cell run if its source is ``code`` (see the module); what the browser
    and the headless driver read back: ``{"armed": true}``."""
    global _guard
    if _guard is None:
        _guard = _Guard(shell)
    _guard.armed = code
    return {"armed": True}


def stopped() -> list[str]:
    """What the guard stopped in the last guarded cell (for tests and the report)."""
    return list(_guard.stopped) if _guard is not None else []
