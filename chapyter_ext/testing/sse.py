"""A server-sent-events reader for tests and benchmarks: a ``text/event-stream`` body fed chunk by
chunk as the network delivers it (tornado's ``streaming_callback``, httpx's ``iter_bytes``), with
each event's name, JSON data and arrival time.

It reads what chapyter-ext's routes send (``event:`` and ``data:`` lines, ``:`` comments as
keep-alives), so a test sees the events a browser would, whatever the chunk boundaries; and an
OpenAI-style stream (``data:`` lines only, named ``message``, ending with the text ``[DONE]``).
"""

from __future__ import annotations

import codecs
import json
import time
from dataclasses import dataclass, field
from typing import Any

#: The data of the last event of an OpenAI-style stream (not JSON).
DONE = "[DONE]"


@dataclass
class SSEReader:
    """Events of one streamed reply, parsed as the chunks come."""

    #: (event name, JSON data, ``time.monotonic()`` at arrival), in arrival order.
    events: list[tuple[str, Any, float]] = field(default_factory=list)
    #: Comment lines (the server's keep-alives).
    comments: int = 0
    #: Network chunks fed.
    chunks: int = 0
    _buffer: str = ""
    _decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")())

    def feed(self, chunk: bytes) -> None:
        """Take one network chunk (None: tornado awaits what a streaming callback returns)."""
        self.parse(chunk)

    def parse(self, chunk: bytes) -> list[tuple[str, Any]]:
        """Take one network chunk; the events it completed, as (name, data)."""
        self.chunks += 1
        self._buffer += self._decoder.decode(chunk)
        completed: list[tuple[str, Any]] = []
        while "\n\n" in self._buffer:
            block, self._buffer = self._buffer.split("\n\n", 1)
            name, data = "message", []
            for line in block.split("\n"):
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: "):
                    data.append(line[len("data: ") :])
            if data:
                text = "\n".join(data)
                value = text if text == DONE else json.loads(text)
                self.events.append((name, value, time.monotonic()))
                completed.append((name, value))
        return completed

    @property
    def names(self) -> list[str]:
        """Event names in arrival order."""
        return [name for name, _, _ in self.events]

    def all(self, name: str) -> list[Any]:
        """Data of every event called ``name``, in order."""
        return [data for event, data, _ in self.events if event == name]

    def first(self, name: str) -> Any:
        """Data of the first event called ``name``."""
        return next(data for event, data, _ in self.events if event == name)

    def first_at(self, name: str) -> float:
        """``time.monotonic()`` when the first event called ``name`` arrived."""
        return next(at for event, _, at in self.events if event == name)

    def tokens(self) -> list[str]:
        """Texts of the token events, in order."""
        return [data["text"] for data in self.all("token")]
