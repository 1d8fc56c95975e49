"""A loopback OpenAI-compatible server for tests, benchmarks and browser tests.

Real HTTP on a local port (stdlib only), served from a background thread, with scripted answers:

    with FakeOpenAIServer() as server:
        server.script("first answer", Reply(status=429, headers={"Retry-After": "0"}))
        server.route("plot", "```python\\nplt.plot(x)\\n```")
        ...  # point the client at server.base_url
        server.requests[-1].body["messages"]

A reply may call tools (``Reply(tool_calls=[{"name": "run_code", "arguments": {...}}])``) or
refuse requests that carry ``tools`` (``Reply(reject_tools=True)``), to play an agent.
A reply is chosen per chat completion: the first route whose ``when`` occurs in the last user
message, else the next scripted reply, else ``default_reply``. ``/_control/*`` endpoints do the
same from another process (``python -m chapyter_ext.testing.openai_server``).
``POST /v1/completions`` (fill-in-the-middle: ``prompt`` and ``suffix``) is answered from the same
script, routes matching its prompt and suffix, streamed as ``text_completion`` chunks.
``POST /v1/messages`` speaks Anthropic's Messages API from the same script
(:mod:`.anthropic_wire`). Answers report ``usage`` (scripted with ``Reply(usage=...)``, else
estimated), in OpenAI's streams only when asked (``stream_options``), as OpenAI does;
``refuse_stream_options`` (or ``POST /_control/stream_options``) plays a server that rejects
that field, and ``Reply.budget_exceeded()`` a LiteLLM proxy whose key has spent its budget.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from .anthropic_wire import MESSAGES_PATH, serve_messages
from .http import ClientGone, LoopbackHTTPServer, RequestHandler, http_chunk
from .replies import DEFAULT_CONTENT, RecordedRequest, Reply, fim_text, last_user_text
from .wire import (
    StreamChunks,
    completion_json,
    error_json,
    models_json,
    prompt_chars,
    stream_deltas,
    text_completion_json,
    usage_json,
)

__all__ = ["DEFAULT_CONTENT", "FakeOpenAIServer", "RecordedRequest", "Reply", "main"]


class FakeOpenAIServer:
    """An OpenAI-compatible HTTP server on a loopback port, answering from a script."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, models: tuple[str, ...] = ("fake-model",)
    ) -> None:
        self.host = host
        self._requested_port = port
        self.models = tuple(models)
        self.default_reply: Reply = Reply(content=DEFAULT_CONTENT)
        #: Answer 400 to a request carrying ``stream_options``, as some servers do.
        self.refuse_stream_options = False
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._routes: list[tuple[str, Reply]] = []
        self._requests: list[RecordedRequest] = []
        self._disconnects = 0
        self._connections: set[socket.socket] = set()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[socket.socket, socket.socket] = ()  # type: ignore[assignment]

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind the port and serve from a daemon thread; returns self."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = LoopbackHTTPServer((self.host, self._requested_port), RequestHandler)
        httpd.fake = self
        self._httpd = httpd
        self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=self._serve, args=(httpd,), name=f"fake-openai:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def _serve(self, httpd: LoopbackHTTPServer) -> None:
        # Not serve_forever(): its polling would make every stop() (one per test) take a poll
        # interval; a wake-up socket makes stopping immediate.
        with selectors.DefaultSelector() as selector:
            selector.register(httpd, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is httpd and not self._stopping.is_set():
                        httpd.handle_request()

    def stop(self) -> None:
        """Stop serving, cut open connections and release the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # also ends handlers waiting in Reply.delay or chunk_delay
        self._wake[1].send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for end in self._wake:
            end.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            # Keep-alive handlers block reading the next request: unblock them.
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._httpd is None:
            if self._requested_port:
                return self._requested_port
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What a client uses as its base URL: ``http://HOST:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting --------------------------------------------------------------------------

    def script(self, *replies: Reply | str | dict[str, Any]) -> None:
        """Queue replies, served in order to chat completions no route matches."""
        coerced = [Reply.coerce(reply) for reply in replies]
        with self._lock:
            self._queue.extend(coerced)

    def route(self, when: str, reply: Reply | str | dict[str, Any]) -> None:
        """Answer ``reply`` whenever the last user message contains ``when`` (until clear())."""
        coerced = Reply.coerce(reply)
        with self._lock:
            self._routes = [(w, r) for w, r in self._routes if w != when]
            self._routes.append((when, coerced))

    def clear(self) -> None:
        """Forget scripted replies, routes, recorded requests and disconnects; restore defaults."""
        with self._lock:
            self._queue.clear()
            self._routes.clear()
            self._requests.clear()
            self._disconnects = 0
            self.default_reply = Reply(content=DEFAULT_CONTENT)
            self.refuse_stream_options = False

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the ``/v1`` requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def disconnects(self) -> int:
        """How many times a client went away while the server was still writing to it."""
        with self._lock:
            return self._disconnects

    # -- serving (called from handler threads) ----------------------------------------------

    def track_connection(self, conn: socket.socket, *, add: bool) -> None:
        """Remember open connections so stop() can cut them."""
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def handle(self, handler: RequestHandler) -> None:
        """Serve one request."""
        path = urlsplit(handler.path).path.rstrip("/") or "/"
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None

        if path.startswith("/_control/"):
            self._handle_control(handler, path, body)
            return

        record = RecordedRequest(
            method=handler.command,
            path=path,
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=body,
        )
        with self._lock:
            self._requests.append(record)

        if handler.command == "POST" and path == "/v1/chat/completions":
            self._chat(handler, record)
        elif handler.command == "POST" and path == MESSAGES_PATH:
            serve_messages(self, handler, record)
        elif handler.command == "POST" and path == "/v1/completions":
            self._chat(handler, record, text_completion=True)
        elif handler.command == "GET" and path == "/v1/models":
            handler.respond_json(200, models_json(self.models))
        else:
            handler.respond_json(
                404, error_json(404, f"Unknown path {handler.command} {path}.", code="not_found")
            )

    def choose(self, body: Any) -> tuple[Reply, str]:
        """The reply to a chat request's ``body`` and where it came from (for other wires)."""
        return self._choose(body)

    def next_id(self) -> int:
        """A fresh number for an answer's id."""
        return next(self._ids)

    @property
    def stopping(self) -> threading.Event:
        """Set once the server stops (ends waits in ``Reply.delay`` and ``chunk_delay``)."""
        return self._stopping

    def client_gone(self, handler: RequestHandler, record: RecordedRequest) -> None:
        """Record that the client hung up while ``record`` was answered."""
        self._client_gone(handler, record)

    def _choose(self, body: Any, *, text_completion: bool = False) -> tuple[Reply, str]:
        # A text completion (fill-in-the-middle) is routed on its prompt and suffix.
        text = fim_text(body) if text_completion else last_user_text(body)
        with self._lock:
            for when, reply in self._routes:
                if when in text:
                    return reply, f"route:{when}"
            if self._queue:
                return self._queue.popleft(), "script"
            return self.default_reply, "default"

    def _chat(
        self, handler: RequestHandler, record: RecordedRequest, *, text_completion: bool = False
    ) -> None:
        asks_usage = isinstance(record.body, dict) and "stream_options" in record.body
        if asks_usage and self.refuse_stream_options:  # refused before a reply is chosen
            message = "Unrecognized request argument supplied: stream_options"
            handler.respond_json(400, error_json(400, message))
            return
        reply, source = self._choose(record.body, text_completion=text_completion)
        record.reply, record.source = reply, source
        rejected = reply.reject_tools and isinstance(record.body, dict) and record.body.get("tools")
        if rejected and source == "script":
            with self._lock:  # refused, not answered: the retry without tools gets this reply
                self._queue.appendleft(reply)
        stream = isinstance(record.body, dict) and record.body.get("stream") is True

        try:
            if reply.delay > 0 and handler.pause(reply.delay, self._stopping):
                handler.close_connection = True
                return
            if reply.drop:
                handler.close_connection = True
                return
            if rejected:
                handler.respond_json(400, error_json(400, "tools are not supported"))
            elif reply.raw_body is not None:
                handler.respond(reply.status, reply.raw_body.encode(), headers=reply.headers)
            elif reply.status != 200:
                message = reply.error or f"Fake error {reply.status}."
                data = error_json(
                    reply.status, message, code=reply.error_code, kind=reply.error_type
                )
                handler.respond_json(reply.status, data, headers=reply.headers)
            elif stream:
                self._stream(handler, record, reply, text_completion=text_completion)
            elif text_completion:
                handler.respond_json(
                    200,
                    text_completion_json(record, reply, self._ids, self.models[0]),
                    reply.headers,
                )
            else:
                data = completion_json(record, reply, self._ids, self.models[0])
                handler.respond_json(200, data, reply.headers)
        except ClientGone:
            self._client_gone(handler, record)

    def _stream(
        self,
        handler: RequestHandler,
        record: RecordedRequest,
        reply: Reply,
        *,
        text_completion: bool = False,
    ) -> None:
        # Chunked framing, so that a cut is visible to the client as an incomplete body (a
        # close-delimited body would make a cut look like a normal end).
        head = [
            "HTTP/1.1 200 OK",
            "Content-Type: text/event-stream; charset=utf-8",
            "Cache-Control: no-cache",
            "Transfer-Encoding: chunked",
        ]
        if handler.close_connection:
            head.append("Connection: close")
        head.extend(f"{name}: {value}" for name, value in reply.headers.items())
        handler.send_all(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))

        chunks = StreamChunks(
            f"chatcmpl-fake-{next(self._ids)}",
            record.model or self.models[0],
            text_completion=text_completion,
        )
        for index, delta in enumerate(stream_deltas(reply, self._ids)):
            if reply.cut_after is not None and index >= reply.cut_after:
                handler.close_connection = True  # no terminating chunk: the body is incomplete
                return
            if index and reply.chunk_delay > 0 and handler.pause(reply.chunk_delay, self._stopping):
                handler.close_connection = True
                return
            # Taken just before the write: the client cannot have seen the chunk any earlier.
            written_at = time.time()
            handler.send_all(chunks.event(delta, None))
            if index == 0:
                record.first_chunk_at = written_at
            record.chunks_sent += 1
        if reply.cut_after is not None:  # every piece went out, but not the end of the stream
            handler.close_connection = True
            return
        end = chunks.event({}, "tool_calls" if reply.tool_calls else "stop")
        options = record.body.get("stream_options") if isinstance(record.body, dict) else None
        if isinstance(options, dict) and options.get("include_usage"):
            end += chunks.usage(usage_json(reply, prompt_chars(record)))
        handler.send_all(end + http_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")

    def _client_gone(self, handler: RequestHandler, record: RecordedRequest) -> None:
        handler.close_connection = True
        record.disconnected = True
        with self._lock:
            self._disconnects += 1

    def _handle_control(self, handler: RequestHandler, path: str, body: Any) -> None:
        try:
            if handler.command == "POST" and path == "/_control/script":
                replies = body.get("replies") if isinstance(body, dict) else None
                if not isinstance(replies, list):
                    raise ValueError('expected {"replies": [...]}')
                self.script(*replies)
                handler.respond_json(200, {"ok": True, "pending": self.pending})
            elif handler.command == "POST" and path == "/_control/route":
                if not isinstance(body, dict) or not isinstance(body.get("when"), str):
                    raise ValueError('expected {"when": "...", "reply": {...}}')
                self.route(body["when"], body.get("reply", ""))
                handler.respond_json(200, {"ok": True})
            elif handler.command == "POST" and path == "/_control/default":
                if not isinstance(body, dict) or "reply" not in body:
                    raise ValueError('expected {"reply": {...}}')
                self.default_reply = Reply.coerce(body["reply"])
                handler.respond_json(200, {"ok": True})
            elif handler.command == "POST" and path == "/_control/stream_options":
                if not isinstance(body, dict) or not isinstance(body.get("refuse"), bool):
                    raise ValueError('expected {"refuse": true | false}')
                self.refuse_stream_options = body["refuse"]
                handler.respond_json(200, {"ok": True})
            elif handler.command == "POST" and path == "/_control/reset":
                self.clear()
                handler.respond_json(200, {"ok": True})
            elif handler.command == "GET" and path == "/_control/requests":
                requests = [record.to_dict() for record in self.requests]
                handler.respond_json(200, {"requests": requests})
            else:
                handler.respond_json(404, error_json(404, f"Unknown control path {path}."))
        except (TypeError, ValueError) as err:
            handler.respond_json(400, error_json(400, str(err)))


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground until SIGTERM or SIGINT (see ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m chapyter_ext.testing.openai_server",
        description="Serve a scripted OpenAI-compatible API on a loopback port (for tests).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: any free)")
    parser.add_argument("--port-file", help="write the bound port to this file once listening")
    parser.add_argument(
        "--model",
        action="append",
        dest="models",
        metavar="NAME",
        help="a model listed by GET /v1/models (repeatable; default fake-model)",
    )
    args = parser.parse_args(argv)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    server = FakeOpenAIServer(args.host, args.port, tuple(args.models or ("fake-model",)))
    with server:
        if args.port_file:
            # Write then rename: a reader polling the file never sees it half-written.
            tmp = f"{args.port_file}.tmp{os.getpid()}"
            with open(tmp, "w") as handle:
                handle.write(f"{server.port}\n")
            os.replace(tmp, args.port_file)
        print(f"listening on {server.base_url}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
