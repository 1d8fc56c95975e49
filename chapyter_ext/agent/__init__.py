"""The agent: the chat as a code interpreter (issue 11).

The turn's decisions live in :mod:`.loop` (sans-IO), its messages in :mod:`.transcript`; the
tools and the fenced protocol in :mod:`.tools`; the system prompts in :mod:`.prompts`; approval
in :mod:`.policy`; what the model sees of a result in :mod:`.observe`; the kernel-side figure
digest in :mod:`.figures` (the one module the kernel imports); tools and images per endpoint in
:mod:`.capabilities`. Drivers: the server's turn (``server/agent.py``) and the headless CLI
(:mod:`.headless`).

Importing this package loads only :mod:`.loop` and the modules it needs (no IPython, no
matplotlib, no openai).
"""

from __future__ import annotations

from .loop import (
    Action,
    AgentLimits,
    AgentLoop,
    Finish,
    Halt,
    ModelRequest,
    ReadCell,
    ReadVariables,
    RunCode,
    StepRecord,
    StepResult,
)
from .tools import ToolCall

__all__ = [
    "Action",
    "AgentLimits",
    "AgentLoop",
    "Finish",
    "Halt",
    "ModelRequest",
    "ReadCell",
    "ReadVariables",
    "RunCode",
    "StepRecord",
    "StepResult",
    "ToolCall",
]
