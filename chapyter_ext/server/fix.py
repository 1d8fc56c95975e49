"""``POST chapyter-ext/fix``: one proposed change to one cell (Fix, Edit with AI), no tornado.

The prompt and the reading of the answer are :mod:`chapyter_ext.fixes`'; this module resolves
the model, assembles the kernel summary as the chat does, asks once (the client's own retry
policy) within the chat's time limit, and shapes the answer. Nothing is saved: the browser
shows the proposal as a diff and records an accepted one with ``contract.acceptedChange``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..context.notebook import user_functions
from ..endpoints import ModelRegistry
from ..fixes import FixRequest, build_fix_messages, parse_fix_answer, restore_secrets
from ..llm import LLMError, astream
from ..policy import hold_reason
from ..prompts import NoCodeError
from .chat import ChatError, ChatService, assemble_context, parse_context

__all__ = ["parse_fix_request", "propose_fix"]


def parse_fix_request(body: Any) -> FixRequest:
    """The body as a :class:`FixRequest`, or :class:`ChatError` ``bad_request``."""
    try:
        return FixRequest.parse(body, parse_context=parse_context)
    except ValueError as err:
        raise ChatError("bad_request", str(err)) from None


async def propose_fix(
    request: FixRequest, *, registry: ModelRegistry, chat: ChatService, run_policy: str = "never"
) -> dict[str, Any]:
    """``{"cell_id", "code", "explanation", "model", "kind", "request_sha256", "hold"}``.

    ``hold``: why the proposal must not be offered as "Accept and run" under ``run_policy``
    (``Chapyter.run_policy``), one line, or None.

    Raises :class:`ChatError` (unknown model: ``not_found``) or :class:`LLMError` (the model
    failed, took longer than the chat's time limit, or answered without code: ``no_code``).
    """
    try:
        _, endpoint = await registry.aresolve(request.model)
    except KeyError:
        raise ChatError("not_found", f"Unknown model {request.model!r}.") from None
    kernel = None
    if chat.send_context:
        kernel = assemble_context(request.context, chat.context_budget, chat.redact)
    messages = build_fix_messages(request, kernel=kernel, redactor=chat.redact)

    async def ask() -> str:
        pieces: list[str] = []
        # Closed on the way out (timeout included), so the model's response closes too.
        # (contextlib.aclosing is Python 3.10+; the package supports 3.9.)
        deltas = astream(endpoint, messages)
        try:
            async for delta in deltas:
                pieces.append(delta)
        finally:
            await deltas.aclose()
        return "".join(pieces)

    try:
        answer = await asyncio.wait_for(ask(), chat.stream_timeout)
    except asyncio.TimeoutError:
        raise LLMError(
            "timeout", f"The model took longer than {chat.stream_timeout:g} s to propose a change."
        ) from None
    try:
        proposal = parse_fix_answer(answer, request)
    except NoCodeError:
        raise LLMError(
            "no_code", "The model's answer holds no code to put in the cell; try again."
        ) from None
    target = next(c for c in (request.cell, *request.related) if c.id == proposal.cell_id)
    # The model's code is redacted like everything it says (a key it echoes, whole or in
    # part); only the lines it kept from the user's own cell come back as the user wrote them.
    code, lost = restore_secrets(chat.redact(proposal.code), target.source, chat.redact)
    explanation = chat.redact(proposal.explanation)
    if lost:
        note = "A secret in this cell was sent as <redacted>: put it back before running it."
        explanation = f"{explanation} {note}".strip()
    return {
        "cell_id": proposal.cell_id,
        "code": code,
        "explanation": explanation,
        "model": endpoint.model,
        "kind": request.mode,
        "request_sha256": request.request_sha256,
        "hold": hold_reason(run_policy, code, known_functions=user_functions(request.context)),
    }
