"""The messages of a request to the model: the data blocks that hold what the notebook says
(never instructions), and the messages of a request (``build_messages``) or of a correction
(``build_retry_messages``), under the system prompt the feature passes (each feature owns its
prompts: ``magic/prompts.py``, ``chat/prompts.py``, ``fix/request.py``,
``agent/system_prompts.py``, the small ones beside them). Pure; shared by the magic, the server
and the agent. The answer is read back by :mod:`chapyter_ext.parsing`.
"""

from __future__ import annotations

import re

from .contract import normalize_request
from .parsing.fences import fenced

_CONTEXT_INTRO = "The current state of the notebook's kernel:"

# ---------------------------------------------------------------------------------------------
# Data blocks: what the notebook holds (values, outputs, files, errors) is untrusted text

#: The tags that wrap data in the prompts: ``<kernel-state>`` (the kernel summary, the chat's
#: notebook snapshot), ``<error>`` (a traceback to fix), ``<tool-result>`` (what an agent step
#: printed or read). The system prompts say that text inside them is never an instruction.
DATA_TAGS = ("kernel-state", "error", "tool-result")
# "<" opening or closing one of them, in any case or spacing ("</Kernel-State >", "< error>").
_DATA_TAG = re.compile(
    r"<(?=[\s/]*(?:kernel[\s_-]*state|error|tool[\s_-]*result)\b)", re.IGNORECASE
)


def escape_data(text: str) -> str:
    """``text`` unable to end a data block or open a fake one: each ``<`` that starts one of
    :data:`DATA_TAGS` (any case, any spacing) becomes ``&lt;``; everything else is unchanged,
    ``<redacted>`` included."""
    return _DATA_TAG.sub("&lt;", text) if "<" in text else text


def data_block(tag: str, text: str) -> str:
    """``text`` wrapped in ``<tag>`` … ``</tag>``, escaped (:func:`escape_data`)."""
    return f"<{tag}>\n{escape_data(text)}\n</{tag}>"


def build_messages(
    request: str,
    context: str | None = None,
    *,
    history: list[dict] | None = None,
    system: str | None,
    compact: bool = False,
) -> list[dict]:
    """The chat messages for one request: system prompt, earlier turns, then the request.

    The kernel ``context`` goes into the last user message inside ``<kernel-state>`` tags,
    ahead of the request (some OpenAI-compatible servers accept only one system message,
    first), escaped so that no value in it can end the block (:func:`escape_data`). ``compact``
    (a small model, which repeats a preamble back): no line introducing the block, and the
    request labelled ``Question:``.
    ``history`` is earlier ``{"role": "user" | "assistant", "content": str}`` turns, oldest
    first (other keys are dropped); anything else raises ``ValueError``, as does an empty
    request. A falsy ``system`` sends no system message.
    """
    text = normalize_request(request)
    if not text:
        raise ValueError("The request is empty.")
    messages: list[dict] = []
    if system:
        messages.append({"role": "system", "content": system})
    for i, turn in enumerate(history or ()):
        role = turn.get("role") if isinstance(turn, dict) else None
        content = turn.get("content") if isinstance(turn, dict) else None
        if role not in ("user", "assistant") or not isinstance(content, str):
            raise ValueError(
                f"history[{i}] must be {{'role': 'user' | 'assistant', 'content': str}}."
            )
        messages.append({"role": role, "content": content})
    if context and compact:
        text = f"{data_block('kernel-state', context)}\n\nQuestion: {text}"
    elif context:
        text = f"{_CONTEXT_INTRO}\n{data_block('kernel-state', context)}\n\nRequest:\n{text}"
    messages.append({"role": "user", "content": text})
    return messages


def build_retry_messages(
    request: str, context: str | None, code: str, error: str, *, system: str
) -> list[dict]:
    """The messages that ask for a correction of generated ``code`` that raised ``error``.

    The original request (with the kernel ``context``, as :func:`build_messages` sends it),
    the code as the model's earlier answer, then the error (already reduced to the user's
    traceback frames and redacted) with the ask for the whole corrected code.
    """
    messages = build_messages(request, context, system=system)
    messages.append({"role": "assistant", "content": fenced(code)})
    messages.append(
        {
            "role": "user",
            "content": "Running that code raised an error:\n"
            f"{data_block('error', error)}\n\n"
            "Fix its cause and answer with the whole corrected code, as one fenced "
            "```python block that replaces the code above.",
        }
    )
    return messages


def with_images(messages: list[dict], images: list[dict]) -> list[dict]:
    """``messages`` with OpenAI ``image_url`` parts (``images``) added to the last message,
    which must be the user's: its text becomes the first part. Unchanged without images."""
    if not images:
        return messages
    last = messages[-1]
    if last.get("role") != "user" or not isinstance(last.get("content"), str):
        raise ValueError("Images go with the user's message.")
    parts = [{"type": "text", "text": last["content"]}, *images]
    return [*messages[:-1], {**last, "content": parts}]
