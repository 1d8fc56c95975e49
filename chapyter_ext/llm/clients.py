"""Pooled SDK clients: one HTTP connection pool for sync calls, one per event loop for async;
and the SDK loaded off the event loop (:func:`load_sdk`, :func:`sdk_loaded`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from .errors import LLMError

if TYPE_CHECKING:
    from .endpoint import Endpoint

_PLACEHOLDER_KEY = "no-key"  # local servers ignore the key, but the SDK insists on one
_CLIENT_CACHE_SIZE = 8


# SDK clients are cheap once they share an HTTP client: creating one loads the CA bundle
# (~90 ms). So one HTTP client (connection pool) serves every endpoint, one per event loop for
# async, and the SDK clients on top are cached per endpoint.
_cache_lock = threading.Lock()
_sync_clients: OrderedDict[tuple, Any] = OrderedDict()
_sync_http: list[Any] = []  # [httpx2.Client] once made
_async_clients: OrderedDict[tuple, tuple[weakref.ref, Any]] = OrderedDict()
_async_http: dict[int, tuple[weakref.ref, Any]] = {}
# An async HTTP client made ahead of time (warm_async_http), for the first event loop to ask.
_spare_async_http: list[Any] = []
# The SDK's load on its thread (load_sdk): its future, once started.
_sdk_load: list[concurrent.futures.Future[None]] = []

log = logging.getLogger(__name__)

#: A streamed chunk as endpoints send it: validating one builds the type's pydantic validator,
#: which the first chunk of the first answer would otherwise build.
SAMPLE_CHUNK = {
    "id": "warm-up",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "warm-up",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "x"}}],
}


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


def sync_client(endpoint: Endpoint) -> Any:
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


def _loop_http(openai: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """The running loop's HTTP client (the caller holds the lock)."""
    for stale in [k for k, (ref, _) in _async_http.items() if _loop_gone(ref())]:
        del _async_http[stale]  # its loop is closed: nothing left to close it with
    http = _async_http.get(id(loop))
    if http is None or http[0]() is not loop or getattr(http[1], "is_closed", False):
        spare = _spare_async_http.pop() if _spare_async_http else None
        if spare is None:
            spare = _http_client(openai, asynchronous=True)
        http = (weakref.ref(loop), spare)
        _async_http[id(loop)] = http
    return http[1]


def async_http() -> Any:
    """The running loop's pooled HTTP client (the SDK's), for requests sent as they are: the
    server's model route relays kernels' calls through it."""
    import openai

    loop = asyncio.get_running_loop()
    with _cache_lock:
        return _loop_http(openai, loop)


def async_client(endpoint: Endpoint) -> Any:
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
        client = openai.AsyncOpenAI(**kwargs, http_client=_loop_http(openai, loop))
        _async_clients[key] = (weakref.ref(loop), client)
        while len(_async_clients) > _CLIENT_CACHE_SIZE:
            _async_clients.popitem(last=False)
    return client


def warm_clients(endpoint: Endpoint | None) -> None:
    """Import the SDK and make the shared HTTP client, and ``endpoint``'s client if given.

    The warm-up thread calls this so that the first request finds them ready; nothing is sent.
    """
    if endpoint is not None:
        client = sync_client(endpoint)
        client.chat.completions  # noqa: B018  # the SDK builds its resources on first access
        return
    import openai

    with _cache_lock:
        if not _sync_http or getattr(_sync_http[0], "is_closed", False):
            _sync_http[:] = [_http_client(openai, asynchronous=False)]


def warm_async_http() -> None:
    """Import the SDK and make an async HTTP client for the first event loop that asks.

    :func:`load_sdk` calls this on a thread: otherwise the first chat request imports the SDK
    (~0.5 s) and loads the CA bundle on the event loop, which stalls the whole server. An
    async client is bound to a loop only once it is used, so making it here is safe.
    """
    import openai

    with _cache_lock:
        if _spare_async_http or _async_http:
            return
    client = _http_client(openai, asynchronous=True)
    # The SDK imports its chat resources on first access (~80 ms): a throwaway client on the
    # same HTTP client, never used to send, makes it do that now. Never closed: that would
    # close the HTTP client.
    warm = openai.AsyncOpenAI(api_key=_PLACEHOLDER_KEY, base_url="http://127.0.0.1:9/v1",
                              http_client=client, max_retries=0)  # fmt: skip
    warm.chat.completions  # noqa: B018
    with _cache_lock:
        if not _spare_async_http and not _async_http:
            _spare_async_http.append(client)


def warm_chunk_validator() -> None:
    """Build the pydantic validator of the streamed chunk type (imports the SDK's types)."""
    from openai.types.chat import ChatCompletionChunk

    ChatCompletionChunk.model_validate(SAMPLE_CHUNK)


def load_sdk() -> concurrent.futures.Future[None]:
    """Load what the first async call needs, on a daemon thread, once per process: the SDK
    (~0.5 s and ~30 MB, most of it pydantic building its types), an async HTTP client with
    its CA bundle (:func:`warm_async_http`) and the chunk type's validator. The future of that
    work, the same for every caller; it never fails (the first request reports any error).

    The Jupyter server starts it on the page's hint (``POST chapyter-ext/warm``) or its first
    request that calls a model (:func:`sdk_loaded`), not at start: an idle server that nobody
    chats with never pays for it.
    """
    with _cache_lock:
        if _sdk_load:
            return _sdk_load[0]
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        _sdk_load.append(future)

    def load() -> None:
        try:
            warm_async_http()
            warm_chunk_validator()
        except Exception as exc:  # the first request reports whatever is wrong
            log.debug("chapyter-ext: loading the SDK stopped: %s", exc)
        finally:
            future.set_result(None)

    threading.Thread(target=load, name="chapyter-ext-sdk-load", daemon=True).start()
    return future


async def sdk_loaded() -> None:
    """Return once the SDK is loaded (:func:`load_sdk`, started here if nothing has yet),
    without blocking the running loop: a first request that nothing warmed waits for the
    import on its thread while the server serves everyone else. Every async call of
    :mod:`.calls` and the server's model route await it before their first SDK client."""
    future = load_sdk()
    if not future.done():
        await asyncio.wrap_future(future)


def _loop_gone(loop: asyncio.AbstractEventLoop | None) -> bool:
    return loop is None or loop.is_closed()


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
