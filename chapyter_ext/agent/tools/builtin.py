"""The built-in tools: ``run_code`` (run Python in a new cell of the notebook), ``read_cell``
(the source and outputs of an existing cell) and ``list_variables`` (the kernel's variables
summarised again). All three run in the notebook's kernel. ``plan_step`` marks a step of the
plan a turn follows (Plan first): it runs on the server, changes nothing and never asks; a turn
offers it only when it carries a plan (it is not in :data:`BUILTIN_TOOLS`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...policy.consent import RUN, plan
from ...redact import Redactor
from ..kernel_reads import expression as kernel_expression
from ..observe import observe, outcome
from ..results import StepResult, ToolOutput
from .record import (
    OP_CALL,
    OP_EVALUATE,
    OP_READ_CELL,
    OP_RUN_CELL,
    RUNS_SERVER,
    Approval,
    BadToolCall,
    Observation,
    Tool,
    clip,
)

RUN_CODE = "run_code"
READ_CELL = "read_cell"
LIST_VARIABLES = "list_variables"
PLAN_STEP = "plan_step"
#: What ``plan_step`` may mark a step.
PLAN_MARKS = ("done", "failed", "skipped")

#: Characters of the variables' summary a ``list_variables`` call asks the kernel for.
VARIABLES_BUDGET = 6000


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


class RunCode(Tool):
    """Run Python in a new cell; asks as the policy's code analysis says."""

    name: str = RUN_CODE
    description: str = (
        "Run Python code in a new cell of the user's notebook, in its live IPython kernel "
        "(variables persist; magics work). Returns the cell's output: stdout/stderr, the value "
        "of the last expression, the error with the frames of this code, figures."
    )
    parameters: dict[str, Any] = _object(
        {
            "code": {"type": "string", "description": "The Python code of the new cell."},
            "purpose": {
                "type": "string",
                "description": "One short sentence telling the user what this step does.",
            },
        },
        ["code"],
    )
    op: str = OP_RUN_CELL
    acts: bool = True
    label: str = "run code"

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        code = arguments.get("code") if isinstance(arguments, dict) else None
        if not isinstance(code, str) or not code.strip():
            raise BadToolCall("run_code needs a non-empty string argument 'code'.")
        if "purpose" in arguments and not isinstance(arguments["purpose"], str):
            raise BadToolCall("run_code's 'purpose' must be a string.")
        return arguments

    def approval(
        self,
        policy: str,
        arguments: dict[str, Any],
        known_functions: set[str],
        *,
        known_types: Mapping[str, str] | None = None,
        trials: bool = False,
        secret_names: Iterable[str] = (),
    ) -> Approval:
        chosen = plan(
            policy,
            arguments.get("code", ""),
            known_functions=known_functions,
            known_types=known_types,
            trials=trials,
            secret_names=secret_names,
        )
        return Approval(
            needs=chosen.action != RUN, reasons=chosen.lines, refused=chosen.refused, plan=chosen
        )

    def title(self, arguments: dict[str, Any]) -> str:
        return "ran code"

    def request(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"code": arguments.get("code", ""), "purpose": arguments.get("purpose", "")}

    def observe(self, result: Any, *, budget: int, images: bool, redactor: Redactor) -> Observation:
        if not isinstance(result, StepResult):
            error = result.error if isinstance(result, ToolOutput) else str(result)
            result = StepResult(error=error or "the cell did not run")
        parts = observe(result, budget=budget, images=images, redactor=redactor)
        text = "\n".join(p["text"] for p in parts if p.get("type") == "text")
        pictures = [p for p in parts if p.get("type") == "image_url"]
        status = "error" if result.failed else "ok"
        return Observation(text, pictures, status, outcome(result, redactor))


class ReadCell(Tool):
    """The source and outputs of an existing cell, read from the notebook document."""

    name: str = READ_CELL
    description: str = "Read the source and outputs of an existing notebook cell."
    parameters: dict[str, Any] = _object(
        {
            "cell": {
                "type": "string",
                "description": 'The cell\'s 1-based position in the notebook (e.g. "3") or its id.',
            }
        },
        ["cell"],
    )
    op: str = OP_READ_CELL
    label: str = "read a cell"

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        cell = arguments.get("cell") if isinstance(arguments, dict) else None
        if isinstance(cell, int) and not isinstance(cell, bool):
            return {**arguments, "cell": str(cell)}
        if not isinstance(cell, str) or not cell.strip():
            raise BadToolCall(
                "read_cell needs an argument 'cell': a 1-based position or a cell id."
            )
        return {**arguments, "cell": cell.strip()}

    def title(self, arguments: dict[str, Any]) -> str:
        return f"read cell {arguments.get('cell', '?')}"

    def request(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"cell": arguments.get("cell", "")}

    def observe(self, result: Any, *, budget: int, images: bool, redactor: Redactor) -> Observation:
        return _read(result, budget, redactor)


class ListVariables(Tool):
    """The kernel's variables summarised again, evaluated silently in the kernel."""

    name: str = LIST_VARIABLES
    description: str = (
        "Summarise the kernel's variables again (names, types, shapes, columns), e.g. after "
        "code changed them."
    )
    parameters: dict[str, Any] = _object({}, [])
    op: str = OP_EVALUATE
    label: str = "list the variables"

    def title(self, arguments: dict[str, Any]) -> str:
        return "read the variables"

    def request(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"expression": kernel_expression("variables", VARIABLES_BUDGET)}

    def observe(self, result: Any, *, budget: int, images: bool, redactor: Redactor) -> Observation:
        return _read(result, budget, redactor)


def _read(result: Any, budget: int, redactor: Redactor) -> Observation:
    """A read's text for the model (why it failed, when it did); its one line is the step's
    title ("read cell 3")."""
    output = result if isinstance(result, ToolOutput) else ToolOutput(text=str(result))
    if output.error:
        text = clip(f"(could not be read: {output.error})", budget, redactor)
        return Observation(text, status="read", outcome="could not read")
    return Observation(clip(output.text or "(nothing)", budget, redactor), [], "read")


#: The built-in tools, in the order the model is told of them.
BUILTIN_TOOLS: tuple[Tool, ...] = (RunCode(), ReadCell(), ListVariables())


class PlanStepMark(Tool):
    """``plan_step``: mark a step of the turn's plan done, failed or skipped. Runs on the
    server, has no side effect (``acts`` False: it never asks); ``mark(step, status, note)``
    records it and says what the model is told (:class:`BadToolCall` for a step the plan
    does not have)."""

    name: str = PLAN_STEP
    description: str = (
        "Mark a step of the user's plan once you finished it (done), could not do it (failed) "
        "or left it out (skipped). Changes nothing in the notebook."
    )
    parameters: dict[str, Any] = _object(
        {
            "step": {"type": "integer", "description": "The step's number in the plan (1-based)."},
            "status": {"type": "string", "enum": list(PLAN_MARKS)},
            "note": {"type": "string", "description": "One short line: what came of it."},
        },
        ["step", "status"],
    )
    runs: str = RUNS_SERVER
    op: str = OP_CALL
    label: str = "mark a plan step"

    def __init__(self, mark: Callable[[int, str, str], str]) -> None:
        self._mark = mark

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        args = super().check(arguments)
        if args.get("status") not in PLAN_MARKS:
            raise BadToolCall(f"plan_step's 'status' must be one of {', '.join(PLAN_MARKS)}.")
        return args

    def title(self, arguments: dict[str, Any]) -> str:
        return f"plan step {arguments.get('step', '?')}: {arguments.get('status', '?')}"

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        note = arguments.get("note")
        return ToolOutput(
            text=self._mark(
                arguments["step"], arguments["status"], note if isinstance(note, str) else ""
            )
        )
