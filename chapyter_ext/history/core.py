"""The chat history's core: its files, its index, and finding the file of a path or an id.

:class:`HistoryCore` is what :mod:`.moves` and the store (:mod:`.store`) build on;
callers hold its lock around every use.

A notebook is found by its own id (``metadata.chapyter.notebook_id``) first; by its place (its
path under this server's contents root, :func:`.index.place_of`) only when the id is
missing, so a server never takes another project's notebook of the same path for its own. A
write that fails (a full disk, a quota) keeps the history in memory, tells the user once per
change and the log once per kind (:mod:`.unsaved`), and is tried again at the next
change and at :meth:`HistoryCore.flush`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..contract import is_notebook_id
from ..llm.usage import sum_usage
from ..redact import Redactor
from .files import OwnerFiles, empty_owner
from .index import HistoryIndex, OwnerEntry, file_mtime, place_of
from .records import ChatMessage, ChatView, new_id, normalize_notebook_path, utc_now
from .unsaved import UnsavedReporter

_log = logging.getLogger(__name__)


class HistoryCore:
    """The files under ``root``, the index over them, the pending notices, and the one lock.

    ``contents_root`` names the folder this server's notebooks are in (see
    :func:`.contents_events.contents_root_name`); ``max_messages`` and ``max_chats`` bound each
    chat and each notebook; ``redactor`` (or one built from ``secrets``) is the secret policy
    every stored text goes through; ``log`` gets the lines of :mod:`.unsaved`.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        contents_root: str = "",
        max_messages: int = 200,
        max_chats: int = 50,
        secrets: Sequence[str] = (),
        redactor: Redactor | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.root = Path(root)
        self.contents_root = contents_root
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
        # Histories whose last write failed, by notebook id: the truth until a write succeeds.
        self._unsaved: dict[str, dict[str, Any]] = {}
        # The line each of those told, per notebook path (taken back once it is written).
        self._unsaved_lines: dict[str, str] = {}
        self.log = log or _log
        self._report = UnsavedReporter(self.root, self.log)
        # Copies the pre-save hook named (place -> (source id, copy id, path)), made on the
        # history thread before anything else looks at that place (history_moves).
        self._reserved: dict[str, tuple[str, str, str]] = {}
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

    def place(self, notebook: str) -> str:
        """Where the notebook at ``notebook`` (a normalised path) is: its place."""
        return place_of(self.contents_root, notebook)

    def _relative(self, entry: OwnerEntry) -> str | None:
        """The path of ``entry``'s notebook under this server's root; None when it is under
        another root (another project, another machine) or unclaimed."""
        place = entry.place
        prefix = self.place("")
        if place is None or not place.startswith(prefix):
            return None
        return place[len(prefix) :]

    def _default_id(self, notebook: str) -> str:
        # The name of a file made for a notebook that proposed no id: a hash of its place, so
        # two servers of one root find the same file, and two roots never do.
        return hashlib.sha256(self.place(notebook).encode("utf-8")).hexdigest()[:40]

    @staticmethod
    def _legacy_id(notebook: str) -> str:
        # What version 1 named a notebook's file (and version 2 a notebook with no id): a hash
        # of its path alone.
        return hashlib.sha256(notebook.encode("utf-8")).hexdigest()[:40]

    def file_for(self, notebook: str) -> Path:
        """The JSON file holding the chats of ``notebook`` (which need not exist yet)."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            self._ensure_index()
            bound = self._index.bound(self.place(notebook))
            return self._files.path(bound or self._default_id(notebook))

    def bound_id(self, notebook: str) -> str:
        """The id bound to a path from the index alone ("" if none, or before the index is
        built): quick enough for a caller on the event loop (the pre-save hook)."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            return self._index.bound(self.place(notebook)) if self._index.built else ""

    def _bound(self, notebook: str) -> str:
        """The id bound to a path; also finds a file no index has seen (written since by
        another server of this root, or by an older version, or damaged) and claims a file
        from before roots found at this path."""
        self._ensure_index()
        place = self.place(notebook)
        found = self._index.bound(place)
        if found:
            return found
        default = self._default_id(notebook)
        if default not in self._index.owners or default in self._index.damaged:
            self._load(default, notebook)
            if self._index.bound(place) == default:
                return default
        unclaimed = self._index.unclaimed.get(notebook, "")
        legacy = self._legacy_id(notebook)
        if not unclaimed and (legacy not in self._index.owners or legacy in self._index.damaged):
            data = self._load(legacy, notebook)
            if data is not None and data["root"] is None and not data["deleted"]:
                unclaimed = legacy if data["notebook"] == notebook else ""
        return self._claim(unclaimed, notebook) if unclaimed else ""

    def _claim(self, owner_id: str, notebook: str) -> str:
        """A file from before roots, found at ``notebook``: this server's notebook from now on.
        (Which server's it was, no file says: the first to find it at its path takes it.)"""
        data = self._load(owner_id, notebook)
        if data is None:
            return ""
        data["root"], data["notebook"], data["deleted"] = self.contents_root, notebook, ""
        self._save(data)
        return owner_id

    def _known(self, owner_id: str) -> OwnerEntry | None:
        """The index entry of a notebook id, reading its file if the index has not yet."""
        entry = self._index.owners.get(owner_id)
        if entry is not None and owner_id not in self._index.damaged:
            return entry
        if self._load(owner_id) is None:
            return None
        return self._index.owners.get(owner_id)

    def _load(self, owner_id: str, notebook: str = "") -> dict[str, Any] | None:
        """A notebook's data from its file (None: no file, or nothing in it could be read);
        from memory while its last write failed."""
        unsaved = self._unsaved.get(owner_id)
        if unsaved is not None:
            return json.loads(json.dumps(unsaved))  # a copy: callers change what they get
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

    def _save(self, data: dict[str, Any], told: str = "") -> bool:
        """Write a notebook's history; whether it reached the disk. When it did not, it is kept
        in memory and the notebook's next view (and ``told``, the path the caller named it by)
        carries the line saying so."""
        owner_id, notebook = data["notebook_id"], data["notebook"]
        try:
            self._files.write(data)
        except OSError as err:
            self._unsaved[owner_id] = data
            line = self._report.failed(err)
            for path in {notebook, told or notebook}:
                self._notices[path] = self._unsaved_lines[path] = line
            self._put(owner_id, data)
            return False
        if self._unsaved.pop(owner_id, None) is not None:
            for path in {notebook, told or notebook}:
                told_line = self._unsaved_lines.pop(path, None)
                if told_line is not None and self._notices.get(path) == told_line:
                    del self._notices[path]  # written after all: nothing left to tell
        self._report.saved()
        self._put(owner_id, data)
        return True

    def flush(self) -> int:
        """Try again to write what could not be written; how many histories still are not."""
        with self._lock:
            for data in list(self._unsaved.values()):
                self._save(data)
            left = len(self._unsaved)
        if left:
            self._report.log.warning(
                "chapyter-ext: the chat history of %d notebook(s) is still not saved in %s",
                left,
                self.root,
            )
        return left

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
                and candidate not in self._unsaved
                and not self._files.path(candidate).exists()
            ):
                return empty_owner(candidate, notebook, self.contents_root)
        return empty_owner(new_id(), notebook, self.contents_root)

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
