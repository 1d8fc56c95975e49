"""The one call path: every request to an OpenAI-compatible endpoint goes through here.

:func:`astream_step` and :func:`complete_step` ask for one chat completion that may call tools
(the agent's steps): the prose streams, the tool calls (:mod:`.tool_calls`) are assembled and
handed over at the end. :func:`complete` and :func:`astream` are the same calls without tools
(``%%ai``, the chat, Fix); :func:`list_models`, :func:`alist_models` and :func:`astream_fim`
(fill-in-the-middle for inline completion) the other endpoints. One retry policy
(:mod:`.retry`), one-line typed errors (:mod:`.errors`), pooled SDK clients (:mod:`.clients`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from .clients import async_client, sdk_loaded, sync_client
from .endpoint import Completion, Endpoint
from .errors import bad_response, check_request, empty_error, to_llm_error
from .retry import CallbackError, Progress, wait_or_raise, with_retries
from .tool_calls import ToolCall, ToolCallParts, raise_if_tools_rejected
from .usage import Usage, refuses_stream_options, stream_options

__all__ = [
    "StepDelta",
    "StepReply",
    "alist_models",
    "astream",
    "astream_fim",
    "astream_step",
    "complete",
    "complete_step",
    "list_models",
]


# -- public calls ------------------------------------------------------------------------------


def complete(
    endpoint: Endpoint,
    messages: list[dict],
    *,
    on_token: Callable[[str], None] | None = None,
    stream: bool = True,
    extra_body: dict | None = None,
) -> Completion:
    """Ask for one chat completion; with ``stream``, hand each text piece to ``on_token``.

    Retries 429, 5xx and dropped connections until text has reached ``on_token``. Raises
    :class:`LLMError`; an exception raised by ``on_token`` itself propagates unchanged. The
    same call as :func:`complete_step` without tools. ``extra_body``: fields the server knows
    beyond OpenAI's (llama.cpp's ``grammar``), sent as they are.
    """
    reply = complete_step(endpoint, messages, None, on_token, stream=stream, extra_body=extra_body)
    return Completion(
        text=reply.text,
        model=reply.model or endpoint.model,
        attempts=reply.attempts,
        finish_reason=reply.finish_reason,
        elapsed=reply.elapsed,
        usage=reply.usage,
    )


def list_models(endpoint: Endpoint) -> list[str]:
    """Names of the models the endpoint offers, in its order. Raises :class:`LLMError`."""
    check_request(endpoint, [])
    client = sync_client(endpoint)

    def attempt(progress: Progress) -> list[str]:
        return _model_ids(client.models.list())

    return with_retries(endpoint, attempt, what="models")[0]


async def astream(
    endpoint: Endpoint,
    messages: list[dict],
    *,
    on_usage: Callable[[Usage], None] | None = None,
    extra_body: dict | None = None,
) -> AsyncGenerator[str, None]:
    """Stream a chat completion as text deltas (an async generator). Raises :class:`LLMError`.

    ``on_usage`` gets the tokens the endpoint reported, once the stream has ended (never if it
    reported none).

    Retries like :func:`complete` until the first delta is yielded. If the consumer stops early
    (``aclose()``, or its task is cancelled while waiting for a delta) the upstream HTTP response
    is closed at once; iterate inside ``contextlib.aclosing(astream(...))`` so that a ``break``
    closes it too. The same call as :func:`astream_step` without tools (``extra_body`` as for
    :func:`complete`).
    """
    steps = astream_step(endpoint, messages, None, extra_body=extra_body)
    try:
        async for delta in steps:
            if delta.text:
                yield delta.text
            elif delta.done and delta.usage is not None and on_usage is not None:
                on_usage(delta.usage)
    finally:
        # Closing the outer generator must close the inner one (and its HTTP response) now.
        await steps.aclose()


async def alist_models(endpoint: Endpoint) -> list[str]:
    """Async :func:`list_models`."""
    check_request(endpoint, [])
    await sdk_loaded()
    client = async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = Progress()
        try:
            return _model_ids(await client.models.list())
        except Exception as exc:
            await asyncio.sleep(wait_or_raise(exc, endpoint, attempts, progress, what="models"))


async def astream_fim(endpoint: Endpoint, prompt: str, suffix: str) -> AsyncGenerator[str, None]:
    """Fill-in-the-middle through ``/v1/completions`` (``prompt`` + ``suffix``), as text deltas.

    No retries (a late inline suggestion is useless). Closing the generator closes the HTTP
    response; every failure is an :class:`LLMError`.
    """
    check_request(endpoint, [])
    await sdk_loaded()
    client = async_client(endpoint)
    stream = None
    progress = Progress()
    try:
        stream = await client.completions.create(
            model=endpoint.model,
            prompt=prompt,
            suffix=suffix or None,
            max_tokens=endpoint.max_tokens,
            temperature=endpoint.temperature,
            stream=True,
        )
        async for chunk in stream:
            progress.chunks += 1
            choices = getattr(chunk, "choices", None) or []
            piece = getattr(choices[0], "text", "") if choices else ""
            if piece:
                progress.text.append(piece)
                yield piece
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as exc:
        raise to_llm_error(exc, endpoint, attempts=1, progress=progress, what="chat") from None
    finally:
        if stream is not None:
            with contextlib.suppress(Exception):  # must not mask the error being raised
                await stream.close()


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
    check_request(endpoint, messages)
    await sdk_loaded()  # off the event loop, if nothing loaded it yet
    client = async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = Progress()
        received = _StreamedChunks(progress)
        stream = None
        params = {
            **_step_params(endpoint, messages, tools, extra_body),
            **stream_options(endpoint.base_url),
        }
        try:
            stream = await client.chat.completions.create(**params, stream=True)
            async for chunk in stream:
                piece = received.take(chunk)
                if piece:
                    yield StepDelta(text=piece)
        except Exception as exc:
            if refuses_stream_options(exc, endpoint.base_url, params):
                attempts -= 1  # not a failure of the endpoint: ask again, without the field
                continue
            raise_if_tools_rejected(exc, endpoint, tools)
            await asyncio.sleep(wait_or_raise(exc, endpoint, attempts, progress, what="chat"))
            continue
        finally:
            if stream is not None:
                # Runs on aclose() and cancellation too: the server sees the connection close.
                with contextlib.suppress(Exception):  # must not mask the error being raised
                    await stream.close()
        break
    if not progress.chunks:
        raise bad_response(endpoint, "an empty stream")
    tool_calls = received.calls.assemble(endpoint)
    if not tool_calls and not "".join(progress.text).strip():
        raise empty_error(endpoint, progress.finish_reason)
    yield StepDelta(
        done=True,
        tool_calls=tool_calls,
        finish_reason=progress.finish_reason,
        model=received.model or endpoint.model,
        usage=received.usage,
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
    check_request(endpoint, messages)
    client = sync_client(endpoint)

    def attempt(progress: Progress) -> _Answer:
        params = _step_params(endpoint, messages, tools, extra_body)
        if stream:
            params.update(stream_options(endpoint.base_url))
        while True:
            try:
                if stream:
                    return _stream_once(client, endpoint, params, on_token, progress)
                return _create_once(client, endpoint, params, on_token, progress)
            except CallbackError:
                raise
            except Exception as exc:
                if refuses_stream_options(exc, endpoint.base_url, params):
                    params.pop("stream_options")  # ask again at once, without the field
                    continue
                raise_if_tools_rejected(exc, endpoint, tools)
                raise

    (text, tool_calls, model, finish_reason, usage), attempts = with_retries(
        endpoint, attempt, what="chat"
    )
    if not tool_calls and not text.strip():
        raise empty_error(endpoint, finish_reason)
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
    progress: Progress,
) -> _Answer:
    received = _StreamedChunks(progress)
    stream = client.chat.completions.create(**params, stream=True)
    try:
        for chunk in stream:
            piece = received.take(chunk)
            if piece and on_token is not None:
                try:
                    on_token(piece)
                except Exception as exc:
                    raise CallbackError() from exc
    finally:
        with contextlib.suppress(Exception):  # must not mask the error being raised
            stream.close()
    if not progress.chunks:
        raise bad_response(endpoint, "an empty stream")
    text = "".join(progress.text)
    calls = received.calls.assemble(endpoint)
    return text, calls, received.model, progress.finish_reason, received.usage


def _create_once(
    client: Any,
    endpoint: Endpoint,
    params: dict,
    on_token: Callable[[str], None] | None,
    progress: Progress,
) -> _Answer:
    response = client.chat.completions.create(**params)
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise bad_response(endpoint, "no choices")
    model = getattr(response, "model", "") or ""
    usage = Usage.from_api(getattr(response, "usage", None))
    if not choices:
        return "", [], model, None, usage
    message = choices[0].message
    text = message.content or ""
    if not isinstance(text, str):
        raise bad_response(endpoint, "non-text content")
    calls = ToolCallParts()
    for position, call in enumerate(getattr(message, "tool_calls", None) or []):
        calls.add_call(call, position)
    tool_calls = calls.assemble(endpoint)
    if text and on_token is not None:
        progress.text.append(text)
        try:
            on_token(text)
        except Exception as exc:
            raise CallbackError() from exc
    return text, tool_calls, model, choices[0].finish_reason, usage


def _chat_params(endpoint: Endpoint, messages: list[dict]) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "temperature": endpoint.temperature,
    }
    # OpenAI's newer models reject max_tokens; other servers mostly only know max_tokens.
    key = "max_completion_tokens" if endpoint.is_openai else "max_tokens"
    params[key] = endpoint.max_tokens
    return params


class _StreamedChunks:
    """What the chunks of one streamed attempt said: the model, the usage and the tool calls;
    the prose and the finish reason go to ``progress``, which the retry policy reads."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.model = ""
        self.usage: Usage | None = None
        self.calls = ToolCallParts()

    def take(self, chunk: Any) -> str:
        """Record ``chunk``; its prose ("" if none), already added to ``progress.text``."""
        progress = self.progress
        progress.chunks += 1
        self.model = getattr(chunk, "model", None) or self.model
        self.usage = Usage.from_api(getattr(chunk, "usage", None)) or self.usage
        piece, finish_reason = _chunk_parts(chunk)
        progress.finish_reason = finish_reason or progress.finish_reason
        self.calls.add(chunk)
        if piece:
            progress.text.append(piece)
        return piece


def _chunk_parts(chunk: Any) -> tuple[str, str | None]:
    """(text, finish_reason) of a stream chunk; chunks without choices (usage) give ('', None)."""
    choices = chunk.choices
    if not choices:
        return "", None
    choice = choices[0]
    delta = choice.delta
    piece = (delta.content if delta is not None else None) or ""
    if not isinstance(piece, str):
        raise TypeError("delta.content is not text")
    return piece, choice.finish_reason


def _model_ids(page: Any) -> list[str]:
    ids = [getattr(model, "id", None) for model in page.data]
    names = [name for name in ids if isinstance(name, str)]
    if len(names) != len(ids):
        raise TypeError("model without an id")
    return names
