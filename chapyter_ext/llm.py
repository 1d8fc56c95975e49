"""The OpenAI-compatible client: sync and async, streaming, retries and one-line typed errors.

Works with any server that speaks OpenAI's chat completions API (OpenAI, Ollama, vLLM, LM Studio,
llama.cpp, OpenRouter, ...). The ``openai`` SDK is imported on first use, not on import, so that
``%load_ext chapyter_ext`` stays fast. The SDK's own retries are off (``max_retries=0``): we
retry ourselves so that we know how many attempts a call took and never retry once text has
reached the caller. Every failure leaves this module as an :class:`LLMError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .config import Chapyter

__all__ = [
    "ERROR_KINDS",
    "Completion",
    "Endpoint",
    "LLMError",
    "aclose_clients",
    "alist_models",
    "astream",
    "close_clients",
    "complete",
    "list_models",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Every ``LLMError.kind``, for callers that map kinds to UI (icons, hints).
ERROR_KINDS = frozenset(
    {
        "no_key",
        "auth",
        "permission",
        "not_found",
        "bad_request",
        "rate_limit",
        "server",
        "connection",
        "timeout",
        "stream_cut",
        "bad_response",
        "empty",
    }
)
_RETRYABLE_KINDS = frozenset({"rate_limit", "server", "connection", "stream_cut"})
_BACKOFF_BASE = 0.5  # seconds before the first retry when the server gives no Retry-After
_MAX_RETRY_WAIT = 30.0  # cap on a server's Retry-After: longer than this feels like a hang
_PLACEHOLDER_KEY = "no-key"  # local servers ignore the key, but the SDK insists on one
_CLIENT_CACHE_SIZE = 8
_DETAIL_CHARS = 160
_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")


class LLMError(Exception):
    """A failed call to the model, as one line: what went wrong and what to do next."""

    kind: str
    status: int | None

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        message = " ".join(message.split())  # one line, whatever went in
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.message = message
        self._retry_after: float | None = None
        self._retryable = kind in _RETRYABLE_KINDS

    def __repr__(self) -> str:
        return f"LLMError({self.kind!r}, {self.message!r}, status={self.status!r})"


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask: an OpenAI-compatible base URL, a key and sampling settings."""

    base_url: str
    api_key: str = field(default="", repr=False)
    model: str = "gpt-4o-mini"
    temperature: float = 0.2
    max_tokens: int = 2048
    timeout: float = 60.0
    max_retries: int = 2
    extra_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @classmethod
    def from_settings(cls, settings: Chapyter, *, model: str | None = None) -> Endpoint:
        """The endpoint described by a ``Chapyter`` settings object (``model`` overrides)."""
        return cls(
            base_url=settings.effective_base_url,
            api_key=settings.api_key,
            model=model or settings.model,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            extra_headers=tuple(sorted(settings.extra_headers.items())),
        )

    @property
    def host(self) -> str:
        """Host (and port) of the base URL: safe to show, unlike userinfo or the key."""
        parts = urlsplit(self.base_url)
        if not parts.hostname:
            return "?"
        try:
            port = parts.port
        except ValueError:
            port = None
        name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # IPv6
        return name + (f":{port}" if port else "")

    @property
    def is_openai(self) -> bool:
        """True for OpenAI's own API, which always needs a key."""
        hostname = urlsplit(self.base_url).hostname or ""
        return hostname == "api.openai.com" or hostname.endswith(".api.openai.com")


@dataclass
class Completion:
    """A finished answer."""

    text: str
    model: str
    attempts: int
    finish_reason: str | None
    elapsed: float


# -- public calls ------------------------------------------------------------------------------


def complete(
    endpoint: Endpoint,
    messages: list[dict],
    *,
    on_token: Callable[[str], None] | None = None,
    stream: bool = True,
) -> Completion:
    """Ask for one chat completion; with ``stream``, hand each text piece to ``on_token``.

    Retries 429, 5xx and dropped connections until text has reached ``on_token``. Raises
    :class:`LLMError`; an exception raised by ``on_token`` itself propagates unchanged.
    """
    started = time.monotonic()
    client = _sync_client(endpoint)
    once = _stream_once if stream else _create_once

    def attempt(progress: _Progress) -> tuple[str, str, str | None]:
        return once(client, endpoint, messages, on_token, progress)

    (text, model, finish_reason), attempts = _with_retries(endpoint, attempt, what="chat")
    if not text.strip():
        raise _empty_error(endpoint, finish_reason)
    return Completion(
        text=text,
        model=model or endpoint.model,
        attempts=attempts,
        finish_reason=finish_reason,
        elapsed=time.monotonic() - started,
    )


def list_models(endpoint: Endpoint) -> list[str]:
    """Names of the models the endpoint offers, in its order. Raises :class:`LLMError`."""
    client = _sync_client(endpoint)

    def attempt(progress: _Progress) -> list[str]:
        return _model_ids(client.models.list())

    return _with_retries(endpoint, attempt, what="models")[0]


async def astream(endpoint: Endpoint, messages: list[dict]) -> AsyncIterator[str]:
    """Stream a chat completion as text deltas (an async generator). Raises :class:`LLMError`.

    Retries like :func:`complete` until the first delta is yielded. If the consumer stops early
    (``aclose()``, or its task is cancelled while waiting for a delta) the upstream HTTP response
    is closed at once; iterate inside ``contextlib.aclosing(astream(...))`` so that a ``break``
    closes it too.
    """
    client = _async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = _Progress()
        stream = None
        try:
            stream = await client.chat.completions.create(
                **_chat_params(endpoint, messages), stream=True
            )
            async for chunk in stream:
                progress.chunks += 1
                piece, finish_reason = _chunk_parts(chunk)
                progress.finish_reason = finish_reason or progress.finish_reason
                if piece:
                    progress.text.append(piece)
                    yield piece
        except Exception as exc:
            err = _to_llm_error(exc, endpoint, attempts=attempts, progress=progress, what="chat")
            wait = _retry_wait(err, endpoint, attempts, progress)
            if wait is None:
                raise err from None
            log.debug("retrying %s in %.2f s (%s)", endpoint.host, wait, err.kind)
            await asyncio.sleep(wait)
            continue
        finally:
            if stream is not None:
                # Runs on aclose() and cancellation too: the server sees the connection close.
                with contextlib.suppress(Exception):  # must not mask the error being raised
                    await stream.close()
        break
    if not progress.chunks:
        raise _bad_response(endpoint, "an empty stream")
    if not "".join(progress.text).strip():
        raise _empty_error(endpoint, progress.finish_reason)


async def alist_models(endpoint: Endpoint) -> list[str]:
    """Async :func:`list_models`."""
    client = _async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = _Progress()
        try:
            return _model_ids(await client.models.list())
        except Exception as exc:
            err = _to_llm_error(exc, endpoint, attempts=attempts, progress=progress, what="models")
            wait = _retry_wait(err, endpoint, attempts, progress)
            if wait is None:
                raise err from None
            await asyncio.sleep(wait)


def close_clients() -> None:
    """Close the pooled connections of sync calls; the next call opens new ones."""
    with _cache_lock:
        _sync_clients.clear()
        http = _sync_http[:]
        _sync_http.clear()
    for client in http:
        if client is not None:
            client.close()


async def aclose_clients() -> None:
    """Close the pooled connections of async calls made on the running event loop."""
    loop = asyncio.get_running_loop()
    with _cache_lock:
        for key in [k for k, (ref, _) in _async_clients.items() if ref() is loop]:
            del _async_clients[key]
        http = _async_http.pop(id(loop), None)
    if http is not None and http[0]() is loop and http[1] is not None:
        await http[1].aclose()


# -- one attempt ---------------------------------------------------------------------------


@dataclass
class _Progress:
    """What one attempt got before it ended: decides whether a retry is still safe."""

    chunks: int = 0
    text: list[str] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def delivered(self) -> bool:
        return bool(self.text)


class _CallbackError(Exception):
    """Carries an exception raised by the caller's on_token past our error mapping."""


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


def _stream_once(
    client: Any,
    endpoint: Endpoint,
    messages: list[dict],
    on_token: Callable[[str], None] | None,
    progress: _Progress,
) -> tuple[str, str, str | None]:
    model = ""
    stream = client.chat.completions.create(**_chat_params(endpoint, messages), stream=True)
    try:
        for chunk in stream:
            progress.chunks += 1
            model = getattr(chunk, "model", None) or model
            piece, finish_reason = _chunk_parts(chunk)
            progress.finish_reason = finish_reason or progress.finish_reason
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
    return "".join(progress.text), model, progress.finish_reason


def _create_once(
    client: Any,
    endpoint: Endpoint,
    messages: list[dict],
    on_token: Callable[[str], None] | None,
    progress: _Progress,
) -> tuple[str, str, str | None]:
    response = client.chat.completions.create(**_chat_params(endpoint, messages))
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise _bad_response(endpoint, "no choices")
    if not choices:
        return "", getattr(response, "model", "") or "", None
    message = choices[0].message
    text = message.content or ""
    if not isinstance(text, str):
        raise _bad_response(endpoint, "non-text content")
    if text and on_token is not None:
        progress.text.append(text)
        try:
            on_token(text)
        except Exception as exc:
            raise _CallbackError() from exc
    return text, getattr(response, "model", "") or "", choices[0].finish_reason


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
    if not all(isinstance(name, str) for name in ids):
        raise TypeError("model without an id")
    return ids


def _with_retries(
    endpoint: Endpoint, attempt: Callable[[_Progress], T], *, what: str
) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds or fails for good; returns (result, attempts)."""
    attempts = 0
    while True:
        attempts += 1
        progress = _Progress()
        try:
            return attempt(progress), attempts
        except _CallbackError as wrapped:
            original = wrapped.__cause__  # the caller's own bug: not ours to relabel
            raise original from original.__cause__
        except Exception as exc:
            err = _to_llm_error(exc, endpoint, attempts=attempts, progress=progress, what=what)
            wait = _retry_wait(err, endpoint, attempts, progress)
            if wait is None:
                raise err from None
            log.debug("retrying %s in %.2f s (%s)", endpoint.host, wait, err.kind)
            time.sleep(wait)


def _retry_wait(
    err: LLMError, endpoint: Endpoint, attempts: int, progress: _Progress
) -> float | None:
    """Seconds to wait before the next attempt, or None if this error is final."""
    if not err._retryable or progress.delivered or attempts > endpoint.max_retries:
        return None
    if err._retry_after is not None:
        return min(max(err._retry_after, 0.0), _MAX_RETRY_WAIT)
    return min(_BACKOFF_BASE * 2 ** (attempts - 1), _MAX_RETRY_WAIT)


# -- clients -----------------------------------------------------------------------------------

# SDK clients are cheap once they share an HTTP client: creating one loads the CA bundle
# (~90 ms). So one HTTP client (connection pool) serves every endpoint, one per event loop for
# async, and the SDK clients on top are cached per endpoint.
_cache_lock = threading.Lock()
_sync_clients: OrderedDict[tuple, Any] = OrderedDict()
_sync_http: list[Any] = []  # [httpx2.Client] once made
_async_clients: OrderedDict[tuple, tuple[weakref.ref, Any]] = OrderedDict()
_async_http: dict[int, tuple[weakref.ref, Any]] = {}


def _client_key(endpoint: Endpoint) -> tuple:
    return (endpoint.base_url, endpoint.api_key, endpoint.timeout, endpoint.extra_headers)


def _client_kwargs(endpoint: Endpoint) -> dict[str, Any]:
    if not endpoint.api_key and endpoint.is_openai:
        raise LLMError(
            "no_key",
            f"No API key for {endpoint.host}. Set OPENAI_API_KEY or %config Chapyter.api_key "
            "(or point %config Chapyter.base_url at a local server, which needs none).",
        )
    return {
        "api_key": endpoint.api_key or _PLACEHOLDER_KEY,
        "base_url": endpoint.base_url,  # explicit, or the SDK would read OPENAI_BASE_URL itself
        "timeout": endpoint.timeout,  # connect, and each read: i.e. gaps between stream chunks
        "max_retries": 0,
        "default_headers": dict(endpoint.extra_headers),
    }


def _http_client(openai: Any, *, asynchronous: bool) -> Any:
    """An HTTP client with the SDK's own defaults, or None to let the SDK make its own."""
    names = (
        ("DefaultAsyncHttpx2Client", "DefaultAsyncHttpxClient")
        if asynchronous
        else ("DefaultHttpx2Client", "DefaultHttpxClient")
    )
    for name in names:  # the SDK renamed these across versions
        factory = getattr(openai, name, None)
        if factory is not None:
            return factory()
    return None


def _sync_client(endpoint: Endpoint) -> Any:
    kwargs = _client_kwargs(endpoint)
    key = _client_key(endpoint)
    with _cache_lock:
        client = _sync_clients.get(key)
        if client is not None:
            _sync_clients.move_to_end(key)
            return client
    import openai

    with _cache_lock:
        if not _sync_http or getattr(_sync_http[0], "is_closed", False):
            _sync_http[:] = [_http_client(openai, asynchronous=False)]
        client = openai.OpenAI(**kwargs, http_client=_sync_http[0])
        _sync_clients[key] = client
        while len(_sync_clients) > _CLIENT_CACHE_SIZE:
            _sync_clients.popitem(last=False)  # the shared HTTP client stays open
    return client


def _async_client(endpoint: Endpoint) -> Any:
    # Async connections belong to one event loop: a client made on another loop is useless here.
    kwargs = _client_kwargs(endpoint)
    loop = asyncio.get_running_loop()
    key = (*_client_key(endpoint), id(loop))
    with _cache_lock:
        entry = _async_clients.get(key)
        if entry is not None and entry[0]() is loop:
            _async_clients.move_to_end(key)
            return entry[1]
    import openai

    with _cache_lock:
        for stale in [k for k, (ref, _) in _async_http.items() if _loop_gone(ref())]:
            del _async_http[stale]  # its loop is closed: nothing left to close it with
        http = _async_http.get(id(loop))
        if http is None or http[0]() is not loop or getattr(http[1], "is_closed", False):
            http = (weakref.ref(loop), _http_client(openai, asynchronous=True))
            _async_http[id(loop)] = http
        client = openai.AsyncOpenAI(**kwargs, http_client=http[1])
        _async_clients[key] = (weakref.ref(loop), client)
        while len(_async_clients) > _CLIENT_CACHE_SIZE:
            _async_clients.popitem(last=False)
    return client


def _loop_gone(loop: asyncio.AbstractEventLoop | None) -> bool:
    return loop is None or loop.is_closed()


# -- errors ------------------------------------------------------------------------------------


def _to_llm_error(
    exc: BaseException, endpoint: Endpoint, *, attempts: int, progress: _Progress, what: str
) -> LLMError:
    """Classify any failure of one attempt. The SDK's classes vary across versions, and a broken
    body can surface from httpx2, json, pydantic or elsewhere, so this is deliberately broad."""
    if isinstance(exc, LLMError):
        return exc
    log.debug("LLM call to %s failed: %s", endpoint.host, type(exc).__name__)
    import openai

    host = endpoint.host
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APIStatusError) and isinstance(status, int):
        err = _status_error(exc, status, endpoint, tries=tries, what=what)
        err._retry_after = _retry_after(exc)
        return err
    if isinstance(exc, openai.APITimeoutError) or _is_timeout(exc):
        if progress.chunks:
            return LLMError(
                "timeout",
                f"The endpoint {host} went silent mid-answer for more than {endpoint.timeout:g} s. "
                "Try again, or raise %config Chapyter.timeout.",
            )
        return LLMError(
            "timeout",
            f"No answer from {host} within {endpoint.timeout:g} s. "
            "Try again, or raise %config Chapyter.timeout.",
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return _bad_response(endpoint, "a body that does not fit the API")
    if isinstance(exc, openai.APIConnectionError) or _is_connection_error(exc):
        if progress.chunks:
            got = f" after {sum(map(len, progress.text))} characters" if progress.text else ""
            return LLMError(
                "stream_cut",
                f"The connection to {host} dropped mid-answer{got}{tries}. Run the request again.",
            )
        return LLMError(
            "connection",
            f"Could not reach {host}{tries}. Check that the server is running and that "
            "%config Chapyter.base_url is right.",
        )
    if isinstance(exc, openai.APIError):
        # An error event inside a 200 stream: the server gave up after starting to answer.
        detail = _detail(getattr(exc, "body", None), endpoint)
        return LLMError(
            "server", f"The endpoint {host} reported an error mid-answer{detail}. Try again."
        )
    if isinstance(exc, (ValueError, TypeError, AttributeError, KeyError, IndexError)):
        # json.JSONDecodeError, pydantic's ValidationError and UnicodeDecodeError are ValueErrors.
        return _bad_response(endpoint, "invalid JSON" if _is_json_error(exc) else "a broken body")
    return _bad_response(endpoint, f"something unexpected ({type(exc).__name__})")


def _status_error(exc: Any, status: int, endpoint: Endpoint, *, tries: str, what: str) -> LLMError:
    host, model = endpoint.host, endpoint.model
    body = getattr(exc, "body", None)
    detail = _detail(body, endpoint)
    code = body.get("code") if isinstance(body, dict) else None
    if status == 401:
        return LLMError(
            "auth",
            f"The endpoint {host} rejected the API key (HTTP 401). "
            "Set OPENAI_API_KEY or %config Chapyter.api_key.",
            status=status,
        )
    if status == 403:
        return LLMError(
            "permission",
            f"The endpoint {host} refused access (HTTP 403){detail}. "
            f"Check that the API key may use model '{model}'.",
            status=status,
        )
    if status == 404:
        target = f"Model '{model}'" if what == "chat" else "The models list"
        return LLMError(
            "not_found",
            f"{target} was not found at {host} (HTTP 404){detail}. Check %config Chapyter.model "
            "and Chapyter.base_url (it usually ends in /v1).",
            status=status,
        )
    if status == 429:
        if code == "insufficient_quota":
            err = LLMError(
                "rate_limit",
                f"The endpoint {host} says the account is out of quota (HTTP 429). "
                "Check the plan and billing of this API key.",
                status=status,
            )
            err._retryable = False
            return err
        return LLMError(
            "rate_limit",
            f"The endpoint {host} is rate-limiting requests (HTTP 429){tries}. "
            "Wait a minute and try again.",
            status=status,
        )
    if status >= 500:
        return LLMError(
            "server",
            f"The endpoint {host} failed with HTTP {status}{tries}{detail}. Try again later.",
            status=status,
        )
    if status == 408:
        return LLMError(
            "timeout",
            f"The endpoint {host} timed out the request (HTTP 408). Try again.",
            status=status,
        )
    if 400 <= status < 500:
        return LLMError(
            "bad_request",
            f"The endpoint {host} rejected the request (HTTP {status}){detail}. "
            "Check %config Chapyter.model and Chapyter.max_tokens.",
            status=status,
        )
    return LLMError(
        "bad_response", f"The endpoint {host} answered with HTTP {status}.", status=status
    )


def _bad_response(endpoint: Endpoint, what: str) -> LLMError:
    return LLMError(
        "bad_response",
        f"The endpoint {endpoint.host} sent {what} instead of an OpenAI-style response. "
        "Check that %config Chapyter.base_url points at an OpenAI-compatible API "
        "(usually ending in /v1).",
    )


def _empty_error(endpoint: Endpoint, finish_reason: str | None) -> LLMError:
    why = {
        "length": " (it hit the token limit: raise %config Chapyter.max_tokens)",
        "content_filter": " (its content filter stopped it)",
    }.get(finish_reason or "", "")
    return LLMError(
        "empty",
        f"Model '{endpoint.model}' at {endpoint.host} returned an empty answer{why}. "
        "Rephrase the request or try another model.",
    )


def _detail(body: Any, endpoint: Endpoint) -> str:
    """': <server's error message>' from an OpenAI-shaped error body, scrubbed; else ''.

    Only JSON messages are used (never an HTML page), cut short, with anything that could be
    the key or an extra header value removed: servers echo keys back in their messages.
    """
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message.strip():
        return ""
    text = " ".join(message.split())
    secrets = [endpoint.api_key, *(value for _, value in endpoint.extra_headers)]
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_LIKE.sub("***", text)
    if len(text) > _DETAIL_CHARS:
        text = text[: _DETAIL_CHARS - 1].rstrip() + "…"
    return f": {text.rstrip('.')}"


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, Retry-After seconds or date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - time.time()
        if seconds == seconds:  # not NaN
            return max(0.0, seconds)
    return None


def _is_timeout(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, TimeoutError) or "TimeoutException" in names


def _is_connection_error(exc: BaseException) -> bool:
    # httpx2's transport errors, anyio's EndOfStream/BrokenResourceError, and plain OSErrors.
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, (OSError, EOFError)) or bool(
        names & {"RequestError", "TransportError", "EndOfStream", "BrokenResourceError"}
    )


def _is_json_error(exc: BaseException) -> bool:
    return isinstance(exc, json.JSONDecodeError)
