"""A tornado request served by an ASGI app (the ``mcp`` SDK's streamable-HTTP app), so that the
official SDK speaks the protocol inside the Jupyter server: the request's method, path, query
and headers become the ASGI scope, its (already read) body the one ``http.request`` message;
the app's status and headers become the response's, and each body chunk is written and
flushed as it comes (a streamed response is an SSE stream). A closed connection is the app's
``http.disconnect``."""

from __future__ import annotations

import asyncio
from typing import Any

import tornado.web
from tornado.iostream import StreamClosedError

__all__ = ["serve_asgi"]

#: Headers of the connection itself, which tornado writes (or which mean nothing once relayed).
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "server", "date"}


def scope_of(request: Any) -> dict[str, Any]:
    """The ASGI HTTP scope of a tornado request."""
    host, _, port = (request.host or "localhost").rpartition(":")
    server = (host, int(port)) if port.isdigit() else (request.host, None)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": request.version.replace("HTTP/", "") or "1.1",
        "method": request.method,
        "scheme": request.protocol,
        "path": request.path,
        "raw_path": request.path.encode("latin-1", "replace"),
        "query_string": (request.query or "").encode("latin-1", "replace"),
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
            for name, value in request.headers.get_all()
        ],
        "client": (request.remote_ip, 0),
        "server": server,
        "state": {},
    }


async def serve_asgi(
    handler: tornado.web.RequestHandler, app: Any, body: bytes, gone: asyncio.Event
) -> None:
    """Answer ``handler``'s request with ``app``; ``gone`` is set when the client went away
    (the handler's ``on_connection_close``)."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if gone.is_set():
            return
        if message["type"] == "http.response.start":
            handler.clear()
            handler.clear_header("Content-Type")
            handler.set_status(message["status"])
            for name, value in message.get("headers", []):
                key = name.decode("latin-1")
                if key.lower() not in _HOP:
                    handler.add_header(key, value.decode("latin-1"))
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk:
                handler.write(chunk)
            if message.get("more_body", False):
                try:
                    await handler.flush()
                except StreamClosedError:
                    gone.set()

    await app(scope_of(handler.request), receive, send)
    if not gone.is_set() and not handler._finished:
        try:
            await handler.finish()
        except StreamClosedError:
            gone.set()
