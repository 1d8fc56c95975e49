"""The agent's tools: what the model may call, and the fenced-block protocol for models without.

Three tools, in OpenAI's function-calling schema (:data:`TOOL_SCHEMAS`): ``run_code`` (run
Python in a new cell of the notebook), ``read_cell`` (the source and outputs of an existing
cell) and ``list_variables`` (the kernel's variables summarised again). Without tool support the
product's own protocol applies (:func:`fenced_step`): a reply holding a fenced python block asks
to run its first such block; a reply without one is the final answer.

Pure: no I/O, no IPython.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..prompts import _FENCE, _PYTHON_LANGS, _THINKING, _fenced_blocks, _strip_prompts, _tidy

RUN_CODE = "run_code"
READ_CELL = "read_cell"
LIST_VARIABLES = "list_variables"
TOOL_NAMES = (RUN_CODE, READ_CELL, LIST_VARIABLES)


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for: its id (echoed in the tool result), the tool's
    name and the decoded JSON arguments."""

    id: str
    name: str
    arguments: dict = field(default_factory=dict)


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


#: The ``tools`` of a request in tool mode.
TOOL_SCHEMAS: list[dict] = [
    _function(
        RUN_CODE,
        "Run Python code in a new cell of the user's notebook, in its live IPython kernel "
        "(variables persist; magics work). Returns the cell's output: stdout/stderr, the value "
        "of the last expression, the error with the frames of this code, figures.",
        {
            "code": {"type": "string", "description": "The Python code of the new cell."},
            "purpose": {
                "type": "string",
                "description": "One short sentence telling the user what this step does.",
            },
        },
        ["code"],
    ),
    _function(
        READ_CELL,
        "Read the source and outputs of an existing notebook cell.",
        {
            "cell": {
                "type": "string",
                "description": 'The cell\'s 1-based position in the notebook (e.g. "3") or its id.',
            }
        },
        ["cell"],
    ),
    _function(
        LIST_VARIABLES,
        "Summarise the kernel's variables again (names, types, shapes, columns), e.g. after "
        "code changed them.",
        {},
        [],
    ),
]


class BadToolCall(ValueError):
    """A tool call that cannot be acted on; ``str()`` is one line to give back to the model."""


def check_call(call: ToolCall) -> None:
    """Raise :class:`BadToolCall` unless ``call`` names a known tool with usable arguments."""
    if call.name not in TOOL_NAMES:
        raise BadToolCall(
            f"There is no tool named {call.name!r}; the tools are {', '.join(TOOL_NAMES)}."
        )
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if call.name == RUN_CODE:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            raise BadToolCall("run_code needs a non-empty string argument 'code'.")
        if "purpose" in args and not isinstance(args["purpose"], str):
            raise BadToolCall("run_code's 'purpose' must be a string.")
    elif call.name == READ_CELL:
        cell = args.get("cell")
        if isinstance(cell, int) and not isinstance(cell, bool):
            return
        if not isinstance(cell, str) or not cell.strip():
            raise BadToolCall(
                "read_cell needs an argument 'cell': a 1-based position or a cell id."
            )


def call_arg(call: ToolCall, name: str) -> str:
    """Argument ``name`` of ``call`` as a string ("" when absent; numbers as digits)."""
    value = call.arguments.get(name) if isinstance(call.arguments, dict) else None
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


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


# ---------------------------------------------------------------------------------------------
# The fenced protocol


def without_thinking(text: str) -> str:
    """A reply without its ``<think>`` sections, stripped: what the user reads as the answer."""
    return _THINKING.sub("", text.replace("\r\n", "\n")).strip()


@dataclass(frozen=True)
class FencedStep:
    """A reply in the fenced protocol: the prose before the block and the code to run (None:
    the reply is the final answer)."""

    prose: str
    code: str | None


def fenced_step(text: str) -> FencedStep:
    """Read a reply under the fenced protocol.

    The first fenced block tagged python (``python``, ``py``, ``ipython``, ...) or untagged is
    the code to run (console ``>>>`` prompts stripped); the prose before its opening fence is
    kept. A reply without such a block is the final answer (``code`` None, ``prose`` the whole
    reply without ``<think>`` sections). Fences are read exactly as :mod:`chapyter_ext.prompts`
    reads them.
    """
    clean = _THINKING.sub("", text.replace("\r\n", "\n"))
    blocks, _ = _fenced_blocks(clean)
    chosen = next((b for b in blocks if b.lang in _PYTHON_LANGS or not b.lang), None)
    code = _tidy(_strip_prompts(chosen.code)) if chosen is not None else ""
    if not code.strip():
        return FencedStep(prose=clean.strip(), code=None)
    prose: list[str] = []
    for line in clean.split("\n"):
        m = _FENCE.match(line)
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            break
        prose.append(line)
    return FencedStep(prose="\n".join(prose).strip(), code=code)
