"""Whether a model's answer repeats what the server sent it to answer from (an echo).

What counts is only what the server itself built for the request (:class:`Instructions`):
the system prompt with the project's rules, and the data blocks of the message being answered
(``<kernel-state>``, the notebook's context; ``<error>``). The conversation's own turns (the
user's messages, earlier answers) are never instructions: an answer may repeat an earlier one,
and a chat of two hundred similar exchanges is answered as the first was. The notebook's own
text (its cells, the selection: what the user asks about) may be quoted too.

An answer echoes (:meth:`Instructions.echo`) when, outside code:

- a line of it is one of the context's headers (``Notebook: a.ipynb (20 cells; …)``,
  ``Active cell 4 (code):``, ``Last error:``, ``Variables (most recent first):``,
  ``<kernel-state>`` with text after it, ...), in code too; "the active cell" inside a
  sentence is not a header;
- two lines in a row are lines of the instructions or the prompt's scaffolding (a line
  ``<kernel-state>``, ``Question:``); one line (the error's message, say) is a quote, and a
  stray tag alone is only dropped;
- :data:`SHINGLE` words in a row are words of the instructions in that order (an echo whose
  lines were joined or re-wrapped);

and it is *whole* when such lines (two or more) are half or more of its prose. Code that
parses (or a block tagged Python) is the answer's own: a fix repeats most of the cell it fixes.
Inline code (```` `...` ````) is a quote and is left out of the word runs.

Cost: the instructions' lines and word runs become two hashed sets once per request (a few
thousand characters, whatever the length of the chat); each answer is then one pass over its
lines and words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..parsing.fences import PYTHON_LANGS, fence_spans, span_code
from ..parsing.syntax import try_parse_cell

__all__ = [
    "SHINGLE",
    "Echo",
    "Instructions",
    "context_header",
    "notebook_text",
    "request_instructions",
]

#: How many words in a row, copied from the instructions, make an echo.
SHINGLE = 20
# Lines shorter than this are too common to count as copied ("```", "- x", "Out: 3").
_MIN_COPIED = 12
# Two copied lines in a row are an echo; one is a quote.
_RUN = 2

_TAG = r"</?\s*(?:kernel[\s_-]*state|error|tool[\s_-]*result|project[\s_-]*rules)\s*>"
# The prompt's scaffolding alone on a line, as :func:`_key` leaves it: copied, but alone (a
# stray closing tag after an answer) it is only dropped (:func:`.answers.clean_answer`).
_SCAFFOLD = re.compile(
    rf"^(?:{_TAG}|the current state of the notebook's kernel:|request:|question:)$"
)
# The context's headers (and a data tag with text after it): one is an echo.
_HEADERS = re.compile(
    "|".join(
        (
            rf"^{_TAG}\s*\S",
            r"notebook: .{0,300}\(\s*\d+\s+cells?\s*[;,)]",
            r"^active cell\b[^:]{0,40}:",
            r"^last error\b[^:]{0,40}:",
            r"^variables \((?:most recent|most relevant) first\):",
            r"^(?:recent|neighbouring) cells\b[^:]{0,30}:$",
            # A cell as the context names it (cell_names.py): "cell [4]", "the 5th cell".
            r"^(?:the )?(?:cell \[?\d+\]?|\d+(?:st|nd|rd|th) cell)"
            r" \((?:code|markdown|raw)\b[^)]*\):$",
            r"^selected text \(in [^)]{1,40}\):",
            r"^imported modules: \w+ = \w",
        )
    )
)
# Markdown's decorations around a line: quotes, headings, bullets, emphasis, inline code.
_DECORATION = re.compile(r"^(?:[>#]+\s*|[-*+]\s+|\d{1,3}[.)]\s+)+")
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_WORD = re.compile(r"\w+")


def _key(line: str) -> str:
    """``line`` as compared: without Markdown's decorations, spaces collapsed, lower case."""
    text = _DECORATION.sub("", line.strip()).strip("*_` \t")
    return " ".join(text.split()).lower()


def context_header(line: str) -> bool:
    """Whether ``line`` is one of the context's headers (``Last error:``, ...)."""
    return bool(_HEADERS.search(_key(line)))


def _shingles(words: Sequence[str]) -> set[int]:
    return {hash(tuple(words[i : i + SHINGLE])) for i in range(len(words) - SHINGLE + 1)}


@dataclass(frozen=True)
class Echo:
    """An echo found in an answer: ``whole`` (it is most of the answer), and ``what`` gave it
    away (for logs and tests)."""

    whole: bool
    what: str


class Instructions:
    """What the server built for one request (``texts``), less the notebook's own text
    (``own``: its cells, the selection), ready to check answers against (see the module)."""

    def __init__(self, texts: Iterable[str], own: Iterable[str] = ()) -> None:
        texts = [t for t in texts if t]
        own_lines: set[str] = set()
        own_shingles: set[int] = set()
        for text in own:
            if text:
                own_lines.update(_key(line) for line in text.splitlines())
                own_shingles |= _shingles(_WORD.findall(text.lower()))
        lines: set[str] = set()
        shingles: set[int] = set()
        for text in texts:
            for line in text.splitlines():
                key = _key(line)
                if len(key) >= _MIN_COPIED and key not in own_lines:
                    lines.add(key)
            shingles |= _shingles(_WORD.findall(text.lower()))
        self._lines = frozenset(lines)
        self._shingles = frozenset(shingles - own_shingles)

    def echo(self, answer: str) -> Echo | None:
        """The echo in ``answer``, or None."""
        lines = answer.replace("\r\n", "\n").split("\n")
        code, fences = _code_lines(lines)
        prose = copied = copied_chars = run = 0
        found = ""
        words: list[str] = []
        for i, line in enumerate(lines):
            if i in fences or not line.strip():
                continue
            if i in code:
                words = []  # a word run does not go on across code
                if not found and context_header(line):
                    found = f"a header of the context in code: {line.strip()[:80]!r}"
                continue
            key = _key(line)
            prose += len(key)
            header = bool(_HEADERS.search(key))
            if header and not found:
                found = f"a header of the context: {line.strip()[:80]!r}"
            if header or key in self._lines or _SCAFFOLD.match(key):
                copied += 1
                copied_chars += len(key)
                run += 1
                if run >= _RUN and not found:
                    found = f"{run} lines of the context in a row"
            else:
                run = 0
            if self._shingles and not found:
                words.extend(_WORD.findall(_INLINE_CODE.sub(" ", line).lower()))
                if _copied_run(words, self._shingles):
                    found = f"{SHINGLE} words of the context in a row"
                del words[: max(0, len(words) - SHINGLE + 1)]
        if copied >= 2 and copied_chars * 2 >= prose:
            return Echo(True, found or f"{copied} lines, most of it, are the context's")
        return Echo(False, found) if found else None


def _copied_run(words: list[str], shingles: frozenset[int]) -> bool:
    return any(
        hash(tuple(words[i : i + SHINGLE])) in shingles for i in range(len(words) - SHINGLE + 1)
    )


def _code_lines(lines: list[str]) -> tuple[set[int], set[int]]:
    """The indexes of the answer's own code lines (blocks tagged Python, or untagged blocks
    that parse), and of the fence lines themselves."""
    code: set[int] = set()
    fences: set[int] = set()
    for span in fence_spans(lines):
        fences.add(span.start)
        if span.closed:
            fences.add(span.end)
        body = range(span.start + 1, span.end)
        if span.lang in PYTHON_LANGS or (
            not span.lang and try_parse_cell(span_code(lines, span)) is not None
        ):
            code.update(body)
    return code, fences


# Data blocks of the message being answered: the context and an error (never the user's words).
_DATA_BLOCK = re.compile(r"<(kernel-state|error)>\n.*?\n</\1>", re.DOTALL)


def request_instructions(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The texts the server built among a request's ``messages`` (as
    :func:`chapyter_ext.messages.build_messages` makes them): the system messages, and
    the data blocks of the last user message. Earlier turns are the conversation, not
    instructions."""
    texts = [
        m["content"]
        for m in messages
        if m.get("role") == "system" and isinstance(m.get("content"), str)
    ]
    last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    content = last.get("content") if last is not None else None
    if isinstance(content, list):  # text and image parts: the text is the first
        content = next((p.get("text") for p in content if p.get("type") == "text"), None)
    if isinstance(content, str):
        texts.extend(block.group(0) for block in _DATA_BLOCK.finditer(content))
    return texts


def notebook_text(context: Any) -> list[str]:
    """The notebook's own text in a request's ``context`` (a notebook snapshot: its cells and
    the selection), which an answer may quote; nothing for anything else."""
    from ..context.notebook import NotebookSnapshot

    if not isinstance(context, NotebookSnapshot):
        return []
    cells = [*context.above, *([context.active] if context.active else []), *context.below]
    return [context.selection, *(cell.source for cell in cells)]
