"""What a trial shows, captured inside the confined child instead of reaching the kernel's
frontend: stdout and stderr, every display (each mimebundle), the value of the last
expression, payloads (``set_next_input``, ``ask_exit``), comm messages, and requests for
input. Every path that would send a message through the kernel's ZeroMQ sockets is replaced
here first, so the child never touches them.
"""

from __future__ import annotations

import io
from typing import Any

#: Characters kept of stdout and of stderr; displays kept, and characters per MIME value.
STREAM_CHARS = 8000
MAX_DISPLAYS = 20
VALUE_CHARS = 20000
#: Payloads a frontend acts on harmlessly (help text in the pager).
_HARMLESS_PAYLOADS = frozenset({"page"})


class Stream(io.TextIOBase):
    """A bounded text stream in place of the kernel's stdout or stderr."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self._parts: list[str] = []
        self._size = 0
        self.cut = 0

    def writable(self) -> bool:
        return True

    def write(self, text: Any) -> int:
        text = text if isinstance(text, str) else str(text)
        room = STREAM_CHARS - self._size
        if room > 0:
            self._parts.append(text[:room])
            self._size += min(room, len(text))
        self.cut += max(0, len(text) - max(room, 0))
        return len(text)

    def isatty(self) -> bool:
        return False

    def value(self) -> str:
        return "".join(self._parts)


class NoInput(Exception):
    """The step asked for input, which a trial cannot give."""


def _no_input(*args: Any, **kwargs: Any) -> str:
    raise NoInput("the step asks for input")


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return value[:VALUE_CHARS]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)[:VALUE_CHARS]
    if isinstance(value, (dict, list, int, float, bool)) or value is None:
        import json

        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            return None
        return value if len(text) <= VALUE_CHARS else None
    return None


class Shows:
    """Everything the step shows, installed in place of the kernel's channels."""

    def __init__(self) -> None:
        self.stdout = Stream("stdout")
        self.stderr = Stream("stderr")
        #: Mimebundles displayed (``display``, ``plt.show``), in order, bounded.
        self.displays: list[dict[str, Any]] = []
        self.more_displays = 0
        #: The last expression's mimebundle (IPython's ``Out``), if any.
        self.result: dict[str, Any] | None = None
        #: Payloads other than help text: what the frontend would have been asked to do.
        self.payloads: list[str] = []
        #: Messages that would have gone to the frontend outside displays (widgets' comms).
        self.messages = 0
        self.asked_input = False

    def add_display(self, data: dict[str, Any]) -> None:
        if len(self.displays) >= MAX_DISPLAYS:
            self.more_displays += 1
            return
        kept = {mime: _bounded(value) for mime, value in dict(data).items()}
        self.displays.append({mime: v for mime, v in kept.items() if v is not None})

    def install(self, shell: Any) -> None:
        """Take the kernel's output channels over (in the child only)."""
        import builtins
        import sys

        from IPython.core.displaypub import DisplayPublisher

        shows = self

        class Publisher(DisplayPublisher):
            def publish(self, data, metadata=None, source=None, **kwargs):
                shows.add_display(data)

            def clear_output(self, wait=False):
                return None

        sys.stdout, sys.stderr = self.stdout, self.stderr
        sys.stdin = io.StringIO("")
        sys.displayhook = self._displayhook
        builtins.input = _no_input
        try:
            import getpass

            getpass.getpass = _no_input
        except ImportError:
            pass
        shell.display_pub = Publisher(shell=shell)
        manager = getattr(shell, "payload_manager", None)
        if manager is not None:
            manager.write_payload = self._payload
        kernel = getattr(shell, "kernel", None)
        session = getattr(kernel, "session", None)
        if session is not None:
            session.send = self._message
            session.send_raw = self._message
        if kernel is not None and hasattr(kernel, "raw_input"):
            kernel.raw_input = _no_input
            kernel.getpass = _no_input

    def _displayhook(self, value: Any) -> None:
        if value is not None:
            self.add_display({"text/plain": repr(value)[:VALUE_CHARS]})

    def _payload(self, data: Any, single: bool = True) -> None:
        source = data.get("source", "") if isinstance(data, dict) else ""
        if source not in _HARMLESS_PAYLOADS:
            self.payloads.append(str(source) or "a request to the frontend")

    def _message(self, *args: Any, **kwargs: Any) -> None:
        self.messages += 1

    def format_result(self, shell: Any, value: Any) -> None:
        """The last expression's value as IPython would show it."""
        try:
            data, _ = shell.display_formatter.format(value)
        except Exception:
            data = {"text/plain": repr(value)}
        self.result = {mime: v for mime, v in ((m, _bounded(x)) for m, x in data.items()) if v}
