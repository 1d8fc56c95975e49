"""OpenAI's message shape (the internal one) as Anthropic's Messages API takes it: pure data,
no SDK, so it is tested on its own.

Mapped: ``system`` messages become the ``system`` field; ``user`` text and images (``image_url``
parts: ``data:`` URLs as base64, others by URL); ``assistant`` text and ``tool_calls`` (as
``tool_use`` blocks); ``tool`` results (as ``tool_result`` blocks in a user turn); ``tools``
(OpenAI function schemas) as Anthropic tools; consecutive turns of one role merged. Not mapped:
``name`` on messages, ``tool_choice``, ``response_format``, audio and file parts (dropped),
``n`` and logprobs (never sent by chapyter-ext), and the temperature (the SDK no longer takes
it: the model's default applies).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .endpoint import Endpoint

__all__ = ["FINISH_REASONS", "request_params", "to_anthropic"]

#: Anthropic's ``stop_reason`` in OpenAI's words (``finish_reason``).
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def request_params(
    endpoint: Endpoint, messages: list[dict], tools: list[dict] | None, extra_body: dict | None
) -> dict[str, Any]:
    """Keyword arguments of ``messages.create`` for an OpenAI-shaped request."""
    system, turns = to_anthropic(messages)
    params: dict[str, Any] = {
        "model": endpoint.model,
        "messages": turns,
        "max_tokens": endpoint.max_tokens,
    }
    if system:
        params["system"] = system
    if tools:
        params["tools"] = [_tool(tool) for tool in tools]
    if extra_body:
        params["extra_body"] = extra_body
    return params


def to_anthropic(messages: list[dict]) -> tuple[str, list[dict[str, Any]]]:
    """``(system, messages)`` in Anthropic's shape for OpenAI-shaped ``messages``."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            system.append(_text_of(content))
            continue
        if role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id") or ""),
                "content": _text_of(content),
            }
            _append(turns, "user", [result])
            continue
        blocks = _blocks(content)
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                blocks.append(_tool_use(call))
            _append(turns, "assistant", blocks)
        else:
            _append(turns, "user", blocks)
    return "\n\n".join(part for part in system if part), turns


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)  # Anthropic wants the roles to alternate
    else:
        turns.append({"role": role, "content": blocks})


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            image = _image(part.get("image_url"))
            if image is not None:
                blocks.append(image)
    return blocks


def _image(value: Any) -> dict[str, Any] | None:
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str):
        return None
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:") :].split(";base64,", 1)
        source = {"type": "base64", "media_type": media_type, "data": data}
    else:
        source = {"type": "url", "url": url}
    return {"type": "image", "source": source}


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments") or "{}"
    try:
        decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        decoded = {}
    return {
        "type": "tool_use",
        "id": str(call.get("id") or ""),
        "name": str(function.get("name") or ""),
        "input": decoded if isinstance(decoded, dict) else {},
    }


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function", tool)
    out: dict[str, Any] = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        out["description"] = function["description"]
    return out
