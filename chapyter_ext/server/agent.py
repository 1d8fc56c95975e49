"""Agent turns over HTTP: the async driver of :class:`chapyter_ext.agent.loop.AgentLoop`.

The server never runs code (the kernel may be remote, behind a gateway): each step the loop
decides on goes to the browser as a ``step`` event, the browser runs it through the notebook's
own kernel connection and posts the result to ``agent/result``, which resolves the step's
future here; the loop then asks the model again. One :class:`AgentTurn` is one asyncio task,
as a chat reply is, so ``chat/stop``, a closed tab and the time cap all cancel it where it
waits (the model's stream is closed on the way out). Agent turns take the chat's concurrency
slots and are tracked by the :class:`~.chat.ChatService`, so stopping and shutting down are the
chat's own.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..agent.capabilities import Capabilities, capabilities
from ..agent.loop import (
    AgentLimits,
    AgentLoop,
    Finish,
    Halt,
    ReadCell,
    ReadVariables,
    RunCode,
    StepResult,
)
from ..context.notebook import user_functions
from ..llm import LLMError, astream_step
from ..redact import one_line, redact_traceback
from .agent_protocol import AgentRequest, StepAnswer
from .chat import ChatError, ChatService, TurnSetup
from .events import (
    AgentDone,
    AgentStart,
    Error,
    Notice,
    Step,
    StepDone,
    Token,
    TokenRedactor,
)
from .history import ChatMessage, HistoryError, repair_text, utc_now
from .turn import StreamingTurn

if TYPE_CHECKING:
    from ..agent.tools import ToolCall
    from ..config import Chapyter

FENCE = "```"


class AgentTurn(StreamingTurn):
    """One agent turn: its ids, its events, the steps waiting for the browser, a way to stop."""

    def __init__(
        self,
        service: AgentService,
        setup: TurnSetup,
        loop: AgentLoop,
        *,
        policy: str,
        capabilities: Capabilities,
    ) -> None:
        super().__init__()
        self.service = service
        self.setup = setup
        self._loop = loop
        # What ``start`` tells the browser; ``tools`` turns off if the endpoint refuses them.
        self.policy = policy
        self.tools = capabilities.tools
        self.images = capabilities.images
        self.limits = loop.limits
        self._waiting: dict[str, asyncio.Future[StepAnswer]] = {}
        self._answered: set[str] = set()
        self._kinds: dict[str, str] = {}  # step_id -> the step's kind
        self._prose = ""  # of the model reply being streamed (what a stop keeps)

    # -- what the handlers call ------------------------------------------------------------

    def start(self) -> None:
        """Begin the turn; the time cap (``limits.time_limit``, 0: none) bounds all of it."""
        loop = asyncio.get_running_loop()
        setup = self.setup
        self._queue.put_nowait(
            AgentStart(
                setup.chat_id,
                self.message_id,
                setup.model_name,
                self.policy,
                self.tools,
                self.images,
            )
        )
        if setup.notice:
            self._queue.put_nowait(Notice(setup.notice))
        self._task = loop.create_task(self._run(), name=f"chapyter-agent-{self.message_id}")
        if self.limits.time_limit > 0:
            self._timer = loop.call_later(self.limits.time_limit, self.stop, "time_limit")

    def answer(self, answer: StepAnswer) -> None:
        """The browser's result for a step; :class:`ChatError` ``not_found`` if no step waits
        for it (unknown, already answered, or the turn has ended)."""
        future = self._waiting.get(answer.step_id)
        if future is None or future.done() or answer.step_id in self._answered:
            raise ChatError("not_found", "No step of this agent turn is waiting for that result.")
        if answer.status == "ran":
            runs = self._kinds.get(answer.step_id) == "run_code"
            if runs and not answer.has_result:
                raise ChatError("bad_request", "A run_code step that ran needs a 'result'.")
            if not runs and answer.text is None:
                raise ChatError("bad_request", "A read step that ran needs its 'text'.")
        self._answered.add(answer.step_id)
        future.set_result(answer)

    # -- the turn --------------------------------------------------------------------------

    async def _run(self) -> None:
        status, text, halt, error = "complete", "", "", None
        try:
            text, halt = await self._drive()
            status = "stopped" if halt else "complete"
        except asyncio.CancelledError:
            status, text = "stopped", self._prose
            if self._stop_reason == "time_limit":
                cap = self._loop.halt()
                halt = text = cap.reason if cap is not None else self._time_cap_line()
            if self._stop_reason is None:
                # Cancelled from outside (the loop is going away): save, then carry on.
                self._stop_reason = "cancelled"
                await self._finish(status, text, halt, error)
                raise
            task = asyncio.current_task()
            if task is not None and hasattr(task, "uncancel"):
                task.uncancel()
        except LLMError as err:
            status, text = "error", self._prose
            error = {"kind": err.kind, "message": one_line(err, self.service.redact)}
            self.service.log.warning(
                "Agent turn %s failed (%s): %s", self.message_id, err.kind, error["message"]
            )
        except Exception as err:
            status, text = "error", self._prose
            error = {"kind": "internal", "message": "Internal error; see the server log."}
            self.service.log.error(
                "Agent turn %s failed:\n%s",
                self.message_id,
                redact_traceback(err, self.service.redact),
            )
        await self._finish(status, text, halt, error)

    async def _drive(self) -> tuple[str, str]:
        """Ask, act, observe until the loop finishes or halts: (answer, halt line)."""
        loop = self._loop
        while True:
            halt = loop.halt()  # the time cap passed, or the same code failed twice
            if halt is not None:
                return halt.reason, halt.reason
            request = loop.request()
            text, calls = await self._ask(request.messages, request.tools)
            action = loop.on_reply(text, calls)
            if isinstance(action, Finish):
                return action.answer, ""
            if isinstance(action, Halt):
                return action.reason, action.reason
            await self._step(action)

    async def _ask(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[str, list[ToolCall]]:
        """One model reply (prose streamed as tokens); refused tools -> once more without."""
        try:
            return await self._stream(messages, tools if self.tools else None)
        except LLMError as err:
            if not (self.tools and tools and getattr(err, "tools_rejected", False)):
                raise
        # The endpoint has no function calling: the fenced protocol for the rest of the turn.
        self.tools = False
        self._loop.disable_tools()
        self._queue.put_nowait(
            Notice(
                f"{self.setup.model_name} does not take tools; the agent asks for fenced code "
                "blocks instead (Chapyter.tool_calling)."
            )
        )
        request = self._loop.request()
        return await self._stream(request.messages, None)

    async def _stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[str, list[ToolCall]]:
        tokens = TokenRedactor(self.service.redact)
        text = ""
        sent = 0
        calls: list[ToolCall] = []
        self._prose = ""
        stream = astream_step(self.setup.endpoint, messages, tools)
        try:
            async for delta in stream:
                if delta.done:
                    calls = list(delta.tool_calls)
                    continue
                text += delta.text
                # In the fenced protocol the code block becomes a step, not prose: only the
                # text before the first fence is shown (a partial fence is held back).
                end = len(text) if tools else _prose_end(text)
                if end > sent:
                    self._prose = text[:end]
                    safe = tokens.push(text[sent:end])
                    sent = end
                    if safe:
                        self._queue.put_nowait(Token(safe))
        finally:
            await stream.aclose()
        rest = tokens.flush()
        if rest:
            self._queue.put_nowait(Token(rest))
        return text, calls

    async def _step(self, action: Any) -> None:
        """Send one step to the browser, wait for its result, hand it to the loop."""
        loop = self._loop
        step_id = action.step_id
        future: asyncio.Future[StepAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[step_id] = future
        if isinstance(action, RunCode):
            event = Step(
                step_id,
                "run_code",
                code=action.code,
                purpose=action.purpose or None,
                needs_approval=action.needs_approval,
                reasons=tuple(action.reasons),
            )
        elif isinstance(action, ReadCell):
            event = Step(step_id, "read_cell", cell=action.cell)
        elif isinstance(action, ReadVariables):
            event = Step(step_id, "list_variables")
        else:
            raise TypeError(f"unknown agent action {type(action).__name__}")
        self._kinds[step_id] = event.kind
        self._queue.put_nowait(event)
        try:
            answer = await future
        finally:
            self._waiting.pop(step_id, None)
        if answer.status == "skipped":
            loop.on_skipped(step_id)
        elif isinstance(action, RunCode):
            loop.on_result(step_id, _step_result(answer))
        elif answer.status == "ran":
            loop.on_read(step_id, answer.text or "")
        else:
            loop.on_read(step_id, f"(could not be read: {answer.text or 'no reason given'})")
        self._queue.put_nowait(StepDone(step_id, self._outcome(step_id, answer)))

    def _outcome(self, step_id: str, answer: StepAnswer) -> str:
        for record in reversed(self._loop.steps):
            if record.step_id == step_id and record.outcome:
                return one_line(record.outcome, self.service.redact)
        return {"skipped": "skipped", "failed_to_run": "could not run"}.get(answer.status, "read")

    def _time_cap_line(self) -> str:
        limit = self.limits.time_limit
        return (
            f"Stopped after {limit:g} s (the time cap, Chapyter.agent_time_limit); "
            "the cells already run stay."
        )

    def steps(self) -> list[dict[str, str]]:
        """What ran, for the history and ``done``: ``{step_id, code, cell_id, outcome}``."""
        return [record.as_dict() for record in self._loop.steps]

    async def _finish(
        self, status: str, text: str, halt: str, error: dict[str, str] | None
    ) -> None:
        """Save the turn with its steps, release the slot, send the last event."""
        self._finishing = True
        service = self.service
        if self._timer is not None:
            self._timer.cancel()
        for future in self._waiting.values():
            future.cancel()
        self._waiting.clear()
        text = repair_text(service.redact(text))
        steps = self.steps()
        reply = ChatMessage(
            id=self.message_id,
            role="assistant",
            content=text,
            model=self.setup.model_name,
            created=utc_now(),
            status=status,
            error=error["message"] if error else "",
            steps=tuple(steps),
        )
        history = service.chat.history
        try:
            stored = await history.run(
                history.store.append, self.setup.notebook, self.setup.chat_id, reply
            )
            steps = list(stored.steps)
        except HistoryError:
            service.log.debug(
                "Chat %s is gone; turn %s not saved.", self.setup.chat_id, self.message_id
            )
        except Exception as err:
            service.log.error(
                "Could not save agent turn %s:\n%s",
                self.message_id,
                redact_traceback(err, service.redact),
            )
        finally:
            service.release(self)
        if error is not None:
            self._queue.put_nowait(Error(error["kind"], error["message"]))
        else:
            self._queue.put_nowait(AgentDone(self.message_id, text, status, tuple(steps), halt))
        service.log.debug(
            "Agent turn %s %s (%s, %d steps)",
            self.message_id,
            status,
            self._stop_reason or halt or "finished",
            len(steps),
        )


def _prose_end(text: str) -> int:
    """Where the prose of a fenced-protocol reply ends: at its first fence, and never inside
    what could still become one."""
    fence = text.find(FENCE)
    if fence >= 0:
        return fence
    end = len(text)
    while end and text[end - 1] == "`" and len(text) - end < len(FENCE) - 1:
        end -= 1
    return end


def _step_result(answer: StepAnswer) -> StepResult:
    """What the loop observes of a run step (``failed_to_run``: ``text`` says why)."""
    error = ""
    if answer.status == "failed_to_run":
        error = " ".join((answer.text or "the browser could not run the cell").split())
    return StepResult(
        outputs=answer.outputs,
        execution_count=answer.execution_count,
        cell_id=answer.cell_id,
        figures=answer.figures,
        images=answer.images,
        error=error,
    )


class AgentService:
    """Starts agent turns on the chat's slots, routes the browser's results to them."""

    def __init__(self, chat: ChatService, settings: Chapyter) -> None:
        self.chat = chat
        self.settings = settings
        self.redact = chat.redact
        self.log = chat.log
        self._turns: dict[str, AgentTurn] = {}

    @property
    def policy(self) -> str:
        """The approval policy unless a request names one (``Chapyter.agent_policy``)."""
        return str(self.settings.agent_policy)

    def limits(self) -> AgentLimits:
        """The caps of one turn (``Chapyter.agent_max_steps``, ``agent_time_limit``)."""
        return AgentLimits.from_settings(self.settings)

    def public_info(self) -> dict[str, Any]:
        """``GET config``'s ``agent``: the default policy and the caps."""
        limits = self.limits()
        return {
            "policy": self.policy,
            "max_steps": limits.max_steps,
            "time_limit": limits.time_limit,
        }

    def capabilities(self, name: str | None) -> tuple[bool, bool]:
        """Whether the endpoint behind ``name`` takes tools and images."""
        registry = self.chat.registry
        model = registry.model_name(name)
        found = capabilities(self.settings, model, local=registry.is_local(name))
        return found.tools, found.images

    async def start(self, request: AgentRequest) -> AgentTurn:
        """Save the user's message and start the turn; raises :class:`ChatError`."""
        policy = request.policy or self.policy
        limits = self.limits()

        def make(setup: TurnSetup) -> AgentTurn:
            local = self.chat.registry.is_local(request.chat.model)
            found = capabilities(self.settings, setup.endpoint.model, local=local)
            loop = AgentLoop(
                question=setup.message,
                context=setup.context,
                history=setup.history,
                tools=found.tools,
                images=found.images,
                policy=policy,
                limits=limits,
                redactor=self.redact,
                known_functions=user_functions(request.chat.context),
            )
            return AgentTurn(self, setup, loop, policy=policy, capabilities=found)

        turn = await self.chat.open_turn(request.chat, make)
        self._turns[turn.message_id] = turn
        try:
            turn.start()
        except BaseException:
            self.release(turn)
            raise
        return turn

    def answer(self, answer: StepAnswer) -> None:
        """Hand a step's result to its turn; ``not_found`` if the turn is unknown or over."""
        turn = self._turns.get(answer.message_id)
        if turn is None:
            raise ChatError("not_found", "No agent turn with that message_id is running.")
        turn.answer(answer)

    def release(self, turn: AgentTurn) -> None:
        """The turn is over: free its slot."""
        self._turns.pop(turn.message_id, None)
        self.chat._release(turn)

    async def close(self) -> None:
        """Stop every turn (saving what each had) and wait for them."""
        turns = list(self._turns.values())
        for turn in turns:
            turn.stop("shutdown")
        if turns:
            await asyncio.wait([asyncio.ensure_future(t.wait()) for t in turns], timeout=10)
