"""The first backend: OpenAI's chat completions through the ``openai`` SDK, for any server that
speaks that API (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter, LiteLLM, ...).

OpenAI's message shape is also the internal one, so messages and tools go out as they are.
Pooled SDK clients come from :mod:`.clients`; the SDK is loaded off the event loop
(:func:`~.clients.sdk_loaded`) before the first async call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

from .clients import async_client, sdk_loaded, sync_client
from .endpoint import Endpoint
from .errors import bad_response, empty_error, to_llm_error
from .retry import CallbackError, Progress, wait_or_raise, with_retries
from .steps import StepDelta, StepReply
from .tool_calls import ToolCall, ToolCallParts, raise_if_tools_rejected
from .usage import Usage, refuses_stream_options, stream_options

__all__ = ["OpenAIBackend"]


class OpenAIBackend:
    """Chat completions, models and fill-in-the-middle through the ``openai`` SDK."""

    name = "openai"

    async def astream_step(
        self,
        endpoint: Endpoint,
        messages: list[dict],
        tools: list[dict] | None,
        *,
        extra_body: dict | None = None,
    ) -> AsyncGenerator[StepDelta, None]:
        """See :meth:`.backend.Backend.astream_step`."""
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
        self,
        endpoint: Endpoint,
        messages: list[dict],
        tools: list[dict] | None,
        on_token: Callable[[str], None] | None = None,
        *,
        stream: bool = True,
        extra_body: dict | None = None,
    ) -> StepReply:
        """See :meth:`.backend.Backend.complete_step`."""
        started = time.monotonic()
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

    def list_models(self, endpoint: Endpoint) -> list[str]:
        """See :meth:`.backend.Backend.list_models`."""
        client = sync_client(endpoint)

        def attempt(progress: Progress) -> list[str]:
            return _model_ids(client.models.list())

        return with_retries(endpoint, attempt, what="models")[0]

    async def alist_models(self, endpoint: Endpoint) -> list[str]:
        """See :meth:`.backend.Backend.alist_models`."""
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

    async def astream_fim(
        self, endpoint: Endpoint, prompt: str, suffix: str
    ) -> AsyncGenerator[str, None]:
        """Fill-in-the-middle through ``/v1/completions`` (see :func:`.calls.astream_fim`)."""
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
