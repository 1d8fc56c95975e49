"""Notebooks move: the chat history follows renames, copies and deletes, and finds a notebook
moved where the server did not see it by the stable id in its metadata.

The rules (docs/reproducibility.md, "Where chats live") in one place, :meth:`NotebookMoves.locate`;
:mod:`.contents_events` calls the others from jupyter_server's contents events, and
:meth:`NotebookMoves.copy_id` from its pre-save hook: an id that belongs to another live
notebook is never written into a second file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ..contract import is_notebook_id
from .core import HistoryCore
from .files import empty_owner
from .records import new_id, normalize_notebook_path, parse_time, utc_now


class NotebookMoves(HistoryCore):
    """Where a notebook's history is, and what becomes of it when the notebook moves."""

    def _plan(self, notebook: str, notebook_id: str) -> tuple[str, str]:
        """``("owner", id)`` when the answer is known now ("" for none); ``("adopt", "")``
        when ``notebook_id``'s deleted notebook comes back at this path;
        ``("copy", "")`` when it is another root's live notebook (another project, another
        machine: this file is a copy of it); ``("check", path)`` when it depends on whether
        the file at ``path`` (where ``notebook_id`` is bound, or an unclaimed file says it
        was) still exists: moved if it does not, copied if it does."""
        bound = self._bound(notebook)
        if notebook_id and notebook_id != bound:
            entry = self._known(notebook_id)
            if entry is not None:
                if self._index.bound(self.place(notebook)) == notebook_id:
                    return "owner", notebook_id  # bound here by another server of this root
                if bound and self._index.owners[bound].origin == notebook_id:
                    return "owner", bound  # this path's copy of that notebook
                if entry.root is None and not entry.deleted:
                    # From before roots: moved here if its path is gone, else a copy.
                    return "check", entry.notebook
                if self._index.is_bound(notebook_id):
                    where = self._relative(entry)
                    return ("copy", "") if where is None else ("check", where)
                return "adopt", ""
        return "owner", bound

    def _bound(self, notebook: str) -> str:
        self._settle(self.place(notebook))
        return super()._bound(notebook)

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
                if kind in ("adopt", "copy"):
                    return self._adopt(notebook, wanted, move=kind == "adopt")
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
        data["root"], data["notebook"], data["deleted"] = self.contents_root, notebook, ""
        self._save(data)
        return owner_id

    def _fork(self, owner_id: str, notebook: str, copy_id: str = "") -> str:
        """A copy of ``owner_id``'s chats (new ids) for the notebook at ``notebook``, under
        ``copy_id`` (a new id if "")."""
        data = self._load(owner_id)
        if data is None:
            return ""
        ids = {chat_id: new_id() for chat_id in data["chats"]}
        copy = empty_owner(copy_id or new_id(), notebook, self.contents_root)
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
        origin = self.place(source)
        moved = 0
        with self._lock:
            self._ensure_index()
            found = [(i, target + p[len(origin) :]) for i, p in self._index.under(origin)]
            # Files from before roots, at this server's path: this server's from now on.
            found += [
                (i, target + p[len(source) :]) for i, p in self._index.unclaimed_under(source)
            ]
            for owner_id, path in found:
                data = self._load(owner_id)
                if data is None:
                    continue
                data["root"], data["notebook"] = self.contents_root, path
                self._save(data)  # a history bound to the target path is marked deleted
                moved += 1
        return moved

    def copy(self, source: str, target: str) -> str:
        """A notebook was copied (Duplicate, Save As, the contents API): the copy gets a copy
        of the chats, under new ids. Returns the copy's id ("" if the source had none)."""
        source, target = normalize_notebook_path(source), normalize_notebook_path(target)
        with self._lock:
            owner = self._bound(source)
            there = self._bound(target)
            if not owner or owner == there:
                return ""
            if there and self._index.owners[there].origin == owner:
                return there  # made already, when the copy was saved (copy_id)
            if there:
                self._mark_deleted(there)
            return self._fork(owner, target)

    def delete(self, path: str) -> int:
        """A file or folder was deleted: its notebooks' chats are kept, marked deleted (a
        notebook that comes back with its id finds them again) until :meth:`prune`."""
        path = normalize_notebook_path(path)
        with self._lock:
            self._ensure_index()
            place = self.place(path)
            found = self._index.under(place) + self._index.unclaimed_under(path)
            for owner_id, _ in found:
                self._mark_deleted(owner_id)
            for reserved in [r for r in self._reserved if r == place or r.startswith(place + "/")]:
                del self._reserved[reserved]  # a copy saved and deleted before it was made
            return len(found)

    # -- copies the pre-save hook sees -------------------------------------------------------

    def copy_id(self, notebook: str, carried: str, exists: Callable[[str], bool | None]) -> str:
        """The id a notebook being saved at ``notebook`` gets instead of ``carried`` (the id
        in its metadata), or "" when it may keep it.

        For the pre-save hook (on the event loop: the index only). ``carried`` may not stay
        when it is another notebook's, live at another place: a Save As, an upload, a file
        copied by hand, a copy on another server that shares this data folder. Then the
        notebook gets a new id, whose history (a copy of that notebook's chats) the history
        thread makes (:meth:`settle`). ``exists(path)`` says whether the other notebook's file
        is still there (None: cannot tell, so a copy); if it is not, the notebook was moved
        and keeps its id (its chats follow at the next look-up).
        """
        notebook = normalize_notebook_path(notebook)
        place = self.place(notebook)
        with self._lock:
            if place in self._reserved:
                return self._reserved[place][1]
            if not self._index.built or not is_notebook_id(carried):
                return ""
            entry = self._index.owners.get(carried)
            if entry is None or self._index.bound(place) or not self._index.is_bound(carried):
                return ""
            where = self._relative(entry)
            if where is not None and exists(where) is False:
                return ""
            made = new_id()
            self._reserved[place] = (carried, made, notebook)
            return made

    def settle(self, notebook: str) -> None:
        """Make the copy :meth:`copy_id` named for ``notebook``, if it is not made yet."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            self._settle(self.place(notebook))

    def _settle(self, place: str) -> None:
        reserved = self._reserved.pop(place, None)
        if reserved is None or self._index.bound(place):
            return
        source, made, notebook = reserved
        self._fork(source, notebook, made)

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
                    self._unsaved.pop(owner_id, None)
                    self._index.drop(owner_id)
                    removed.append(owner_id)
        return removed
