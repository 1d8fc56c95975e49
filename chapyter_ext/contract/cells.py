"""The cell side of the notebook contract: the provenance a generated cell carries, accepted
changes, the links between a prompt cell and its generated cell, and the ``set_next_input``
payload (see :mod:`chapyter_ext.contract`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple

from .text import (
    CHECK_SYNTAX_ERROR,
    METADATA_KEY,
    SCHEMA_VERSION,
    code_sha256,
    parse_prompt,
    request_sha256,
)

__all__ = [
    "CHANGE_KINDS",
    "Generation",
    "accepted_change",
    "cell_source",
    "chapyter_metadata",
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
    "last_change",
    "link_generated",
    "prompt_metadata",
    "read_generation_payload",
    "utc_now_iso",
]

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


#: What made an accepted change to a cell's code: Fix, Edit with AI, or the %%ai retry.
CHANGE_KINDS = ("fix", "edit", "retry")


def accepted_change(
    metadata: Any,
    *,
    kind: str,
    model: str,
    code: str,
    request_sha256: str,
    created: str | None = None,
    previous_code: str | None = None,
) -> dict:
    """The ``chapyter`` metadata of a cell once a proposed change to its code is accepted.

    A generated cell keeps its fields and links (``generated_from``, ``prompt_sha256``), gets
    ``code_sha256`` of the new code and ``edited: false``, and a ``changes`` entry ``{kind,
    model, request_sha256, created, previous_code_sha256}`` appended; a failed syntax check
    (``check``, ``check_error``) described the old code and is dropped. A ``%%ai`` prompt cell
    keeps its metadata and link and gets the entry. Any other cell becomes a generated one
    whose ``source`` is ``kind``. ``previous_code_sha256`` hashes
    ``previous_code`` when given (the code the change replaced, edits by hand included), else
    it is the recorded ``code_sha256``, else left out. ``metadata`` is not changed.
    """
    if kind not in CHANGE_KINDS:
        raise ValueError(f"unknown change kind {kind!r}: expected one of {', '.join(CHANGE_KINDS)}")
    when = created or utc_now_iso()
    base = metadata if isinstance(metadata, dict) and metadata.get("role") == "generated" else None
    previous = code_sha256(previous_code) if previous_code is not None else None
    if previous is None and base is not None and isinstance(base.get("code_sha256"), str):
        previous = base["code_sha256"]
    change: dict[str, Any] = {
        "kind": kind,
        "model": model,
        "request_sha256": request_sha256,
        "created": when,
    }
    if previous is not None:
        change["previous_code_sha256"] = previous
    if isinstance(metadata, dict) and metadata.get("role") == "prompt":
        # A %%ai cell stays a prompt with its link; only the change is recorded.
        earlier = metadata.get("changes")
        return {**metadata, "changes": [*(earlier if isinstance(earlier, list) else []), change]}
    if base is None:
        return {
            "schema": SCHEMA_VERSION,
            "role": "generated",
            "source": kind,
            "model": model,
            "created": when,
            "code_sha256": code_sha256(code),
            "edited": False,
            "changes": [change],
        }
    result = {k: v for k, v in base.items() if k not in ("check", "check_error")}
    result["code_sha256"] = code_sha256(code)
    result["edited"] = False
    earlier = base.get("changes")
    result["changes"] = [*(earlier if isinstance(earlier, list) else []), change]
    return result


def last_change(metadata: Any) -> dict | None:
    """The last accepted change recorded in a cell's ``chapyter`` metadata, or None."""
    changes = metadata.get("changes") if isinstance(metadata, dict) else None
    last = changes[-1] if isinstance(changes, list) and changes else None
    return last if isinstance(last, dict) else None


# -- links between cells (nbformat cells: dicts with id, cell_type, source, metadata) ----------


def cell_source(cell: Any) -> str:
    """A cell's source as one string (nbformat allows a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def chapyter_metadata(cell: Any) -> dict:
    """A cell's ``chapyter`` metadata ({} when it has none)."""
    value = (cell.get("metadata") or {}).get(METADATA_KEY)
    return value if isinstance(value, dict) else {}


def is_prompt_cell(cell: Any) -> bool:
    """Whether a cell is a ``%%ai`` prompt cell."""
    return cell.get("cell_type") == "code" and parse_prompt(cell_source(cell)) is not None


def is_generated_cell(cell: Any) -> bool:
    """Whether a cell was generated (by ``%%ai`` or the chat)."""
    return chapyter_metadata(cell).get("role") == "generated"


def find_generated_index(cells: Sequence[Any], prompt_index: int) -> int:
    """Index of the cell generated from the prompt at ``prompt_index``, or -1.

    The prompt's ``generated_cell`` id is followed only when that cell points back to the
    prompt: a copied prompt cell (new id, old link) must not take over the original's cell.
    """
    if not 0 <= prompt_index < len(cells):
        return -1
    prompt_id = cells[prompt_index].get("id")

    def points_back(cell: Any) -> bool:
        return (
            is_generated_cell(cell) and chapyter_metadata(cell).get("generated_from") == prompt_id
        )

    linked = chapyter_metadata(cells[prompt_index]).get("generated_cell")
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
    origin = chapyter_metadata(cells[generated_index]).get("generated_from")
    if not isinstance(origin, str):
        return -1
    return next((i for i, c in enumerate(cells) if c.get("id") == origin and is_prompt_cell(c)), -1)


def is_edited(generated: Any) -> bool:
    """Whether a generated cell's code differs from what the model wrote."""
    recorded = chapyter_metadata(generated).get("code_sha256")
    return isinstance(recorded, str) and recorded != code_sha256(cell_source(generated))


def is_up_to_date(prompt: Any, generated: Any) -> bool:
    """Same request hash, and the same model when the prompt names one."""
    parsed = parse_prompt(cell_source(prompt))
    meta = chapyter_metadata(generated)
    if parsed is None or not meta:
        return False
    if meta.get("prompt_sha256") != request_sha256(parsed.request):
        return False
    return parsed.model is None or meta.get("model") == parsed.model


def has_syntax_error(generated: Any) -> bool:
    """Whether a generated cell still holds code that failed the syntax check when it was
    generated (not edited since): such code is never replayed as up to date."""
    return failed_check(chapyter_metadata(generated)) is not None and not is_edited(generated)


# -- the set_next_input payload ----------------------------------------------------------------


class Generation(NamedTuple):
    """Generated code as the kernel hands it over: code, provenance, whether to run it."""

    code: str
    metadata: dict
    run: bool


def generation_payload_item(
    code: str, metadata: dict, *, run: bool, retries_left: int | None = None
) -> dict:
    """The ``set_next_input`` payload of a generation: every frontend inserts ``text`` below;
    chapyter-ext's reads the ``chapyter`` entry to link the cells (and run the code if ``run``).
    ``retries_left``: how many more times the frontend may ask ``%%ai`` to correct the code
    when it raises (``RETRY_MARKER``); left out when none.
    """
    entry: dict[str, Any] = {"metadata": metadata, "run": run}
    if retries_left:
        entry["retries_left"] = retries_left
    return {
        "source": "set_next_input",
        "text": code,
        "replace": False,
        METADATA_KEY: entry,
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
