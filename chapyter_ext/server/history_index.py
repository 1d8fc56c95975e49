"""Which history file is whose: notebook paths and chat ids to notebook ids, kept in memory.

The files are the truth (each names its notebook's path and chats); this index is built from
them once, by reading every file, and kept up to date by every write the store makes. A path
is *bound* to at most one notebook id; a notebook that was deleted (or whose file was replaced)
is unbound and carries the time it happened in ``deleted``, until it is found again or pruned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass
class OwnerEntry:
    """What the index knows of one notebook's history file."""

    notebook: str
    deleted: str = ""
    origin: str = ""
    chats: frozenset[str] = field(default_factory=frozenset)


@dataclass
class HistoryIndex:
    """Paths and chat ids to notebook ids; not thread-safe (the store's lock guards it)."""

    owners: dict[str, OwnerEntry] = field(default_factory=dict)
    by_path: dict[str, str] = field(default_factory=dict)
    by_chat: dict[str, str] = field(default_factory=dict)
    #: Files that could not be read when the index was built: read (and salvaged) on use.
    damaged: set[str] = field(default_factory=set)
    built: bool = False

    def put(self, owner_id: str, data: dict[str, Any]) -> str:
        """Record a file's data; returns the id of a notebook it displaced from its path
        ("" if none), which the caller marks deleted."""
        self.drop(owner_id)
        entry = OwnerEntry(
            notebook=data["notebook"],
            deleted=data.get("deleted") or "",
            origin=data.get("origin") or "",
            chats=frozenset(data["chats"]),
        )
        self.owners[owner_id] = entry
        for chat_id in entry.chats:
            self.by_chat[chat_id] = owner_id
        displaced = ""
        if not entry.deleted:
            displaced = self.by_path.get(entry.notebook, "")
            self.by_path[entry.notebook] = owner_id
        self.damaged.discard(owner_id)
        return displaced if displaced != owner_id else ""

    def drop(self, owner_id: str) -> None:
        """Forget a notebook's file."""
        entry = self.owners.pop(owner_id, None)
        if entry is None:
            return
        if self.by_path.get(entry.notebook) == owner_id:
            del self.by_path[entry.notebook]
        for chat_id in entry.chats:
            if self.by_chat.get(chat_id) == owner_id:
                del self.by_chat[chat_id]

    def bound(self, notebook: str) -> str:
        """The id bound to a path ("" if none)."""
        return self.by_path.get(notebook, "")

    def is_bound(self, owner_id: str) -> bool:
        """Whether the notebook is bound to a path (not deleted)."""
        entry = self.owners.get(owner_id)
        return entry is not None and self.by_path.get(entry.notebook) == owner_id

    def under(self, path: str) -> list[tuple[str, str]]:
        """``(id, path)`` of every bound notebook at ``path`` or inside the folder ``path``."""
        prefix = path.rstrip("/") + "/"
        return [
            (owner_id, notebook)
            for notebook, owner_id in self.by_path.items()
            if notebook == path or notebook.startswith(prefix)
        ]

    def build(self, ids: list[str], peek: Any, mtime: Any) -> list[str]:
        """Fill the index from the files ``ids`` (read with ``peek``, None when damaged).

        Returns the ids that lost their path to a newer file claiming the same path (two
        servers, or a file restored by hand): the caller marks them deleted. The newest file
        (by ``mtime``) keeps the path.
        """
        losers = []
        for owner_id in sorted(ids, key=mtime):
            data = peek(owner_id)
            if data is None:
                self.damaged.add(owner_id)
                continue
            displaced = self.put(owner_id, data)
            if displaced:
                losers.append(displaced)
        self.built = True
        return losers


def file_mtime(path: os.PathLike[str] | str) -> float:
    """A file's modification time, 0 if it is gone."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
