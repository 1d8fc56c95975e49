"""One chat as a Markdown document ("Export chat"): questions, answers, the agent's steps
(each kind as it ran: run_code with its code and cell, read_cell and evaluate with what they
gave, an MCP call with its server, tool, arguments and result) and one-line outcomes, model
names and times; messages that came with the notebook's file are marked so. Pure: the caller
redacts (every text goes through the server's secret policy once more here, through
``redact``).

Questions are quoted (``>``), so a heading or a rule in a question cannot pass for the
document's own structure; answers are the model's Markdown as it was shown; code is fenced
with more backticks than it contains, so no code can end its own fence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from posixpath import basename, splitext

from .attachment_notes import attachment_lines
from .checked_numbers import number_lines
from .mention_notes import mention_lines
from .plans import plan_lines
from .records import ChatMessage

_BACKTICKS = re.compile(r"`+")


def export_filename(notebook: str) -> str:
    """``analysis.ipynb`` -> ``analysis.chat.md`` (the file written next to the notebook)."""
    return f"{splitext(basename(notebook))[0] or 'notebook'}.chat.md"


def _when(created: str) -> str:
    # 2025-03-14T09:26:53.123Z -> 2025-03-14 09:26 UTC; anything else as it is.
    match = re.match(r"^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)", created or "")
    return f"{match.group(1)} {match.group(2)} UTC" if match else (created or "")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def fence(code: str, language: str = "") -> str:
    """``code`` in a fenced block no line of it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{code.rstrip(chr(10))}\n{marks}"


def code_span(text: str) -> str:
    """``text`` on one line as inline code no backtick in it can close."""
    line = _one_line(text)
    longest = max((len(run) for run in _BACKTICKS.findall(line)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{marks}{pad}{line}{pad}{marks}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip("\n").split("\n"))


#: Said of a message that came with the notebook's file (``ChatMessage.imported``).
FROM_FILE = "from the notebook file"


def _heading(role: str, message: ChatMessage) -> str:
    parts = ["Question" if role == "user" else "Answer"]
    if message.created:
        parts.append(_when(message.created))
    if message.model:
        parts.append(code_span(message.model))
    if message.imported:
        parts.append(f"*{FROM_FILE}*")
    return "### " + " · ".join(parts)


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text  # as recorded (redaction may have cut into it)


def _step_what(step: dict, redact: Callable[[str], str]) -> str:
    """What a step did, by kind: code it ran, an MCP server's tool it called, or a built-in
    tool it used (read_cell, list_variables)."""
    tool, title = step.get("tool", ""), _one_line(redact(step.get("title", "")))
    server = _one_line(redact(step.get("server", "")))
    if server:
        name = title[len(server) + 3 :] if title.startswith(f"{server} · ") else tool
        return f"MCP server {code_span(server)} · tool {code_span(name or tool)}"
    if step.get("code") or tool in ("", "run_code"):
        return "ran code"
    said = title or tool
    return f"{said} ({code_span(tool)})" if tool and tool != said else said


def _step_lines(n: int, step: dict, redact: Callable[[str], str]) -> list[str]:
    """One step as a list item, its code, arguments and result fenced under it."""
    outcome = _one_line(redact(step.get("outcome", ""))) or "no outcome recorded"
    where = f" (cell {code_span(step['cell_id'])})" if step.get("cell_id") else ""
    lines = [f"{n}. {_step_what(step, redact)}: {outcome}{where}", ""]
    blocks = []
    if step.get("code"):
        blocks.append(("", fence(redact(step["code"]), "python")))
    if step.get("arguments"):
        blocks.append(("Arguments:", fence(_pretty_json(redact(step["arguments"])), "json")))
    if step.get("result"):
        blocks.append(("Result:", fence(redact(step["result"]), "text")))
    for label, block in blocks:
        if label:
            lines += [f"   {label}", ""]
        # Indented under its list item, so the block belongs to the step.
        lines += [f"   {row}" if row else "" for row in block.split("\n")]
        lines.append("")
    return lines


def chat_markdown(
    notebook: str,
    messages: Sequence[ChatMessage],
    redact: Callable[[str], str],
    *,
    exported: str,
    version: str = "",
) -> str:
    """The Markdown document of a chat of ``notebook`` (``exported``: when, ISO 8601 UTC)."""
    made_by = f"chapyter-ext {version}" if version else "chapyter-ext"
    lines = [
        f"# Chat: {_one_line(basename(notebook))}",
        "",
        f"Notebook {code_span(notebook)}, exported {_when(exported)} by {made_by}. "
        "Secrets are shown as `<redacted>`.",
    ]
    if any(message.imported for message in messages):
        lines += [
            "",
            f"Messages marked *{FROM_FILE}* came with the notebook's metadata: they say what "
            "whoever saved the file wrote, nothing of them was checked here.",
        ]
    if not messages:
        lines += ["", "*This chat has no messages.*"]
    for message in messages:
        lines += ["", _heading(message.role, message), ""]
        text = redact(message.content)
        if message.role == "user":
            lines.append(_quote(text) if text.strip() else "> *(empty)*")
            lines += attachment_lines(message.attachments, lambda name: code_span(redact(name)))
            lines += mention_lines(message.mentions, lambda label: code_span(redact(label)))
            continue
        if text.strip():
            lines.append(text.strip("\n"))
        lines += number_lines(message.numbers, lambda number: code_span(redact(number)))
        if message.plan:
            followed = any(step.get("status") != "proposed" for step in message.plan)
            lines += ["", "**Plan followed**" if followed else "**Plan**", ""]
            lines += plan_lines(message.plan, lambda text: _one_line(redact(text)))
        if message.steps:
            lines += ["", "**Steps the agent ran**", ""]
            for n, step in enumerate(message.steps, 1):
                lines += _step_lines(n, step, redact)
            while lines and not lines[-1]:
                lines.pop()
        if message.status == "stopped":
            lines += ["", "*Stopped before the answer was finished.*"]
        elif message.status == "error":
            reason = _one_line(redact(message.error)) or "no reason given"
            lines += ["", f"*This reply failed: {reason}*"]
    return "\n".join(lines).rstrip("\n") + "\n"
