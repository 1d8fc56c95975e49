"""What a refused request leaves of its connection: usable by the next request, or
closed in a way the client sees, never cut under a proxy that reuses it.

A chapyter-ext route decides on the headers alone, before the body is read
(:class:`.base_handler.ChapyterHandler`). Tornado then closes the connection after the answer,
since the body is unread, without saying so: JupyterHub's ``configurable-http-proxy`` keeps
its connections to a user's server open and sent the next request (the owner's included) on
the closed one, which came back as 503 "Your server appears to be down". So:

- a refused request with a small body (at most :data:`DRAIN_BYTES`, or none) is answered once
  that body has been read and dropped: the connection stays open for the next request;
- a larger body is never read: the answer says ``Connection: close`` (a proxy then opens a new
  connection for the next request), and :func:`linger` closes the connection after it without
  a reset: it drops what the client still sends for a short while (at most
  :data:`LINGER_BYTES` and :data:`LINGER_SECONDS`), so that the client reads the answer
  instead of an ``ECONNRESET`` that a proxy would turn into a 503.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tornado import gen
from tornado.ioloop import IOLoop
from tornado.iostream import IOStream, SSLIOStream, StreamClosedError

__all__ = ["DRAIN_BYTES", "LINGER_BYTES", "LINGER_SECONDS", "drains", "linger"]

#: The largest body of a refused request that is read (and dropped) so that the connection
#: stays usable; far above a refused chat message, far below anything worth sending to waste
#: the server's time.
DRAIN_BYTES = 64 * 1024
#: After an answer that leaves a larger body unread: at most this many more bytes of it...
LINGER_BYTES = 1024 * 1024
#: ...and for at most this long are dropped before the connection closes.
LINGER_SECONDS = 2.0


def drains(headers: Any) -> bool:
    """Whether a refused request's body is small enough to read and drop first (no body, or a
    declared length up to :data:`DRAIN_BYTES`; a chunked one is cut off past it as it comes)."""
    declared = headers.get("Content-Length")
    if declared is None:
        return True
    return declared.strip().isdigit() and int(declared) <= DRAIN_BYTES


async def linger(stream: IOStream) -> None:
    """Hold ``stream`` after the answer written to it, so that closing it then resets nothing
    the client still needs (see the module): once the answer is sent, its write side is shut
    (the client sees the end at once), what the client still sends is dropped up to
    :data:`LINGER_BYTES`, and past that nothing more is read (its writes stall) until
    :data:`LINGER_SECONDS` have passed or it closes. The caller closes the stream after."""
    try:
        await stream.write(b"")  # resolves once everything written before is sent
        # Not on TLS: shutting the raw socket down would break the TLS stream.
        if not isinstance(stream, SSLIOStream) and stream.socket is not None:
            stream.socket.shutdown(socket.SHUT_WR)
        loop = IOLoop.current()
        deadline = loop.time() + LINGER_SECONDS
        dropped = 0
        while dropped < LINGER_BYTES:
            read = stream.read_bytes(64 * 1024, partial=True)
            chunk = await gen.with_timeout(deadline, read, quiet_exceptions=StreamClosedError)
            dropped += len(chunk)
        await asyncio.sleep(max(0.0, deadline - loop.time()))
    except (StreamClosedError, gen.TimeoutError, OSError):
        pass  # the client closed first, or the deadline passed
