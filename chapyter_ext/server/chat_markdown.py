"""One chat as a Markdown document ("Export chat"): questions, answers, the agent's steps with
their code and one-line outcomes, model names and times. Pure: the caller redacts (every text
goes through the server's secret policy once more here, through ``redact``).

Questions are quoted (``>``), so a heading or a rule in a question cannot pass for the
document's own structure; answers are the model's Markdown as it was shown; code is fenced
with more backticks than it contains, so no code can end its own fence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from posixpath import basename, splitext

from .chat_records import ChatMessage

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


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip("\n").split("\n"))


def _heading(role: str, message: ChatMessage) -> str:
    parts = ["Question" if role == "user" else "Answer"]
    if message.created:
        parts.append(_when(message.created))
    if message.model:
        parts.append(f"`{_one_line(message.model)}`")
    return "### " + " · ".join(parts)


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
        f"Notebook `{_one_line(notebook)}`, exported {_when(exported)} by {made_by}. "
        "Secrets are shown as `<redacted>`.",
    ]
    if not messages:
        lines += ["", "*This chat has no messages.*"]
    for message in messages:
        lines += ["", _heading(message.role, message), ""]
        text = redact(message.content)
        if message.role == "user":
            lines.append(_quote(text) if text.strip() else "> *(empty)*")
            continue
        if text.strip():
            lines.append(text.strip("\n"))
        if message.steps:
            lines += ["", "**Steps the agent ran**", ""]
            for n, step in enumerate(message.steps, 1):
                outcome = _one_line(redact(step.get("outcome", ""))) or "no outcome recorded"
                where = f" (cell `{step['cell_id']}`)" if step.get("cell_id") else ""
                lines.append(f"{n}. {outcome}{where}")
                lines.append("")
                block = fence(redact(step.get("code", "")), "python")
                # Indented under its list item, so the block belongs to the step.
                lines += [f"   {row}" if row else "" for row in block.split("\n")]
                lines.append("")
            while lines and not lines[-1]:
                lines.pop()
        if message.status == "stopped":
            lines += ["", "*Stopped before the answer was finished.*"]
        elif message.status == "error":
            reason = _one_line(redact(message.error)) or "no reason given"
            lines += ["", f"*This reply failed: {reason}*"]
    return "\n".join(lines).rstrip("\n") + "\n"
