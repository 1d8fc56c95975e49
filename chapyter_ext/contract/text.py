"""The text rules of the notebook contract: its constants, how a ``%%ai`` line and a prompt
cell are read, and how a request and code are hashed (see :mod:`chapyter_ext.contract`).

White space is JavaScript's ``\\s`` everywhere (trimming, splitting, normalising), so that both
languages agree character by character.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CHECK_SYNTAX_ERROR",
    "FRONTEND_MARKER",
    "METADATA_KEY",
    "PROGRESS_MIME",
    "RETRY_MARKER",
    "SCHEMA_VERSION",
    "MagicLineError",
    "MagicOptions",
    "Prompt",
    "code_block_key",
    "code_sha256",
    "normalize_request",
    "parse_magic_line",
    "parse_prompt",
    "request_sha256",
]

#: Cell metadata key holding the provenance and the links between cells.
METADATA_KEY = "chapyter"
#: Version of the provenance schema written here.
SCHEMA_VERSION = 1
#: MIME type of the live progress the kernel shows in the prompt cell while the model answers.
PROGRESS_MIME = "application/vnd.chapyter-ext.progress+json"
#: Key of the execute_request metadata by which chapyter-ext's JupyterLab executor says that
#: it inserts, links and runs generated code itself (so the kernel must not run it too).
FRONTEND_MARKER = "chapyter_frontend"
#: Key of the execute_request metadata by which that executor asks ``%%ai`` to correct code
#: that raised: ``{"attempt": n, "code": <failing code>, "error": {ename, evalue, traceback}}``.
RETRY_MARKER = "chapyter_retry"
#: ``check`` value of a generated cell whose code failed the syntax check when generated.
CHECK_SYNTAX_ERROR = "syntax-error"

# JavaScript's ``\s`` (ECMA-262 WhiteSpace and LineTerminator), spelled out: Python's own notion
# of white space differs (it has \x1c-\x1f and \x85, lacks \ufeff).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TRIM = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
_TRAILING_SPACE = re.compile(f"[{_JS_SPACE}]+$")
_WORDS = re.compile(f"[{_JS_SPACE}]+")
_MAGIC_LINE = re.compile(f"^%%ai(?:[{_JS_SPACE}]|$)")
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_QUOTES = "'\""


def _js_trim(text: str) -> str:
    return _TRIM.sub("", text)


# -- the magic line ----------------------------------------------------------------------------


class MagicLineError(ValueError):
    """A ``%%ai`` line that cannot be read; ``str()`` is one line naming the word at fault."""


#: The options of a ``%%ai`` line, as listed in every error message.
VALID_OPTIONS = "--model NAME (or -m NAME), --run, --no-run, --no-context, --regenerate"

_FLAGS = {
    "--run": "run",
    "--no-run": "no_run",
    "--no-context": "no_context",
    "--regenerate": "regenerate",
}


@dataclass(frozen=True)
class MagicOptions:
    """What a ``%%ai`` line asks for."""

    model: str | None = None
    run: bool = False
    no_run: bool = False
    no_context: bool = False
    regenerate: bool = False


def _line_error(problem: str) -> MagicLineError:
    return MagicLineError(f"Cannot read the %%ai line: {problem}. Valid options: {VALID_OPTIONS}.")


def _unquote(value: str, word: str) -> str:
    if len(value) >= 2 and value[0] in _QUOTES and value[-1] == value[0]:
        value = value[1:-1]
    if any(q in value for q in _QUOTES):
        raise _line_error(f"unbalanced quote in '{word}'")
    return value


def parse_magic_line(line: str) -> MagicOptions:
    """Read the options of a ``%%ai`` line (with or without its leading ``%%ai``).

    Words are split on white space. ``--model NAME``, ``--model=NAME``, ``-m NAME``,
    ``-mNAME``, ``--run``, ``--no-run``, ``--no-context``, ``--regenerate``; a value wrapped in
    matching quotes is unwrapped. No abbreviations. Raises ``MagicLineError`` (one line).
    """
    text = _js_trim(line)
    if _MAGIC_LINE.match(text):
        text = text[len("%%ai") :]
    words = [w for w in _WORDS.split(_js_trim(text)) if w]
    found: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        quoted = len(word) >= 2 and word[0] in _QUOTES and word[-1] == word[0]
        bare = word[1:-1] if quoted else word
        if bare in ("--model", "-m"):
            following = words[i + 1] if i + 1 < len(words) else ""
            if not following or following.startswith("-"):
                raise _line_error(f"'{word}' needs a model name")
            found["model"] = _unquote(following, following)
            i += 1
        elif bare.startswith("--model=") or (bare.startswith("-m") and not bare.startswith("--")):
            raw = bare[len("--model=") :] if bare.startswith("--") else bare[2:]
            if raw.startswith("=") and not bare.startswith("--"):
                raw = raw[1:]  # -m=NAME, as argparse reads it
            found["model"] = _unquote(raw, word)
            if not found["model"]:
                raise _line_error(f"'{word}' needs a model name")
        elif any(q in bare for q in _QUOTES):
            raise _line_error(f"unbalanced quote in '{word}'")
        elif bare in _FLAGS:
            found[_FLAGS[bare]] = True
        elif bare.startswith("-"):
            raise _line_error(f"unknown option '{word}'")
        else:
            raise _line_error(f"unexpected word '{word}'")
        i += 1
    if found.get("run") and found.get("no_run"):
        raise MagicLineError("--run and --no-run contradict each other: choose one.")
    return MagicOptions(**found)


# -- prompt cells ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """The parts of a ``%%ai`` cell: its options (None if the line cannot be read) and request."""

    options: MagicOptions | None
    request: str
    #: Why the options could not be read (``MagicLineError``'s line), else None.
    error: str | None = None

    @property
    def model(self) -> str | None:
        """The model the line names, if it names one and can be read."""
        return self.options.model if self.options else None


def parse_prompt(source: str) -> Prompt | None:
    """Split a prompt cell into its options and its request, or None if it is no prompt.

    The first line that is not blank must be ``%%ai`` (then white space or its end). A line
    whose options cannot be read still makes a prompt, with ``options`` None and ``error`` set:
    readers of notebooks never crash on it.
    """
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if _js_trim(line) != ""), -1)
    if first < 0 or not _MAGIC_LINE.match(lines[first]):
        return None
    request = "\n".join(lines[first + 1 :])
    try:
        return Prompt(parse_magic_line(lines[first]), request)
    except MagicLineError as err:
        return Prompt(None, request, str(err))


# -- hashes ------------------------------------------------------------------------------------


def normalize_request(text: str) -> str:
    """The request as hashed: exactly these steps, in this order.

    1. Replace every ``"\\r\\n"``, then every remaining ``"\\r"``, with ``"\\n"``.
    2. Split on ``"\\n"``.
    3. Remove trailing white space (JavaScript's ``\\s``) from each line.
    4. Drop empty lines at the start and at the end.
    5. Join with ``"\\n"`` (so no trailing newline).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [_TRAILING_SPACE.sub("", line) for line in text.split("\n")]
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    return "\n".join(lines[start:end])


def _well_formed(text: str) -> str:
    # What TextEncoder encodes: a surrogate pair is its character, a lone surrogate U+FFFD.
    def repair(m: re.Match) -> str:
        pair = m.group(0)
        if len(pair) == 1:
            return "\ufffd"
        return chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00))

    return _SURROGATES.sub(repair, text)


def _sha256(text: str) -> str:
    return hashlib.sha256(_well_formed(text).encode("utf-8")).hexdigest()


def request_sha256(text: str) -> str:
    """Lower-case hex SHA-256 of ``normalize_request(text)`` as UTF-8 (as ``TextEncoder``)."""
    return _sha256(normalize_request(text))


def code_sha256(code: str) -> str:
    """sha256 of a cell's code, to tell later whether a person edited it (UTF-8, as
    ``TextEncoder`` encodes it: lone surrogates become U+FFFD)."""
    return _sha256(code)


def code_block_key(code: str) -> str:
    """The key of a code block of a chat answer, the same for the server's and the browser's
    reading of it: sha256 of the code as :func:`normalize_request` leaves it with the
    indentation (spaces and tabs) all its non-blank lines share removed."""
    lines = normalize_request(code).split("\n")
    margin = min((len(line) - len(line.lstrip(" \t")) for line in lines if line), default=0)
    return _sha256("\n".join(line[margin:] for line in lines))
