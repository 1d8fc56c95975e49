"""The notebook-level part of the contract: how a notebook names its chat, and the chat it may
carry in its metadata (see :mod:`chapyter_ext.contract`).

Both live under the notebook's own metadata key (``metadata.chapyter``, the same key as the
cells'): ``notebook_id``, the stable id by which the server finds the notebook's chats again
after a move it did not see, and ``chat``, the chats saved with the notebook when
``Chapyter.save_chat_in_notebook`` is on. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from .text import METADATA_KEY

__all__ = [
    "MAX_STORED_CHATS",
    "MAX_STORED_MESSAGES",
    "NOTEBOOK_ID_KEY",
    "STORED_CHAT_KEY",
    "STORED_CHAT_SCHEMA",
    "is_notebook_id",
    "notebook_chat_info",
    "validate_stored_chat",
    "with_notebook_id",
]

#: Key (under ``metadata.chapyter``) of the notebook's stable chat id.
NOTEBOOK_ID_KEY = "notebook_id"
#: Key (under ``metadata.chapyter``) of the chats saved with the notebook.
STORED_CHAT_KEY = "chat"
#: Version of the stored chat's schema.
STORED_CHAT_SCHEMA = 1
#: Bounds of a stored chat a reader accepts (a writer stays far below them).
MAX_STORED_CHATS = 50
MAX_STORED_MESSAGES = 1000

# Lower-case hex, as uuid4().hex writes it (32) up to a SHA-256 (64): safe as a file name.
_NOTEBOOK_ID = re.compile(r"[0-9a-f]{32,64}")
_ROLES = ("user", "assistant")
_STATUSES = ("complete", "stopped", "error")
_STEP_FIELDS = ("step_id", "code", "cell_id", "outcome")


def is_notebook_id(value: Any) -> bool:
    """Whether ``value`` is a well-formed notebook id (32 to 64 lower-case hex digits)."""
    return isinstance(value, str) and _NOTEBOOK_ID.fullmatch(value) is not None


def _chapyter(metadata: Any) -> dict:
    value = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else {}


def notebook_chat_info(metadata: Any) -> dict[str, Any]:
    """What a notebook's metadata says about its chat: ``{"notebook_id", "stored_chat"}``.

    ``notebook_id`` is the id, or None when absent or malformed; ``stored_chat`` whether a
    chat is saved in it (an object with a list of ``chats``; :func:`validate_stored_chat`
    says whether it is readable).
    """
    meta = _chapyter(metadata)
    found = meta.get(NOTEBOOK_ID_KEY)
    stored = meta.get(STORED_CHAT_KEY)
    return {
        "notebook_id": found if is_notebook_id(found) else None,
        "stored_chat": isinstance(stored, dict) and isinstance(stored.get("chats"), list),
    }


def with_notebook_id(chapyter: Any, notebook_id: str) -> dict:
    """The notebook's ``chapyter`` metadata object with its id set; other fields are kept."""
    if not is_notebook_id(notebook_id):
        raise ValueError(f"not a notebook id: {notebook_id!r}")
    kept = dict(chapyter) if isinstance(chapyter, dict) else {}
    kept[NOTEBOOK_ID_KEY] = notebook_id
    return kept


def _message_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "is not an object"
    if not isinstance(message.get("id"), str) or not message["id"]:
        return "has no id"
    if message.get("role") not in _ROLES:
        return "has a role other than user or assistant"
    if not isinstance(message.get("content"), str):
        return "has no text content"
    for key in ("model", "created", "error"):
        if key in message and not isinstance(message[key], str):
            return f"has a {key} that is not a string"
    if message.get("status", "complete") not in _STATUSES:
        return "has a status other than complete, stopped or error"
    steps = message.get("steps", [])
    if not isinstance(steps, list):
        return "has steps that are not a list"
    for step in steps:
        if not isinstance(step, dict) or not all(
            isinstance(step.get(key, ""), str) for key in _STEP_FIELDS
        ):
            return "has a step that is not an object of strings"
        if not step.get("step_id"):
            return "has a step without a step_id"
    return None


def validate_stored_chat(value: Any) -> list[str]:
    """Every problem of a stored chat (``metadata.chapyter.chat``), one line each; [] if valid.

    Valid: ``{"schema": 1, "chats": [{"id", "messages": [message, ...]}, ...]}`` with at most
    :data:`MAX_STORED_CHATS` chats of at most :data:`MAX_STORED_MESSAGES` messages, and
    optional ``saved``/``current`` strings and ``truncated`` boolean. A message has a non-empty
    ``id``, ``role`` (user, assistant) and ``content``, optional ``model``, ``created``,
    ``error`` strings, ``status`` (complete, stopped, error) and ``steps`` (objects of the
    strings ``step_id``, ``code``, ``cell_id``, ``outcome``). A schema above ours is a problem:
    this version cannot know what it means.
    """
    if not isinstance(value, dict):
        return ["the stored chat is not an object"]
    problems = []
    schema = value.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        problems.append("the stored chat has no schema version")
    elif schema > STORED_CHAT_SCHEMA:
        problems.append(
            f"the stored chat has schema {schema}; this version reads {STORED_CHAT_SCHEMA}"
        )
    for key in ("saved", "current"):
        if key in value and not isinstance(value[key], str):
            problems.append(f"the stored chat's {key} is not a string")
    if "truncated" in value and not isinstance(value["truncated"], bool):
        problems.append("the stored chat's truncated is not true or false")
    chats = value.get("chats")
    if not isinstance(chats, list):
        return [*problems, "the stored chat has no list of chats"]
    if len(chats) > MAX_STORED_CHATS:
        problems.append(f"the stored chat has {len(chats)} chats; at most {MAX_STORED_CHATS}")
    seen: set[str] = set()
    for n, chat in enumerate(chats, 1):
        if not isinstance(chat, dict) or not isinstance(chat.get("id"), str) or not chat["id"]:
            problems.append(f"stored chat {n} has no id")
            continue
        if chat["id"] in seen:
            problems.append(f"stored chat {n} repeats the id of an earlier one")
        seen.add(chat["id"])
        messages = chat.get("messages")
        if not isinstance(messages, list):
            problems.append(f"stored chat {n} has no list of messages")
            continue
        if len(messages) > MAX_STORED_MESSAGES:
            problems.append(
                f"stored chat {n} has {len(messages)} messages; at most {MAX_STORED_MESSAGES}"
            )
        for m, message in enumerate(messages, 1):
            problem = _message_problem(message)
            if problem:
                problems.append(f"stored chat {n}, message {m} {problem}")
    return problems
