"""``POST chapyter-ext/fix``: one proposed change to one cell (Fix, Edit with AI), no tornado.

The prompt and the reading of the answer are :mod:`chapyter_ext.fix.request`'; this module resolves
the model, assembles the kernel summary as the chat does, asks within the chat's time limit,
checks the answer with the guard rails (:func:`chapyter_ext.guards.check_code`) and shapes it.
A capable model is asked once; the small-model profile (the bundled model) gets the cheap
repairs of the error first, then up to three seeded answers to its own prompt
(:mod:`chapyter_ext.fix.small_prompt`), each checked against the kernel's names. Nothing is
saved: the browser shows a runnable proposal as a diff and records an accepted one with
``contract.acceptedChange``; one that is not runnable is one line, never a diff.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..chat import ChatError, ChatService, assemble_context, parse_context
from ..endpoints import ModelRegistry
from ..guards import REVIEW_NOTE, check_code, repairs, snapshot_names
from ..llm import Endpoint, LLMError, astream
from ..parsing import NoCodeError, extract_code
from ..profile import CANDIDATES, SMALL_PROFILE, candidate_request, prompt_profile
from ..trial.run import TrialLimits
from .consent import run_plan
from .request import FixRequest, build_fix_messages, parse_fix_answer, restore_secrets
from .small_prompt import (
    build_small_fix_messages,
    fix_failed_message,
    fix_grammar,
    fix_max_tokens,
)

__all__ = ["REPAIR_MODEL", "parse_fix_request", "propose_fix"]

#: The ``model`` of a proposal no model wrote (a cheap repair of the error), for provenance.
REPAIR_MODEL = "chapyter-ext repair"


def parse_fix_request(body: Any) -> FixRequest:
    """The body as a :class:`FixRequest`, or :class:`ChatError` ``bad_request``."""
    try:
        return FixRequest.parse(body, parse_context=parse_context)
    except ValueError as err:
        raise ChatError("bad_request", str(err)) from None


async def propose_fix(
    request: FixRequest,
    *,
    registry: ModelRegistry,
    chat: ChatService,
    run_policy: str = "never",
    local_review: bool = True,
    trials: bool = False,
    limits: TrialLimits | None = None,
    secret_names: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``{"cell_id", "code", "explanation", "model", "kind", "request_sha256", "hold",
    "runnable"}``.

    ``runnable`` False: nothing is offered; ``code`` is "" and ``explanation`` the one line
    saying why (the answer did not parse or changed nothing; the small model could not write
    one that passes the checks). ``hold``: why the proposal must not be offered as "Accept and
    run", one line naming the setting, or None: the bundled model's code waits for review
    (``local_review``), else ``run_policy`` (``Chapyter.run_policy``) decides; ``trial`` (only
    when the analysis cannot prove the code harmless and ``trials``): the user expression that
    tries it in the kernel before **Accept and run** runs it (``POST fix/trial`` decides).
    ``secret_names``: ``Chapyter.secret_variables()`` (reading one holds the proposal).

    Raises :class:`ChatError` (unknown model: ``not_found``) or :class:`LLMError` (the model
    failed, took longer than the chat's time limit, or answered without code: ``no_code``).
    """
    try:
        model_name, endpoint = await registry.aresolve(request.model)
    except KeyError:
        raise ChatError("not_found", f"Unknown model {request.model!r}.") from None
    profile = prompt_profile(chat.prompt_style, model_name)
    try:
        if profile.small:
            found = await asyncio.wait_for(
                _small_proposal(request, endpoint, chat), chat.stream_timeout
            )
        else:
            found = await asyncio.wait_for(_proposal(request, endpoint, chat), chat.stream_timeout)
    except asyncio.TimeoutError:
        raise LLMError(
            "timeout", f"The model took longer than {chat.stream_timeout:g} s to propose a change."
        ) from None
    cell_id, code, explanation, model, problem = found
    shaped = {
        "cell_id": cell_id,
        "code": code,
        "explanation": chat.redact(explanation),
        "model": model,
        "kind": request.mode,
        "request_sha256": request.request_sha256,
        "runnable": problem is None,
        "hold": None,
    }
    if problem is not None:
        shaped["code"] = ""
        shaped["explanation"] = chat.redact(problem)
        return shaped
    if local_review and registry.is_local(model_name):
        shaped["hold"] = REVIEW_NOTE
    else:
        hold, trial = run_plan(
            code,
            run_policy,
            request.context,
            trials=trials,
            limits=limits or TrialLimits(),
            secret_names=secret_names,
        )
        shaped["hold"] = hold
        if trial is not None:
            shaped["trial"] = trial
    return shaped


# (cell id, code, explanation, model, why nothing is offered or None)
_Found = tuple[str, str, str, str, "str | None"]


async def _ask(endpoint: Endpoint, messages: list[dict], extra_body: dict | None = None) -> str:
    pieces: list[str] = []
    # Closed on the way out (timeout included), so the model's response closes too.
    async with contextlib.aclosing(astream(endpoint, messages, extra_body=extra_body)) as deltas:
        async for delta in deltas:
            pieces.append(delta)
    return "".join(pieces)


async def _proposal(request: FixRequest, endpoint: Endpoint, chat: ChatService) -> _Found:
    """A capable model's proposal: asked once, the answer parsed and its code checked."""
    kernel = None
    if chat.send_context:
        kernel = assemble_context(request.context, chat.context_budget, chat.redact)
    answer = await _ask(endpoint, build_fix_messages(request, kernel=kernel, redactor=chat.redact))
    try:
        proposal = parse_fix_answer(answer, request)
    except NoCodeError:
        raise LLMError(
            "no_code", "The model's answer holds no code to put in the cell; try again."
        ) from None
    target = next(c for c in (request.cell, *request.related) if c.id == proposal.cell_id)
    code, explanation = _restored(proposal.code, target.source, proposal.explanation, chat)
    verdict = check_code(code, original=target.source)
    problem = None
    if not verdict.runnable:
        problem = f"The model's proposal is not offered: {verdict.problem}. Try again."
    return proposal.cell_id, code, explanation, endpoint.model, problem


def _restored(code: str, original: str, explanation: str, chat: ChatService) -> tuple[str, str]:
    """The model's code redacted like everything it says (a key it echoes, whole or in part);
    only the lines it kept from the user's own cell come back as the user wrote them."""
    code, lost = restore_secrets(chat.redact(code), original, chat.redact)
    explanation = chat.redact(explanation)
    if lost:
        note = "A secret in this cell was sent as <redacted>: put it back before running it."
        explanation = f"{explanation} {note}".strip()
    return code, explanation


async def _small_proposal(request: FixRequest, endpoint: Endpoint, chat: ChatService) -> _Found:
    """The small-model profile's proposal for the failing cell itself (no related cells, no
    ids in the prompt): a cheap repair of the error that passes the checks, else the first of
    up to :data:`CANDIDATES` seeded answers that does, else the one line saying it could not."""
    cell = request.cell
    names = snapshot_names(request.context)
    edit = request.mode == "edit"
    if not edit and request.error is not None:
        for repair in repairs(cell.source, request.error, names):
            verdict = check_code(
                repair.code, names, small=True, original=cell.source, error=request.error
            )
            if verdict.runnable:
                return cell.id, verdict.code, repair.explanation, REPAIR_MODEL, None
    ask = request.instruction if edit else request.error_line
    kernel = None
    if chat.send_context:
        budget = SMALL_PROFILE.context_budget(chat.context_budget)
        kernel = assemble_context(request.context, budget, chat.redact, request=ask)
    messages = build_small_fix_messages(
        chat.redact(cell.source), chat.redact(ask), kernel, edit=edit
    )
    problem = ""
    for index in range(CANDIDATES):
        asked, extra = candidate_request(
            endpoint,
            index,
            grammar=fix_grammar(cell.source),
            max_tokens=fix_max_tokens(cell.source),
        )
        try:
            code = extract_code(await _ask(asked, messages, extra))
        except NoCodeError:
            problem = "no code"
            continue
        code, note = _restored(code, cell.source, "", chat)
        verdict = check_code(
            code, names, small=True, original=cell.source, error=None if edit else request.error
        )
        if verdict.runnable:
            said = "Written by the small local model; it parses and the names it reads exist."
            return cell.id, verdict.code, f"{said} {note}".strip(), endpoint.model, None
        problem = verdict.problem
    return cell.id, "", "", endpoint.model, fix_failed_message(problem, edit=edit)
