"""One agent turn's state and decisions, without I/O (sans-IO).

A driver (the server's async turn, the headless CLI) owns the I/O: it asks
:meth:`AgentLoop.request` for the next model request, sends it, hands the reply to
:meth:`AgentLoop.on_reply`, carries out the :data:`Action` it gets back (run code in a new cell,
read a cell, list the variables, call an MCP tool: a :class:`ToolStep`, carried out as its
tool's record says, :mod:`.tools`) and reports the result with :meth:`AgentLoop.on_result` or
:meth:`AgentLoop.on_skipped`, until the action is a :class:`Finish` or a :class:`Halt`::

    loop = AgentLoop(question=q, context=ctx, history=[], tools=True, images=False,
                     policy="risky", limits=AgentLimits(), registry=default_registry(),
                     known_functions=defined_functions(cells_that_ran))
    while True:
        halt = loop.halt()              # a cap hit, or two steps in a row changed nothing
        if halt: break
        req = loop.request()            # req.messages, req.tools
        reply = call_the_model(req)     # text and tool calls
        action = loop.on_reply(reply.text, reply.tool_calls)
        if isinstance(action, (Finish, Halt)): break
        loop.on_result(action.step_id, carry_out(action.tool, action.arguments))

Every step (runs, reads and calls alike) counts against ``limits.max_steps``; the turn's clock
starts when the loop is made. What the model sees of a result is built by the tool's record
(:meth:`~.tools.Tool.observe`), within ``limits.result_chars`` and redacted; whether a call
needs the user's approval by the record too (:meth:`~.tools.Tool.approval`: run_code asks the
code analysis of :mod:`chapyter_ext.policy`). Every argument is redacted before it is shown,
approved or carried out.

The turn never loops without progress, whatever the model: the same call twice in a row
(whatever came of the first) ends the turn before it is carried out again; a run that changes
nothing the turn can see (no output, and its code only defines functions or classes, or does
nothing) is sent back to the model with that fact, and a second one in a row ends the turn.
Code that fails the guard rails (``check``, :func:`chapyter_ext.guards.check_code`: it does not
parse; with the small-model profile, names the kernel lacks) is not offered to run: the turn
ends with the reason in one line. A final answer that restates, whole or in part, what the
server built for the turn is one honest line instead (:mod:`chapyter_ext.guards.echo`).
Under policy ``risky`` the notebook's own functions (``known_functions``: defined by cells that
ran, so consented to) may be called unasked, and so may those a step of the turn defines once it
ran; a step that rebinds such a name makes it unknown again.

Trials: a ``run_code`` step the analysis cannot prove harmless comes back with ``trial`` set
(``trials``: the driver can make one, :mod:`chapyter_ext.trial`); the driver runs it in a
confined copy of the kernel and hands the report to :meth:`AgentLoop.on_trial`, whose
:class:`~chapyter_ext.policy.consent.Consent` says whether the step runs now (guarded) or asks,
and with what to show. A report saying no trial can be made here turns trials off for the rest
of the turn.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..guards import Verdict, check_code
from ..guards.answers import clean_answer
from ..guards.echo import request_instructions
from ..help_pointers import ENDPOINTS_HINT
from ..messages import build_messages, with_images
from ..parsing.fences import without_thinking
from ..policy import bound_names, defined_functions
from ..redact import Redactor
from .actions import Action, Finish, Halt, ModelRequest, StepRecord, ToolStep
from .limits import POLICIES, AgentLimits, time_cap_line
from .results import StepResult, ToolOutput
from .system_prompts import FENCED_SYSTEM_PROMPT, tools_system_prompt
from .tools import (
    OP_RUN_CELL,
    RUN_CODE,
    BadToolCall,
    ToolCall,
    ToolRegistry,
    default_registry,
    fenced_step,
)
from .transcript import Answer, Exchange, render, with_ids

if TYPE_CHECKING:
    from ..policy.consent import Consent
    from ..trial.report import TrialReport

_SKIPPED = (
    "The user skipped this step: it was NOT run and nothing changed. Do not propose it again "
    "unless asked; continue another way or answer with what you know."
)


def _call_hash(name: str, arguments: dict[str, Any]) -> str:
    """What makes two calls the same: the tool and its arguments (run_code: the code)."""
    code = arguments.get("code") if name == RUN_CODE else None
    text = code.strip() if isinstance(code, str) else json.dumps(arguments, sort_keys=True)
    return hashlib.sha256(f"{name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


_NO_PROGRESS = (
    "Note: this step showed nothing and changed no variable{what}: it made no progress. Do "
    "not run it again. Call what you defined, or print the values you need, or answer now."
)


def _shows_something(result: StepResult) -> bool:
    """Whether a run left anything to see: text, a value, a display, an error."""
    if result.failed or result.figures or result.images:
        return True
    for output in result.outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text")
            if "".join(text) if isinstance(text, list) else text:
                return True
        elif kind in ("execute_result", "display_data", "update_display_data"):
            return True
    return False


def _only_defines(code: str) -> tuple[bool, list[str]]:
    """Whether ``code`` changes no variable the turn can see: it only defines functions or
    classes (never called), or does nothing (``pass``, a bare constant); and those names.
    Assignments, imports, loops and calls (which may change data in place) count as changes;
    code that does not parse (IPython syntax) too."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False, []
    defined: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.append(node.name)
        elif isinstance(node, ast.Pass) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            continue
        else:
            return False, []
    return True, defined


def _redacted(value: Any, redact: Redactor) -> Any:
    """``value`` with every string in it redacted (dict keys too)."""
    if isinstance(value, str):
        return redact(value) if value else value
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    if isinstance(value, dict):
        return {redact(str(k)): _redacted(v, redact) for k, v in value.items()}
    return value


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
        registry: ToolRegistry | None = None,
        system_notes: str = "",
        check: Callable[[str], Verdict] | None = None,
        small: bool = False,
        known_types: Mapping[str, str] | None = None,
        trials: bool = False,
        secret_names: Iterable[str] = (),
        attached_images: Sequence[dict] = (),
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.tools = tools
        self.images = images
        self.policy = policy
        #: The tools the model may call (with ``tools``; the fenced protocol has run_code only).
        self.registry = registry if registry is not None else default_registry()
        #: Added to the system prompt: the project's rules, MCP servers that could not start.
        self.system_notes = system_notes
        #: The notebook's functions and classes the policy lets steps call (see the docstring).
        self.known_functions = set(known_functions)
        #: What the notebook's names hold, for the analysis ("module:numpy", a type's name).
        self.known_types = dict(known_types or {})
        #: Whether the driver can try unproven code in a confined copy of the kernel first.
        self.trials = trials
        #: Environment variables that hold secrets beyond the redactor's rule (reading one asks).
        self.secret_names = tuple(secret_names)
        self.limits = limits
        self.redact = redactor if redactor is not None else Redactor()
        self._clock = clock
        self._started = clock()
        # Validates the question and the history (ValueError) before anything happens.
        self._opening = build_messages(question, context, history=history, system=None)
        # The images the user attached go with the question, as the model's image parts.
        self._opening = with_images(self._opening, list(attached_images))
        #: The guard rails of a step's code (default: it parses as an IPython cell).
        self._check = check or check_code
        #: The small-model profile (the bundled model): its honest lines say so.
        self.small = small
        self._exchanges: list[Exchange] = []
        self.steps: list[StepRecord] = []
        self._steps: dict[str, ToolStep] = {}
        self._records: dict[str, StepRecord] = {}
        self._pending: tuple[str, str] | None = None  # (step id, tool call id)
        self._count = 0
        self._last_call: str | None = None  # the previous step's _call_hash
        self._stalled = False  # the previous run changed nothing
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
        """The Halt that ends the turn now, if any: the time cap passed, or two runs in a row
        changed nothing. Drivers ask before each model request (``on_reply`` would return it
        too, after a wasted request)."""
        if self._halt is None and self.remaining() <= 0:
            self._halt = Halt(time_cap_line(self.limits.time_limit))
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
        system = tools_system_prompt(self.registry) if self.tools else FENCED_SYSTEM_PROMPT
        if self.system_notes:
            system = f"{system}\n{self.system_notes}"
        messages = [{"role": "system", "content": system}, *self._opening]
        last = len(self._exchanges) - 1
        for i, exchange in enumerate(self._exchanges):
            messages.extend(render(exchange, tools=self.tools, latest=i == last))
        return ModelRequest(
            messages=messages, tools=self.registry.schemas() if self.tools else None
        )

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
            tool = self.registry.get(call.name)
            if tool is None:
                names = ", ".join(self.registry.names)
                return self._end(
                    Halt(
                        "The model made a tool call that cannot be run: There is no tool named "
                        f"{call.name!r}; the tools are {names}."
                    )
                )
            try:
                arguments = tool.check(dict(call.arguments or {}))
            except BadToolCall as err:
                return self._end(Halt(f"The model made a tool call that cannot be run: {err}"))
        else:
            step = fenced_step(text) if not self.tools else None
            if step is None or step.code is None:
                answer = step.prose if step is not None else without_thinking(text).strip()
                if not answer:
                    return self._end(Halt("The model ended the turn without an answer."))
                return self._end(Finish(self._final(self.redact(answer))))
            tool = self.registry.get(RUN_CODE) or default_registry().get(RUN_CODE)
            assert tool is not None
            arguments = {"code": step.code, "purpose": step.prose}
            calls = [ToolCall(id="fenced", name=RUN_CODE, arguments={"code": step.code})]
        if self._count >= self.limits.max_steps:
            return self._end(Halt(f"Stopped after {self._count} steps (setting: Agent max steps)."))
        # What is shown, approved and carried out is the redacted call, in every driver.
        arguments = _redacted(arguments, self.redact)
        again = self._again(tool.name, arguments)
        if again is not None:
            return self._end(again)
        if tool.op == OP_RUN_CELL:
            code = arguments.get("code")
            verdict = self._check(code if isinstance(code, str) else "")
            if not verdict.runnable:
                return self._end(Halt(self._refused(verdict.problem)))
        decision = tool.approval(
            self.policy,
            arguments,
            self.known_functions,
            known_types=self.known_types,
            trials=self.trials,
            secret_names=self.secret_names,
        )
        if decision.refused:
            return self._end(Halt(decision.refused))
        self._count += 1
        step_id = f"step-{self._count}"
        self._exchanges.append(Exchange(text=text, calls=calls, fenced=not self.tools))
        self._pending = (step_id, calls[0].id)
        action = ToolStep(
            step_id, tool, arguments, decision.needs, tuple(decision.reasons), decision.plan
        )
        cell = arguments.get("cell", "")
        record = StepRecord(
            step_id=step_id,
            kind=tool.name,
            code=action.code,
            cell=cell if isinstance(cell, str) else "",
            purpose=action.purpose,
            title=action.title,
            op=tool.op,
            server=tool.server,
            arguments={} if tool.op == OP_RUN_CELL else dict(arguments),
        )
        self.steps.append(record)
        self._records[step_id] = record
        self._steps[step_id] = action
        return action

    def _end(self, action: Finish | Halt) -> Finish | Halt:
        self._over = True
        return action

    def _again(self, name: str, arguments: dict[str, Any]) -> Halt | None:
        """The Halt for a call that repeats the previous step (whatever came of it)."""
        if not self.steps or _call_hash(name, arguments) != self._last_call:
            return None
        previous = self.steps[-1]
        came = f" ({previous.outcome})" if previous.outcome else ""
        return Halt(
            f"Stopped: the model asked for the same step as step {len(self.steps)} again{came}; "
            "it would change nothing."
        )

    def _refused(self, problem: str) -> str:
        line = f"Stopped: the model's code was not run: {problem}."
        if self.small:
            line += (
                " The small local model could not write this; configure an endpoint for "
                f"harder requests ({ENDPOINTS_HINT})."
            )
        return line

    def _final(self, answer: str) -> str:
        """The final answer, or one honest line when it restates, whole or in part, what the
        server built for the turn (its system prompt, the kernel state): not the chat's
        earlier turns, nor what the steps showed, which an answer reports."""
        opening = self.request().messages[: 1 + len(self._opening)]
        text, _ = clean_answer(answer, request_instructions(opening), small=self.small)
        return text

    # -- results ---------------------------------------------------------------------------------

    def _take(self, step_id: str) -> tuple[StepRecord, str]:
        if self._pending is None or self._pending[0] != step_id:
            raise KeyError(f"no step {step_id!r} is waiting for a result")
        call_id = self._pending[1]
        self._pending = None
        return self._records[step_id], call_id

    def _answer(self, call_id: str, answer: Answer) -> None:
        self._exchanges[-1].answers[call_id] = answer

    def on_result(self, step_id: str, result: StepResult | ToolOutput | str) -> None:
        """Step ``step_id`` was carried out (or could not be): ``result`` is what its cell left
        (a :class:`StepResult`), what a read or a server tool gave (a :class:`ToolOutput`, or
        its text). Recorded for the model as the step's tool says."""
        record, call_id = self._take(step_id)
        step = self._steps[step_id]
        seen = step.tool.observe(
            result, budget=self.limits.result_chars, images=self.images, redactor=self.redact
        )
        kind = "read" if seen.status == "read" else "ran"
        self._answer(call_id, Answer(seen.text, seen.images, kind=kind))
        if isinstance(result, StepResult):
            record.cell_id = result.cell_id
            record.execution_count = result.execution_count
        record.status = seen.status
        record.outcome = seen.outcome or step.title
        record.shown = seen.text
        self._last_call = _call_hash(step.tool.name, step.arguments)
        if step.tool.op != OP_RUN_CELL or not isinstance(result, StepResult):
            self._stalled = False  # what was read or called is news to the model
            return
        # What the step defined is the notebook's now; a name it rebound is no longer known.
        self.known_functions -= bound_names(record.code)
        self.known_functions |= defined_functions([record.code])
        idle, defined = _only_defines(record.code)
        if _shows_something(result) or not idle:
            self._stalled = False
            return
        if self._stalled:
            self._halt = Halt("Stopped: two steps in a row showed nothing and changed no variable.")
            return
        # Sent back once: the model is told, and the next step must do something.
        self._stalled = True
        what = f" (it only defined {', '.join(defined)}, never called)" if defined else ""
        note = _NO_PROGRESS.format(what=what)
        self._answer(call_id, Answer(f"{seen.text}\n\n{note}".strip(), seen.images, kind=kind))

    def on_trial(self, step_id: str, report: TrialReport) -> Consent:
        """The trial of the pending step ``step_id`` came back: the decision (run it now,
        guarded, or ask, and what to show), kept on the step's record. A report that no trial
        can be made here turns trials off for the rest of the turn."""
        from ..policy.consent import after_trial
        from ..trial.report import UNAVAILABLE

        if self._pending is None or self._pending[0] != step_id:
            raise KeyError(f"no step {step_id!r} is waiting for a trial")
        step = self._steps[step_id]
        if step.plan is None or not step.trial:
            raise KeyError(f"step {step_id!r} needs no trial")
        if report.status == UNAVAILABLE:
            self.trials = False
        consent = after_trial(step.plan, report)
        record = self._records[step_id]
        record.trial = {
            "status": report.status,
            "concerns": [self.redact(line) for line in consent.concerns],
            "preview": [self.redact(line) for line in consent.preview],
            "ran": consent.run,
        }
        return consent

    def on_skipped(self, step_id: str) -> None:
        """The user chose Skip: the step did not run."""
        record, call_id = self._take(step_id)
        self._answer(call_id, Answer(_SKIPPED, kind="skipped"))
        self._last_call = _call_hash(record.kind, self._steps[step_id].arguments)
        record.status = "skipped"
        record.outcome = "skipped by the user"
