"""What a backend hands back for an agent step: :class:`StepDelta` while it streams,
:class:`StepReply` when it is whole (prose, tool calls, usage). Data only, so that the
backends and :mod:`.backend` (which falls back on the OpenAI one) both import it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tool_calls import ToolCall
    from .usage import Usage

__all__ = ["StepDelta", "StepReply"]


@dataclass
class StepDelta:
    """One item of :func:`~chapyter_ext.llm.astream_step`: a piece of prose, or (``done``) the
    end of the reply with its assembled tool calls."""

    text: str = ""
    done: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    model: str = ""
    #: Tokens the endpoint reported for the reply (``done`` only; None if it reported none).
    usage: Usage | None = None


@dataclass
class StepReply:
    """A finished reply of :func:`~chapyter_ext.llm.complete_step`: prose and the tool calls
    it asked for."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    model: str = ""
    attempts: int = 1
    elapsed: float = 0.0
    #: Tokens the endpoint reported (None if it reported none).
    usage: Usage | None = None
