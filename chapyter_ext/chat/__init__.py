"""The AI Chat's server side: a request read and bounded (:mod:`.request`), the notebook's
context and the project's rules added, the reply streamed as events (:mod:`.events`, the wire
of the chat and of agent mode) by a turn (:mod:`.turn`) registered while it runs
(:mod:`.running_turns`), its prompts full and small (:mod:`.prompts`).

This package is the chat's public surface: agent mode and Fix use the chat through what it
exports here, never through its modules (``tests/test_layers.py``).
"""

from .attachments import MAX_ATTACHMENTS_BODY_BYTES
from .commands import SlashCommand, installed_commands
from .events import (
    AgentDone,
    AgentStart,
    ChatEvent,
    Notice,
    Plan,
    PlanStep,
    Step,
    StepDone,
    Token,
    TokenRedactor,
    encode,
)
from .request import (
    MAX_MESSAGE_CHARS,
    ChatError,
    ChatRequest,
    ContextRequest,
    assemble_context,
    parse_context,
)
from .service import ChatService, ChatTurn
from .setup import TurnSetup
from .turn import StreamingTurn, TurnEnd, TurnHost

__all__ = [
    "MAX_ATTACHMENTS_BODY_BYTES",
    "MAX_MESSAGE_CHARS",
    "AgentDone",
    "AgentStart",
    "ChatError",
    "ChatEvent",
    "ChatRequest",
    "ChatService",
    "ChatTurn",
    "ContextRequest",
    "Notice",
    "Plan",
    "PlanStep",
    "SlashCommand",
    "Step",
    "StepDone",
    "StreamingTurn",
    "Token",
    "TokenRedactor",
    "TurnEnd",
    "TurnHost",
    "TurnSetup",
    "assemble_context",
    "encode",
    "installed_commands",
    "parse_context",
]
