"""OpenAI's response shapes, as the loopback server writes them: chat completions (whole, or
streamed as SSE chunks with the tool calls in pieces), text completions (fill-in-the-middle),
the models list, ``usage`` and error bodies."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from .http import http_chunk
from .replies import RecordedRequest, Reply, fim_text

__all__ = [
    "StreamChunks",
    "completion_json",
    "error_json",
    "models_json",
    "prompt_chars",
    "stream_deltas",
    "text_completion_json",
    "tool_calls_json",
    "usage_json",
]

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def tool_calls_json(reply: Reply, first_id: int) -> list[dict[str, Any]]:
    """The reply's tool calls in OpenAI's message form (ids ``call_fake_<n>`` unless given)."""
    calls = []
    for offset, call in enumerate(reply.tool_calls or []):
        arguments = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_fake_{first_id + offset}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return calls


def usage_json(reply: Reply, prompt_chars: int) -> dict[str, int]:
    """The ``usage`` object of a reply: scripted, or four characters per token."""
    given = reply.usage or {}
    prompt = given.get("prompt_tokens", prompt_chars // 4)
    completion = given.get("completion_tokens", len(reply.content) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": given.get("total_tokens", prompt + completion),
    }


def error_json(
    status: int, message: str, *, code: str | None = None, kind: str | None = None
) -> dict[str, Any]:
    """An OpenAI error body (``type`` and ``code`` as OpenAI sends them for ``status``)."""
    default_kind, default_code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "", None)
    )
    return {
        "error": {
            "message": message,
            "type": kind or default_kind or "invalid_request_error",
            "param": None,
            "code": code or default_code,
        }
    }


def prompt_chars(record: RecordedRequest) -> int:
    """Characters of the request's messages (four make a token in the estimated ``usage``)."""
    return sum(len(str(m.get("content", ""))) for m in record.messages)


def stream_deltas(reply: Reply, ids: Iterator[int]) -> list[dict[str, Any]]:
    """The ``delta`` of each SSE chunk: the content in pieces, then each tool call as OpenAI
    streams it (id and name first, then the arguments in pieces, all by ``index``)."""
    size = reply.chunk_size if reply.chunk_size > 0 else max(len(reply.content), 1)
    text = reply.content
    deltas: list[dict[str, Any]] = [
        {"content": text[i : i + size]} for i in range(0, len(text), size)
    ]
    if not deltas and not reply.tool_calls:
        deltas.append({"content": ""})
    for index, call in enumerate(tool_calls_json(reply, next(ids))):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        head = {"index": index, "id": call["id"], "type": "function", "function": opening}
        deltas.append({"tool_calls": [head]})
        arguments = function["arguments"]
        for i in range(0, len(arguments), size):
            piece = {"arguments": arguments[i : i + size]}
            deltas.append({"tool_calls": [{"index": index, "function": piece}]})
    deltas[0] = {"role": "assistant", **deltas[0]}
    return deltas


class StreamChunks:
    """The SSE chunks of one streamed answer, each framed as an HTTP chunk."""

    def __init__(self, chunk_id: str, model: str, *, text_completion: bool = False) -> None:
        self.chunk_id, self.model, self.text_completion = chunk_id, model, text_completion
        self.created = int(time.time())

    def _frame(self, data: dict[str, Any]) -> bytes:
        return http_chunk(f"data: {json.dumps(data)}\n\n".encode())

    def event(self, delta: dict[str, Any], finish_reason: str | None) -> bytes:
        """One chunk: a chat ``delta``, or (``text_completion``) its text."""
        if self.text_completion:  # /v1/completions: choices[0].text instead of a delta
            return self._frame(
                {
                    "id": self.chunk_id.replace("chatcmpl", "cmpl"),
                    "object": "text_completion",
                    "created": self.created,
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "text": delta.get("content") or "",
                            "finish_reason": finish_reason,
                            "logprobs": None,
                        }
                    ],
                }
            )
        return self._frame(
            {
                "id": self.chunk_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
                ],
            }
        )

    def usage(self, usage: dict[str, int]) -> bytes:
        """OpenAI's last chunk when asked for usage: no choices, the usage of the answer."""
        return self._frame(
            {
                "id": self.chunk_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": usage,
            }
        )


def completion_json(
    record: RecordedRequest, reply: Reply, ids: Iterator[int], default_model: str
) -> dict[str, Any]:
    """A whole chat completion for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["content"] = reply.content or None
        message["tool_calls"] = tool_calls_json(reply, next(ids))
    return {
        "id": f"chatcmpl-fake-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": record.model or default_model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": usage_json(reply, prompt_chars(record)),
    }


def text_completion_json(
    record: RecordedRequest, reply: Reply, ids: Iterator[int], default_model: str
) -> dict[str, Any]:
    """A whole text completion (``/v1/completions``) for ``reply``."""
    return {
        "id": f"cmpl-fake-{next(ids)}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": record.model or default_model,
        "choices": [{"index": 0, "text": reply.content, "finish_reason": "stop", "logprobs": None}],
        "usage": {
            "prompt_tokens": len(fim_text(record.body)) // 4,
            "completion_tokens": len(reply.content) // 4,
            "total_tokens": (len(fim_text(record.body)) + len(reply.content)) // 4,
        },
    }


def models_json(models: tuple[str, ...]) -> dict[str, Any]:
    """``GET /v1/models``."""
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "chapyter-ext-fake"}
            for name in models
        ],
    }
