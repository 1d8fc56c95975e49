"""The chat history's files: one JSON file per notebook, read with salvage, written atomically.

A file is named after its notebook's stable id (``<id>.json``, see ``contract.is_notebook_id``),
not its path, so a rename rewrites one field, never a file name a running reply still holds.
It holds every chat of the notebook, which one is current, where the notebook is now (``root``:
the contents root of the server that serves it, see :func:`.index.place_of`; and
``notebook``: its path under that root), and when it was deleted (``deleted``) or which
notebook it was copied from (``origin``). Version 1 files (before notebooks had ids) are named
after a hash of the path; their id is that name. Files of versions 1 and 2 name no root
(``root`` reads as None): the first server that finds one at its own path claims it.

Every write goes to a temporary file in the same folder, is fsynced, then ``os.replace``-d over
the old one: a crash at any point leaves either the old file or the new one, never half of
either. A damaged file never makes a read fail: what can be read is kept, the file is moved
aside under a name no other copy has, and the caller gets a one-line notice saying so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..contract import is_notebook_id
from ..llm.usage import clean_usage

log = logging.getLogger(__name__)

FORMAT_VERSION = 3


def empty_owner(owner_id: str, notebook: str, root: str | None) -> dict[str, Any]:
    """A notebook's history with no chat yet, at ``notebook`` under ``root`` (None: a file from
    before roots, not claimed yet)."""
    return {
        "version": FORMAT_VERSION,
        "notebook_id": owner_id,
        "root": root,
        "notebook": notebook,
        "current": "",
        "chats": {},
        "deleted": "",
        "origin": "",
    }


class OwnerFiles:
    """The history files under ``root``: read (salvaging damage), write (atomically), list.

    ``read_message`` turns one stored message into its JSON form or raises ValueError (the
    store's :class:`~.records.ChatMessage` rules); ``max_messages`` bounds each chat on read.
    """

    def __init__(
        self, root: Path, read_message: Callable[[Any], dict[str, Any]], max_messages: int
    ) -> None:
        self.root = root
        self._read_message = read_message
        self._max_messages = max_messages

    def path(self, owner_id: str) -> Path:
        """The file of the notebook whose id is ``owner_id`` (which need not exist)."""
        return self.root / f"{owner_id}.json"

    def ids(self) -> Iterator[str]:
        """The ids of every history file (temporary and set-aside copies left out)."""
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return
        for entry in entries:
            stem, dot, ext = entry.name.rpartition(".")
            if dot and ext == "json" and is_notebook_id(stem) and entry.is_file():
                yield stem

    def peek(self, owner_id: str) -> dict[str, Any] | None:
        """The file's data if it reads cleanly (no salvage, nothing moved), else None."""
        try:
            loaded = json.loads(self.path(owner_id).read_bytes().decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        data, problem = self._salvage(owner_id, loaded, "")
        return None if problem else data

    def read(self, owner_id: str, notebook: str = "") -> tuple[dict[str, Any] | None, str]:
        """The file's data (None if there is no file) and a notice ("" unless it was damaged).

        ``notebook`` is the path the caller looked it up by: a version 1 file that lost its
        own ``notebook`` field belongs to it.
        """
        path = self.path(owner_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None, ""
        try:
            text = raw.decode("utf-8")
            damage = ""
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            damage = "invalid UTF-8"
        try:
            loaded = json.loads(text)
        except (ValueError, RecursionError):
            loaded, damage = None, "not JSON"
        data, problem = self._salvage(owner_id, loaded, notebook)
        damage = damage or problem
        if not damage:
            return data, ""
        return data, self._set_aside(path, damage, data)

    def _salvage(self, owner_id: str, loaded: Any, notebook: str) -> tuple[dict[str, Any], str]:
        """The valid part of a loaded file, and what was wrong with the rest ("" if nothing)."""
        fallback = loaded.get("notebook") if isinstance(loaded, dict) else None
        root = loaded.get("root") if isinstance(loaded, dict) else None
        data = empty_owner(
            owner_id,
            fallback if isinstance(fallback, str) else notebook,
            root if isinstance(root, str) else None,
        )
        if not isinstance(loaded, dict) or not isinstance(loaded.get("chats"), dict):
            return data, "not a chat history file"
        if loaded.get("notebook_id", owner_id) != owner_id:
            # A file copied by hand under another name: not this notebook's history.
            return data, "the file belongs to another notebook"
        if not isinstance(loaded.get("notebook"), str) or (
            notebook and "notebook_id" not in loaded and loaded["notebook"] != notebook
        ):
            # A version 1 file is named after a hash of its path, which must match.
            return data, "the file belongs to another notebook"
        problem = ""
        kernel_usage = clean_usage(loaded.get("kernel_usage"))
        if kernel_usage is not None:
            data["kernel_usage"] = kernel_usage
        for key in ("deleted", "origin"):
            value = loaded.get(key, "")
            if isinstance(value, str):
                data[key] = value
            else:
                problem = f"its {key} field could not be read"
        for chat_id, chat in loaded["chats"].items():
            if (
                not chat_id
                or not isinstance(chat, dict)
                or not isinstance(chat.get("messages"), list)
            ):
                problem = "a chat could not be read"
                continue
            messages = []
            for item in chat["messages"]:
                try:
                    messages.append(self._read_message(item))
                except ValueError:
                    problem = "a message could not be read"
            created = chat.get("created")
            data["chats"][chat_id] = {
                "created": created if isinstance(created, str) else "",
                "messages": messages[-self._max_messages :],
            }
        current = loaded.get("current")
        if isinstance(current, str) and (not current or current in data["chats"]):
            data["current"] = current
        else:
            data["current"] = next(reversed(data["chats"]), "")
            problem = problem or "the current chat could not be read"
        return data, problem

    def _set_aside(self, path: Path, damage: str, data: dict[str, Any]) -> str:
        """Keep the damaged file for a human, save what was read; the notice to show once."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        # The random part keeps a second corruption within the same second from overwriting
        # the first copy.
        aside = path.with_name(f"{path.stem}.corrupt-{stamp}-{uuid.uuid4().hex[:8]}.json")
        try:
            os.replace(path, aside)
        except OSError as err:
            log.warning("Damaged chat history %s could not be moved aside: %s", path.name, err)
            where = f"it stays at {path}"
        else:
            where = f"the damaged file was kept as {aside}"
        log.warning("Damaged chat history %s (%s); %s", path.name, damage, where)
        kept = sum(len(c["messages"]) for c in data["chats"].values())
        if data["chats"]:
            with contextlib.suppress(OSError):
                self.write(data)
        return (
            f"Part of this notebook's chat history could not be read ({damage}); "
            f"{kept} message{' was' if kept == 1 else 's were'} kept and {where}."
        )

    def write(self, data: dict[str, Any]) -> None:
        """Replace the notebook's file with ``data``, atomically and durably."""
        path = self.path(data["notebook_id"])
        self.root.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{path.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._sync_folder()

    def remove(self, owner_id: str) -> None:
        """Delete a notebook's file (gone already is fine)."""
        with contextlib.suppress(FileNotFoundError):
            self.path(owner_id).unlink()
        self._sync_folder()

    def _sync_folder(self) -> None:
        # A rename or unlink is only durable once the folder is synced (POSIX only).
        if hasattr(os, "O_DIRECTORY"):
            with contextlib.suppress(OSError):
                dir_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
