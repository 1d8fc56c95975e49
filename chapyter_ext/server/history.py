"""Chat history per notebook, kept as JSON files: pure logic, no tornado.

One file per notebook under a folder, named from a hash of the notebook's path (so any path,
however long or odd, maps to a safe file name); the path itself is stored inside. A file holds
every chat of that notebook and which one is current, so "new chat" keeps the old ones.

Every write goes to a temporary file in the same folder, is fsynced, then ``os.replace``-d over
the old one: a crash at any point leaves either the old file or the new one, never half of
either. The store is synchronous and thread-safe; the server calls it from one worker thread so
the event loop never waits on a disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import posixpath
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
ROLES = ("user", "assistant")
STATUSES = ("complete", "stopped", "error")
REDACTED = "<redacted>"  # the marker context.redact uses too
MAX_NOTEBOOK_PATH = 4096


class HistoryError(ValueError):
    """A request the store cannot serve: a bad notebook path or an unknown chat.

    ``kind`` is ``"bad_request"`` or ``"not_found"``; ``str()`` is a one-line message.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat, as stored and as served to the frontend."""

    id: str
    role: str
    content: str
    model: str = ""
    created: str = ""
    status: str = "complete"
    #: Why the reply failed, one line (status "error" only), so a reload still says why.
    error: str = ""

    def to_json(self) -> dict[str, str]:
        """The message as a JSON-ready dict (the shape the history endpoint returns)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatMessage:
        """Read a stored message, tolerating missing optional fields."""
        return cls(
            id=str(data["id"]),
            role=str(data["role"]),
            content=str(data.get("content", "")),
            model=str(data.get("model", "")),
            created=str(data.get("created", "")),
            status=str(data.get("status", "complete")),
            error=str(data.get("error", "")),
        )


@dataclass(frozen=True)
class ChatView:
    """What the frontend needs to show a notebook's chat: the current one and the others."""

    notebook: str
    chat_id: str
    messages: tuple[ChatMessage, ...]
    chats: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The view as the JSON body of ``GET chapyter-ext/history``."""
        return {
            "notebook": self.notebook,
            "chat_id": self.chat_id,
            "messages": [m.to_json() for m in self.messages],
            "chats": list(self.chats),
        }


def new_id() -> str:
    """A fresh, unguessable id for a chat or a message."""
    return uuid.uuid4().hex


def utc_now() -> str:
    """Now, as an ISO 8601 UTC timestamp with a trailing ``Z`` (what JavaScript's Date reads)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def normalize_notebook_path(path: Any) -> str:
    """The canonical form of a contents-API notebook path, or :class:`HistoryError`.

    ``/a/./b.ipynb`` and ``a/b.ipynb`` are the same notebook, so they must share a history.
    Paths that climb out of the root are refused: they name no notebook the server can open.
    """
    if not isinstance(path, str) or not path.strip():
        raise HistoryError("bad_request", "'notebook' must be a non-empty path.")
    if len(path) > MAX_NOTEBOOK_PATH or "\x00" in path:
        raise HistoryError("bad_request", "'notebook' is not a valid path.")
    norm = posixpath.normpath("/" + path.strip().replace("\\", "/")).lstrip("/")
    if not norm or norm == "." or any(part == ".." for part in path.replace("\\", "/").split("/")):
        raise HistoryError("bad_request", "'notebook' is not a valid path.")
    return norm


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced, so a key pasted into a chat is never stored."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


class ChatHistoryStore:
    """Chats of each notebook, one JSON file per notebook under ``root``.

    ``max_messages`` bounds each chat (older messages are dropped first) and ``max_chats``
    bounds how many past chats a notebook keeps. ``secrets`` are values (API keys, header
    values) that must never reach the disk; they are replaced in every stored message.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_messages: int = 200,
        max_chats: int = 50,
        secrets: Sequence[str] = (),
    ) -> None:
        self.root = Path(root)
        self.max_messages = max(1, int(max_messages))
        self.max_chats = max(1, int(max_chats))
        # Short secrets would blank out ordinary words; real keys are long.
        self._secrets = tuple(sorted({s for s in secrets if s and len(s) >= 4}, key=len))[::-1]
        # One lock for all files: calls are short, and it makes read-modify-write safe.
        self._lock = threading.RLock()

    # -- paths ---------------------------------------------------------------------------

    def file_for(self, notebook: str) -> Path:
        """The JSON file holding the chats of ``notebook`` (which need not exist yet)."""
        key = normalize_notebook_path(notebook)
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]
        return self.root / f"{digest}.json"

    # -- reading -------------------------------------------------------------------------

    def _empty(self, notebook: str) -> dict[str, Any]:
        return {"version": FORMAT_VERSION, "notebook": notebook, "current": "", "chats": {}}

    def _read(self, notebook: str) -> dict[str, Any]:
        path = self.file_for(notebook)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return self._empty(notebook)
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("chats"), dict):
                raise ValueError("not a chat history file")
            if data.get("notebook") != notebook:
                # A hash collision, or a file copied by hand: not this notebook's history.
                raise ValueError("file belongs to another notebook")
        except ValueError as err:
            # Keep the unreadable file for a human to look at, and start afresh rather than
            # leaving the notebook's chat broken for good.
            aside = path.with_name(f"{path.stem}.corrupt-{int(time.time())}.json")
            with contextlib.suppress(OSError):
                os.replace(path, aside)
            log.warning("Unreadable chat history %s moved to %s: %s", path.name, aside.name, err)
            return self._empty(notebook)
        return data

    def _view(self, data: dict[str, Any]) -> ChatView:
        chats: dict[str, Any] = data["chats"]
        current = data.get("current") or ""
        messages = chats.get(current, {}).get("messages", []) if current else []
        return ChatView(
            notebook=data["notebook"],
            chat_id=current,
            messages=tuple(ChatMessage.from_json(m) for m in messages),
            chats=tuple(chats),
        )

    def get(self, notebook: str) -> ChatView:
        """The current chat of ``notebook`` (empty, with no id, if it has never chatted)."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            return self._view(self._read(notebook))

    def messages(self, notebook: str, chat_id: str) -> tuple[ChatMessage, ...]:
        """The messages of one chat of ``notebook``; :class:`HistoryError` if there is none."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            chats = self._read(notebook)["chats"]
            if chat_id not in chats:
                raise HistoryError("not_found", "No such chat for this notebook.")
            return tuple(ChatMessage.from_json(m) for m in chats[chat_id]["messages"])

    # -- writing -------------------------------------------------------------------------

    def _write(self, notebook: str, data: dict[str, Any]) -> None:
        path = self.file_for(notebook)
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
        # The rename itself is only durable once the folder is synced (POSIX only).
        if hasattr(os, "O_DIRECTORY"):
            with contextlib.suppress(OSError):
                dir_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)

    def _add_chat(self, data: dict[str, Any]) -> str:
        chat_id = new_id()
        data["chats"][chat_id] = {"created": utc_now(), "messages": []}
        data["current"] = chat_id
        # Dicts keep insertion order, so the oldest chats come first and go first.
        while len(data["chats"]) > self.max_chats:
            oldest = next(iter(data["chats"]))
            del data["chats"][oldest]
        return chat_id

    def resolve_chat(self, notebook: str, chat_id: str | None = None) -> str:
        """The chat a new message goes to: ``chat_id`` if given, else the current one.

        A notebook that has never chatted gets its first chat here (and on disk).
        """
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            data = self._read(notebook)
            if chat_id:
                if chat_id not in data["chats"]:
                    raise HistoryError("not_found", "No such chat for this notebook.")
                return chat_id
            if data["current"] in data["chats"]:
                return data["current"]
            chat_id = self._add_chat(data)
            self._write(notebook, data)
            return chat_id

    def append(self, notebook: str, chat_id: str, message: ChatMessage) -> ChatMessage:
        """Add ``message`` to a chat and save; returns the message as stored (secrets scrubbed).

        The chat keeps at most ``max_messages``: the oldest go first.
        """
        notebook = normalize_notebook_path(notebook)
        if message.role not in ROLES:
            raise HistoryError("bad_request", f"Unknown role {message.role!r}.")
        if message.status not in STATUSES:
            raise HistoryError("bad_request", f"Unknown status {message.status!r}.")
        stored = replace(message, content=scrub(message.content, self._secrets))
        with self._lock:
            data = self._read(notebook)
            chat = data["chats"].get(chat_id)
            if chat is None:
                raise HistoryError("not_found", "No such chat for this notebook.")
            chat["messages"].append(stored.to_json())
            del chat["messages"][: -self.max_messages]
            self._write(notebook, data)
        return stored

    def new_chat(self, notebook: str) -> ChatView:
        """Start a new, empty chat for ``notebook`` and make it current; the old ones stay."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            data = self._read(notebook)
            self._add_chat(data)
            self._write(notebook, data)
            return self._view(data)

    def clear(self, notebook: str, chat_id: str | None = None) -> ChatView:
        """Forget chats of ``notebook``: one chat if ``chat_id`` is given, else all of them."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            if not chat_id:
                with contextlib.suppress(FileNotFoundError):
                    self.file_for(notebook).unlink()
                return self._view(self._empty(notebook))
            data = self._read(notebook)
            if chat_id not in data["chats"]:
                raise HistoryError("not_found", "No such chat for this notebook.")
            del data["chats"][chat_id]
            if data["current"] == chat_id:
                data["current"] = next(reversed(data["chats"]), "") if data["chats"] else ""
            self._write(notebook, data)
            return self._view(data)
