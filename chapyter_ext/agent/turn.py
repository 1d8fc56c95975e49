"""One agent turn over HTTP: the async driver of :class:`chapyter_ext.agent.loop.AgentLoop`.

The server never runs code (the kernel may be remote, behind a gateway): each step the loop decides
on goes to the browser as a ``step`` event, the browser runs it through the notebook's own kernel
connection and posts the result to ``agent/result``, which resolves the step's future here; the loop
then asks the model again. One :class:`AgentTurn` is one asyncio task, as a chat reply is, so
``chat/stop``, a closed tab and the time cap all cancel it where it waits (the model's stream is
closed on the way out).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from ..chat import (
    AgentDone,
    AgentStart,
    ChatError,
    Notice,
    Plan,
    Step,
    StepDone,
    StreamingTurn,
    Token,
    TokenRedactor,
    TurnEnd,
    TurnHost,
    TurnSetup,
)
from ..guards import KernelNames
from ..guards.answers import code_block_checks
from ..llm import LLMError, astream_step
from ..parsing.fences import prose_end
from ..redact import one_line
from .actions import Finish, Halt, ToolStep
from .capabilities import Capabilities
from .checked_numbers import answer_numbers
from .limits import small_model_notice, time_cap_line
from .loop import AgentLoop
from .plan import PlanTracker
from .protocol import StepAnswer, TrialAnswer
from .results import ToolOutput
from .tools import (
    OP_RUN_CELL,
    RUNS_SERVER,
    Tool,
)

if TYPE_CHECKING:
    from ..config import Chapyter
    from ..llm import ToolCall
    from .tools import ToolSource


def _kernel_fields(request: dict[str, Any]) -> dict[str, Any]:
    """The step event's fields for a kernel tool's request (``code``, ``purpose``, ``cell``,
    ``expression``); absent or empty ones are left out."""
    fields = ("code", "purpose", "cell", "expression")
    return {
        key: request[key] for key in fields if isinstance(request.get(key), str) and request[key]
    }


class TurnOwner(TurnHost, Protocol):
    """What a turn needs of the service that started it (:class:`~.service.AgentService`)."""

    settings: Chapyter
    tool_source: ToolSource | None

    def trials_unavailable(self, chat_id: str, reason: str) -> str | None: ...

    def release(self, turn: AgentTurn) -> None: ...


class AgentTurn(StreamingTurn):
    """One agent turn: its ids, its events, the steps waiting for the browser, a way to stop."""

    noun = "Agent turn"

    def __init__(
        self,
        service: TurnOwner,
        setup: TurnSetup,
        loop: AgentLoop,
        *,
        policy: str,
        capabilities: Capabilities,
        names: KernelNames | None = None,
        plan: PlanTracker | None = None,
    ) -> None:
        super().__init__(
            service, notebook=setup.notebook, chat_id=setup.chat_id, model_name=setup.model_name
        )
        self.service = service
        self.setup = setup
        self.notice = setup.notice
        if loop.small:
            # The bundled model: what to expect, before the first step.
            expect = small_model_notice(setup.model_name, loop.limits, review=policy == "ask")
            self.notice = f"{self.notice} {expect}".strip()
        self._loop = loop
        #: The kernel's names, which the final answer's code blocks are checked against.
        self._names = names
        # What ``start`` tells the browser; ``tools`` turns off if the endpoint refuses them.
        self.policy = policy
        self.tools = capabilities.tools
        self.images = capabilities.images
        self.limits = loop.limits
        #: Told once the turn started (MCP servers that could not start), one line each.
        self.notices: list[str] = []
        self._waiting: dict[str, asyncio.Future[StepAnswer]] = {}
        self._answered: set[str] = set()
        #: Steps whose trial the browser still owes (its report goes to ``trial``).
        self._trials: set[str] = set()
        self._steps_by_id: dict[str, ToolStep] = {}
        self._prose = ""  # of the model reply being streamed (what a stop keeps)
        self._final = False  # the loop finished with an answer (whose numbers are checked)
        self.usage.model = setup.endpoint.model  # prices are per model sent
        #: The user's plan the turn follows (``plan_step`` marks its steps), or None.
        self.plan = plan
        if plan is not None:
            plan.emit = self._queue.put_nowait

    # -- what the handlers call ------------------------------------------------------------

    def _start_event(self) -> AgentStart:
        return AgentStart(
            self.chat_id,
            self.message_id,
            self.model_name,
            self.policy,
            self.tools,
            self.images,
        )

    def answer(self, answer: StepAnswer) -> None:
        """The browser's result for a step; :class:`ChatError` ``not_found`` if no step waits
        for it (unknown, already answered, or the turn has ended)."""
        future = self._waiting.get(answer.step_id)
        if future is None or future.done() or answer.step_id in self._answered:
            raise ChatError("not_found", "No step of this agent turn is waiting for that result.")
        step = self._steps_by_id[answer.step_id]
        if step.tool.runs == RUNS_SERVER:
            if answer.status not in ("approved", "skipped"):
                raise ChatError("bad_request", "A server step is answered 'approved' or 'skipped'.")
        elif answer.status == "approved":
            raise ChatError("bad_request", "A kernel step is answered with what it did.")
        elif answer.status == "ran":
            runs = step.tool.op == OP_RUN_CELL
            if runs and not answer.has_result:
                raise ChatError("bad_request", "A run_code step that ran needs a 'result'.")
            if not runs and answer.text is None:
                raise ChatError("bad_request", "A read step that ran needs its 'text'.")
        self._answered.add(answer.step_id)
        future.set_result(answer)

    def trial(self, answer: TrialAnswer) -> dict[str, Any]:
        """The browser's trial report for a step: the decision, as ``agent/trial`` answers
        it. :class:`ChatError` ``not_found`` if no step of this turn waits for a trial."""
        from ..trial.kernel import expression

        if answer.step_id not in self._trials or answer.step_id not in self._waiting:
            raise ChatError("not_found", "No step of this agent turn is waiting for a trial.")
        self._trials.discard(answer.step_id)
        consent = self._loop.on_trial(answer.step_id, answer.report)
        notice = None
        if consent.unavailable:
            notice = self.service.trials_unavailable(self.chat_id, consent.unavailable)
            if notice:
                self._queue.put_nowait(Notice(notice))
        step = self._steps_by_id[answer.step_id]
        redact = self.service.redact
        return {
            "needs_approval": not consent.run,
            "reasons": [redact(line) for line in consent.reasons],
            "concerns": [redact(line) for line in consent.concerns],
            "preview": [redact(line) for line in consent.preview],
            "guard": expression("arm", step.code) if consent.guarded else None,
            "notice": notice,
        }

    # -- the turn --------------------------------------------------------------------------

    async def _produce(self) -> TurnEnd:
        """Ask, act, observe until the loop finishes or halts."""
        loop = self._loop
        source = self.service.tool_source
        if self.plan is not None:
            self._queue.put_nowait(Plan(self.message_id, self.plan.as_dicts()))
        if self.tools and source is not None:
            # MCP servers start on first use: here, inside the turn, so a slow or failing one
            # shows as the turn's own wait and one notice line, never as a hung request.
            extra = await source.turn_tools()
            loop.registry = loop.registry.extended(extra.tools)
            for line in extra.problems:
                self._queue.put_nowait(Notice(line))
            if extra.problems:
                loop.system_notes = "\n".join(
                    [loop.system_notes, *(f"- Note: {line}" for line in extra.problems)]
                ).strip()
        while True:
            halt = loop.halt()  # the time cap passed, or two runs in a row changed nothing
            if halt is not None:
                return TurnEnd("stopped", halt.reason, halt.reason)
            request = loop.request()
            text, calls = await self._ask(request.messages, request.tools)
            if self.plan is not None and not self.tools:
                self.plan.read_marks(text)  # the fenced protocol's "Step N: done" lines
            action = loop.on_reply(text, calls)
            if isinstance(action, Finish):
                self._final = True
                return TurnEnd("complete", action.answer)
            if isinstance(action, Halt):
                return TurnEnd("stopped", action.reason, action.reason)
            await self._step(action)

    def _partial(self) -> str:
        return self._prose

    def _on_stop(self, end: TurnEnd) -> None:
        if self._stop_reason == "time_limit":
            cap = self._loop.halt()
            end.halt = end.text = cap.reason if cap is not None else self._time_cap_line()

    def _before_save(self) -> None:
        for future in self._waiting.values():
            future.cancel()
        self._waiting.clear()

    def _steps(self) -> tuple[dict[str, Any], ...]:
        return tuple(record.as_dict() for record in self._loop.steps)

    def _plan(self) -> tuple[dict[str, Any], ...]:
        return self.plan.as_dicts() if self.plan is not None else ()

    def _guarded(self, text: str) -> tuple[str, tuple[dict[str, Any], ...]]:
        # The loop cleaned the final answer; its code blocks carry their verdicts, its numbers
        # theirs (found or not in what the turn saw).
        if self._final:
            self.numbers = answer_numbers(text, self.setup.context, self._loop.steps)
        return text, tuple(code_block_checks(text, self._names, small=self._loop.small))

    def _last_event(self, end: TurnEnd, text: str, steps: tuple[dict[str, Any], ...]) -> AgentDone:
        usage = self.usage.as_dict()
        checks = self.checks or None
        numbers = self.numbers or None
        return AgentDone(self.message_id, text, end.status, steps, end.halt, usage, checks, numbers)

    def _release(self) -> None:
        self.service.release(self)

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
                    self.usage.add(delta.usage)
                    continue
                text += delta.text
                # In the fenced protocol the code block becomes a step, not prose: only the
                # text before the first fence is shown (a partial fence is held back).
                end = len(text) if tools else prose_end(text)
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

    async def _wait(self, step_id: str) -> StepAnswer:
        future: asyncio.Future[StepAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[step_id] = future
        try:
            return await future
        finally:
            self._waiting.pop(step_id, None)

    async def _step(self, action: ToolStep) -> None:
        """Send one step to the browser; carry it out (a kernel step: the browser does and
        posts the result; a server step: here, once the browser approved it if it must)."""
        loop = self._loop
        tool, step_id = action.tool, action.step_id
        self._steps_by_id[step_id] = action
        server = tool.runs == RUNS_SERVER
        trial = None
        if action.trial and not server:
            from ..trial.kernel import trial_expression
            from ..trial.run import TrialLimits

            trial = trial_expression(action.code, TrialLimits.from_settings(self.service.settings))
            self._trials.add(step_id)
        self._queue.put_nowait(
            Step(
                step_id,
                tool.name,
                op=tool.op,
                runs=tool.runs,
                title=action.title,
                label=tool.label or tool.name,
                server=tool.server or None,
                arguments=dict(action.arguments) if server else None,
                needs_approval=action.needs_approval,
                reasons=tuple(action.reasons),
                trial=trial,
                **({} if server else _kernel_fields(tool.request(action.arguments))),
            )
        )
        shown: str | None = None
        if server:
            answer = await self._wait(step_id) if action.needs_approval else None
            if answer is not None and answer.status == "skipped":
                loop.on_skipped(step_id)
            else:
                output = await self._call(tool, action.arguments)
                loop.on_result(step_id, output)
                shown = loop.steps[-1].shown
        else:
            answer = await self._wait(step_id)
            if answer.status == "skipped":
                loop.on_skipped(step_id)
            elif tool.op == OP_RUN_CELL:
                loop.on_result(step_id, answer.step_result())
            elif answer.status == "ran":
                loop.on_result(step_id, ToolOutput(text=answer.text or ""))
            else:
                loop.on_result(step_id, ToolOutput(error=answer.text or "no reason given"))
        record = loop.steps[-1]
        outcome = one_line(record.outcome, self.service.redact) if record.outcome else "done"
        self._queue.put_nowait(StepDone(step_id, outcome, record.status, shown))

    async def _call(self, tool: Tool, arguments: dict[str, Any]) -> ToolOutput:
        """A server tool's call; every failure is one line for the model and the chat."""
        try:
            return await tool.call(arguments)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.service.log.warning(
                "Agent turn %s: tool %s failed: %s",
                self.message_id,
                tool.name,
                one_line(err, self.service.redact),
            )
            return ToolOutput(error=one_line(err, self.service.redact) or type(err).__name__)

    def _time_cap_line(self) -> str:
        return time_cap_line(self.limits.time_limit)

    def steps(self) -> list[dict[str, Any]]:
        """What ran, for the history and ``done``."""
        return list(self._steps())
