"""The tools an outside agent is offered over MCP: one record each (name, what it does, its
input schema, whether it acts), and a page's result turned into MCP content (text, images as
image content), every string redacted and nothing of the page's result trusted."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..redact import Redactor

__all__ = ["TOOLS", "OutsideTool", "content_of", "tool_named"]

_NOTEBOOK = {"type": "string", "description": "The notebook's path, as list_notebooks shows it."}
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
#: The most characters of text and images one result sends back.
MAX_TEXT_CHARS = 100_000
MAX_IMAGES = 10


@dataclass(frozen=True)
class OutsideTool:
    """One MCP tool: ``acts`` tools go through the approval decision."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    acts: bool = False

    def schema(self) -> dict[str, Any]:
        """The tool's JSON Schema input."""
        return {
            "type": "object",
            "properties": self.properties,
            "required": list(self.required),
            "additionalProperties": False,
        }


TOOLS: tuple[OutsideTool, ...] = (
    OutsideTool(
        "list_notebooks",
        "The notebooks open in the user's JupyterLab: path, kernel, number of cells.",
        {},
    ),
    OutsideTool(
        "read_cells",
        "Read cells of an open notebook: id, index, type, source, outputs as text, images.",
        {
            "notebook": _NOTEBOOK,
            "start": {"type": "integer", "minimum": 0, "description": "First cell index."},
            "end": {"type": "integer", "minimum": 0, "description": "Index past the last cell."},
        },
        ("notebook",),
    ),
    OutsideTool(
        "list_variables",
        "The kernel's variables of an open notebook, summarised as the AI Chat sees them.",
        {"notebook": _NOTEBOOK},
        ("notebook",),
    ),
    OutsideTool(
        "describe_variable",
        "A summary of one variable of the notebook's kernel (type, shape, columns, head).",
        {"notebook": _NOTEBOOK, "name": {"type": "string"}},
        ("notebook", "name"),
    ),
    OutsideTool(
        "run_code",
        "Run code in the notebook's kernel as a new visible cell below below_cell_id (or at "
        "the end), after the user's approval policy (it may ask the user in JupyterLab).",
        {"notebook": _NOTEBOOK, "code": {"type": "string"}, "below_cell_id": {"type": "string"}},
        ("notebook", "code"),
        acts=True,
    ),
    OutsideTool(
        "edit_cell",
        "Propose a new source for a cell: the user reviews it as a diff and accepts or not.",
        {"notebook": _NOTEBOOK, "cell_id": {"type": "string"}, "source": {"type": "string"}},
        ("notebook", "cell_id", "source"),
        acts=True,
    ),
    OutsideTool(
        "run_cell",
        "Run an existing cell (its current source) after the user's approval policy.",
        {"notebook": _NOTEBOOK, "cell_id": {"type": "string"}},
        ("notebook", "cell_id"),
        acts=True,
    ),
    OutsideTool(
        "undo",
        "Undo this client's last run: restore the kernel from its snapshot and remove the "
        "cells it added (the user is asked).",
        {"notebook": _NOTEBOOK},
        ("notebook",),
        acts=True,
    ),
)


def tool_named(name: str) -> OutsideTool | None:
    """The tool called ``name``, or None."""
    return next((tool for tool in TOOLS if tool.name == name), None)


def check_arguments(tool: OutsideTool, arguments: dict[str, Any]) -> str | None:
    """One line saying what is wrong with ``arguments``, or None."""
    for key in tool.required:
        if key not in arguments:
            return f"{tool.name} needs '{key}'."
    for key, value in arguments.items():
        spec = tool.properties.get(key)
        if spec is None:
            return f"{tool.name} takes no '{key}'."
        if spec["type"] == "string" and not isinstance(value, str):
            return f"'{key}' must be a string."
        if spec["type"] == "integer" and (type(value) is not int or value < 0):
            return f"'{key}' must be a non-negative integer."
        if isinstance(value, str) and len(value) > 200_000:
            return f"'{key}' is too long."
    return None


def _images(value: Any, found: list[tuple[str, str]]) -> Any:
    """``value`` with every ``images`` list taken out into ``found`` (``(data, mime)``)."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if key == "images" and isinstance(item, list):
                count = 0
                for image in item:
                    data, mime = (image, "image/png") if isinstance(image, str) else (None, None)
                    if isinstance(image, dict):
                        data, mime = image.get("data"), image.get("mime_type", "image/png")
                    ok = isinstance(data, str) and mime in _IMAGE_TYPES
                    if ok and len(found) < MAX_IMAGES and _BASE64.match(data or ""):
                        found.append((str(data), str(mime)))
                        count += 1
                kept[key] = f"{count} image(s), sent as image content"
            else:
                kept[key] = _images(item, found)
        return kept
    if isinstance(value, list):
        return [_images(item, found) for item in value]
    return value


def _redacted(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    if isinstance(value, dict):
        return {str(key): _redacted(item, redact) for key, item in value.items()}
    return value


def content_of(result: dict[str, Any] | None, message: str, redact: Redactor) -> list[Any]:
    """A page's result as MCP content blocks: its JSON as text, redacted, then its images."""
    import mcp_types as types

    images: list[tuple[str, str]] = []
    data = _redacted(_images(result, images), redact) if result is not None else None
    parts = []
    if message:
        parts.append(redact(message))
    if data is not None:
        parts.append(json.dumps(data, ensure_ascii=False, indent=1))
    text = "\n".join(parts) or "done"
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + "\n[cut]"
    blocks: list[Any] = [types.TextContent(text=text)]
    blocks.extend(types.ImageContent(data=d, mime_type=m) for d, m in images)
    return blocks
