"""The chat service behind the sidebar: one streamed reply per request, no tornado.

A :class:`ChatTurn` runs the model call in its own asyncio task and hands events to whoever
streams them to the browser through a queue. Keeping the call in its own task is what makes
stopping prompt: cancelling the task interrupts the read from the model where it waits, and the
``astream`` generator closes the upstream response on the way out. The same path serves a stop
request, a closed tab and the per-reply time limit.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..endpoints import ModelRegistry
from ..guards import KernelNames, snapshot_names
from ..guards.answers import clean_answer, code_block_checks
from ..guards.echo import Instructions, notebook_text, request_instructions
from ..guards.rebinding import keep_data_in_answer
from ..history import (
    ChatMessage,
    HistoryError,
    HistoryWorker,
    new_id,
    normalize_notebook_path,
    plan_step,
    utc_now,
)
from ..llm import Endpoint, astream
from ..llm.vision import accepts_images
from ..messages import build_messages, with_images
from ..profile import FULL_PROFILE, PromptProfile, prompt_profile
from ..redact import Redactor, one_line, redact_traceback
from ..rules import ProjectRules, find_rules, with_rules
from .attachments import attachment_notes, files_context, image_parts
from .commands import apply_command
from .events import ChatEvent, Plan, Start, Token, TokenRedactor
from .mentions import Mention, MentionError, mentions_context, read_file_heads
from .plans import PLAN_SYSTEM_PROMPT, SMALL_PLAN_SYSTEM_PROMPT, parse_plan_answer
from .prompts import CHAT_SYSTEM_PROMPT, SMALL_CHAT_SYSTEM_PROMPT
from .request import MAX_MESSAGE_CHARS, ChatError, ChatRequest, assemble_context
from .running_turns import RunningTurn, RunningTurns, TurnT
from .setup import TurnSetup, _read_for_turn, history_for_model
from .turn import StreamingTurn, TurnEnd

if TYPE_CHECKING:
    from ..config import Chapyter


class ChatTurn(StreamingTurn):
    """One reply being generated: its ids, its events, and a way to stop it."""

    noun = "Chat reply"

    def __init__(
        self,
        service: ChatService,
        *,
        notebook: str,
        chat_id: str,
        model_name: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        names: KernelNames | None = None,
        small: bool = False,
        quotable: Sequence[str] = (),
        request: str = "",
        plan: bool = False,
    ) -> None:
        super().__init__(service, notebook=notebook, chat_id=chat_id, model_name=model_name)
        self.service = service
        self._endpoint = endpoint
        self._messages = messages
        #: The kernel's names (the request's snapshot), which the answer's code is checked
        #: against with the small-model profile (``small``).
        self._names = names
        self._small = small
        self._quotable = quotable
        self._request = request  # the user's message: may the answer's code change a variable?
        #: A ``/plan`` reply: its answer is read into steps (:mod:`.plans`), sent and saved.
        self._plan_mode = plan
        self._plan_steps: tuple[dict[str, Any], ...] = ()
        self._tokens = TokenRedactor(service.redact)
        self._parts: list[str] = []
        self.usage.model = endpoint.model  # prices are per model sent, not per entry name

    def _start_event(self) -> Start:
        return Start(self.chat_id, self.message_id, self.model_name)

    async def _produce(self) -> TurnEnd:
        stream = astream(self._endpoint, self._messages, on_usage=self.usage.add)
        try:
            async for delta in stream:
                if delta:
                    self._parts.append(delta)
                    safe = self._tokens.push(delta)
                    if safe:
                        self._queue.put_nowait(Token(safe))
        finally:
            await stream.aclose()
        return TurnEnd("complete", self._partial())

    def _partial(self) -> str:
        return "".join(self._parts)

    def _on_stop(self, end: TurnEnd) -> None:
        if self._stop_reason == "timeout":
            end.status = "error"
            end.error = {
                "kind": "timeout",
                "message": f"The reply took longer than {self.service.stream_timeout:g} s "
                "and was stopped.",
            }

    def _before_save(self) -> None:
        rest = self._tokens.flush()
        if rest:
            self._queue.put_nowait(Token(rest))

    def _guarded(self, text: str) -> tuple[str, tuple[dict[str, Any], ...]]:
        # An echo of what the server built (never the chat's own turns) is one line, an open
        # fence is closed, and each code block carries whether it may be offered to run.
        sent = Instructions(request_instructions(self._messages), self._quotable)
        text, _ = clean_answer(text, sent, small=self._small)
        if self._plan_mode:
            # Steps are text the user reads and edits; nothing of a plan is offered to run.
            found = parse_plan_answer(text)
            self._plan_steps = tuple(plan_step(step) for step in found)
            return text, ()
        if self._small:
            # The bundled model's code keeps the user's data and shows its result.
            text = keep_data_in_answer(text, self._names, self._request)
        return text, tuple(code_block_checks(text, self._names, small=self._small))

    def _plan(self) -> tuple[dict[str, Any], ...]:
        return self._plan_steps

    def _last_event(self, end: TurnEnd, text: str, steps: tuple[dict[str, Any], ...]) -> ChatEvent:
        if self._plan_steps:
            self._queue.put_nowait(Plan(self.message_id, self._plan_steps))
        return super()._last_event(end, text, steps)

    def _release(self) -> None:
        self.service._release(self)


class ChatService:
    """Starts, tracks, bounds and stops chat replies; saves both sides of each turn."""

    def __init__(
        self,
        registry: ModelRegistry,
        history: HistoryWorker,
        settings: Chapyter,
        *,
        max_concurrent: int = 4,
        stream_timeout: float = 300.0,
        history_sent: int = 20,
        max_message_chars: int = MAX_MESSAGE_CHARS,
        redactor: Redactor | None = None,
        log: logging.Logger | None = None,
        rules_root: str | None = None,
    ) -> None:
        self.registry = registry
        #: The server's ``c.Chapyter``, read when used (a change is seen by the next turn).
        self.settings = settings
        #: Where the search for project rules stops (the server's root directory); None: off.
        self.rules_root = rules_root
        self.history = history
        #: THE registry of running turns, chat replies and agent turns alike (their slots).
        self.turns = RunningTurns(max_concurrent)
        self.max_concurrent = self.turns.max_concurrent
        self.stream_timeout = float(stream_timeout)
        self.history_sent = int(history_sent)
        self.max_message_chars = int(max_message_chars)
        #: THE secret policy for this server: stored text, streamed events, error lines, logs.
        self.redact = redactor if redactor is not None else Redactor()
        self.log = log or logging.getLogger(__name__)
        #: Users' messages being saved while their replies start (see open_turn).
        self._saving: set[asyncio.Future[Any]] = set()

    @property
    def prices(self) -> dict[str, Any]:
        """The administrator's prices per model (``Chapyter.prices``), for each reply's cost."""
        return dict(self.settings.prices)

    @property
    def prompt_style(self) -> str:
        """``Chapyter.prompt_style``: the prompt profile of a chat reply and a Fix."""
        return str(self.settings.prompt_style)

    @property
    def send_context(self) -> bool:
        """``Chapyter.send_context``: whether the kernel's summary goes with a message."""
        return bool(self.settings.send_context)

    @property
    def context_budget(self) -> int:
        """``Chapyter.context_budget``: characters of that summary."""
        return int(self.settings.context_budget)

    @property
    def active(self) -> int:
        """How many replies are streaming or about to."""
        return self.turns.active

    def _prepare_context(
        self,
        context: Any,
        request: str | None = None,
        *,
        profile: PromptProfile = FULL_PROFILE,
        files: str = "",
        mentions: Sequence[Mention] = (),
        heads: dict[str, str] | None = None,
    ) -> str | None:
        # The attached files' description (``files``) is always sent, and spends the budget first.
        budget = profile.context_budget(self.context_budget) - len(files)
        # What the user @-mentioned is always sent too, first, within what is left.
        pinned = mentions_context(mentions, context, heads or {}, budget, self.redact)
        budget -= len(pinned) + 2 if pinned else 0
        # The model's host must never see a secret: the assembly redacts.
        kernel = None
        if self.send_context:
            kernel = assemble_context(context, budget, self.redact, request)
        return "\n\n".join(part for part in (pinned, files, kernel) if part) or None

    async def _file_heads(self, request: ChatRequest) -> dict[str, str]:
        """The heads of the files ``request`` @-mentions, read off the event loop."""
        if not any(m.kind == "file" for m in request.mentions):
            return {}
        try:
            return await asyncio.to_thread(read_file_heads, request.mentions, self.rules_root)
        except MentionError as err:
            raise ChatError("bad_request", str(err)) from None

    def _check_images(self, request: ChatRequest, name: str, model: str) -> None:
        """Refuse, before anything is sent or saved, images for a model that takes none, and
        mentions or files where the administrator locked ``send_context`` off (the user's own
        switch does not hold back what the user named)."""
        if (request.mentions or request.attachments) and self.settings.admin_locks().values.get(
            "send_context"
        ) is False:
            raise ChatError(
                "bad_request",
                "Nothing was sent: the administrator does not allow notebook content to be sent "
                "to models (Chapyter.send_context is locked off); remove the @-mentions and files.",
            )
        if not any(f.kind == "image" for f in request.attachments):
            return
        local = self.registry.is_local(request.model)
        if not accepts_images(str(self.settings.image_input), model, local=local):
            raise ChatError(
                "bad_request",
                f"The model {name!r} is not known to take images: remove the image, pick "
                "another model, or set Chapyter.image_input to 'on' if it does take them.",
            )

    async def rules(self, notebook: str, *, profile: PromptProfile = FULL_PROFILE) -> ProjectRules:
        """The project rules in force for ``notebook`` (a path under the server's root), read
        off the event loop; none when the setting is off or the path leaves the root."""
        root = self.rules_root
        if root is None or not self.settings.project_rules:
            return ProjectRules()
        folder = os.path.dirname(notebook.strip("/"))
        start = os.path.join(root, *[p for p in folder.split("/") if p not in ("", ".", "..")])
        budget = profile.rules_chars(self.settings.rules_chars)
        return await asyncio.to_thread(find_rules, start, root, budget=budget, redactor=self.redact)

    async def open_turn(self, request: ChatRequest, make: Callable[[TurnSetup], TurnT]) -> TurnT:
        """Resolve the model, take a slot, save the user's message; the turn ``make`` built.

        The one way in for chat replies and agent turns alike. ``make`` (no await) builds the
        turn from the :class:`TurnSetup`; its ``ValueError`` is a ``bad_request`` and, like
        every refusal here, leaves no trace in the history. The caller starts the turn; it is
        tracked (so ``stop`` and ``close`` reach it) until it calls :meth:`_release`. Over
        ``max_concurrent`` running turns, raises ``busy`` at once rather than queueing: a reply
        waiting unseen behind others is worse than a clear "try again".
        """
        try:
            # Starts the bundled local model (off the event loop) when it is the endpoint.
            model_name, endpoint = await self.registry.aresolve(request.model)
        except KeyError:
            raise ChatError("not_found", f"Unknown model {request.model!r}.") from None
        self._check_images(request, model_name, endpoint.model)
        if not self.turns.reserve():
            raise ChatError(
                "busy",
                f"{self.max_concurrent} chat replies are already streaming; "
                "try again when one has finished.",
            )
        try:
            store = self.history.store
            try:
                notebook = normalize_notebook_path(request.notebook)
                # One trip to the history thread, not three: each costs a thread hand-off.
                chat_id, earlier, notice = await self.history.run(
                    _read_for_turn, self.history, notebook, request.chat_id, request.notebook_id
                )
                message = self.redact(request.message)
                # The model gets the command's prompt; the history keeps what was typed.
                asked, instruction = apply_command(request.command, message)
                profile = prompt_profile(self.prompt_style, model_name)
                rules = await self.rules(notebook, profile=profile)
                files = await files_context(
                    request.attachments,
                    profile.context_budget(self.context_budget),
                    self.redact,
                    share=self.send_context and request.context is not None,
                )
                setup = TurnSetup(
                    notebook=notebook,
                    chat_id=chat_id,
                    model_name=model_name,
                    endpoint=profile.chat_endpoint(endpoint),
                    message=asked,
                    context=self._prepare_context(
                        request.context,
                        request.message,
                        profile=profile,
                        files=files,
                        mentions=request.mentions,
                        heads=await self._file_heads(request),
                    ),
                    history=history_for_model(earlier, profile.chat_history(self.history_sent)),
                    notice=notice,
                    profile=profile,
                    rules=rules,
                    instruction=instruction,
                    images=tuple(image_parts(request.attachments)),
                )
                try:
                    # Built before anything is saved, so a refused message leaves no trace.
                    turn = make(setup)
                except ValueError as err:
                    raise ChatError("bad_request", one_line(err, self.redact)) from None
                user_message = ChatMessage(
                    id=new_id(),
                    role="user",
                    content=message,
                    model=model_name,
                    created=utc_now(),
                    attachments=attachment_notes(request.attachments),
                    mentions=tuple(m.stored() for m in request.mentions),
                )
            except HistoryError as err:
                raise ChatError(err.kind, str(err)) from None
            self.turns.add(turn)
        except BaseException:
            self.turns.unreserve()
            raise
        # The model is not kept waiting for the disk (a write and two fsyncs): the message is
        # saved on the history thread, which runs calls in the order asked, so it is on disk
        # before the reply, whose save is asked for when the reply ends. Naming the reply puts
        # it right after this question even if another tab asks in between.
        saving = asyncio.ensure_future(
            self.history.run(
                partial(store.append, reply_id=turn.message_id), notebook, chat_id, user_message
            )
        )
        self._saving.add(saving)  # the loop keeps only a weak reference to a task
        saving.add_done_callback(self._report_unsaved)
        return turn

    def _report_unsaved(self, saving: asyncio.Future[Any]) -> None:
        self._saving.discard(saving)
        if saving.cancelled() or saving.exception() is None:
            return
        err = saving.exception()
        assert err is not None
        self.log.error(
            "Could not save the user's chat message:\n%s", redact_traceback(err, self.redact)
        )

    async def start(self, request: ChatRequest) -> ChatTurn:
        """Save the user's message and start the reply; raises :class:`ChatError`."""

        def make(setup: TurnSetup) -> ChatTurn:
            system = setup.profile.pick(CHAT_SYSTEM_PROMPT, SMALL_CHAT_SYSTEM_PROMPT)
            if request.plan:
                system = setup.profile.pick(PLAN_SYSTEM_PROMPT, SMALL_PLAN_SYSTEM_PROMPT)
            system = f"{system}\n\n{setup.instruction}" if setup.instruction else system
            messages = build_messages(
                setup.message,
                setup.context,
                history=setup.history,
                system=system,
                compact=setup.small,
            )
            messages = with_images(with_rules(messages, setup.rules), list(setup.images))
            turn = ChatTurn(
                self,
                notebook=setup.notebook,
                chat_id=setup.chat_id,
                model_name=setup.model_name,
                endpoint=setup.endpoint,
                messages=messages,
                names=snapshot_names(request.context),
                quotable=notebook_text(request.context),
                small=setup.small,
                request=setup.message,
                plan=request.plan,
            )
            turn.notice = setup.notice
            return turn

        turn = await self.open_turn(request, make)
        try:
            turn.start(self.stream_timeout, "timeout")
        except BaseException:
            self._release(turn)
            raise
        return turn

    def _release(self, turn: RunningTurn) -> None:
        self.turns.release(turn)

    def stop(self, message_id: str, reason: str = "stopped") -> bool:
        """Stop the reply (or agent turn) with this id; whether one was streaming."""
        return self.turns.stop(message_id, reason)

    async def close(self) -> None:
        """Stop every reply (saving what each had) and wait for them to finish."""
        await self.turns.close()
        if self._saving:
            await asyncio.wait(list(self._saving), timeout=10)
