"""The notebook contract: what the kernel, ``chapyter-ext check`` and JupyterLab agree on.

One module per language: this one, and ``labextension/src/contract/`` in TypeScript, both
tested against the same vectors (``tests/vectors/contract.json``). It holds the metadata key
and schema, how a ``%%ai`` line is read, how a request and code are hashed, the provenance a
generated cell carries, the links between a prompt cell and its generated cell, and the
``set_next_input`` payload by which the kernel hands generated code to a frontend.

White space is JavaScript's ``\\s`` everywhere (trimming, splitting, normalising), so that both
languages agree character by character. Pure: no IPython, no network.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple

__all__ = [
    "CHECK_SYNTAX_ERROR",
    "FRONTEND_MARKER",
    "METADATA_KEY",
    "PROGRESS_MIME",
    "SCHEMA_VERSION",
    "Generation",
    "MagicLineError",
    "MagicOptions",
    "Prompt",
    "code_sha256",
    "failed_check",
    "find_generated_index",
    "find_prompt_index",
    "generated_metadata",
    "generation_payload_item",
    "has_syntax_error",
    "is_edited",
    "is_generated_cell",
    "is_prompt_cell",
    "is_up_to_date",
    "link_generated",
    "normalize_request",
    "parse_magic_line",
    "parse_prompt",
    "prompt_metadata",
    "read_generation_payload",
    "request_sha256",
    "utc_now_iso",
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


# -- provenance --------------------------------------------------------------------------------


def utc_now_iso() -> str:
    """The current time as ISO 8601 in UTC, to the second (finer would only add diff noise)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def generated_metadata(
    *,
    code: str,
    model: str,
    source: str = "magic",
    generated_from: str | None = None,
    prompt_sha256: str | None = None,
    endpoint: str | None = None,
    parameters: dict | None = None,
    created: str | None = None,
    context_chars: int | None = None,
    attempts: int | None = None,
    check: str | None = None,
    check_error: str | None = None,
    chat_id: str | None = None,
    message_id: str | None = None,
    step_id: str | None = None,
) -> dict:
    """The ``chapyter`` metadata of a generated cell, in the documented field order.

    Fields left None are left out. ``check`` is ``"syntax-error"`` when the code failed the
    syntax check when generated (``check_error`` is then the one-line reason).
    """
    fields: list[tuple[str, Any]] = [
        ("schema", SCHEMA_VERSION),
        ("role", "generated"),
        ("source", source),
        ("generated_from", generated_from),
        ("prompt_sha256", prompt_sha256),
        ("model", model),
        ("endpoint", endpoint),
        ("parameters", parameters),
        ("created", created or utc_now_iso()),
        ("context_chars", context_chars),
        ("attempts", attempts),
        ("code_sha256", code_sha256(code)),
        ("edited", False),
        ("check", check),
        ("check_error", check_error),
        ("chat_id", chat_id),
        ("message_id", message_id),
        ("step_id", step_id),
    ]
    return {key: value for key, value in fields if value is not None}


def link_generated(provenance: dict, prompt_id: str) -> dict:
    """The kernel's provenance linked to its prompt cell, in schema order."""
    linked = ("schema", "role", "source", "generated_from")
    rest = {k: v for k, v in provenance.items() if k not in linked}
    return {
        "schema": provenance.get("schema", SCHEMA_VERSION),
        "role": provenance.get("role", "generated"),
        "source": provenance.get("source", "magic"),
        "generated_from": prompt_id,
        **rest,
    }


def prompt_metadata(generated_id: str) -> dict:
    """The ``chapyter`` metadata a prompt cell gets once linked to its generated cell."""
    return {"schema": SCHEMA_VERSION, "role": "prompt", "generated_cell": generated_id}


def failed_check(metadata: Any) -> str | None:
    """The one-line reason a generated cell's code failed the check when generated, or None."""
    if not isinstance(metadata, dict) or metadata.get("check") != CHECK_SYNTAX_ERROR:
        return None
    reason = metadata.get("check_error")
    return reason if isinstance(reason, str) and reason else "syntax error"


# -- links between cells (nbformat cells: dicts with id, cell_type, source, metadata) ----------


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _chapyter(cell: Any) -> dict:
    value = (cell.get("metadata") or {}).get(METADATA_KEY)
    return value if isinstance(value, dict) else {}


def is_prompt_cell(cell: Any) -> bool:
    """Whether a cell is a ``%%ai`` prompt cell."""
    return cell.get("cell_type") == "code" and parse_prompt(_source(cell)) is not None


def is_generated_cell(cell: Any) -> bool:
    """Whether a cell was generated (by ``%%ai`` or the chat)."""
    return _chapyter(cell).get("role") == "generated"


def find_generated_index(cells: Sequence[Any], prompt_index: int) -> int:
    """Index of the cell generated from the prompt at ``prompt_index``, or -1.

    The prompt's ``generated_cell`` id is followed only when that cell points back to the
    prompt: a copied prompt cell (new id, old link) must not take over the original's cell.
    """
    if not 0 <= prompt_index < len(cells):
        return -1
    prompt_id = cells[prompt_index].get("id")

    def points_back(cell: Any) -> bool:
        return is_generated_cell(cell) and _chapyter(cell).get("generated_from") == prompt_id

    linked = _chapyter(cells[prompt_index]).get("generated_cell")
    if isinstance(linked, str):
        for index, cell in enumerate(cells):
            if cell.get("id") == linked:
                if points_back(cell):
                    return index
                break
    return next((i for i, cell in enumerate(cells) if points_back(cell)), -1)


def find_prompt_index(cells: Sequence[Any], generated_index: int) -> int:
    """Index of the prompt a generated cell came from, or -1."""
    if not 0 <= generated_index < len(cells):
        return -1
    origin = _chapyter(cells[generated_index]).get("generated_from")
    if not isinstance(origin, str):
        return -1
    return next((i for i, c in enumerate(cells) if c.get("id") == origin and is_prompt_cell(c)), -1)


def is_edited(generated: Any) -> bool:
    """Whether a generated cell's code differs from what the model wrote."""
    recorded = _chapyter(generated).get("code_sha256")
    return isinstance(recorded, str) and recorded != code_sha256(_source(generated))


def is_up_to_date(prompt: Any, generated: Any) -> bool:
    """Same request hash, and the same model when the prompt names one."""
    parsed = parse_prompt(_source(prompt))
    meta = _chapyter(generated)
    if parsed is None or not meta:
        return False
    if meta.get("prompt_sha256") != request_sha256(parsed.request):
        return False
    return parsed.model is None or meta.get("model") == parsed.model


def has_syntax_error(generated: Any) -> bool:
    """Whether a generated cell still holds code that failed the syntax check when it was
    generated (not edited since): such code is never replayed as up to date."""
    return failed_check(_chapyter(generated)) is not None and not is_edited(generated)


# -- the set_next_input payload ----------------------------------------------------------------


class Generation(NamedTuple):
    """Generated code as the kernel hands it over: code, provenance, whether to run it."""

    code: str
    metadata: dict
    run: bool


def generation_payload_item(code: str, metadata: dict, *, run: bool) -> dict:
    """The ``set_next_input`` payload of a generation: every frontend inserts ``text`` below;
    chapyter-ext's reads the ``chapyter`` entry to link the cells (and run the code if ``run``).
    """
    return {
        "source": "set_next_input",
        "text": code,
        "replace": False,
        METADATA_KEY: {"metadata": metadata, "run": run},
    }


def read_generation_payload(reply: Any) -> Generation | None:
    """The generation in an execute reply (the message or its content), or None."""
    if not isinstance(reply, dict):
        return None
    content = reply.get("content", reply)
    payload = content.get("payload") if isinstance(content, dict) else None
    for item in payload if isinstance(payload, list) else []:
        if not isinstance(item, dict) or item.get("source") != "set_next_input":
            continue
        entry = item.get(METADATA_KEY)
        if isinstance(entry, dict):
            metadata = entry.get("metadata")
            return Generation(
                str(item.get("text") or ""),
                dict(metadata) if isinstance(metadata, dict) else {},
                entry.get("run") is True,
            )
    return None
