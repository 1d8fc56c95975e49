"""One HTTP/1.1 connection to the test server written by hand (``Raw``, the ``raw`` fixture
in conftest.py), for the tests that count what a client sent before the answer came and what
becomes of the connection after it (test_bodies.py, test_refusals.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

#: How long an answer that needs no body may take; a server waiting for the body never answers.
PROMPT = 5.0


class Raw:
    """One HTTP/1.1 connection to the test server, written by hand."""

    def __init__(self, port: int, base_url: str) -> None:
        self.port, self.base_url = port, base_url
        self.sent = 0  # body bytes handed to the socket

    async def open(self) -> Raw:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def head(self, method: str, path: str, headers: dict[str, str]) -> None:
        lines = [f"{method} {self.base_url}{path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await self.writer.drain()

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()
        self.sent += len(data)

    async def chunk(self, data: bytes) -> None:
        """One piece of a ``Transfer-Encoding: chunked`` body (empty: the last)."""
        await self.send(b"%x\r\n%s\r\n" % (len(data), data))

    async def response(self, timeout: float = PROMPT) -> tuple[int, dict[str, str], Any]:
        """Status, headers and JSON body of the answer."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        found = dict(line.split(": ", 1) for line in header_lines if line)
        headers = {name.lower(): value for name, value in found.items()}
        length = int(headers.get("content-length", 0))
        body = await asyncio.wait_for(self.reader.readexactly(length), timeout)
        return int(status_line.split()[1]), headers, json.loads(body or b"null")

    async def closed(self, timeout: float = PROMPT) -> bool:
        """Whether the server closed the connection (it will read nothing more)."""
        try:
            return await asyncio.wait_for(self.reader.read(), timeout) == b""
        except ConnectionError:
            return True

    async def rest(self, timeout: float = PROMPT) -> bytes:
        """What is left to read before the server's end of the stream (a reset raises)."""
        return await asyncio.wait_for(self.reader.read(), timeout)

    def close(self) -> None:
        self.writer.close()


def json_headers(length: int, auth: dict[str, str] | None = None) -> dict[str, str]:
    """A JSON body's headers, declaring ``length``, with ``auth`` added."""
    return {"Content-Type": "application/json", "Content-Length": str(length), **(auth or {})}
