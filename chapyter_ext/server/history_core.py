"""The chat history's core: its files, its index, and finding the file of a path or an id.

:class:`HistoryCore` is what :mod:`.history_moves` and the store (:mod:`.history`) build on;
callers hold its lock around every use.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..contract import is_notebook_id
from ..llm.usage import sum_usage
from ..redact import Redactor
from .chat_records import ChatMessage, ChatView, new_id, normalize_notebook_path, utc_now
from .history_files import OwnerFiles, empty_owner
from .history_index import HistoryIndex, OwnerEntry, file_mtime


class HistoryCore:
    """The files under ``root``, the index over them, the pending notices, and the one lock.

    ``max_messages`` and ``max_chats`` bound each chat and each notebook; ``redactor`` (or one
    built from ``secrets``) is the secret policy every stored text goes through.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_messages: int = 200,
        max_chats: int = 50,
        secrets: Sequence[str] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.root = Path(root)
        self.max_messages = max(1, int(max_messages))
        self.max_chats = max(1, int(max_chats))
        self.redact = redactor if redactor is not None else Redactor(secrets)
        self._files = OwnerFiles(
            self.root, lambda m: ChatMessage.from_json(m).to_json(), self.max_messages
        )
        self._index = HistoryIndex()
        # Notices not yet shown, per normalised notebook path.
        self._notices: dict[str, str] = {}
        # Reply message id -> id of the question it answers (see append).
        self._replies: dict[str, str] = {}
        # One lock for all files: calls are short, and it makes read-modify-write safe. It is
        # never held while waiting for anything but the disk (see locate).
        self._lock = threading.RLock()

    # -- finding a notebook's file ------------------------------------------------------------

    def _ensure_index(self) -> None:
        if self._index.built:
            return
        ids = list(self._files.ids())
        losers = self._index.build(
            ids, self._files.peek, lambda owner_id: file_mtime(self._files.path(owner_id))
        )
        for loser in losers:
            self._mark_deleted(loser)

    def warm(self) -> int:
        """Read every file once (the index), so no request waits for it; how many there are."""
        with self._lock:
            self._ensure_index()
            return len(self._index.owners)

    @staticmethod
    def _default_id(notebook: str) -> str:
        # What version 1 named a notebook's file: a hash of its path.
        return hashlib.sha256(notebook.encode("utf-8")).hexdigest()[:40]

    def file_for(self, notebook: str) -> Path:
        """The JSON file holding the chats of ``notebook`` (which need not exist yet)."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            self._ensure_index()
            return self._files.path(self._index.bound(notebook) or self._default_id(notebook))

    def bound_id(self, notebook: str) -> str:
        """The id bound to a path from the index alone ("" if none, or before the index is
        built): quick enough for a caller on the event loop (the pre-save hook)."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            return self._index.bound(notebook) if self._index.built else ""

    def _bound(self, notebook: str) -> str:
        """The id bound to a path; also reads a file no index has seen at the version 1 name
        (written by an older version or by hand since, or damaged)."""
        self._ensure_index()
        found = self._index.bound(notebook)
        if found:
            return found
        legacy = self._default_id(notebook)
        if legacy in self._index.owners and legacy not in self._index.damaged:
            return ""  # another notebook's now, or deleted
        data = self._load(legacy, notebook)
        if data is None or data["deleted"] or data["notebook"] != notebook:
            return ""
        return legacy

    def _known(self, owner_id: str) -> OwnerEntry | None:
        """The index entry of a notebook id, reading its file if the index has not yet."""
        entry = self._index.owners.get(owner_id)
        if entry is not None and owner_id not in self._index.damaged:
            return entry
        if self._load(owner_id) is None:
            return None
        return self._index.owners.get(owner_id)

    def _load(self, owner_id: str, notebook: str = "") -> dict[str, Any] | None:
        """A notebook's data from its file (None: no file, or nothing in it could be read)."""
        data, notice = self._files.read(owner_id, notebook)
        if notice:
            self._notices[data["notebook"] if data else notebook] = notice
            if notebook and data and data["notebook"] != notebook:
                self._notices[notebook] = notice
        if data is None or (notice and not data["chats"]):
            # Moved aside with nothing kept: the notebook has no history any more.
            self._index.drop(owner_id)
            self._index.damaged.discard(owner_id)
            return None
        if notice or owner_id not in self._index.owners:
            self._put(owner_id, data)
        return data

    def _put(self, owner_id: str, data: dict[str, Any]) -> None:
        displaced = self._index.put(owner_id, data)
        if displaced:
            self._mark_deleted(displaced)

    def _save(self, data: dict[str, Any]) -> None:
        self._files.write(data)
        self._put(data["notebook_id"], data)

    def _mark_deleted(self, owner_id: str, when: str = "") -> None:
        data = self._load(owner_id)
        if data is None or data["deleted"]:
            return
        data["deleted"] = when or utc_now()
        self._save(data)

    def _create(self, notebook: str, notebook_id: str | None) -> dict[str, Any]:
        """A new, empty history for an unbound path, under the id its metadata proposes."""
        for candidate in (notebook_id or "", self._default_id(notebook)):
            if (
                is_notebook_id(candidate)
                and candidate not in self._index.owners
                and not self._files.path(candidate).exists()
            ):
                return empty_owner(candidate, notebook)
        return empty_owner(new_id(), notebook)

    # -- reading -------------------------------------------------------------------------

    def take_notice(self, notebook: str) -> str:
        """The notice for ``notebook`` not yet shown ("" if none); it is shown only once."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            return self._notices.pop(notebook, "")

    def _view(self, notebook: str, data: dict[str, Any] | None) -> ChatView:
        chats: dict[str, Any] = data["chats"] if data else {}
        current = (data or {}).get("current") or ""
        messages = chats.get(current, {}).get("messages", []) if current else []
        notice = self._notices.pop(notebook, "")
        if data and data["notebook"] != notebook:
            notice = notice or self._notices.pop(data["notebook"], "")
        return ChatView(
            notebook=notebook,
            chat_id=current,
            messages=tuple(ChatMessage.from_json(m) for m in messages),
            chats=tuple(chats),
            notice=notice,
            notebook_id=data["notebook_id"] if data else "",
            # The chats' replies, and what the notebook's kernel asked of models (%%ai).
            usage=sum_usage(
                [
                    *(m.get("usage") for c in chats.values() for m in c.get("messages", [])),
                    (data or {}).get("kernel_usage"),
                ]
            ),
        )
