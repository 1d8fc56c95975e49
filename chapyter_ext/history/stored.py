"""A notebook's chats as they travel in its metadata (``metadata.chapyter.chat``): built from
the history when the notebook is saved, and read back when a notebook that carries them is
opened where the server has no history for it. Pure: no I/O.

What a notebook carries is whatever its file says, written by anyone: every message read back
is marked ``imported`` here, whatever the file claims, and the verdicts on its code blocks
(``checks``) are left behind, so nothing in it passes for this server's own record (no Undo of
the cells its steps name, no approval or check taken from it). The mark stays in the history
and in the stored chat written from it, so it survives reloads and the next save.

The schema is the contract's (``contract.chat.validate_stored_chat``). What is written is
redacted once more with the server's secret policy (the history is redacted already; the policy
may have grown since) and bounded in size: the current chat's newest messages first, then the
other chats, newest first, each whole; anything left out makes ``truncated`` true.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..contract import STORED_CHAT_SCHEMA, validate_stored_chat
from .records import ChatMessage, redact_message, utc_now


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _scrub(message: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    return redact_message(ChatMessage.from_json(message), redact).to_json()


def build_stored_chat(
    history: dict[str, Any], redact: Callable[[str], str], max_bytes: int
) -> dict[str, Any] | None:
    """The stored form of a notebook's history (as the store keeps it), at most ``max_bytes``
    of compact JSON; None when it has no message at all (nothing to carry)."""
    chats: dict[str, Any] = history["chats"]
    if not any(chat["messages"] for chat in chats.values()):
        return None
    current = history.get("current") or ""
    stored: dict[str, Any] = {
        "schema": STORED_CHAT_SCHEMA,
        "saved": utc_now(),
        "current": current,
        "truncated": False,
        "chats": [],
    }
    budget = max_bytes - _size(stored)
    # The current chat first, then the others from the newest.
    order = [current] if current in chats else []
    order += [chat_id for chat_id in reversed(chats) if chat_id != current]
    kept: dict[str, dict[str, Any]] = {}
    for chat_id in order:
        messages = [_scrub(m, redact) for m in chats[chat_id]["messages"]]
        if not messages:
            continue
        entry = {"id": chat_id, "created": chats[chat_id].get("created", ""), "messages": []}
        whole = {**entry, "messages": messages}
        if _size(whole) + 1 <= budget:
            entry = whole
        else:
            stored["truncated"] = True
            if chat_id != current:
                continue
            # The newest messages of the current chat that fit.
            room = budget - _size(entry) - 1
            for message in reversed(messages):
                cost = _size(message) + 1
                if cost > room:
                    break
                entry["messages"].insert(0, message)
                room -= cost
            if not entry["messages"]:
                continue
        kept[chat_id] = entry
        budget -= _size(entry) + 1
    # Written in the history's own order, oldest chat first, as a reader expects.
    stored["chats"] = [kept[chat_id] for chat_id in chats if chat_id in kept]
    return stored


@dataclass(frozen=True)
class CarriedChats:
    """The chats a notebook carried, read and checked: what the store imports."""

    #: ``{"created", "messages": [ChatMessage, ...]}``, oldest first.
    chats: list[dict[str, Any]]
    #: Index of the current chat in ``chats`` (-1: the last).
    current: int
    #: When they were saved into the notebook ("" if unknown).
    saved: str
    truncated: bool

    def notice(self) -> str:
        """What the panel says once about where this chat came from."""
        when = f" (saved {self.saved[:10]})" if self.saved else ""
        cut = " Older messages were left out when it was saved." if self.truncated else ""
        return (
            f"This chat came with the notebook{when}; it continues here. Its messages are "
            "marked “from the notebook file” and shown read-only: no Undo, no links to cells, "
            f"no approvals taken from the file.{cut}"
        )


def imported_message(message: ChatMessage) -> ChatMessage:
    """``message`` as a notebook's file carried it: marked imported, its code blocks'
    verdicts left out (they were made elsewhere, or written by hand)."""
    return replace(message, imported=True, checks=())


def read_stored_chat(value: Any) -> CarriedChats:
    """The chats of a notebook's ``metadata.chapyter.chat``; ValueError (its first problem,
    one line) when it does not follow the schema."""
    problems = validate_stored_chat(value)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValueError(f"The chat saved in the notebook cannot be read: {problems[0]}{more}.")
    chats = []
    current = -1
    for n, chat in enumerate(value["chats"]):
        created = chat.get("created")
        chats.append(
            {
                "created": created if isinstance(created, str) else "",
                "messages": [imported_message(ChatMessage.from_json(m)) for m in chat["messages"]],
            }
        )
        if chat["id"] == value.get("current"):
            current = n
    return CarriedChats(
        chats=chats,
        current=current,
        saved=value.get("saved", ""),
        truncated=bool(value.get("truncated", False)),
    )
