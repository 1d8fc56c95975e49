"""The agent's tools: one record per tool (:mod:`.record`), the built-in ones (:mod:`.builtin`),
the registry a turn offers (:mod:`.registry`, with the ``chapyter_ext.tools`` entry points),
MCP servers' tools as records (:mod:`.mcp`), the calls in OpenAI's message shapes
(:mod:`.messages`) and the fenced-block protocol for models without tools (:mod:`.fenced`).

Where a new tool goes: one :class:`Tool` subclass in :mod:`.builtin` (or, from another package,
under the ``chapyter_ext.tools`` entry point); every driver dispatches on its ``runs`` and
``op``, so nothing else changes.
"""

from __future__ import annotations

from ...llm.tool_calls import ToolCall
from .builtin import (
    BUILTIN_TOOLS,
    LIST_VARIABLES,
    PLAN_MARKS,
    PLAN_STEP,
    READ_CELL,
    RUN_CODE,
    PlanStepMark,
)
from .fenced import FencedStep, fenced_step
from .messages import assistant_message, tool_message
from .record import (
    KERNEL_OPS,
    OP_CALL,
    OP_EVALUATE,
    OP_READ_CELL,
    OP_RUN_CELL,
    RUNS_KERNEL,
    RUNS_SERVER,
    Approval,
    BadToolCall,
    Observation,
    Tool,
)
from .registry import (
    ENTRY_POINT_GROUP,
    ToolRegistry,
    ToolSource,
    TurnTools,
    default_registry,
    installed_tools,
)

__all__ = [
    "BUILTIN_TOOLS",
    "ENTRY_POINT_GROUP",
    "KERNEL_OPS",
    "LIST_VARIABLES",
    "OP_CALL",
    "OP_EVALUATE",
    "OP_READ_CELL",
    "OP_RUN_CELL",
    "PLAN_MARKS",
    "PLAN_STEP",
    "READ_CELL",
    "RUNS_KERNEL",
    "RUNS_SERVER",
    "RUN_CODE",
    "Approval",
    "BadToolCall",
    "FencedStep",
    "Observation",
    "PlanStepMark",
    "Tool",
    "ToolCall",
    "ToolRegistry",
    "ToolSource",
    "TurnTools",
    "assistant_message",
    "default_registry",
    "fenced_step",
    "installed_tools",
    "tool_message",
]
