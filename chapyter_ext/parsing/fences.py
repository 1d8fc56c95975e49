"""Fenced code in a model's Markdown: the one reader for every feature that looks for it.

The ``%%ai`` answer parser (:mod:`.extract`), Fix's answer (``fixes``), the agent's fenced
protocol (``agent.tools.fenced``), the server's streaming of that protocol, inline completion's
cleaning (``server.complete``) and the chat answers' guard rails (``guards.answers``) all read
fences through this module, the way the browser's Markdown lexer does (CommonMark-style: three
or more backticks or tildes, any indentation, an info string whose first word is the language;
a backtick fence's info string holds no backtick). Pure: no I/O, no IPython.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "FENCE_MARK",
    "PYTHON_LANGS",
    "SHELL_LANGS",
    "Block",
    "FenceSpan",
    "closing_fence",
    "dedent",
    "fence_spans",
    "fenced",
    "fenced_blocks",
    "is_fence",
    "may_become_fence",
    "prose_end",
    "span_code",
    "strip_console_prompts",
    "tidy",
    "without_thinking",
]

#: The shortest backtick fence: what a streamed answer is watched for.
FENCE_MARK = "```"
#: Info strings that mean Python (or IPython) code.
PYTHON_LANGS = frozenset(
    {"python", "py", "python3", "py3", "ipython", "ipython3", "ipy", "pycon", "jupyter"}
)
#: Info strings that mean shell commands.
SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session", "terminal"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)


def fenced(code: str, lang: str = "python") -> str:
    """``code`` in a fenced block that no backtick run inside it can close."""
    fence = FENCE_MARK
    while fence in code:
        fence += "`"
    return f"{fence}{lang}\n{code}\n{fence}"


def without_thinking(text: str) -> str:
    """``text`` (line ends normalised) without its ``<think>`` sections: what the user reads."""
    return _THINKING.sub("", text.replace("\r\n", "\n"))


def is_fence(line: str) -> bool:
    """Whether ``line`` opens or closes a fenced block (```` ```inline``` ```` does not)."""
    m = _FENCE.match(line)
    return m is not None and not (m.group("fence")[0] == "`" and "`" in m.group("info"))


def may_become_fence(partial: str) -> bool:
    """Whether a line still streaming in (``partial``, stripped) may turn into a fence."""
    return FENCE_MARK.startswith(partial[:3])


def prose_end(text: str) -> int:
    """Where the prose of a streamed reply ends: at its first fence mark, and never inside
    what could still become one."""
    fence = text.find(FENCE_MARK)
    if fence >= 0:
        return fence
    end = len(text)
    while end and text[end - 1] == "`" and len(text) - end < len(FENCE_MARK) - 1:
        end -= 1
    return end


class FenceSpan(NamedTuple):
    """A fenced block of a Markdown text, by line (0-based): its opening fence line, its
    closing fence line (``closed`` False: none, the block runs to the end, ``end`` is the
    number of lines), its language (lower case, "" when none) and its fence's indentation."""

    start: int
    end: int
    lang: str
    closed: bool
    indent: int


def fence_spans(lines: list[str]) -> list[FenceSpan]:
    """The fenced blocks of ``lines`` (CommonMark-style, any indentation), in order."""
    spans: list[FenceSpan] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or not is_fence(lines[i]):
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent").expandtabs(4))
        info = m.group("info").strip().lstrip("{.").lower()
        lang = re.match(r"[\w+#-]*", info).group(0)  # type: ignore[union-attr]  # always matches
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        start = i
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            i += 1
        spans.append(FenceSpan(start, i, lang, i < len(lines), indent))
        i += 1
    return spans


def span_code(lines: list[str], span: FenceSpan) -> str:
    """The code of the block ``span`` of ``lines`` as the browser's Markdown lexer reads it:
    each line with at most the fence's indentation removed (inside a list item), nothing
    else changed."""
    body = []
    for line in lines[span.start + 1 : span.end]:
        strip = len(line) - len(line.lstrip(" "))
        body.append(line[min(strip, span.indent) :])
    return "\n".join(body)


def closing_fence(lines: list[str], span: FenceSpan) -> str:
    """The line that closes the block ``span`` opens: its opening fence, as indented."""
    opening = lines[span.start]
    indent = opening[: len(opening) - len(opening.lstrip())]
    m = _FENCE.match(opening)
    return indent + (m.group("fence") if m else FENCE_MARK)


class Block(NamedTuple):
    """A fenced block's language (lower case, "" when none) and its code."""

    lang: str
    code: str


def fenced_blocks(text: str) -> tuple[list[Block], list[str]]:
    """The fenced blocks of ``text`` and the lines outside them; a block without a closing
    fence (a cut answer) runs to the end."""
    blocks: list[Block] = []
    outside: list[str] = []
    lines = text.split("\n")
    at = 0
    for span in fence_spans(lines):
        outside.extend(lines[at : span.start])
        blocks.append(Block(span.lang, dedent(span_code(lines, span))))
        at = span.end + 1
    outside.extend(lines[at:])
    return blocks, outside


def strip_console_prompts(code: str) -> str:
    """``>>>``/``...`` console transcripts to plain code, dropping the printed output."""
    lines = code.split("\n")
    if not any(line.lstrip().startswith(">>>") for line in lines[:3]):
        return code
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>> ", "... ")):
            kept.append(stripped[4:])
        elif stripped in (">>>", "..."):
            kept.append("")
    return "\n".join(kept)


def tidy(code: str) -> str:
    """No blank lines at the start or the end; every other line exactly as written (trailing
    white space can be inside a string literal)."""
    lines = code.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def dedent(code: str) -> str:
    """Remove the indentation all lines share, changing nothing else.

    ``textwrap.dedent`` also empties lines of only white space, which may be inside a string.
    """
    lines = code.split("\n")
    indents = [line[: len(line) - len(line.lstrip(" \t"))] for line in lines if line.strip()]
    margin = indents[0] if indents else ""
    for indent in indents[1:]:
        while not indent.startswith(margin):
            margin = margin[:-1]
    if not margin:
        return code
    return "\n".join(
        line[len(margin) :] if line.startswith(margin) else line.lstrip(" \t") for line in lines
    )
