"""What the agent's loop hands its driver (:data:`Action`: a step to carry out, the answer, or a
halt), the record of a step for the history and undo, and the next request to the model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from .tools import OP_RUN_CELL, Tool

if TYPE_CHECKING:
    from ..policy.consent import Plan

__all__ = ["Action", "Finish", "Halt", "ModelRequest", "StepRecord", "ToolStep"]


@dataclass(frozen=True)
class ToolStep:
    """Carry out one call of ``tool`` (after the user's approval when ``needs_approval``), as
    its record says: its ``runs`` and ``op`` tell the driver where and how."""

    step_id: str
    tool: Tool
    #: Checked and redacted: exactly what is shown, approved and carried out.
    arguments: dict[str, Any]
    needs_approval: bool = False
    #: What the policy found ("writes files: df.to_csv('out.csv')"), even when no approval is
    #: needed.
    reasons: tuple[str, ...] = ()
    #: The code's decision; a trial first when its action is "trial".
    plan: Plan | None = None

    @property
    def trial(self) -> bool:
        """Whether the driver must try the code in a confined copy of the kernel first (and
        hand the report to ``AgentLoop.on_trial``)."""
        from ..policy.consent import TRIAL

        return self.plan is not None and self.plan.action == TRIAL

    @property
    def kind(self) -> str:
        """The tool's name."""
        return self.tool.name

    @property
    def code(self) -> str:
        """The code of a run_code step ("" otherwise)."""
        value = self.arguments.get("code", "") if self.tool.op == OP_RUN_CELL else ""
        return value if isinstance(value, str) else ""

    @property
    def purpose(self) -> str:
        """Why, in the model's words ("" if it gave none)."""
        value = self.arguments.get("purpose", "")
        return value if isinstance(value, str) else ""

    @property
    def title(self) -> str:
        """The step's line in the chat."""
        return self.tool.title(self.arguments)


@dataclass(frozen=True)
class Finish:
    """The model answered: the turn is over."""

    answer: str


@dataclass(frozen=True)
class Halt:
    """The turn stopped before the model answered; ``reason`` is one line for the user."""

    reason: str


Action = Union[ToolStep, Finish, Halt]


@dataclass
class StepRecord:
    """One step of the turn, for the history and undo."""

    step_id: str
    #: The tool's name.
    kind: str
    code: str = ""
    #: For read_cell: the cell asked for.
    cell: str = ""
    purpose: str = ""
    #: The step's line in the chat ("ran code", "read cell 3", "time · get_current_time").
    title: str = ""
    #: The notebook cell the code ran in.
    cell_id: str = ""
    execution_count: int | None = None
    #: "pending", "ok", "error", "skipped" or "read".
    status: str = "pending"
    #: One line: "NameError: name 'x' is not defined", "Out: 42", "skipped".
    outcome: str = ""
    #: What the model was told of the result (a server step's result, shown in the chat).
    shown: str = ""
    #: What the step's trial saw: ``{status, concerns, preview, ran}`` (None: no trial).
    trial: dict[str, Any] | None = None
    #: What the tool's record says the browser does (``run_cell``, ``call``, ...).
    op: str = ""
    #: The MCP server the tool belongs to ("" for the built-in ones).
    server: str = ""
    #: The call's arguments, redacted, as shown and carried out.
    arguments: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """What the chat history keeps: ``{step_id, tool, title, code, cell_id, outcome}``,
        ``trial`` when one was made, and for a tool other than run_code (whose code and cell
        say it all) its ``server``, ``arguments`` (JSON) and ``result`` when it has them."""
        kept: dict[str, Any] = {
            "step_id": self.step_id,
            "tool": self.kind,
            "title": self.title,
            "code": self.code,
            "cell_id": self.cell_id,
            "outcome": self.outcome,
        }
        if self.trial is not None:
            kept["trial"] = self.trial
        if self.op != OP_RUN_CELL:
            details = {
                "server": self.server,
                "arguments": json.dumps(self.arguments, ensure_ascii=False, default=str)
                if self.arguments
                else "",
                "result": self.shown,
            }
            kept.update({key: value for key, value in details.items() if value})
        return kept


@dataclass(frozen=True)
class ModelRequest:
    """The next request to the model: the messages, and the tools (None: the fenced protocol)."""

    messages: list[dict]
    tools: list[dict] | None
