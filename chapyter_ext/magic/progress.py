"""The answer arriving, as ``%%ai`` shows it: a live display in a kernel, plain text in a
terminal."""

from __future__ import annotations

import sys
import time
from typing import Any

from ..contract import PROGRESS_MIME
from ..redact import Redactor, TokenRedactor

__all__ = ["Progress"]

_PROGRESS_INTERVAL = 0.1  # seconds between display updates: smooth, without flooding iopub


class Progress:
    """Shows the answer arriving: a live display in a kernel, plain text in a terminal.

    Everything shown passes ``redactor`` (a secret split over two pieces included: the stream
    goes through a :class:`~chapyter_ext.redact.TokenRedactor`), since the display is saved
    with the notebook.
    """

    def __init__(self, shell, model: str, redactor: Redactor):
        self._redact = redactor
        self._tokens = TokenRedactor(redactor)
        self._model = redactor(model)
        self._text: list[str] = []
        self._chars = 0
        self._started = time.perf_counter()
        self._last_update = 0.0
        self._in_kernel = getattr(shell, "kernel", None) is not None
        self._handle: Any = None
        if self._in_kernel:
            from IPython.display import display

            self._handle = display(self._bundle("waiting"), raw=True, display_id=True)

    def _bundle(self, state: str, note: str = "") -> dict:
        answer = "".join(self._text)
        elapsed = time.perf_counter() - self._started
        if state == "waiting":
            # Plain text: an emoji renders as an empty box where no emoji font is installed.
            line = f"Asking {self._model}…"
        elif state == "streaming":
            line = f"{self._model} is writing… {self._chars} characters, {elapsed:.1f} s"
        else:
            line = note
        plain = line if state != "streaming" else f"{line}\n{_tail(answer)}"
        return {
            "text/plain": plain,
            PROGRESS_MIME: {"state": state, "text": answer, "model": self._model},
        }

    def _show(self, safe: str) -> None:
        if safe:
            self._text.append(safe)
            if not self._in_kernel:
                sys.stdout.write(safe)
                sys.stdout.flush()

    def token(self, piece: str) -> None:
        """Called for every streamed piece of the answer."""
        self._chars += len(piece)
        self._show(self._tokens.push(piece))
        if not self._in_kernel:
            return
        now = time.perf_counter()
        if now - self._last_update >= _PROGRESS_INTERVAL:
            self._last_update = now
            self._handle.update(self._bundle("streaming"), raw=True)

    def restart(self, note: str) -> None:
        """Start over for another answer (a small model's next candidate), saying why."""
        self._show(self._tokens.flush())
        self._tokens = TokenRedactor(self._redact)
        self._text.clear()
        self._chars = 0
        if not self._in_kernel:
            sys.stdout.write(f"\n↻ {self._redact(note)}\n")
            sys.stdout.flush()
        else:
            self._handle.update(self._bundle("streaming"), raw=True)

    def finish(self, note: str, state: str = "done") -> None:
        """Replace the live view with one line (``state`` is "done" or "failed")."""
        self._show(self._tokens.flush())
        note = self._redact(note)
        if not self._in_kernel:
            if self._text:
                sys.stdout.write("\n")
            if state == "done":
                print(note)
            return
        bundle = self._bundle(state, note)
        if state == "failed":
            # The error itself is shown once, by ChapyterError; keep only the partial answer.
            bundle["text/plain"] = ""
        self._handle.update(bundle, raw=True)


def _tail(text: str, lines: int = 12) -> str:
    parts = text.splitlines()
    return "\n".join(parts[-lines:])
