"""Chat history per notebook: pure logic, no tornado.

Each notebook's chats live in one JSON file named after the notebook's stable id
(:mod:`.files`); an index in memory (:mod:`.index`) says which path and which
chat ids belong to which file. A file holds every chat of that notebook and which one is
current, so "new chat" keeps the old ones. The store is synchronous and thread-safe; the
server calls it from one worker thread so the event loop never waits on a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from ..llm.usage import sum_usage
from .files import FORMAT_VERSION
from .moves import NotebookMoves
from .records import (
    ROLES,
    STATUSES,
    ChatMessage,
    ChatView,
    HistoryError,
    new_id,
    normalize_notebook_path,
    redact_message,
    repair_text,
    utc_now,
)
from .unsaved import ExportReporter

T = TypeVar("T")

__all__ = [
    "FORMAT_VERSION",
    "ChatHistoryStore",
    "ChatMessage",
    "ChatView",
    "HistoryError",
    "HistoryWorker",
    "new_id",
    "normalize_notebook_path",
    "repair_text",
    "utc_now",
]

#: Questions whose replies are still to come, remembered to place each reply after its own.
MAX_PENDING_REPLIES = 1000


class ChatHistoryStore(NotebookMoves):
    """Chats of each notebook, one JSON file per notebook under ``root`` (see
    :mod:`.files`), found by path, by the notebook's stable id, or by chat id.

    ``max_messages`` bounds each chat (older messages are dropped first) and ``max_chats``
    bounds how many past chats a notebook keeps. ``redactor`` (or one built from ``secrets``,
    e.g. API keys and header values) runs over every stored message: no secret reaches the disk.

    Notebooks move: :meth:`rename`, :meth:`copy` and :meth:`delete` follow the contents
    manager's events, :meth:`locate` finds a notebook moved where the server did not see it
    by the id in its metadata (docs/reproducibility.md, "Where chats live"). A reply is saved
    by its chat id (:meth:`append`), so a notebook renamed while it streams keeps it.

    A damaged file never makes a call fail: the valid chats and messages are kept, the file is
    moved aside, and the next view of that notebook carries a one-time ``notice``. Nor does a
    write that fails (a full disk, a quota): the history is kept in memory and the next view
    (or :meth:`take_notice`) says so in one line (:mod:`.unsaved`).
    """

    def get(
        self,
        notebook: str,
        notebook_id: str | None = None,
        exists: Callable[[str], bool] | None = None,
    ) -> ChatView:
        """The current chat of ``notebook`` (empty, with no id, if it has never chatted)."""
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook, notebook_id, exists)
        with self._lock:
            return self._view(notebook, self._load(owner) if owner else None)

    def snapshot(self, notebook: str) -> dict[str, Any] | None:
        """A copy of the history bound to ``notebook`` (None if none): what a save stores."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            owner = self._bound(notebook)
            data = self._load(owner) if owner else None
            return json.loads(json.dumps(data)) if data is not None else None

    def _chat_data(self, notebook: str, chat_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The history holding ``chat_id`` and that chat; found by the chat id, so a notebook
        renamed since still has it; else by ``notebook``'s path."""
        self._ensure_index()
        owner = self._index.by_chat.get(chat_id) or self._bound(notebook)
        data = self._load(owner) if owner else None
        chat = data["chats"].get(chat_id) if data else None
        if data is None or chat is None:
            raise HistoryError("not_found", "No such chat for this notebook.")
        return data, chat

    def messages(self, notebook: str, chat_id: str) -> tuple[ChatMessage, ...]:
        """The messages of one chat of ``notebook``; :class:`HistoryError` if there is none."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            _, chat = self._chat_data(notebook, chat_id)
            return tuple(ChatMessage.from_json(m) for m in chat["messages"])

    # -- writing -------------------------------------------------------------------------

    def _add_chat(self, data: dict[str, Any]) -> str:
        chat_id = new_id()
        data["chats"][chat_id] = {"created": utc_now(), "messages": []}
        data["current"] = chat_id
        # Dicts keep insertion order, so the oldest chats come first and go first.
        while len(data["chats"]) > self.max_chats:
            oldest = next(iter(data["chats"]))
            del data["chats"][oldest]
        return chat_id

    def resolve_chat(
        self,
        notebook: str,
        chat_id: str | None = None,
        notebook_id: str | None = None,
        exists: Callable[[str], bool] | None = None,
    ) -> str:
        """The chat a new message goes to: ``chat_id`` if given, else the current one.

        A notebook that has never chatted gets its history (under ``notebook_id`` when that is
        a free, well-formed id) and its first chat here (and on disk).
        """
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook, notebook_id, exists)
        with self._lock:
            data = self._load(owner) if owner else None
            if chat_id:
                if data is None or chat_id not in data["chats"]:
                    raise HistoryError("not_found", "No such chat for this notebook.")
                return chat_id
            if data is None:
                data = self._create(notebook, notebook_id)
            if data["current"] in data["chats"]:
                return data["current"]
            chat_id = self._add_chat(data)
            self._save(data)
            return chat_id

    def append(
        self, notebook: str, chat_id: str, message: ChatMessage, *, reply_id: str = ""
    ) -> ChatMessage:
        """Add ``message`` to a chat and save; returns the message as stored (secrets scrubbed).

        The chat is found by its id wherever its notebook is now. ``reply_id`` names the reply
        this (user) message will get: that reply is placed right after it, even when another
        tab's question came in between. The chat keeps at most ``max_messages``: the oldest go
        first.
        """
        notebook = normalize_notebook_path(notebook)
        if message.role not in ROLES:
            raise HistoryError("bad_request", f"Unknown role {message.role!r}.")
        if message.status not in STATUSES:
            raise HistoryError("bad_request", f"Unknown status {message.status!r}.")
        stored = self._scrubbed(message)
        with self._lock:
            data, chat = self._chat_data(notebook, chat_id)
            messages = chat["messages"]
            question = self._replies.pop(stored.id, "")
            at = next(
                (i + 1 for i, m in enumerate(messages) if question and m["id"] == question),
                len(messages),
            )
            messages.insert(at, stored.to_json())
            del messages[: -self.max_messages]
            self._save(data, told=notebook)
            if reply_id:
                self._replies[reply_id] = stored.id
                while len(self._replies) > MAX_PENDING_REPLIES:
                    del self._replies[next(iter(self._replies))]
        return stored

    def add_kernel_usage(self, notebook: str, usage: dict[str, Any]) -> None:
        """Count what ``notebook``'s kernel asked of models through the server (``%%ai``) in
        the notebook's usage, which the chat shows with its replies'."""
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook)
        with self._lock:
            data = (self._load(owner) if owner else None) or self._create(notebook, None)
            data["kernel_usage"] = sum_usage([data.get("kernel_usage"), usage])
            self._save(data)

    def new_chat(
        self,
        notebook: str,
        notebook_id: str | None = None,
        exists: Callable[[str], bool] | None = None,
    ) -> ChatView:
        """Start a new, empty chat for ``notebook`` and make it current; the old ones stay."""
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook, notebook_id, exists)
        with self._lock:
            data = (self._load(owner) if owner else None) or self._create(notebook, notebook_id)
            self._add_chat(data)
            self._save(data)
            return self._view(notebook, data)

    def clear(
        self,
        notebook: str,
        chat_id: str | None = None,
        notebook_id: str | None = None,
        exists: Callable[[str], bool] | None = None,
    ) -> ChatView:
        """Forget chats of ``notebook``: one chat if ``chat_id`` is given, else all of them.

        Forgetting all keeps the (empty) history's id: a chat saved in the notebook's
        metadata is not loaded again, and the next save with ``save_chat_in_notebook`` drops it.
        """
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook, notebook_id, exists)
        with self._lock:
            data = self._load(owner) if owner else None
            if data is None:
                if chat_id:
                    raise HistoryError("not_found", "No such chat for this notebook.")
                return self._view(notebook, None)
            if not chat_id:
                data["chats"], data["current"] = {}, ""
            elif chat_id not in data["chats"]:
                raise HistoryError("not_found", "No such chat for this notebook.")
            else:
                del data["chats"][chat_id]
                if data["current"] == chat_id:
                    data["current"] = next(reversed(data["chats"]), "")
            self._save(data)
            return self._view(notebook, data)

    def import_chats(
        self,
        notebook: str,
        notebook_id: str | None,
        chats: Sequence[dict[str, Any]],
        *,
        current: int = -1,
        notice: str = "",
        exists: Callable[[str], bool] | None = None,
    ) -> ChatView:
        """Give a notebook with no history here the chats it carried (e.g. in its metadata).

        ``chats`` are ``{"created", "messages": [ChatMessage, ...]}``, oldest first;
        ``current`` is the index of the current one. They are redacted, bounded and given new
        ids where an id is taken. A notebook that already has a history keeps it unchanged:
        this server's copy wins (the view says so only through its content).
        """
        notebook = normalize_notebook_path(notebook)
        owner = self.locate(notebook, notebook_id, exists)
        with self._lock:
            if owner:
                return self._view(notebook, self._load(owner))
            data = self._create(notebook, notebook_id)
            kept = list(chats)[-self.max_chats :]
            for n, chat in enumerate(kept):
                chat_id = new_id()
                data["chats"][chat_id] = {
                    "created": chat.get("created") or utc_now(),
                    "messages": [
                        self._scrubbed(m).to_json()
                        for m in list(chat["messages"])[-self.max_messages :]
                    ],
                }
                if n == (current if 0 <= current < len(kept) else len(kept) - 1):
                    data["current"] = chat_id
            self._save(data)
            if notice:  # told with what the save said, if it could not write them
                self._notices[notebook] = " ".join(
                    filter(None, [notice, self._notices.get(notebook)])
                )
            return self._view(notebook, data)

    def _scrubbed(self, message: ChatMessage) -> ChatMessage:
        """``message`` as it may be stored: redacted with this store's policy."""
        return redact_message(message, self.redact)


class HistoryWorker:
    """Runs every call to the history store on one worker thread.

    One thread keeps writes in the order they were asked for and off the event loop; the
    files are small, so a single worker is never the bottleneck.
    """

    def __init__(self, store: ChatHistoryStore) -> None:
        self.store = store
        #: Whether a notebook path still has a file (the contents manager's answer, set by
        #: ``contents_events``); None: unknown, so a moved-or-copied notebook counts as copied.
        self.exists: Callable[[str], bool] | None = None
        #: The event loop that hands calls to the thread (where ``exists`` runs coroutines).
        self.loop: asyncio.AbstractEventLoop | None = None
        #: The log's one line per kind of failure of Export chat's writes (history_handlers).
        self.exports = ExportReporter(store.contents_root or "the server's folder", store.log)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chapyter-history")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Call ``fn(*args)`` on the history thread and await its result."""
        loop = self.loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args))

    async def close(self) -> None:
        """Let queued writes finish, write what could not be written before (if it can be
        now), then stop the thread."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(RuntimeError):  # closed already
            await loop.run_in_executor(self._executor, self.store.flush)
        await loop.run_in_executor(None, partial(self._executor.shutdown, wait=True))
