"""Every block of a model's Markdown answer that the browser draws as code, and lines that only
look like code.

The chat's guard rails (``guards.answers``) give each block a verdict, and the browser offers to
insert or run only a block whose verdict passed, found by its key: a block the browser draws as
code must be read here too, fenced (:mod:`.fences`) or indented (four columns, as CommonMark and
the browser's ``marked`` lexer read them: not inside a paragraph, deeper inside a list item),
also inside a block quote.
``tests/vectors/code_blocks.json`` holds what both sides must find. A block the browser finds and
this reader misses gets no verdict, so it is not offered (the browser's side of the rule).

:func:`markdown_list`: lines of a Markdown list (``- 12.``, ``1) step``) are prose even where
they parse as Python (``- 12.`` is a negative number): no guard lets them pass as code. Pure.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .fences import fence_spans, span_code

__all__ = ["AnswerBlock", "answer_code_blocks", "markdown_list"]

# A list item's marker and the spaces after it (CommonMark: 1 to 4; more means 1, then code).
_LIST_ITEM = re.compile(r"^(?P<marker>[-*+]|\d{1,9}[.)])(?P<gap> {1,4}(?=\S)| *$)")
_HEADING = re.compile(r"^#{1,6}(?:[ \t]|$)")
_RULE = re.compile(r"^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
# A line of a Markdown list as a model writes one: a bullet or a number, a space, then text.
_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]+\S")


class AnswerBlock(NamedTuple):
    """A code block of an answer: its language ("" when none or indented), its code as the
    browser's lexer reads it, and whether it was fenced."""

    lang: str
    code: str
    fenced: bool


def markdown_list(code: str) -> bool:
    """Whether every line of ``code`` but blank and ``#`` comment lines is a Markdown list
    item (``- 12.``, ``* total``, ``3. mean``): a list, not code, whether it parses or not."""
    lines = [line for line in code.split("\n") if line.strip()]
    lines = [line for line in lines if not line.lstrip().startswith("#")]
    return bool(lines) and all(_LIST_LINE.match(line) for line in lines)


def _columns(line: str) -> int:
    """Columns of ``line``'s indentation, a tab to the next multiple of four."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _strip_columns(line: str, count: int) -> str:
    """``line`` without ``count`` columns of its indentation (a tab counts to its stop)."""
    width = 0
    for i, char in enumerate(line):
        if width >= count or char not in " \t":
            return " " * (width - count) + line[i:]
        width = width + 1 if char == " " else width + 4 - width % 4
    return ""


def _indented(lines: list[str], fenced: dict[int, int]) -> list[tuple[int, str]]:
    """The indented code blocks of ``lines`` (start line, code); ``fenced``: the fenced
    blocks, first line to last line."""
    blocks: list[tuple[int, str]] = []
    items: list[int] = []  # the content columns of the open list items, outermost first
    paragraph = False  # a paragraph is open: an indented line continues it
    blank = True
    i = 0
    while i < len(lines):
        if i in fenced:
            i = fenced[i] + 1
            paragraph, blank = False, False
            continue
        line = lines[i]
        if not line.strip():
            paragraph, blank = False, True
            i += 1
            continue
        indent = _columns(line)
        while items and indent < items[-1] and (blank or not paragraph):
            items.pop()
        base = items[-1] if items else 0
        if indent >= base + 4 and not paragraph:
            start, body = i, []
            while i < len(lines) and i not in fenced:
                if lines[i].strip() and _columns(lines[i]) < base + 4:
                    break
                body.append(_strip_columns(lines[i], base + 4))
                i += 1
            while body and not body[-1].strip():
                body.pop()
            blocks.append((start, "\n".join(body)))
            paragraph, blank = False, False
            continue
        rest = line.lstrip(" \t")
        item = _LIST_ITEM.match(rest) if indent - base < 4 else None
        if item and not _RULE.match(rest):
            gap = len(item.group("gap"))
            width = len(item.group("marker")) + (gap if gap else 1)
            while items and indent < items[-1]:
                items.pop()
            items.append(indent + width)
            paragraph = bool(rest[len(item.group(0)) :].strip())
        elif _HEADING.match(rest) or _RULE.match(rest):
            paragraph = False
        else:
            paragraph = True
        blank = False
        i += 1
    return blocks


# A line of a block quote (at any depth of a list: a quote's own lines say where it is).
_QUOTE = re.compile(r"^[ \t]*> ?")


def _blocks(lines: list[str]) -> list[tuple[int, AnswerBlock]]:
    """The code blocks of ``lines`` with their first line; a block quote's are read inside it."""
    spans = fence_spans(lines)
    found = [(s.start, AnswerBlock(s.lang, span_code(lines, s), True)) for s in spans]
    covered = {i for s in spans for i in range(s.start, s.end + 1)}
    for start, code in _indented(lines, {s.start: s.end for s in spans}):
        found.append((start, AnswerBlock("", code, False)))
        covered.update(range(start, start + code.count("\n") + 1))
    i = 0
    while i < len(lines):
        if i in covered or not _QUOTE.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and i not in covered and _QUOTE.match(lines[i]):
            i += 1
        inner = [_QUOTE.sub("", line, count=1) for line in lines[start:i]]
        found += [(start + at, block) for at, block in _blocks(inner)]
    return sorted(found, key=lambda pair: pair[0])


def answer_code_blocks(text: str) -> list[AnswerBlock]:
    """The blocks of Markdown ``text`` the browser draws as code, fenced and indented, in
    order, also inside block quotes (a fenced block's code as :func:`~.fences.span_code` reads
    it)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [block for _, block in _blocks(lines)]
