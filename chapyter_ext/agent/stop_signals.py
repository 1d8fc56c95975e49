"""How ``chapyter-ext agent`` ends a turn that a signal cut short: which signals stop it
(:class:`StopSignals`) and the one line said about it (:func:`interrupted_note`)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from typing import Any


def interrupted_note(signum: int, doing: str, *, ran: int, kept: bool) -> str:
    """One line: which signal, what it interrupted (after how many steps), what did not run.
    ``kept``: some cell ran, if only in part (the one running when the signal came)."""
    said = f"Interrupted ({_signal_name(signum)}) while {doing}"
    if not kept:
        return f"{said}; no step ran."
    if ran:
        said += f", after {ran} step{'s' if ran != 1 else ''}"
    return f"{said}; the remaining steps did not run."


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class StopSignals:
    """``signals`` during a run: the first raises ``KeyboardInterrupt`` where the run is (the
    model call, a cell, the kernel starting) until :meth:`disarm`; every later one, and any
    after ``disarm``, is only noted, so the wind-down (interrupting the cell, shutting the
    kernel down, writing the file) is never cut short. Only the main thread can set signal
    handlers; elsewhere this does nothing."""

    def __init__(self, signals: Sequence[int]) -> None:
        main = threading.current_thread() is threading.main_thread()
        self.signals = tuple(signals) if main else ()
        #: The first signal received, if any.
        self.received: int | None = None
        self._armed = True
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def disarm(self) -> None:
        """From now on signals are only noted."""
        self._armed = False

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.received is None:
            self.received = signum
            if self._armed:
                raise KeyboardInterrupt
