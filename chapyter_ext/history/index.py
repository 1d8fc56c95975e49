"""Which history file is whose: notebook places and chat ids to notebook ids, kept in memory.

The files are the truth (each names where its notebook is, and its chats); this index is built
from them once, by reading every file, and kept up to date by every write the store makes.

A notebook's **place** is its path under the contents root of the server that serves it
(:func:`place_of`), so two servers that share one data folder (two projects of one user, two
machines with one home folder) never take each other's ``Untitled.ipynb`` for their own. A
place is *bound* to at most one notebook id; a notebook that was deleted (or whose file was
replaced) is unbound and carries the time it happened in ``deleted``, until it is found again
or pruned. Files written before roots (versions 1 and 2) name no root: they are *unclaimed*,
found by their path alone until a server claims one (:mod:`.core`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


def place_of(root: str, notebook: str) -> str:
    """Where a notebook is, whoever serves it: its path under ``root`` (a server's contents
    root, :func:`.contents_events.contents_root_name`). Two servers whose roots overlap (one serves
    ``~``, the other ``~/project``) name a notebook they both serve the same way."""
    return f"{root.rstrip('/')}/{notebook}"


@dataclass
class OwnerEntry:
    """What the index knows of one notebook's history file."""

    notebook: str
    #: The contents root it belongs to; None for a file from before roots, not claimed yet.
    root: str | None = None
    deleted: str = ""
    origin: str = ""
    chats: frozenset[str] = field(default_factory=frozenset)

    @property
    def place(self) -> str | None:
        """Where the notebook is (None while the file is unclaimed)."""
        return None if self.root is None else place_of(self.root, self.notebook)


@dataclass
class HistoryIndex:
    """Places and chat ids to notebook ids; not thread-safe (the store's lock guards it)."""

    owners: dict[str, OwnerEntry] = field(default_factory=dict)
    by_place: dict[str, str] = field(default_factory=dict)
    #: Unclaimed files (from before roots) that are not deleted, by their notebook's path.
    unclaimed: dict[str, str] = field(default_factory=dict)
    by_chat: dict[str, str] = field(default_factory=dict)
    #: Files that could not be read when the index was built: read (and salvaged) on use.
    damaged: set[str] = field(default_factory=set)
    built: bool = False

    def put(self, owner_id: str, data: dict[str, Any]) -> str:
        """Record a file's data; returns the id of a notebook it displaced from its place
        ("" if none), which the caller marks deleted."""
        self.drop(owner_id)
        entry = OwnerEntry(
            notebook=data["notebook"],
            root=data.get("root"),
            deleted=data.get("deleted") or "",
            origin=data.get("origin") or "",
            chats=frozenset(data["chats"]),
        )
        self.owners[owner_id] = entry
        for chat_id in entry.chats:
            self.by_chat[chat_id] = owner_id
        self.damaged.discard(owner_id)
        if entry.deleted:
            return ""
        place = entry.place
        if place is None:
            # Two unclaimed files of one path (two servers of an old version): the newest is
            # found by the path, the other by its id; neither is deleted, whose it is unknown.
            self.unclaimed[entry.notebook] = owner_id
            return ""
        displaced = self.by_place.get(place, "")
        self.by_place[place] = owner_id
        return displaced if displaced != owner_id else ""

    def drop(self, owner_id: str) -> None:
        """Forget a notebook's file."""
        entry = self.owners.pop(owner_id, None)
        if entry is None:
            return
        place = entry.place
        if place is not None and self.by_place.get(place) == owner_id:
            del self.by_place[place]
        if self.unclaimed.get(entry.notebook) == owner_id:
            del self.unclaimed[entry.notebook]
        for chat_id in entry.chats:
            if self.by_chat.get(chat_id) == owner_id:
                del self.by_chat[chat_id]

    def bound(self, place: str) -> str:
        """The id bound to a place ("" if none)."""
        return self.by_place.get(place, "")

    def is_bound(self, owner_id: str) -> bool:
        """Whether the notebook is bound to a place (claimed, not deleted)."""
        entry = self.owners.get(owner_id)
        place = entry.place if entry is not None else None
        return place is not None and self.by_place.get(place) == owner_id

    def under(self, place: str) -> list[tuple[str, str]]:
        """``(id, place)`` of every bound notebook at ``place`` or inside the folder ``place``."""
        prefix = place.rstrip("/") + "/"
        return [
            (owner_id, found)
            for found, owner_id in self.by_place.items()
            if found == place or found.startswith(prefix)
        ]

    def unclaimed_under(self, path: str) -> list[tuple[str, str]]:
        """``(id, path)`` of every unclaimed notebook at ``path`` or inside the folder ``path``."""
        prefix = path.rstrip("/") + "/"
        return [
            (owner_id, notebook)
            for notebook, owner_id in self.unclaimed.items()
            if notebook == path or notebook.startswith(prefix)
        ]

    def build(self, ids: list[str], peek: Any, mtime: Any) -> list[str]:
        """Fill the index from the files ``ids`` (read with ``peek``, None when damaged).

        Returns the ids that lost their place to a newer file claiming the same place (two
        servers of one root, or a file restored by hand): the caller marks them deleted. The
        newest file (by ``mtime``) keeps the place.
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
