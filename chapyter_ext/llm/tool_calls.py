"""Tool calls (OpenAI function calling) as they arrive: assembled from streamed pieces keyed by
``index``, their JSON arguments decoded; and an endpoint refusing ``tools`` told apart from
other failures (``LLMError.tools_rejected``), so the caller can ask again without them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .endpoint import Endpoint
from .errors import LLMError

__all__ = ["ToolCall", "ToolCallParts", "raise_if_tools_rejected"]

#: HTTP statuses with which servers refuse ``tools`` (llama.cpp without --jinja answers 500).
_REJECT_STATUSES = frozenset({400, 422, 500, 501})
_REJECT_WORDS = ("tool", "function")


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for: its id (echoed in the tool result), the tool's
    name and the decoded JSON arguments."""

    id: str
    name: str
    arguments: dict = field(default_factory=dict)


@dataclass
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallParts:
    """Tool calls as they arrive in pieces: keyed by ``index``; a new ``id`` at a used index
    starts a new call (some servers send every call whole at index 0)."""

    def __init__(self) -> None:
        self._calls: list[_CallParts] = []
        self._by_index: dict[int, _CallParts] = {}

    def add(self, chunk: Any) -> None:
        """Take the ``delta.tool_calls`` of a stream chunk (if any)."""
        choices = chunk.choices
        delta = choices[0].delta if choices else None
        for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
            self.add_call(call, position)

    def add_call(self, call: Any, position: int) -> None:
        """Take one (piece of a) tool call, streamed or whole."""
        index = getattr(call, "index", None)
        index = index if isinstance(index, int) else position
        call_id = getattr(call, "id", None) or ""
        parts = self._by_index.get(index)
        if parts is None or (call_id and parts.id and call_id != parts.id):
            parts = self._by_index[index] = _CallParts()
            self._calls.append(parts)
        parts.id = parts.id or call_id
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if name:
            parts.name = name if not parts.name or parts.name == name else parts.name + name
        arguments = getattr(function, "arguments", None)
        if isinstance(arguments, dict):  # some servers send the object itself, not its JSON
            arguments = json.dumps(arguments)
        if arguments:
            if not isinstance(arguments, str):
                raise TypeError("tool call arguments are not text")
            parts.arguments.append(arguments)

    def assemble(self, endpoint: Endpoint) -> list[ToolCall]:
        """The finished calls, arguments decoded; an unusable call raises ``bad_response``."""
        calls = []
        for number, parts in enumerate(self._calls, 1):
            if not parts.name:
                raise _bad_call(endpoint, f"tool call {number} has no function name")
            text = "".join(parts.arguments).strip()
            try:
                arguments = json.loads(text) if text else {}
            except ValueError:
                raise _bad_call(
                    endpoint, f"the tool call '{parts.name}' has arguments that are not valid JSON"
                ) from None
            if not isinstance(arguments, dict):
                raise _bad_call(
                    endpoint, f"the tool call '{parts.name}' has arguments that are not an object"
                )
            calls.append(
                ToolCall(id=parts.id or f"call_{number}", name=parts.name, arguments=arguments)
            )
        return calls


def _bad_call(endpoint: Endpoint, what: str) -> LLMError:
    return LLMError(
        "bad_response",
        f"Model '{endpoint.model}' at {endpoint.host} sent a broken function call: {what}. "
        "Try again, or set %config Chapyter.tool_calling = 'off'.",
    )


def raise_if_tools_rejected(exc: Exception, endpoint: Endpoint, tools: list[dict] | None) -> None:
    """Raise the ``tools_rejected`` error if ``exc`` is the endpoint refusing ``tools``."""
    status = getattr(exc, "status_code", None)
    if not tools or status not in _REJECT_STATUSES:
        return
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else body
    said = f"{message if isinstance(message, str) else ''} {getattr(exc, 'message', '')}".lower()
    if not any(word in said for word in _REJECT_WORDS):
        return
    err = LLMError(
        "bad_request",
        f"The endpoint {endpoint.host} does not accept tool calls for model "
        f"'{endpoint.model}' (HTTP {status}). Set %config Chapyter.tool_calling = 'off'.",
        status=status,
    )
    err.tools_rejected = True
    raise err from None
