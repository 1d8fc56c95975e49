"""One agent turn's transcript (the model's replies and the results of what they asked for),
rendered as chat messages for either protocol.

With tools: the assistant message with its ``tool_calls``, one ``tool`` message per call (the
calls not carried out say so, as OpenAI requires an answer to each), then the figures of the
latest step as image parts in a user message. The fenced protocol: the assistant's reply as
text (a tool call made before the switch reads as a fenced block) and the result as a user
message. Only the latest step's images are sent again.

A result is what the kernel printed or a cell holds: untrusted text. A tool message is its own
message, which no text can end; in the fenced protocol the result is wrapped in
``<tool-result>`` (escaped, :func:`chapyter_ext.messages.data_block`), so that no output
can end it and pass for the user's next words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..messages import data_block
from ..parsing.fences import fenced
from .tools import RUN_CODE, ToolCall, assistant_message, tool_message


@dataclass
class Answer:
    """What the driver reported for one tool call (or one fenced block)."""

    text: str
    images: list[dict] = field(default_factory=list)
    #: "ran", "read" or "skipped": how the fenced protocol introduces it.
    kind: str = "ran"


@dataclass
class Exchange:
    """One model reply and the results of what it asked for."""

    text: str
    calls: list[ToolCall]
    #: A reply of the fenced protocol (its one call stands for the block in ``text``).
    fenced: bool = False
    answers: dict[str, Answer] = field(default_factory=dict)


NOT_CARRIED_OUT = (
    "Not carried out: one tool call per reply is carried out. Call it again if still needed."
)
# The fenced protocol has no tool messages: a result comes as a user message, introduced.
_FENCED_INTRO = {"ran": "The output of the code you ran:\n", "read": "What you asked to read:\n"}
_FENCED_NEXT = (
    "\n\n(Reply with one ```python block to run more code, or answer without a code block.)"
)


def with_ids(calls: list[ToolCall] | None, exchange: int) -> list[ToolCall]:
    """``calls`` with an id each, unique within the reply (the tool results are matched by it;
    some servers send none, or the same for every call)."""
    out: list[ToolCall] = []
    seen: set[str] = set()
    for i, call in enumerate(calls or []):
        if not call.id or call.id in seen:
            call = ToolCall(id=f"call_{exchange}_{i}", name=call.name, arguments=call.arguments)
        seen.add(call.id)
        out.append(call)
    return out


def render(exchange: Exchange, *, tools: bool, latest: bool) -> list[dict]:
    """The messages of ``exchange``: with ``tools`` or in the fenced protocol; images only when
    it is the ``latest``."""
    images: list[dict] = []
    if tools and not exchange.fenced:
        out = [assistant_message(exchange.text, exchange.calls)]
        for call in exchange.calls:
            answer = exchange.answers.get(call.id)
            out.append(tool_message(call.id, answer.text if answer else NOT_CARRIED_OUT))
            if answer and latest:
                images.extend(answer.images)
        if images:
            intro = {
                "type": "text",
                "text": "The images the last step returned (figures, tool images):",
            }
            out.append({"role": "user", "content": [intro, *images]})
        return out
    # The fenced protocol: a tool call made before the switch reads as a fenced block.
    text = exchange.text
    for call in [] if exchange.fenced else exchange.calls[:1]:
        code = call.arguments.get("code") if isinstance(call.arguments, dict) else None
        if call.name == RUN_CODE and isinstance(code, str):
            text = f"{text}\n\n{fenced(code)}".strip()
        else:
            text = f"{text}\n\n({call.name} {json.dumps(call.arguments)})".strip()
    out = [{"role": "assistant", "content": text}]
    for answer in list(exchange.answers.values())[:1]:
        lead = _FENCED_INTRO.get(answer.kind)
        # Ours (a skipped step) as it is; what the kernel said, as data.
        shown = lead + data_block("tool-result", answer.text) if lead else answer.text
        if answer.kind == "ran":
            shown += _FENCED_NEXT
        if answer.images and latest:
            parts = [{"type": "text", "text": shown}, *answer.images]
            out.append({"role": "user", "content": parts})
        else:
            out.append({"role": "user", "content": shown})
    return out
