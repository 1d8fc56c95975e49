"""The confined child's audit hook: every attempt (:func:`~.attempts.attempt_of`) is written
to the report pipe the moment it is made, before the operation itself (which the confinement
then refuses). What was written cannot be taken back: a step that later hangs, crashes or
forges more lines still leaves its attempts with the parent.

The hook holds its own references to what it calls (``os.write``, a C-level JSON string
encoder), so a step that rebinds module attributes cannot silence it; if the pipe stops taking
lines (closed, full, replaced), the child exits at once and the parent reports the trial as
cut short.
"""

from __future__ import annotations

import json.encoder
import os
import sys
from collections.abc import Callable
from typing import Any

from .attempts import INTERPRETER, Attempt, attempt_of

#: Attempts written at most (the rest are counted, not written).
MAX_ATTEMPTS = 200
#: The child's exit status when it could not write to its pipe.
EXIT_PIPE = 97


def attempt_line(attempt: Attempt) -> bytes:
    """One attempt as one line of the report pipe."""
    encode = json.encoder.encode_basestring_ascii
    kind, target, line = encode(attempt.kind), encode(attempt.target), encode(attempt.line)
    return f'{{"type": "attempt", "kind": {kind}, "target": {target}, "line": {line}}}\n'.encode()


def write_attempts(fd: int, attempts: list[Attempt]) -> None:
    """Attempts found after the step (state it changed) written the hook's way, before the
    child builds its report with library code the step may have replaced."""
    for attempt in attempts[:MAX_ATTEMPTS]:
        data = attempt_line(attempt)
        while data:
            data = data[os.write(fd, data) :]


def install(fd: int) -> Callable[[bool], None]:
    """Start recording attempts to ``fd``; returns the switch that stops it (for the child's
    own work once the step ended)."""
    write, exit_now, classify, line_of, size = os.write, os._exit, attempt_of, attempt_line, len
    seen: set[str] = set()
    recording = [True]

    def hook(event: str, args: tuple) -> None:
        if not recording[0]:
            return
        try:
            attempt = classify(event, args)
        except Exception:  # an odd argument: still an attempt, named by its event
            attempt = Attempt(
                INTERPRETER, event, f"tried something the trial could not read ({event})"
            )
        if attempt is None or attempt.line in seen or size(seen) >= MAX_ATTEMPTS:
            return
        seen.add(attempt.line)
        data = line_of(attempt)
        try:
            while data:
                data = data[write(fd, data) :]
        except OSError:
            exit_now(EXIT_PIPE)

    def switch(on: bool) -> None:
        recording[0] = on

    sys.addaudithook(hook)
    return switch


def write_line(fd: int, data: dict[str, Any]) -> None:
    """One JSON line to the report pipe (the child's own lines: its start, its report)."""
    import json

    payload = (json.dumps(data, default=str) + "\n").encode()
    while payload:
        payload = payload[os.write(fd, payload) :]
