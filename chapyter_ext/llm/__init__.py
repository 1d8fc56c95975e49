"""The OpenAI-compatible client: sync and async, streaming, retries and one-line typed errors.

Works with any server that speaks OpenAI's chat completions API (OpenAI, Ollama, vLLM, LM Studio,
llama.cpp, OpenRouter, ...). The ``openai`` SDK is imported on first use, not on import, so that
``%load_ext chapyter_ext`` stays fast. The SDK's own retries are off (``max_retries=0``): we
retry ourselves so that we know how many attempts a call took and never retry once text has
reached the caller. Every failure leaves this package as an :class:`LLMError`
(:mod:`.errors`); the pooled SDK clients live in :mod:`.clients`; calls that may call tools
(the agent's steps) in :mod:`.steps`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .clients import _async_client, _sync_client, aclose_clients, close_clients
from .endpoint import Completion, Endpoint
from .errors import (
    ERROR_KINDS,
    LLMError,
    _check_request,
    _to_llm_error,
)
from .usage import Usage, cost_of, usage_line

__all__ = [
    "ERROR_KINDS",
    "Completion",
    "Endpoint",
    "LLMError",
    "StepDelta",
    "StepReply",
    "ToolCall",
    "Usage",
    "aclose_clients",
    "alist_models",
    "astream",
    "astream_fim",
    "astream_step",
    "close_clients",
    "complete",
    "complete_step",
    "cost_of",
    "list_models",
    "usage_line",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

_BACKOFF_BASE = 0.5  # seconds before the first retry when the server gives no Retry-After
_MAX_RETRY_WAIT = 30.0  # cap on a server's Retry-After: longer than this feels like a hang


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
    _check_request(endpoint, [])
    client = _sync_client(endpoint)

    def attempt(progress: _Progress) -> list[str]:
        return _model_ids(client.models.list())

    return _with_retries(endpoint, attempt, what="models")[0]


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
    _check_request(endpoint, [])
    client = _async_client(endpoint)
    attempts = 0
    while True:
        attempts += 1
        progress = _Progress()
        try:
            return _model_ids(await client.models.list())
        except Exception as exc:
            await asyncio.sleep(_wait_or_raise(exc, endpoint, attempts, progress, what="models"))


async def astream_fim(endpoint: Endpoint, prompt: str, suffix: str) -> AsyncGenerator[str, None]:
    """Fill-in-the-middle through ``/v1/completions`` (``prompt`` + ``suffix``), as text deltas.

    No retries (a late inline suggestion is useless). Closing the generator closes the HTTP
    response; every failure is an :class:`LLMError`.
    """
    _check_request(endpoint, [])
    client = _async_client(endpoint)
    stream = None
    progress = _Progress()
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
        raise _to_llm_error(exc, endpoint, attempts=1, progress=progress, what="chat") from None
    finally:
        if stream is not None:
            with contextlib.suppress(Exception):  # must not mask the error being raised
                await stream.close()


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
            assert original is not None
            raise original from original.__cause__
        except Exception as exc:
            time.sleep(_wait_or_raise(exc, endpoint, attempts, progress, what=what))


def _wait_or_raise(
    exc: Exception, endpoint: Endpoint, attempts: int, progress: _Progress, *, what: str = "chat"
) -> float:
    """THE retry policy, for every loop: seconds to wait before attempt ``attempts + 1``, or
    raise the :class:`LLMError` for ``exc`` when it is final.

    Final: an error that is not transient (only 429s, 5xx and dropped connections are), text
    that already reached the caller (a retry would repeat it), or ``max_retries`` used up.
    The wait is the server's Retry-After if it sent one, else exponential backoff; both capped.
    """
    err = _to_llm_error(exc, endpoint, attempts=attempts, progress=progress, what=what)
    if not err._retryable or progress.delivered or attempts > endpoint.max_retries:
        raise err from None
    if err._retry_after is not None:
        wait = min(max(err._retry_after, 0.0), _MAX_RETRY_WAIT)
    else:
        wait = min(_BACKOFF_BASE * 2 ** (attempts - 1), _MAX_RETRY_WAIT)
    log.debug("retrying %s in %.2f s (%s)", endpoint.host, wait, err.kind)
    return wait


# Last: .steps builds on the helpers above (and this module's _BACKOFF_BASE, which tests patch).
from .steps import StepDelta, StepReply, ToolCall, astream_step, complete_step  # noqa: E402
