"""Model calls that may call tools (OpenAI function calling), for the agent's steps.

:func:`astream_step` and :func:`complete_step` are :func:`~chapyter_ext.llm.astream` and
:func:`~chapyter_ext.llm.complete` with ``tools``: the prose streams as before, and the tool
calls, streamed as ``delta.tool_calls`` pieces keyed by ``index``, are assembled and their JSON
arguments decoded at the end. Same retry policy (``_wait_or_raise``) and one-line errors; an
endpoint that refuses ``tools`` raises an :class:`LLMError` with ``tools_rejected`` set, so the
caller can ask again without them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import (
    _CallbackError,
    _chat_params,
    _chunk_parts,
    _Progress,
    _wait_or_raise,
    _with_retries,
)
from .clients import _async_client, _sync_client
from .errors import LLMError, _bad_response, _check_request, _empty_error
from .usage import Usage, refuses_stream_options, stream_options

if TYPE_CHECKING:
    from .endpoint import Endpoint

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
class StepDelta:
    """One item of :func:`astream_step`: a piece of prose, or (``done``) the end of the reply
    with its assembled tool calls."""

    text: str = ""
    done: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    model: str = ""
    #: Tokens the endpoint reported for the reply (``done`` only; None if it reported none).
    usage: Usage | None = None


@dataclass
class StepReply:
    """A finished reply of :func:`complete_step`: prose and the tool calls it asked for."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    model: str = ""
    attempts: int = 1
    elapsed: float = 0.0
    #: Tokens the endpoint reported (None if it reported none).
    usage: Usage | None = None


# -- public calls ------------------------------------------------------------------------------


async def astream_step(
    endpoint: Endpoint,
    messages: list[dict],
    tools: list[dict] | None,
    *,
    extra_body: dict | None = None,
) -> AsyncGenerator[StepDelta, None]:
    """Stream one reply: ``StepDelta(text=...)`` pieces, then ``StepDelta(done=True, ...)``.

    Retries like :func:`~chapyter_ext.llm.astream` until prose reaches the caller (tool calls
    are only handed over at the end, so a stream cut among them is retried). Raises
    :class:`LLMError`; ``tools_rejected`` is set when the endpoint refused ``tools``.
    ``extra_body``: as for :func:`complete_step`.
    """
    _check_request(endpoint, messages)
    client = _async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = _Progress()
        calls = _ToolCallParts()
        model = ""
        usage: Usage | None = None
        stream = None
        params = {
            **_step_params(endpoint, messages, tools, extra_body),
            **stream_options(endpoint.base_url),
        }
        try:
            stream = await client.chat.completions.create(**params, stream=True)
            async for chunk in stream:
                progress.chunks += 1
                model = getattr(chunk, "model", None) or model
                usage = Usage.from_api(getattr(chunk, "usage", None)) or usage
                piece, finish_reason = _chunk_parts(chunk)
                progress.finish_reason = finish_reason or progress.finish_reason
                calls.add(chunk)
                if piece:
                    progress.text.append(piece)
                    yield StepDelta(text=piece)
        except Exception as exc:
            if refuses_stream_options(exc, endpoint.base_url, params):
                attempts -= 1  # not a failure of the endpoint: ask again, without the field
                continue
            _raise_if_tools_rejected(exc, endpoint, tools)
            await asyncio.sleep(_wait_or_raise(exc, endpoint, attempts, progress, what="chat"))
            continue
        finally:
            if stream is not None:
                # Runs on aclose() and cancellation too: the server sees the connection close.
                with contextlib.suppress(Exception):  # must not mask the error being raised
                    await stream.close()
        break
    if not progress.chunks:
        raise _bad_response(endpoint, "an empty stream")
    tool_calls = calls.assemble(endpoint)
    if not tool_calls and not "".join(progress.text).strip():
        raise _empty_error(endpoint, progress.finish_reason)
    yield StepDelta(
        done=True,
        tool_calls=tool_calls,
        finish_reason=progress.finish_reason,
        model=model or endpoint.model,
        usage=usage,
    )


def complete_step(
    endpoint: Endpoint,
    messages: list[dict],
    tools: list[dict] | None,
    on_token: Callable[[str], None] | None = None,
    *,
    stream: bool = True,
    extra_body: dict | None = None,
) -> StepReply:
    """Ask for one reply that may call ``tools``; with ``stream``, hand prose to ``on_token``.

    Retries like :func:`~chapyter_ext.llm.complete`. Raises :class:`LLMError` (with
    ``tools_rejected`` set when the endpoint refused ``tools``); an exception raised by
    ``on_token`` propagates unchanged. ``extra_body``: server-specific request fields.
    """
    started = time.monotonic()
    _check_request(endpoint, messages)
    client = _sync_client(endpoint)

    def attempt(progress: _Progress) -> _Answer:
        params = _step_params(endpoint, messages, tools, extra_body)
        if stream:
            params.update(stream_options(endpoint.base_url))
        while True:
            try:
                if stream:
                    return _stream_once(client, endpoint, params, on_token, progress)
                return _create_once(client, endpoint, params, on_token, progress)
            except _CallbackError:
                raise
            except Exception as exc:
                if refuses_stream_options(exc, endpoint.base_url, params):
                    params.pop("stream_options")  # ask again at once, without the field
                    continue
                _raise_if_tools_rejected(exc, endpoint, tools)
                raise

    (text, tool_calls, model, finish_reason, usage), attempts = _with_retries(
        endpoint, attempt, what="chat"
    )
    if not tool_calls and not text.strip():
        raise _empty_error(endpoint, finish_reason)
    return StepReply(
        text=text,
        tool_calls=tool_calls,
        finish_reason=finish_reason,
        model=model or endpoint.model,
        attempts=attempts,
        elapsed=time.monotonic() - started,
        usage=usage,
    )


# -- one attempt -------------------------------------------------------------------------------

# (text, tool calls, model, finish_reason, usage) of one answered attempt.
_Answer = tuple[str, list["ToolCall"], str, "str | None", "Usage | None"]


def _step_params(
    endpoint: Endpoint,
    messages: list[dict],
    tools: list[dict] | None,
    extra_body: dict | None = None,
) -> dict:
    params = _chat_params(endpoint, messages)
    if tools:
        params["tools"] = tools
    if extra_body:
        params["extra_body"] = extra_body
    return params


def _stream_once(
    client: Any,
    endpoint: Endpoint,
    params: dict,
    on_token: Callable[[str], None] | None,
    progress: _Progress,
) -> _Answer:
    model = ""
    usage: Usage | None = None
    calls = _ToolCallParts()
    stream = client.chat.completions.create(**params, stream=True)
    try:
        for chunk in stream:
            progress.chunks += 1
            model = getattr(chunk, "model", None) or model
            usage = Usage.from_api(getattr(chunk, "usage", None)) or usage
            piece, finish_reason = _chunk_parts(chunk)
            progress.finish_reason = finish_reason or progress.finish_reason
            calls.add(chunk)
            if not piece:
                continue
            progress.text.append(piece)
            if on_token is not None:
                try:
                    on_token(piece)
                except Exception as exc:
                    raise _CallbackError() from exc
    finally:
        with contextlib.suppress(Exception):  # must not mask the error being raised
            stream.close()
    if not progress.chunks:
        raise _bad_response(endpoint, "an empty stream")
    text = "".join(progress.text)
    return text, calls.assemble(endpoint), model, progress.finish_reason, usage


def _create_once(
    client: Any,
    endpoint: Endpoint,
    params: dict,
    on_token: Callable[[str], None] | None,
    progress: _Progress,
) -> _Answer:
    response = client.chat.completions.create(**params)
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise _bad_response(endpoint, "no choices")
    model = getattr(response, "model", "") or ""
    usage = Usage.from_api(getattr(response, "usage", None))
    if not choices:
        return "", [], model, None, usage
    message = choices[0].message
    text = message.content or ""
    if not isinstance(text, str):
        raise _bad_response(endpoint, "non-text content")
    calls = _ToolCallParts()
    for position, call in enumerate(getattr(message, "tool_calls", None) or []):
        calls.add_call(call, position)
    tool_calls = calls.assemble(endpoint)
    if text and on_token is not None:
        progress.text.append(text)
        try:
            on_token(text)
        except Exception as exc:
            raise _CallbackError() from exc
    return text, tool_calls, model, choices[0].finish_reason, usage


# -- tool calls --------------------------------------------------------------------------------


@dataclass
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolCallParts:
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


def _raise_if_tools_rejected(exc: Exception, endpoint: Endpoint, tools: list[dict] | None) -> None:
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
