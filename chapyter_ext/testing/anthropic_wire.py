"""Anthropic's Messages API (``POST /v1/messages``) as the loopback server speaks it, from the same
script as its OpenAI answers: a whole message, or a stream of named SSE events
(``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``,
``content_block_stop``, ``message_delta`` with the usage, ``message_stop``), each framed as an
HTTP chunk; errors as Anthropic's ``{"type": "error", "error": {...}}``.

``Reply`` fields honoured: ``content``, ``tool_calls`` (as ``tool_use`` blocks), ``usage``
(``prompt_tokens``/``completion_tokens`` become ``input_tokens``/``output_tokens``),
``status``/``error``/``error_type``, ``headers``, ``chunk_size``, ``chunk_delay``, ``delay``,
``cut_after``, ``drop`` and ``raw_body``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

from .http import ClientGone, RequestHandler, http_chunk
from .replies import RecordedRequest, Reply
from .wire import prompt_chars, tool_calls_json, usage_json


class FakeOpenAIServer(Protocol):
    """What the Messages wire needs of :class:`~.openai_server.FakeOpenAIServer`."""

    @property
    def models(self) -> Sequence[str]: ...

    @property
    def stopping(self) -> threading.Event: ...

    def choose(self, body: Any) -> tuple[Reply, str]: ...

    def next_id(self) -> int: ...

    def client_gone(self, handler: RequestHandler, record: RecordedRequest) -> None: ...


__all__ = ["MESSAGES_PATH", "error_body", "message_json", "serve_messages", "stream_events"]

#: Where the Messages API answers.
MESSAGES_PATH = "/v1/messages"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str, kind: str | None = None) -> dict[str, Any]:
    """Anthropic's error body for ``status``."""
    default = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind or default, "message": message}}


def _usage(record: RecordedRequest, reply: Reply) -> dict[str, int]:
    usage = usage_json(reply, prompt_chars(record))
    return {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}


def _blocks(reply: Reply, first_id: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": reply.content}] if reply.content else []
    )
    for call in tool_calls_json(reply, first_id):
        function = call["function"]
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"].replace("call_fake_", "toolu_fake_"),
                "name": function["name"],
                "input": function["arguments"],  # JSON text: decoded below, or sent as it is
            }
        )
    return blocks


def message_json(record: RecordedRequest, reply: Reply, number: int, model: str) -> dict[str, Any]:
    """A whole message for ``reply``."""
    content = []
    for block in _blocks(reply, number):
        if block["type"] == "tool_use":
            block = {**block, "input": json.loads(block["input"])}
        content.append(block)
    return {
        "id": f"msg_fake_{number}",
        "type": "message",
        "role": "assistant",
        "model": record.model or model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": _usage(record, reply),
    }


def _event(name: str, data: dict[str, Any]) -> bytes:
    return http_chunk(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())


def stream_events(record: RecordedRequest, reply: Reply, number: int, model: str) -> list[bytes]:
    """The framed events of a streamed ``reply``: the first two open the message and its first
    block, the last two close it; the pieces in between are what ``cut_after`` counts."""
    usage = _usage(record, reply)
    start = message_json(record, reply, number, model)
    start.update(content=[], stop_reason=None, usage={**usage, "output_tokens": 1})
    events = [_event("message_start", {"message": start}), _event("ping", {})]
    size = reply.chunk_size if reply.chunk_size > 0 else max(len(reply.content), 1)
    blocks = _blocks(reply, number) or [{"type": "text", "text": ""}]
    for index, block in enumerate(blocks):
        opening: dict[str, Any]
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            text, delta_type, key = block["text"], "text_delta", "text"
        else:
            opening = {**block, "input": {}}
            text, delta_type, key = block["input"], "input_json_delta", "partial_json"
        events.append(_event("content_block_start", {"index": index, "content_block": opening}))
        for i in range(0, len(text), size):
            delta = {"type": delta_type, key: text[i : i + size]}
            events.append(_event("content_block_delta", {"index": index, "delta": delta}))
        events.append(_event("content_block_stop", {"index": index}))
    stop = {"stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None}
    events.append(_event("message_delta", {"delta": stop, "usage": usage}))
    events.append(_event("message_stop", {}))
    return events


def serve_messages(
    server: FakeOpenAIServer, handler: RequestHandler, record: RecordedRequest
) -> None:
    """Answer one ``POST /v1/messages`` from ``server``'s script."""
    reply, source = server.choose(record.body)
    record.reply, record.source = reply, source
    number = server.next_id()
    stream = isinstance(record.body, dict) and record.body.get("stream") is True
    try:
        if reply.delay > 0 and handler.pause(reply.delay, server.stopping):
            handler.close_connection = True
            return
        if reply.drop:
            handler.close_connection = True
            return
        if reply.raw_body is not None:
            handler.respond(reply.status, reply.raw_body.encode(), headers=reply.headers)
        elif reply.status != 200:
            message = reply.error or f"Fake error {reply.status}."
            body = error_body(reply.status, message, reply.error_type)
            handler.respond_json(reply.status, body, reply.headers)
        elif not stream:
            data = message_json(record, reply, number, server.models[0])
            handler.respond_json(200, data, reply.headers)
        else:
            _stream(server, handler, record, reply, number)
    except ClientGone:
        server.client_gone(handler, record)


def _stream(
    server: FakeOpenAIServer,
    handler: RequestHandler,
    record: RecordedRequest,
    reply: Reply,
    number: int,
) -> None:
    head = [
        "HTTP/1.1 200 OK",
        "Content-Type: text/event-stream; charset=utf-8",
        "Cache-Control: no-cache",
        "Transfer-Encoding: chunked",
        *(f"{name}: {value}" for name, value in reply.headers.items()),
    ]
    if handler.close_connection:
        head.append("Connection: close")
    events = stream_events(record, reply, number, server.models[0])
    opening, pieces, closing = events[:3], events[3:-2], events[-2:]
    # Headers and the message's opening in one send (TCP_NODELAY: no stall between them).
    handler.send_all(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + b"".join(opening))
    for index, piece in enumerate(pieces):
        if reply.cut_after is not None and index >= reply.cut_after:
            handler.close_connection = True  # no terminating chunk: the body is incomplete
            return
        if index and reply.chunk_delay > 0 and handler.pause(reply.chunk_delay, server.stopping):
            handler.close_connection = True
            return
        written_at = time.time()
        handler.send_all(piece)
        if index == 0:
            record.first_chunk_at = written_at
        record.chunks_sent += 1
    if reply.cut_after is not None:
        handler.close_connection = True
        return
    handler.send_all(b"".join(closing) + b"0\r\n\r\n")
