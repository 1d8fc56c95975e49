"""The one call path: every request to an endpoint goes through here, to the backend of the
protocol the endpoint names (:mod:`.backend`; OpenAI's through the ``openai`` SDK unless it
names another).

:func:`astream_step` and :func:`complete_step` ask for one chat completion that may call tools
(the agent's steps): the prose streams, the tool calls (:mod:`.tool_calls`) are assembled and
handed over at the end. :func:`complete` and :func:`astream` are the same calls without tools
(``%%ai``, the chat, Fix); :func:`list_models`, :func:`alist_models` and :func:`astream_fim`
(fill-in-the-middle for inline completion) the other endpoints. One retry policy
(:mod:`.retry`), one-line typed errors (:mod:`.errors`), in OpenAI's message shape whatever
the backend.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from .backend import StepDelta, StepReply, backend_for
from .endpoint import Completion, Endpoint
from .errors import LLMError, check_request
from .usage import Usage

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
    return backend_for(endpoint).list_models(endpoint)


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
    return await backend_for(endpoint).alist_models(endpoint)


async def astream_fim(endpoint: Endpoint, prompt: str, suffix: str) -> AsyncGenerator[str, None]:
    """Fill-in-the-middle through ``/v1/completions`` (``prompt`` + ``suffix``), as text deltas.

    No retries (a late inline suggestion is useless). Closing the generator closes the HTTP
    response; every failure is an :class:`LLMError`.
    """
    check_request(endpoint, [])
    fim = getattr(backend_for(endpoint), "astream_fim", None)
    if fim is None:
        raise LLMError(
            "bad_request",
            f"Nothing was sent: the {endpoint.protocol} endpoint at {endpoint.host} has no "
            "fill-in-the-middle. Turn Chapyter.completion_fim off for it.",
        )
    pieces = fim(endpoint, prompt, suffix)
    try:
        async for piece in pieces:
            yield piece
    finally:
        await pieces.aclose()


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
    steps = backend_for(endpoint).astream_step(endpoint, messages, tools, extra_body=extra_body)
    try:
        async for delta in steps:
            yield delta
    finally:
        await steps.aclose()  # closing this generator closes the backend's HTTP response


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
    check_request(endpoint, messages)
    backend = backend_for(endpoint)
    return backend.complete_step(
        endpoint, messages, tools, on_token, stream=stream, extra_body=extra_body
    )
