"""The second backend: Anthropic's Messages API (``POST /v1/messages``) through the official
``anthropic`` SDK (``pip install 'chapyter-ext[anthropic]'``), for endpoints configured with
``"protocol": "anthropic"``.

OpenAI-shaped messages go out as Anthropic's (:mod:`.anthropic_messages`); the streamed events
come back as the internal shape: text deltas, tool calls, the finish reason in OpenAI's words
and :class:`~.usage.Usage`. The key is the endpoint's (its ``api_key``, else
``ANTHROPIC_API_KEY``, read when the endpoint was built); the SDK's own retries are off, ours
(:mod:`.retry`) apply. No fill-in-the-middle (the API has none).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable
from types import SimpleNamespace
from typing import Any

from .anthropic_messages import FINISH_REASONS, request_params
from .endpoint import Endpoint
from .errors import LLMError, empty_error, status_error, to_llm_error
from .retry import CallbackError, Progress, wait_or_raise, with_retries
from .steps import StepDelta, StepReply
from .tool_calls import ToolCallParts
from .usage import Usage

__all__ = ["AnthropicBackend"]

_PLACEHOLDER_KEY = "no-key"  # a local server ignores the key, but the SDK insists on one
_KEY_HINT = "Set ANTHROPIC_API_KEY or the endpoint's api_key in ChapyterExtApp.models."


class AnthropicBackend:
    """Chat through the Messages API, streamed or whole, with tools; the models list."""

    name = "anthropic"
    #: Where an endpoint without a ``base_url`` goes.
    default_base_url = "https://api.anthropic.com"
    #: Where an endpoint without an ``api_key`` takes its key from.
    key_env = "ANTHROPIC_API_KEY"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sync: dict[tuple, Any] = {}
        self._async: dict[tuple, tuple[weakref.ref, Any]] = {}

    # -- calls -------------------------------------------------------------------------------

    async def astream_step(
        self,
        endpoint: Endpoint,
        messages: list[dict],
        tools: list[dict] | None,
        *,
        extra_body: dict | None = None,
    ) -> AsyncGenerator[StepDelta, None]:
        """See :meth:`.backend.Backend.astream_step`."""
        client = await self._async_client(endpoint)
        params = request_params(endpoint, messages, tools, extra_body)
        attempts = 0
        while True:
            attempts += 1
            progress = Progress()
            received = _Events(progress)
            stream = None
            try:
                stream = await client.messages.create(**params, stream=True)
                async for event in stream:
                    piece = received.take(event)
                    if piece:
                        yield StepDelta(text=piece)
            except Exception as exc:
                err = _llm_error(exc, endpoint, attempts, progress)
                await asyncio.sleep(wait_or_raise(err, endpoint, attempts, progress))
                continue
            finally:
                if stream is not None:
                    with contextlib.suppress(Exception):  # must not mask the error being raised
                        await stream.close()
            break
        yield received.finish(endpoint)

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
        client = self._sync_client(endpoint)
        params = request_params(endpoint, messages, tools, extra_body)
        tries = [0]

        def attempt(progress: Progress) -> tuple[StepDelta, str]:
            tries[0] += 1
            received = _Events(progress)
            try:
                if not stream:
                    received.take_message(client.messages.create(**params))
                else:
                    with client.messages.create(**params, stream=True) as events:
                        for event in events:
                            piece = received.take(event)
                            if piece and on_token is not None:
                                try:
                                    on_token(piece)
                                except Exception as exc:
                                    raise CallbackError() from exc
            except CallbackError:
                raise
            except Exception as exc:
                raise _llm_error(exc, endpoint, tries[0], progress) from None
            if not stream and progress.text and on_token is not None:
                try:
                    on_token("".join(progress.text))
                except Exception as exc:
                    raise CallbackError() from exc
            return received.finish(endpoint), "".join(progress.text)

        (done, text), attempts = with_retries(endpoint, attempt, what="chat")
        return StepReply(
            text=text,
            tool_calls=done.tool_calls,
            finish_reason=done.finish_reason,
            model=done.model,
            attempts=attempts,
            elapsed=time.monotonic() - started,
            usage=done.usage,
        )

    def list_models(self, endpoint: Endpoint) -> list[str]:
        """See :meth:`.backend.Backend.list_models`."""
        client = self._sync_client(endpoint)

        def attempt(progress: Progress) -> list[str]:
            try:
                return [model.id for model in client.models.list()]
            except Exception as exc:
                raise _llm_error(exc, endpoint, 1, progress, what="models") from None

        return with_retries(endpoint, attempt, what="models")[0]

    async def alist_models(self, endpoint: Endpoint) -> list[str]:
        """See :meth:`.backend.Backend.alist_models`."""
        client = await self._async_client(endpoint)
        attempts = 0
        while True:
            attempts += 1
            progress = Progress()
            try:
                return [model.id async for model in client.models.list()]
            except Exception as exc:
                err = _llm_error(exc, endpoint, attempts, progress, what="models")
                await asyncio.sleep(wait_or_raise(err, endpoint, attempts, progress))

    # -- clients -----------------------------------------------------------------------------

    def _sync_client(self, endpoint: Endpoint) -> Any:
        kwargs, key = _client_kwargs(endpoint), _client_key(endpoint)
        sdk = _sdk()
        with self._lock:
            client = self._sync.get(key)
            if client is None:
                client = self._sync[key] = sdk.Anthropic(**kwargs)
        return client

    async def _async_client(self, endpoint: Endpoint) -> Any:
        # Async connections belong to one event loop; the SDK loads off it (~0.3 s).
        kwargs = _client_kwargs(endpoint)
        loop = asyncio.get_running_loop()
        key = (*_client_key(endpoint), id(loop))
        with self._lock:
            entry = self._async.get(key)
            if entry is not None and entry[0]() is loop:
                return entry[1]
        sdk = await asyncio.to_thread(_sdk)
        with self._lock:
            client = sdk.AsyncAnthropic(**kwargs)
            self._async[key] = (weakref.ref(loop), client)
        return client


class _Events:
    """What the events of one streamed attempt said (or one whole message): prose, tool calls,
    finish reason, model and usage; the prose and finish reason go to ``progress``."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.model = ""
        self.input_tokens = 0
        self.output_tokens = 0
        self.calls = ToolCallParts()
        self.ended = False

    def take(self, event: Any) -> str:
        """Record one stream event; its prose ("" if none)."""
        self.progress.chunks += 1
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self.model = getattr(event.message, "model", "") or self.model
            self._usage(getattr(event.message, "usage", None))
        elif kind == "content_block_start":
            block = event.content_block
            if getattr(block, "type", "") == "tool_use":
                opening = SimpleNamespace(name=block.name, arguments=None)
                call = SimpleNamespace(index=event.index, id=block.id, function=opening)
                self.calls.add_call(call, event.index)
            elif getattr(block, "type", "") == "text" and getattr(block, "text", ""):
                return self._text(block.text)
        elif kind == "content_block_delta":
            delta = event.delta
            if getattr(delta, "type", "") == "text_delta":
                return self._text(delta.text)
            if getattr(delta, "type", "") == "input_json_delta" and delta.partial_json:
                piece = SimpleNamespace(name=None, arguments=delta.partial_json)
                self.calls.add_call(SimpleNamespace(index=event.index, function=piece), 0)
        elif kind == "message_delta":
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                self.progress.finish_reason = FINISH_REASONS.get(reason, reason)
            self._usage(getattr(event, "usage", None))
        elif kind == "message_stop":
            self.ended = True
        return ""

    def take_message(self, message: Any) -> None:
        """Record a whole (not streamed) message."""
        self.progress.chunks += 1
        self.model = getattr(message, "model", "") or ""
        self._usage(getattr(message, "usage", None))
        for position, block in enumerate(getattr(message, "content", None) or []):
            if block.type == "text":
                self._text(block.text)
            elif block.type == "tool_use":
                function = SimpleNamespace(name=block.name, arguments=block.input)
                self.calls.add_call(SimpleNamespace(id=block.id, function=function), position)
        reason = getattr(message, "stop_reason", None)
        self.progress.finish_reason = FINISH_REASONS.get(reason, reason) if reason else None
        self.ended = True

    def finish(self, endpoint: Endpoint) -> StepDelta:
        """The end of the reply, or the error of a reply that is unusable."""
        if not self.progress.chunks or not self.ended:
            raise _bad_response(endpoint, "a stream without its message_stop")
        tool_calls = self.calls.assemble(endpoint)
        if not tool_calls and not "".join(self.progress.text).strip():
            raise empty_error(endpoint, self.progress.finish_reason)
        prompt, completion = self.input_tokens, self.output_tokens
        usage = Usage(prompt, completion, prompt + completion) if prompt or completion else None
        return StepDelta(
            done=True,
            tool_calls=tool_calls,
            finish_reason=self.progress.finish_reason,
            model=self.model or endpoint.model,
            usage=usage,
        )

    def _text(self, piece: str) -> str:
        if piece:
            self.progress.text.append(piece)
        return piece

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return

        def read(name: str) -> int:
            value = getattr(usage, name, None)
            return value if isinstance(value, int) and value >= 0 else 0

        # Cached prompt tokens count as prompt tokens, as OpenAI counts them.
        prompt = sum(read(n) for n in ("input_tokens", "cache_creation_input_tokens",
                                       "cache_read_input_tokens"))  # fmt: skip
        self.input_tokens = prompt or self.input_tokens
        self.output_tokens = read("output_tokens") or self.output_tokens  # cumulative


def _sdk() -> Any:
    try:
        return importlib.import_module("anthropic")
    except ImportError:
        raise LLMError(
            "bad_request",
            "Nothing was sent: the anthropic backend needs the anthropic package. "
            "Install it: pip install 'chapyter-ext[anthropic]'.",
        ) from None


def _bad_response(endpoint: Endpoint, what: str) -> LLMError:
    return LLMError(
        "bad_response",
        f"The endpoint {endpoint.host} sent {what} instead of an Anthropic Messages response. "
        "Check the endpoint's base_url and its protocol (anthropic) in ChapyterExtApp.models.",
    )


def _base_url(endpoint: Endpoint) -> str:
    # The SDK adds /v1/messages itself; accept a URL written the OpenAI way, with /v1.
    url = endpoint.base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _client_key(endpoint: Endpoint) -> tuple:
    return (endpoint.base_url, endpoint.api_key, endpoint.timeout, endpoint.extra_headers)


def _client_kwargs(endpoint: Endpoint) -> dict[str, Any]:
    if not endpoint.api_key and endpoint.host.endswith("anthropic.com"):
        raise LLMError("no_key", f"No API key for {endpoint.host}. {_KEY_HINT}")
    return {
        "api_key": endpoint.api_key or _PLACEHOLDER_KEY,
        "base_url": _base_url(endpoint),  # explicit, or the SDK would read ANTHROPIC_BASE_URL
        "timeout": endpoint.timeout,
        "max_retries": 0,
        "default_headers": dict(endpoint.extra_headers),
    }


def _llm_error(
    exc: BaseException, endpoint: Endpoint, attempts: int, progress: Progress, what: str = "chat"
) -> LLMError:
    """The SDK's exception as the same one-line :class:`LLMError` an OpenAI endpoint gives."""
    if isinstance(exc, LLMError):
        return exc
    sdk = _sdk()

    def common(plain: BaseException) -> LLMError:
        return to_llm_error(plain, endpoint, attempts=attempts, progress=progress, what=what)

    if isinstance(exc, sdk.APITimeoutError):
        return common(TimeoutError())
    if isinstance(exc, sdk.APIConnectionError):
        return common(ConnectionError())
    if isinstance(exc, sdk.APIResponseValidationError):
        return _bad_response(endpoint, "a body that does not fit the API")
    if isinstance(exc, sdk.APIStatusError):
        body = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else exc.body
        shaped = SimpleNamespace(body=body, response=exc.response)
        if exc.status_code < 400:  # an error event inside a 200 stream
            err = status_error(shaped, 500, endpoint, attempts=attempts, what=what)
            return LLMError("server", err.message.replace("failed with HTTP 500", "failed"))
        err = status_error(shaped, exc.status_code, endpoint, attempts=attempts, what=what)
        if err.kind == "auth":
            err = LLMError(
                "auth",
                f"The endpoint {endpoint.host} rejected the API key (HTTP 401). {_KEY_HINT}",
                status=401,
            )
        return err
    err = common(exc)
    return _bad_response(endpoint, "a broken body") if err.kind == "bad_response" else err
