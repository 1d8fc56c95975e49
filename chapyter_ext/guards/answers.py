"""Chat and Explain answers (and an agent's final answer) before they are kept and shown.

- An answer that restates what it was sent (the kernel state, the preamble, the system
  prompt: a small model often does only that) is replaced by one honest line; the prompt's
  scaffolding (the data tags, the line introducing the kernel state) is dropped from any
  answer.
- A code fence left open is closed, or dropped when nothing follows it.
- Each Python (or untagged) code block gets a verdict (:func:`~.verdict.check_code`), keyed
  by :func:`chapyter_ext.contract.code_block_key`, which the browser's buttons follow: a block
  that fails is not offered to run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..contract import code_block_key
from ..parsing.fences import PYTHON_LANGS, closing_fence, fence_spans, span_code
from ..request_messages import DATA_TAGS
from .names import KernelNames
from .verdict import check_code

__all__ = [
    "ECHO_LINE",
    "SMALL_ECHO_LINE",
    "balance_fences",
    "clean_answer",
    "code_block_checks",
    "echoed",
]

#: What replaces an answer that only repeated its instructions.
ECHO_LINE = "The model only repeated its instructions instead of answering; ask again or rephrase."
SMALL_ECHO_LINE = (
    "The small local model only repeated its instructions instead of answering; ask a short, "
    "concrete question, or configure an endpoint for real answers (README.md#endpoints)."
)
# The prompt's own scaffolding, never part of an answer: the data tags, and the lines that
# introduce the kernel state and the question.
_SCAFFOLD = re.compile(
    r"^\s*(?:</?\s*(?:" + "|".join(t.replace("-", r"[\s_-]*") for t in DATA_TAGS) + r")\s*>"
    r"|The current state of the notebook's kernel:|Request:|Question:)\s*$",
    re.IGNORECASE,
)
# Lines shorter than this are too common to count as copied ("```", "- x", "Out:").
_MIN_COPIED = 12


def _outside(lines: list[str]) -> list[int]:
    """Indexes of the lines outside fenced blocks (fence lines excluded)."""
    inside: set[int] = set()
    for span in fence_spans(lines):
        inside.update(range(span.start, min(span.end + 1, len(lines))))
    return [i for i in range(len(lines)) if i not in inside]


def echoed(answer: str, sent: Iterable[str]) -> bool:
    """Whether ``answer`` mostly restates ``sent`` (the texts of the messages it answers): at
    least two lines of its prose (outside code blocks), and half or more of them, are lines of
    what was sent or the prompt's scaffolding."""
    lines = answer.replace("\r\n", "\n").split("\n")
    prose = [lines[i].strip() for i in _outside(lines) if lines[i].strip()]
    if not prose:
        return False
    seen = {
        line.strip()
        for text in sent
        for line in text.replace("\r\n", "\n").split("\n")
        if len(line.strip()) >= _MIN_COPIED
    }
    copied = sum(1 for line in prose if line in seen or _SCAFFOLD.match(line))
    return copied >= 2 and copied * 2 >= len(prose)


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


def clean_answer(text: str, sent: Iterable[str], *, small: bool = False) -> tuple[str, bool]:
    """The answer to keep and show, and whether it was an echo (then it is one line)."""
    if echoed(text, sent):
        return (SMALL_ECHO_LINE if small else ECHO_LINE), True
    lines = text.split("\n")
    outside = set(_outside(lines))
    kept = [line for i, line in enumerate(lines) if i not in outside or not _SCAFFOLD.match(line)]
    return balance_fences("\n".join(kept)), False


def code_block_checks(
    text: str, names: KernelNames | None = None, *, small: bool = False
) -> list[dict[str, Any]]:
    """``[{"block_id", "runnable", "problem"}]`` for each Python or untagged code block of
    ``text``, in order (``block_id``: :func:`chapyter_ext.contract.code_block_key` of its
    source)."""
    lines = text.split("\n")
    checks = []
    for span in fence_spans(lines):
        if span.lang and span.lang not in PYTHON_LANGS:
            continue
        code = span_code(lines, span)
        if not code.strip():
            continue
        # A block is inserted as shown: what the checks would repair does not pass.
        verdict = check_code(code, names, small=small, as_is=True)
        checks.append(
            {
                "block_id": code_block_key(code),
                "runnable": verdict.runnable,
                "problem": verdict.problem,
            }
        )
    return checks
