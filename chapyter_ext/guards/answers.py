"""Chat and Explain answers (and an agent's final answer) before they are kept and shown.

- An answer that restates what the server built for it (the kernel state, the preamble, the
  system prompt: a small model often does only that), whole or in part (:mod:`.echo`), is
  replaced by one honest line; the prompt's scaffolding (the data tags, the line introducing
  the kernel state) is dropped from any answer. The conversation's earlier turns are not
  instructions: repeating an earlier answer is no echo.
- A code fence left open is closed, or dropped when nothing follows it.
- Each block the browser draws as code (fenced or indented:
  :func:`~chapyter_ext.parsing.code_blocks.answer_code_blocks`) gets a verdict
  (:func:`~.verdict.check_code`; a block marked as another language than Python fails), keyed
  by :func:`chapyter_ext.contract.code_block_key`, which the browser's buttons follow: a block
  that fails, or that has no verdict, is not offered to insert or run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..contract import code_block_key
from ..help_pointers import ENDPOINTS_HINT
from ..messages import DATA_TAGS
from ..parsing.code_blocks import answer_code_blocks
from ..parsing.fences import PYTHON_LANGS, closing_fence, fence_spans
from .echo import Instructions
from .names import KernelNames
from .verdict import check_code

__all__ = [
    "ECHO_LINE",
    "PARTIAL_ECHO_LINE",
    "SMALL_ECHO_LINE",
    "SMALL_PARTIAL_ECHO_LINE",
    "balance_fences",
    "clean_answer",
    "code_block_checks",
    "echoed",
]

#: What replaces an answer that only repeated its instructions.
ECHO_LINE = "The model only repeated its instructions instead of answering; ask again or rephrase."
SMALL_ECHO_LINE = (
    "The small local model only repeated its instructions instead of answering; ask a short, "
    f"concrete question, or configure an endpoint for real answers ({ENDPOINTS_HINT})."
)
#: What replaces an answer that repeated part of what it was sent (the notebook's context).
PARTIAL_ECHO_LINE = (
    "The model repeated part of the notebook context it was sent instead of answering; "
    "ask again or rephrase."
)
SMALL_PARTIAL_ECHO_LINE = (
    "The small local model repeated part of the notebook context it was sent instead of "
    "answering; ask a short, concrete question, or configure an endpoint for real answers "
    f"({ENDPOINTS_HINT})."
)
# The prompt's own scaffolding, never part of an answer: the data tags, and the lines that
# introduce the kernel state and the question.
_SCAFFOLD = re.compile(
    r"^\s*(?:</?\s*(?:" + "|".join(t.replace("-", r"[\s_-]*") for t in DATA_TAGS) + r")\s*>"
    r"|The current state of the notebook's kernel:|Request:|Question:)\s*$",
    re.IGNORECASE,
)


def _outside(lines: list[str]) -> list[int]:
    """Indexes of the lines outside fenced blocks (fence lines excluded)."""
    inside: set[int] = set()
    for span in fence_spans(lines):
        inside.update(range(span.start, min(span.end + 1, len(lines))))
    return [i for i in range(len(lines)) if i not in inside]


def _instructions(sent: Instructions | Iterable[str]) -> Instructions:
    return sent if isinstance(sent, Instructions) else Instructions(sent)


def echoed(answer: str, sent: Instructions | Iterable[str]) -> bool:
    """Whether ``answer`` repeats ``sent`` (what the server built for the request: the
    system prompt, the context, never the conversation's turns), whole or in part
    (:meth:`.echo.Instructions.echo`)."""
    return _instructions(sent).echo(answer) is not None


def balance_fences(text: str) -> str:
    """``text`` with a code fence left open closed, or dropped when only blank lines (or
    nothing) follow it."""
    lines = text.split("\n")
    spans = fence_spans(lines)
    if not spans or spans[-1].closed:
        return text
    last = spans[-1]
    if not any(line.strip() for line in lines[last.start + 1 :]):
        return "\n".join(lines[: last.start]).rstrip()
    return text.rstrip() + "\n" + closing_fence(lines, last)


def clean_answer(
    text: str, sent: Instructions | Iterable[str], *, small: bool = False
) -> tuple[str, bool]:
    """The answer to keep and show, and whether it was an echo (then it is one line)."""
    echo = _instructions(sent).echo(text)
    if echo is not None and echo.whole:
        return (SMALL_ECHO_LINE if small else ECHO_LINE), True
    if echo is not None:
        return (SMALL_PARTIAL_ECHO_LINE if small else PARTIAL_ECHO_LINE), True
    lines = text.split("\n")
    outside = set(_outside(lines))
    kept = [line for i, line in enumerate(lines) if i not in outside or not _SCAFFOLD.match(line)]
    return balance_fences("\n".join(kept)), False


def code_block_checks(
    text: str, names: KernelNames | None = None, *, small: bool = False
) -> list[dict[str, Any]]:
    """``[{"block_id", "runnable", "problem"}]`` for each code block of ``text`` the browser
    draws (fenced or indented), in order (``block_id``:
    :func:`chapyter_ext.contract.code_block_key` of its source)."""
    checks = []
    for block in answer_code_blocks(text):
        code = block.code
        if not code.strip():
            continue
        if block.lang and block.lang not in PYTHON_LANGS:
            # Inserted, it would be a Python cell: shell, JSON or output is there to read.
            runnable, problem = False, f"it is marked {block.lang}, not Python"
        else:
            # A block is inserted as shown: what the checks would repair does not pass.
            verdict = check_code(code, names, small=small, as_is=True)
            runnable, problem = verdict.runnable, verdict.problem
        checks.append({"block_id": code_block_key(code), "runnable": runnable, "problem": problem})
    return checks
