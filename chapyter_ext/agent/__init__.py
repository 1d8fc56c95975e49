"""The agent: the chat as a code interpreter, with tools from a registry.

The turn's decisions live in :mod:`.loop` (sans-IO; what it hands the driver in :mod:`.actions`, its
limits and policy in :mod:`.limits`), its messages in :mod:`.transcript`; the tools, one record
each, in :mod:`.tools` (with the fenced protocol for models without tools); the system prompts in
:mod:`.system_prompts`; what the model sees of a cell that ran in :mod:`.observe`; the kernel-side
figure digest in :mod:`chapyter_ext.context.figures` and the kernel-side reads in
:mod:`.kernel_reads` (the modules the kernel imports); tools and images per endpoint in
:mod:`.capabilities`. Drivers: the server's turn (``agent/service.py``) and the headless CLI
(:mod:`.headless`).

Importing this package loads only :mod:`.loop` and the modules it needs (no IPython, no
matplotlib, no openai, no mcp).
"""

from __future__ import annotations

from .actions import Action, Finish, Halt, ModelRequest, StepRecord, ToolStep
from .limits import AgentLimits
from .loop import AgentLoop
from .results import StepResult, ToolOutput
from .tools import Tool, ToolCall, ToolRegistry, default_registry

__all__ = [
    "Action",
    "AgentLimits",
    "AgentLoop",
    "Finish",
    "Halt",
    "ModelRequest",
    "StepRecord",
    "StepResult",
    "Tool",
    "ToolCall",
    "ToolOutput",
    "ToolRegistry",
    "ToolStep",
    "default_registry",
]
