"""Tool calls in OpenAI's message shapes: the assistant message that asked for them and the
``tool`` message that answers one."""

from __future__ import annotations

import json
from typing import Any

from ...llm.tool_calls import ToolCall


def assistant_message(text: str, calls: list[ToolCall]) -> dict:
    """The assistant message that asked for ``calls``, as OpenAI expects it back in the history."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in calls
        ]
    return message


def tool_message(call_id: str, text: str) -> dict:
    """The tool result for the call ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": text}
