"""The model route (:mod:`.model_proxy`) for an endpoint that does not speak OpenAI's protocol:
the kernel's OpenAI request is translated, asked through the entry's backend
(:func:`chapyter_ext.llm.calls.astream_step`, with the server's key) and answered in OpenAI's
wire format, so ``%%ai`` and any OpenAI client in a kernel reach, say, an Anthropic endpoint.

``chat/completions``: ``messages``, ``tools`` (function schemas), ``max_tokens`` (or
``max_completion_tokens``), ``temperature`` and ``stop`` are taken; the answer is one
``chat.completion`` or (``stream``) ``chat.completion.chunk`` events ending in
``data: [DONE]``, tool calls as OpenAI's deltas, the usage in a last chunk when
``stream_options.include_usage`` asks for it. ``models``: the backend's list. Fill in the middle
(``completions``) is refused in one line. Errors are OpenAI's shape with the upstream status and
the backend's one line, redacted; an error after the stream began is an ``error`` event.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from typing import Any

import tornado.iostream

from ..llm.errors import RELAYED_HEADER, LLMError

__all__ = ["translate"]

#: The status a backend's error kind answers with when it carries none of its own.
_KIND_STATUS = {
    "no_key": 401,
    "auth": 401,
    "permission": 403,
    "not_found": 404,
    "bad_request": 400,
    "budget": 402,
    "rate_limit": 429,
    "timeout": 504,
}
#: OpenAI's error ``type`` for a status.
_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


async def translate(
    handler: Any, endpoint: Any, name: str, path: str, body: dict[str, Any] | None, app: Any
) -> None:
    """Answer ``path`` (``chat/completions``, ``completions`` or ``models``) for ``endpoint``,
    an entry of another protocol, in OpenAI's wire format."""
    handler.set_header(RELAYED_HEADER, endpoint.host)  # the kernel's errors name the endpoint
    try:
        if path == "models":
            await _models(handler, endpoint)
        elif path == "chat/completions":
            await _chat(handler, endpoint, body or {}, app)
        else:
            raise LLMError(
                "bad_request",
                f"Nothing was sent: the model {name!r} speaks the {endpoint.protocol} "
                "protocol, which has no fill-in-the-middle completion. Turn "
                "Chapyter.completion_fim off, or pick another model.",
            )
    except LLMError as err:
        if not handler._headers_written:
            status = err.status or _KIND_STATUS.get(err.kind, 502)
            message = " ".join(app.chat.redact(err.message).split())
            handler.refuse(status, message, _OPENAI_TYPES.get(status, "api_error"))
    except tornado.iostream.StreamClosedError:
        return  # the kernel went away; the upstream response was closed on the way out


async def _models(handler: Any, endpoint: Any) -> None:
    from ..llm.calls import alist_models

    models = await alist_models(endpoint)
    data = [{"id": m, "object": "model", "created": 0, "owned_by": endpoint.protocol}
            for m in models]  # fmt: skip
    handler.finish({"object": "list", "data": data})


def _request(endpoint: Any, body: dict[str, Any]) -> tuple[Any, list, list | None, dict | None]:
    """``(endpoint as asked, messages, tools, extra_body)`` for an OpenAI request body."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise LLMError("bad_request", "Nothing was sent: 'messages' must be a list of objects.")
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("function")]
    changes: dict[str, Any] = {}
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool):
        changes["max_tokens"] = limit
    if isinstance(body.get("temperature"), (int, float)):
        changes["temperature"] = float(body["temperature"])
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str)]
    extra = {"stop_sequences": stops} if stops else None
    return dataclasses.replace(endpoint, **changes), messages, tools or None, extra


async def _chat(handler: Any, endpoint: Any, body: dict[str, Any], app: Any) -> None:
    from ..llm.calls import astream_step

    endpoint, messages, tools, extra = _request(endpoint, body)
    streamed = bool(body.get("stream"))
    options = body.get("stream_options")
    with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    answer = _Answer(endpoint.model)
    steps = astream_step(endpoint, messages, tools, extra_body=extra)
    try:
        # The first piece decides the status: an upstream refusal comes before it.
        first = await steps.__anext__()
        if not streamed:
            text, done = [first.text], first
            while not done.done:
                done = await steps.__anext__()
                text.append(done.text)
            handler.finish(answer.completion("".join(text), done))
            await _count(handler, app, endpoint, done)
            return
        handler.set_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.set_header("Cache-Control", "no-cache")
        handler.set_header("X-Accel-Buffering", "no")
        stream = getattr(handler.request.connection, "stream", None)
        if stream is not None and hasattr(stream, "set_nodelay"):
            stream.set_nodelay(True)  # each chunk a write of its own (see model_proxy.relay)
        await _send(handler, answer.chunk({"role": "assistant", "content": ""}))
        delta = first
        try:
            while not delta.done:
                if delta.text:
                    await _send(handler, answer.chunk({"content": delta.text}))
                delta = await steps.__anext__()
        except LLMError as err:  # the stream began: OpenAI's clients read an error event
            message = " ".join(app.chat.redact(err.message).split())
            await _send(handler, {"error": {"message": message, "type": "api_error"}})
            handler.finish()
            return
        for chunk in answer.closing(delta, with_usage):
            await _send(handler, chunk)
        handler.write(b"data: [DONE]\n\n")
        handler.finish()
    finally:
        await steps.aclose()  # the kernel went away, or an error: the upstream closes now
    await _count(handler, app, endpoint, delta)


async def _send(handler: Any, event: dict[str, Any]) -> None:
    handler.write(b"data: " + json.dumps(event).encode() + b"\n\n")
    await handler.flush()


async def _count(handler: Any, app: Any, endpoint: Any, done: Any) -> None:
    if done.usage is not None:
        await app.count_kernel_usage(handler.kernel_id, endpoint.model, done.usage)


class _Answer:
    """One answer's OpenAI framing: its id, time and model, whole or as chunks."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model

    def _frame(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model,
                "choices": choices}  # fmt: skip

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return self._frame("chat.completion.chunk", [choice])

    def closing(self, done: Any, with_usage: bool) -> list[dict[str, Any]]:
        """The chunks after the prose: tool calls, finish reason, usage (if asked)."""
        self.model = done.model or self.model
        chunks = []
        if done.tool_calls:
            calls = [{"index": i, **_call(call)} for i, call in enumerate(done.tool_calls)]
            chunks.append(self.chunk({"tool_calls": calls}))
        chunks.append(self.chunk({}, _finish(done)))
        if with_usage:
            chunks.append({**self._frame("chat.completion.chunk", []), "usage": _usage(done)})
        return chunks

    def completion(self, text: str, done: Any) -> dict[str, Any]:
        """The whole answer (``stream`` false)."""
        self.model = done.model or self.model
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if done.tool_calls:
            message["tool_calls"] = [_call(call) for call in done.tool_calls]
        choice = {"index": 0, "message": message, "finish_reason": _finish(done)}
        return {**self._frame("chat.completion", [choice]), "usage": _usage(done)}


def _call(call: Any) -> dict[str, Any]:
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    return {"id": call.id, "type": "function", "function": function}


def _finish(done: Any) -> str:
    return done.finish_reason or ("tool_calls" if done.tool_calls else "stop")


def _usage(done: Any) -> dict[str, int] | None:
    usage = done.usage
    if usage is None:
        return None
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}  # fmt: skip
