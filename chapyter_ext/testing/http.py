"""The HTTP plumbing of the loopback OpenAI-compatible server: a keep-alive request handler that
writes each response in one send (TCP_NODELAY), notices a client hanging up at once, and a
threading server that treats a vanished client as routine."""

from __future__ import annotations

import http
import json
import logging
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

log = logging.getLogger("chapyter_ext.testing.openai_server")


class Responder(Protocol):
    """What serves the requests (the loopback server): it answers each and tracks connections."""

    def handle(self, handler: RequestHandler) -> None:
        """Serve one request."""

    def track_connection(self, conn: socket.socket, *, add: bool) -> None:
        """Remember (``add``) or forget an open connection."""


class ClientGone(Exception):
    """The client closed its end while we were writing."""


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so each call does not pay a TCP handshake
    disable_nagle_algorithm = True  # TCP_NODELAY: no ~40 ms Nagle/delayed-ACK stall per call
    server: LoopbackHTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.fake.track_connection(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake.track_connection(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        """Serve a GET (models list, recorded requests)."""
        self.server.fake.handle(self)

    def do_POST(self) -> None:
        """Serve a POST (chat completions, control calls)."""
        self.server.fake.handle(self)

    # -- writing ----------------------------------------------------------------------------

    def send_all(self, data: bytes) -> None:
        """Write bytes, turning a vanished client into ClientGone."""
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as err:
            raise ClientGone from err

    def pause(self, seconds: float, stopping: threading.Event) -> bool:
        """Wait, watching the socket; True if the server is stopping.

        Raises ClientGone as soon as the client hangs up, rather than at the next write (and
        TCP lets the first write after a hang-up succeed), so tests see a disconnect promptly.
        """
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if stopping.is_set():
                return True
            if left <= 0:
                return False
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.02))
            if not readable or stopping.is_set():
                continue
            try:
                hung_up = not self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                hung_up = True
            if hung_up:
                raise ClientGone
            stopping.wait(min(left, 0.02))  # a pipelined request: it waits for its turn

    def respond(
        self,
        status: int,
        body: bytes,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        """A complete response, status line to body, in one send (see TCP_NODELAY above)."""
        extra = headers or {}
        head = [f"HTTP/1.1 {status} {_reason(status)}", f"Content-Length: {len(body)}"]
        if "content-type" not in {name.lower() for name in extra}:  # a Reply may send HTML
            head.append(f"Content-Type: {content_type}")
        if self.close_connection:
            head.append("Connection: close")
        head.extend(f"{name}: {value}" for name, value in extra.items())
        self.send_all(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def respond_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        """A JSON response."""
        self.respond(status, json.dumps(data).encode(), headers=headers)


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    timeout = 1.0  # handle_request() only runs once the socket is readable: never waits long
    fake: Responder

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up is routine here (timeouts, aclose tests); anything else is a bug.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ClientGone, ConnectionError)):
            return
        log.exception("fake OpenAI server: error while serving %s", client_address)


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def http_chunk(data: bytes) -> bytes:
    """``data`` framed as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)
