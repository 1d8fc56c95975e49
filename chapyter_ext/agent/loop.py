"""One agent turn's state and decisions, without I/O (sans-IO).

A driver (the server's async turn, the headless CLI) owns the I/O: it asks
:meth:`AgentLoop.request` for the next model request, sends it, hands the reply to
:meth:`AgentLoop.on_reply`, carries out the :data:`Action` it gets back (run code in a new cell,
read a cell, list the variables) and reports the result with :meth:`AgentLoop.on_result`,
:meth:`AgentLoop.on_read` or :meth:`AgentLoop.on_skipped`, until the action is a
:class:`Finish` or a :class:`Halt`::

    loop = AgentLoop(question=q, context=ctx, history=[], tools=True, images=False,
                     policy="risky", limits=AgentLimits(),
                     known_functions=defined_functions(cells_that_ran))
    while True:
        halt = loop.halt()              # a cap hit, or the same code failed twice
        if halt: break
        req = loop.request()            # req.messages, req.tools
        reply = call_the_model(req)     # text and tool calls
        action = loop.on_reply(reply.text, reply.tool_calls)
        if isinstance(action, (Finish, Halt)): break
        if isinstance(action, RunCode): loop.on_result(action.step_id, run(action.code))
        else: loop.on_read(action.step_id, read(action))

Every step (runs and reads alike) counts against ``limits.max_steps``; the turn's clock starts
when the loop is made. What the model sees of a result is built by :mod:`.observe`, within
``limits.result_chars`` and redacted; whether a run needs the user's approval by :mod:`.policy`.
Under policy ``risky`` the notebook's own functions (``known_functions``: defined by cells that
ran, so consented to) may be called unasked, and so may those a step of the turn defines once it
ran; a step that rebinds such a name makes it unknown again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from ..policy import MAGIC_CALL, approval, bound_names, defined_functions
from ..prompts import build_messages
from ..redact import Redactor
from . import prompts as agent_prompts
from .observe import observe, outcome
from .tools import (
    LIST_VARIABLES,
    READ_CELL,
    RUN_CODE,
    TOOL_SCHEMAS,
    BadToolCall,
    ToolCall,
    call_arg,
    check_call,
    fenced_step,
    without_thinking,
)
from .transcript import Answer, Exchange, render, with_ids

POLICIES = ("ask", "risky", "never")


@dataclass(frozen=True)
class AgentLimits:
    """How far one turn may go: steps (runs and reads), seconds, and the characters of one
    result shown to the model."""

    max_steps: int = 10
    time_limit: float = 300.0
    result_chars: int = 4000

    @classmethod
    def from_settings(cls, settings: Any) -> AgentLimits:
        """The limits set on a ``Chapyter`` settings object."""
        return cls(
            max_steps=settings.agent_max_steps,
            time_limit=settings.agent_time_limit,
            result_chars=settings.agent_result_chars,
        )


# ---------------------------------------------------------------------------------------------
# Actions: what the driver does next


@dataclass(frozen=True)
class RunCode:
    """Run ``code`` in a new cell (after the user's approval when ``needs_approval``)."""

    kind: ClassVar[str] = RUN_CODE
    step_id: str
    code: str
    purpose: str = ""
    needs_approval: bool = True
    #: What the policy found in the code ("writes files: df.to_csv('out.csv')"), even when no
    #: approval is needed.
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadCell:
    """Read the source and outputs of an existing cell: a 1-based position ("3") or a cell id."""

    kind: ClassVar[str] = READ_CELL
    step_id: str
    cell: str


@dataclass(frozen=True)
class ReadVariables:
    """Summarise the kernel's variables again (the same summary as the turn's context)."""

    kind: ClassVar[str] = LIST_VARIABLES
    step_id: str


@dataclass(frozen=True)
class Finish:
    """The model answered: the turn is over."""

    answer: str


@dataclass(frozen=True)
class Halt:
    """The turn stopped before the model answered; ``reason`` is one line for the user."""

    reason: str


Action = Union[RunCode, ReadCell, ReadVariables, Finish, Halt]
StepAction = Union[RunCode, ReadCell, ReadVariables]


@dataclass
class StepResult:
    """What running a step's cell produced, as the driver collected it."""

    #: nbformat outputs (``{"output_type": "stream" | "execute_result" | "display_data" |
    #: "error", ...}``).
    outputs: list[dict] = field(default_factory=list)
    execution_count: int | None = None
    #: The id of the notebook cell it ran in ("" when none).
    cell_id: str = ""
    #: Figure digests read in the kernel (:func:`chapyter_ext.agent.figures.take`).
    figures: list[dict] = field(default_factory=list)
    #: The figures as base64 PNGs.
    images: list[str] = field(default_factory=list)
    #: Set when the code could not be run at all (one line: "the kernel is dead").
    error: str = ""

    @property
    def failed(self) -> bool:
        """True when the code did not run or raised."""
        return bool(self.error) or any(o.get("output_type") == "error" for o in self.outputs)

    @classmethod
    def from_json(cls, data: Any) -> StepResult:
        """A result from decoded JSON (the browser's ``result``); raises ``ValueError`` naming
        the first field of the wrong type. Unknown keys are ignored."""
        if not isinstance(data, dict):
            raise ValueError("result must be an object")
        outputs = data.get("outputs", [])
        if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
            raise ValueError("result.outputs must be a list of nbformat outputs")
        count = data.get("execution_count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise ValueError("result.execution_count must be a whole number or null")
        cell_id = data.get("cell_id") or ""
        if not isinstance(cell_id, str):
            raise ValueError("result.cell_id must be a string")
        figures = data.get("figures", [])
        if not isinstance(figures, list) or not all(isinstance(f, dict) for f in figures):
            raise ValueError("result.figures must be a list of figure digests")
        images = data.get("images", [])
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            raise ValueError("result.images must be a list of base64 PNG strings")
        error = data.get("error") or ""
        if not isinstance(error, str):
            raise ValueError("result.error must be a string")
        return cls(outputs, count, cell_id, figures, images, error)


@dataclass
class StepRecord:
    """One step of the turn, for the history and undo."""

    step_id: str
    kind: str
    code: str = ""
    #: For read_cell: the cell asked for.
    cell: str = ""
    purpose: str = ""
    #: The notebook cell the code ran in.
    cell_id: str = ""
    execution_count: int | None = None
    #: "pending", "ok", "error", "skipped" or "read".
    status: str = "pending"
    #: One line: "NameError: name 'x' is not defined", "Out: 42", "skipped".
    outcome: str = ""

    def as_dict(self) -> dict[str, Any]:
        """What the chat history keeps: ``{step_id, code, cell_id, outcome}``."""
        return {
            "step_id": self.step_id,
            "code": self.code,
            "cell_id": self.cell_id,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class ModelRequest:
    """The next request to the model: the messages, and the tools (None: the fenced protocol)."""

    messages: list[dict]
    tools: list[dict] | None


_SKIPPED = (
    "The user skipped this step: the code was NOT run and nothing changed. Do not propose it "
    "again unless asked; continue another way or answer with what you know."
)


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8", "surrogatepass")).hexdigest()


class AgentLoop:
    """One agent turn: builds the model requests and decides what each reply asks for."""

    def __init__(
        self,
        *,
        question: str,
        context: str | None,
        history: list[dict],
        tools: bool,
        images: bool,
        policy: str,
        limits: AgentLimits,
        clock: Callable[[], float] = time.monotonic,
        redactor: Redactor | None = None,
        known_functions: Iterable[str] = (),
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.tools = tools
        self.images = images
        self.policy = policy
        #: The notebook's functions and classes the policy lets steps call (see the docstring).
        self.known_functions = set(known_functions)
        self.limits = limits
        self.redact = redactor if redactor is not None else Redactor()
        self._clock = clock
        self._started = clock()
        # Validates the question and the history (ValueError) before anything happens.
        self._opening = build_messages(question, context, history=history, system=None)
        self._exchanges: list[Exchange] = []
        self.steps: list[StepRecord] = []
        self._records: dict[str, StepRecord] = {}
        self._pending: tuple[str, str] | None = None  # (step id, tool call id)
        self._count = 0
        self._last_failed: str | None = None
        self._halt: Halt | None = None
        self._over = False

    # -- state ---------------------------------------------------------------------------------

    @property
    def pending(self) -> str | None:
        """The step whose result the loop waits for, if any."""
        return self._pending[0] if self._pending else None

    @property
    def over(self) -> bool:
        """True once ``on_reply`` returned a Finish or a Halt."""
        return self._over

    def elapsed(self) -> float:
        """Seconds since the turn started."""
        return self._clock() - self._started

    def remaining(self) -> float:
        """Seconds left before the time cap (0 when it passed): bound every wait by it."""
        return max(0.0, self.limits.time_limit - self.elapsed())

    def halt(self) -> Halt | None:
        """The Halt that ends the turn now, if any: the time cap passed, or the same code failed
        twice in a row. Drivers ask before each model request (``on_reply`` would return it
        too, after a wasted request)."""
        if self._halt is None and self.remaining() <= 0:
            limit = f"{self.limits.time_limit:g}"
            self._halt = Halt(
                f"Stopped after {limit} s (the time cap, Chapyter.agent_time_limit); "
                "the cells already run stay."
            )
        return self._halt

    def disable_tools(self) -> None:
        """Use the fenced protocol for the rest of the turn (the endpoint refused ``tools``)."""
        self.tools = False

    # -- requests --------------------------------------------------------------------------------

    def request(self) -> ModelRequest:
        """The next request to send to the model."""
        if self._pending is not None:
            raise RuntimeError(f"step {self._pending[0]} is still waiting for its result")
        if self._over:
            raise RuntimeError("the turn is over")
        system = (
            agent_prompts.TOOLS_SYSTEM_PROMPT if self.tools else agent_prompts.FENCED_SYSTEM_PROMPT
        )
        messages = [{"role": "system", "content": system}, *self._opening]
        last = len(self._exchanges) - 1
        for i, exchange in enumerate(self._exchanges):
            messages.extend(render(exchange, tools=self.tools, latest=i == last))
        return ModelRequest(messages=messages, tools=TOOL_SCHEMAS if self.tools else None)

    # -- replies ---------------------------------------------------------------------------------

    def on_reply(self, text: str, tool_calls: list[ToolCall]) -> Action:
        """What the model's reply asks for: a step, the final answer, or a Halt."""
        if self._over:
            raise RuntimeError("the turn is over")
        if self._pending is not None:
            raise RuntimeError(f"step {self._pending[0]} is still waiting for its result")
        halt = self.halt()
        if halt is not None:
            return self._end(halt)
        text = text or ""
        calls = with_ids(tool_calls, len(self._exchanges)) if self.tools else []
        if calls:
            call = calls[0]
            try:
                check_call(call)
            except BadToolCall as err:
                return self._end(Halt(f"The model made a tool call that cannot be run: {err}"))
            kind, code = call.name, call_arg(call, "code")
            purpose, cell = call_arg(call, "purpose"), call_arg(call, "cell").strip()
        else:
            step = fenced_step(text) if not self.tools else None
            if step is None or step.code is None:
                answer = step.prose if step is not None else without_thinking(text)
                if not answer:
                    return self._end(Halt("The model ended the turn without an answer."))
                return self._end(Finish(self.redact(answer)))
            kind, code, purpose, cell = RUN_CODE, step.code, step.prose, ""
            calls = [ToolCall(id="fenced", name=RUN_CODE, arguments={"code": code})]
        if self._count >= self.limits.max_steps:
            return self._end(
                Halt(
                    f"Stopped after {self._count} steps (the step cap, "
                    "Chapyter.agent_max_steps); the cells already run stay."
                )
            )
        needs, reasons = False, ()  # type: tuple[bool, tuple[str, ...]]
        # What is shown, approved and run is the redacted code, in every driver.
        code = self.redact(code) if code else code
        if kind == RUN_CODE:
            needs, found = approval(self.policy, code, known_functions=self.known_functions)
            if MAGIC_CALL in found:
                return self._end(
                    Halt("The model's code calls %ai (it would ask the model again); not run.")
                )
            reasons = tuple(found)
        self._count += 1
        step_id = f"step-{self._count}"
        self._exchanges.append(Exchange(text=text, calls=calls, fenced=not self.tools))
        self._pending = (step_id, calls[0].id)
        record = StepRecord(step_id=step_id, kind=kind, code=code, cell=cell, purpose=purpose)
        self.steps.append(record)
        self._records[step_id] = record
        if kind == RUN_CODE:
            return RunCode(step_id, code, purpose, needs, reasons)
        if kind == READ_CELL:
            return ReadCell(step_id, cell)
        return ReadVariables(step_id)

    def _end(self, action: Finish | Halt) -> Finish | Halt:
        self._over = True
        return action

    # -- results ---------------------------------------------------------------------------------

    def _take(self, step_id: str) -> tuple[StepRecord, str]:
        if self._pending is None or self._pending[0] != step_id:
            raise KeyError(f"no step {step_id!r} is waiting for a result")
        call_id = self._pending[1]
        self._pending = None
        return self._records[step_id], call_id

    def _answer(self, call_id: str, answer: Answer) -> None:
        self._exchanges[-1].answers[call_id] = answer

    def on_result(self, step_id: str, result: StepResult) -> None:
        """The cell of RunCode ``step_id`` ran (or could not): record it for the model."""
        record, call_id = self._take(step_id)
        parts = observe(
            result, budget=self.limits.result_chars, images=self.images, redactor=self.redact
        )
        text = "\n".join(p["text"] for p in parts if p.get("type") == "text")
        images = [p for p in parts if p.get("type") == "image_url"]
        self._answer(call_id, Answer(text, images))
        record.cell_id = result.cell_id
        record.execution_count = result.execution_count
        record.status = "error" if result.failed else "ok"
        record.outcome = outcome(result, self.redact)
        # What the step defined is the notebook's now; a name it rebound is no longer known.
        self.known_functions -= bound_names(record.code)
        self.known_functions |= defined_functions([record.code])
        if result.failed:
            digest = _code_hash(record.code)
            if digest == self._last_failed:
                self._halt = Halt(
                    f"Stopped: the same code failed twice in a row ({record.outcome})."
                )
            self._last_failed = digest
        else:
            self._last_failed = None

    def on_read(self, step_id: str, text: str) -> None:
        """The text a ReadCell or ReadVariables ``step_id`` asked for."""
        record, call_id = self._take(step_id)
        budget = self.limits.result_chars
        shown = self.redact(text[: budget + self.redact.margin])
        if len(shown) > budget:
            shown = shown[:budget] + f"\n… [{len(shown) - budget} more characters cut]"
        self._answer(call_id, Answer(shown or "(nothing)", kind="read"))
        record.status = "read"
        record.outcome = (
            f"read cell {record.cell}" if record.kind == READ_CELL else "read the variables"
        )

    def on_skipped(self, step_id: str) -> None:
        """The user chose Skip: the step did not run."""
        record, call_id = self._take(step_id)
        self._answer(call_id, Answer(_SKIPPED, kind="skipped"))
        record.status = "skipped"
        record.outcome = "skipped by the user"
