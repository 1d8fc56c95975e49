"""Notebooks move: the chat history follows renames, copies and deletes, and finds a notebook
moved where the server did not see it by the stable id in its metadata.

The rules (docs/reproducibility.md, "Where chats live") in one place, :meth:`NotebookMoves.locate`;
:mod:`.contents_events` calls the others from jupyter_server's contents events.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ..contract import is_notebook_id
from .chat_records import new_id, normalize_notebook_path, parse_time, utc_now
from .history_core import HistoryCore
from .history_files import empty_owner


class NotebookMoves(HistoryCore):
    """Where a notebook's history is, and what becomes of it when the notebook moves."""

    def _plan(self, notebook: str, notebook_id: str) -> tuple[str, str]:
        """``("owner", id)`` when the answer is known now ("" for none); ``("adopt", "")``
        when ``notebook_id``'s deleted notebook comes back at this path; ``("check", path)``
        when it depends on whether the file at ``path`` (where ``notebook_id`` is bound) still
        exists: moved if it does not, copied if it does."""
        bound = self._bound(notebook)
        if notebook_id and notebook_id != bound:
            entry = self._known(notebook_id)
            if entry is not None:
                if bound and self._index.owners[bound].origin == notebook_id:
                    return "owner", bound  # this path's copy of that notebook
                if self._index.is_bound(notebook_id):
                    return "check", entry.notebook
                return "adopt", ""
        return "owner", bound

    def locate(
        self,
        notebook: str,
        notebook_id: str | None = None,
        exists: Callable[[str], bool] | None = None,
    ) -> str:
        """The id of the history of the notebook at ``notebook`` whose metadata says
        ``notebook_id`` ("" if it has none yet).

        The path decides, unless the id names another notebook's history: then the file was
        moved (``exists(old path)`` is false: the history follows it), copied (both paths
        exist: the copy gets a copy of the history), or restored after a delete (the history
        comes back). A path that no longer exists while the id's does is a tab that has not
        seen a rename made elsewhere: it gets the id's history, unchanged. ``exists`` runs
        without the lock held; None counts every path as existing.
        """
        notebook = normalize_notebook_path(notebook)
        wanted = notebook_id if isinstance(notebook_id, str) and is_notebook_id(notebook_id) else ""
        for _ in range(3):
            with self._lock:
                kind, where = self._plan(notebook, wanted)
                if kind == "owner":
                    return where
                if kind == "adopt":
                    return self._adopt(notebook, wanted, move=True)
            moved = exists is not None and not exists(where)
            stale = not moved and exists is not None and not exists(notebook)
            with self._lock:
                if self._plan(notebook, wanted) != (kind, where):
                    continue
                if stale:
                    return wanted
                return self._adopt(notebook, wanted, move=moved)
        with self._lock:  # moving under our feet three times: the path decides
            return self._bound(notebook)

    def _adopt(self, notebook: str, owner_id: str, *, move: bool) -> str:
        """The file at ``notebook`` is ``owner_id``'s notebook, moved there or copied."""
        bound = self._index.bound(notebook)
        if bound and bound != owner_id:
            self._mark_deleted(bound)  # its file was replaced by this one
        if not move:
            return self._fork(owner_id, notebook)
        data = self._load(owner_id)
        if data is None:
            return ""
        data["notebook"], data["deleted"] = notebook, ""
        self._save(data)
        return owner_id

    def _fork(self, owner_id: str, notebook: str) -> str:
        """A copy of ``owner_id``'s chats (new ids) for the notebook at ``notebook``."""
        data = self._load(owner_id)
        if data is None:
            return ""
        ids = {chat_id: new_id() for chat_id in data["chats"]}
        copy = empty_owner(new_id(), notebook)
        copy["origin"] = owner_id
        copy["chats"] = {
            ids[chat_id]: {"created": chat["created"], "messages": list(chat["messages"])}
            for chat_id, chat in data["chats"].items()
        }
        copy["current"] = ids.get(data["current"], "")
        self._save(copy)
        return copy["notebook_id"]

    # -- notebooks that move -----------------------------------------------------------------

    def rename(self, source: str, target: str) -> int:
        """A file or folder was renamed: its notebooks' chats follow. Returns how many."""
        source, target = normalize_notebook_path(source), normalize_notebook_path(target)
        moved = 0
        with self._lock:
            self._ensure_index()
            for owner_id, path in self._index.under(source):
                data = self._load(owner_id)
                if data is None:
                    continue
                data["notebook"] = target + path[len(source) :]
                self._save(data)  # a history bound to the target path is marked deleted
                moved += 1
        return moved

    def copy(self, source: str, target: str) -> str:
        """A notebook was copied (Duplicate, Save As, the contents API): the copy gets a copy
        of the chats, under new ids. Returns the copy's id ("" if the source had none)."""
        source, target = normalize_notebook_path(source), normalize_notebook_path(target)
        with self._lock:
            owner = self._bound(source)
            if not owner or owner == self._index.bound(target):
                return ""
            displaced = self._index.bound(target)
            if displaced:
                self._mark_deleted(displaced)
            return self._fork(owner, target)

    def delete(self, path: str) -> int:
        """A file or folder was deleted: its notebooks' chats are kept, marked deleted (a
        notebook that comes back with its id finds them again) until :meth:`prune`."""
        path = normalize_notebook_path(path)
        with self._lock:
            self._ensure_index()
            found = self._index.under(path)
            for owner_id, _ in found:
                self._mark_deleted(owner_id)
            return len(found)

    def prune(self, older_than: float, now: datetime | None = None) -> list[str]:
        """Remove the files of notebooks deleted more than ``older_than`` seconds ago; their
        ids. A deletion time that cannot be read starts the clock now."""
        now = now or datetime.now(timezone.utc)
        removed = []
        with self._lock:
            self._ensure_index()
            for owner_id, entry in list(self._index.owners.items()):
                if not entry.deleted:
                    continue
                when = parse_time(entry.deleted)
                if when is None:
                    data = self._load(owner_id)
                    if data is not None:
                        data["deleted"] = utc_now()
                        self._save(data)
                elif (now - when).total_seconds() > older_than:
                    self._files.remove(owner_id)
                    self._index.drop(owner_id)
                    removed.append(owner_id)
        return removed
