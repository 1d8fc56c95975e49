"""An error as text, one way for every feature: the ``%%ai`` retry, Fix, the agent's view of a
step, the chat's notebook context and the guard rails all read nbformat ``error`` outputs
(``ename``, ``evalue``, ``traceback``) through this module.

One ANSI pattern (:func:`strip_ansi`: CSI colours and cursor moves, OSC hyperlinks and titles),
one line per error (:func:`error_line`), one text per error (:func:`error_text`: the line and
only the frames of the notebook's own code) and the cell line that raised
(:func:`failing_line`); and an exception raised here as one line (:func:`exception_line`).
Pure: no IPython.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "error_line",
    "error_text",
    "exception_line",
    "failing_line",
    "multiline_text",
    "strip_ansi",
]

# CSI sequences (colours, cursor moves), OSC sequences (hyperlinks, titles), two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# The frames of code typed in a cell, across IPython versions.
_USER_FRAME = re.compile(r"^\s*(?:Cell In\s*\[|Input In \[|<ipython-input-|File <ipython-input-)")
# The first frame of the notebook's code names the line that raised ("Cell In[3], line 2").
_CELL_FRAME = re.compile(
    r"^\s*(?:Cell In\s*\[[^\]]*\], line|Input In \[[^\]]*\], in <cell line:) (\d+)"
)


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def multiline_text(value: Any) -> str:
    """An nbformat multiline string (a string or a list of strings) as one string."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def error_line(error: Mapping[str, Any] | None) -> str:
    """``ename: evalue`` of an error ("" without one; the name alone without a message)."""
    if error is None:
        return ""
    name = strip_ansi(str(error.get("ename", "") or ""))
    message = strip_ansi(str(error.get("evalue", "") or ""))
    return f"{name}: {message}" if message else name


def error_text(error: Mapping[str, Any]) -> str:
    """An error output as its line (:func:`error_line`, ``Error`` when it has no name) and the
    traceback frames of the user's code; library frames are only counted."""
    frames = [strip_ansi(multiline_text(f)) for f in error.get("traceback") or []]
    mine = [f.strip("\n") for f in frames if _USER_FRAME.match(f)]
    others = sum(1 for f in frames if re.match(r"^\s*File ", f) and not _USER_FRAME.match(f))
    lines = [error_line({**error, "ename": error.get("ename", "Error")})]
    if mine:
        lines.append("Traceback (the frames in the notebook's code):")
        lines.extend(mine)
    if others:
        lines.append(f"({others} frame{'s' if others != 1 else ''} inside libraries not shown)")
    return "\n".join(lines)


def failing_line(error: Mapping[str, Any]) -> int | None:
    """The line of the cell that raised ``error``: the first frame of the notebook's code
    ("Cell In[3], line 2") is the cell that ran."""
    for frame in error.get("traceback") or ():
        match = _CELL_FRAME.match(strip_ansi(str(frame)))
        if match:
            return int(match.group(1))
    return None


def exception_line(err: BaseException) -> str:
    """An exception raised here as one line: the last line of its message (where a tool's
    multi-line message says what went wrong), or its type's name."""
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(err).__name__
