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

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import posixpath
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..redact import Redactor

log = logging.getLogger(__name__)
T = TypeVar("T")

FORMAT_VERSION = 1
ROLES = ("user", "assistant")
STATUSES = ("complete", "stopped", "error")
MAX_NOTEBOOK_PATH = 4096
_MESSAGE_FIELDS = ("id", "role", "content", "model", "created", "status", "error")
#: What an agent turn records of each step it ran (all strings), and how much of it is kept.
STEP_FIELDS = ("step_id", "tool", "title", "code", "cell_id", "outcome")
MAX_STEPS = 100
MAX_STEP_CODE = 20_000


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
    #: An agent turn's steps, in order: ``{step_id, tool, title, code, cell_id, outcome}`` (all
    #: strings; tool and title are "" in histories older than the tool registry).
    steps: tuple[dict[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The message as a JSON-ready dict (the shape the history endpoint returns).

        ``steps`` appears only on agent turns, so plain chat messages keep their old shape.
        """
        data: dict[str, Any] = asdict(self)
        data["steps"] = list(self.steps)
        if not self.steps:
            del data["steps"]
        return data

    @classmethod
    def from_json(cls, data: Any) -> ChatMessage:
        """Read a stored message, tolerating missing optional fields; ValueError if unusable.

        Unusable: not an object, no string ``id``, an unknown ``role`` or ``status``, or a
        field that is not a string.
        """
        if not isinstance(data, dict):
            raise ValueError("a message is not an object")
        fields = {k: data[k] for k in _MESSAGE_FIELDS if k in data}
        if not all(isinstance(v, str) for v in fields.values()):
            raise ValueError("a message field is not a string")
        if not fields.get("id") or fields.get("role") not in ROLES:
            raise ValueError("a message has no id or an unknown role")
        if fields.setdefault("status", "complete") not in STATUSES:
            raise ValueError("a message has an unknown status")
        return cls(**fields, steps=clean_steps(data.get("steps")))


def clean_steps(value: Any) -> tuple[dict[str, str], ...]:
    """The readable steps of ``value``: damaged ones (not an object, a field that is not a
    string, no ``step_id``) are dropped rather than failing the message; bounded in number and
    code length; unknown fields are left out."""
    if not isinstance(value, (list, tuple)):
        return ()
    steps = []
    for item in value[:MAX_STEPS]:
        if not isinstance(item, dict):
            continue
        step = {key: item.get(key, "") for key in STEP_FIELDS}
        if not all(isinstance(v, str) for v in step.values()) or not step["step_id"]:
            continue
        step["code"] = step["code"][:MAX_STEP_CODE]
        steps.append(step)
    return tuple(steps)


@dataclass(frozen=True)
class ChatView:
    """What the frontend needs to show a notebook's chat: the current one and the others."""

    notebook: str
    chat_id: str
    messages: tuple[ChatMessage, ...]
    chats: tuple[str, ...]
    #: Told to the user once: e.g. that part of the history was damaged and where it was kept.
    notice: str = ""

    def to_json(self) -> dict[str, Any]:
        """The view as the JSON body of ``GET chapyter-ext/history``."""
        data: dict[str, Any] = {
            "notebook": self.notebook,
            "chat_id": self.chat_id,
            "messages": [m.to_json() for m in self.messages],
            "chats": list(self.chats),
        }
        if self.notice:
            data["notice"] = self.notice
        return data


def new_id() -> str:
    """A fresh, unguessable id for a chat or a message."""
    return uuid.uuid4().hex


def utc_now() -> str:
    """Now, as an ISO 8601 UTC timestamp with a trailing ``Z`` (what JavaScript's Date reads)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> str:
    """``text`` with lone surrogates (UTF-8 cannot carry them) as U+FFFD, as TextEncoder does."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def normalize_notebook_path(path: Any) -> str:
    """The canonical form of a contents-API notebook path, or :class:`HistoryError`.

    The one rule every route applies (query string or JSON body alike): white space around
    the path is dropped; a NUL or other control character anywhere refuses it (no file has
    one); ``/a/./b.ipynb`` and ``a/b.ipynb`` are the same notebook, so they share a history;
    paths that climb out of the root are refused: they name no notebook the server can open.
    Lone surrogates become U+FFFD, as the browser's TextEncoder would have sent them.
    """
    if not isinstance(path, str) or not path.strip():
        raise HistoryError("bad_request", "'notebook' must be a non-empty path.")
    path = path.strip()
    if len(path) > MAX_NOTEBOOK_PATH or any(ord(c) < 32 or c == "\x7f" for c in path):
        raise HistoryError("bad_request", "'notebook' is not a valid path.")
    path = repair_text(path)
    parts = path.replace("\\", "/").split("/")
    norm = posixpath.normpath("/" + "/".join(parts)).lstrip("/")
    if not norm or norm == "." or ".." in parts:
        raise HistoryError("bad_request", "'notebook' is not a valid path.")
    return norm


class ChatHistoryStore:
    """Chats of each notebook, one JSON file per notebook under ``root``.

    ``max_messages`` bounds each chat (older messages are dropped first) and ``max_chats``
    bounds how many past chats a notebook keeps. ``redactor`` (or one built from ``secrets``,
    e.g. API keys and header values) runs over every stored message: no secret reaches the disk.

    A damaged file (invalid UTF-8 or JSON, wrong types, missing keys, messages without an id)
    never makes a call fail: the valid chats and messages are kept, the file is moved aside
    under a name no other copy has, and the next view of that notebook carries a one-time
    ``notice`` saying so and where the copy is.
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
        # Notices not yet shown, per normalised notebook path.
        self._notices: dict[str, str] = {}
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
            raw = path.read_bytes()
        except FileNotFoundError:
            return self._empty(notebook)
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
        data, problem = self._salvage(notebook, loaded)
        damage = damage or problem
        if damage:
            self._set_aside(notebook, path, damage, data)
        return data

    def _salvage(self, notebook: str, loaded: Any) -> tuple[dict[str, Any], str]:
        """The valid part of a loaded file, and what was wrong with the rest ("" if nothing)."""
        data = self._empty(notebook)
        if not isinstance(loaded, dict) or not isinstance(loaded.get("chats"), dict):
            return data, "not a chat history file"
        if loaded.get("notebook") != notebook:
            # A hash collision, or a file copied by hand: not this notebook's history.
            return data, "the file belongs to another notebook"
        problem = ""
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
                    messages.append(ChatMessage.from_json(item).to_json())
                except ValueError:
                    problem = "a message could not be read"
            created = chat.get("created")
            data["chats"][chat_id] = {
                "created": created if isinstance(created, str) else "",
                "messages": messages[-self.max_messages :],
            }
        current = loaded.get("current")
        if isinstance(current, str) and (not current or current in data["chats"]):
            data["current"] = current
        else:
            data["current"] = next(reversed(data["chats"]), "")
            problem = problem or "the current chat could not be read"
        return data, problem

    def _set_aside(self, notebook: str, path: Path, damage: str, data: dict[str, Any]) -> None:
        """Keep the damaged file for a human, save what was read, tell the user once."""
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
                self._write(notebook, data)
        self._notices[notebook] = (
            f"Part of this notebook's chat history could not be read ({damage}); "
            f"{kept} message{' was' if kept == 1 else 's were'} kept and {where}."
        )

    def take_notice(self, notebook: str) -> str:
        """The notice for ``notebook`` not yet shown ("" if none); it is shown only once."""
        notebook = normalize_notebook_path(notebook)
        with self._lock:
            return self._notices.pop(notebook, "")

    def _view(self, data: dict[str, Any]) -> ChatView:
        chats: dict[str, Any] = data["chats"]
        current = data.get("current") or ""
        messages = chats.get(current, {}).get("messages", []) if current else []
        return ChatView(
            notebook=data["notebook"],
            chat_id=current,
            messages=tuple(ChatMessage.from_json(m) for m in messages),
            chats=tuple(chats),
            notice=self._notices.pop(data["notebook"], ""),
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
        stored = replace(
            message,
            content=self.redact(message.content),
            error=self.redact(message.error),
            steps=tuple(
                {k: v if k == "step_id" else self.redact(v) for k, v in step.items()}
                for step in clean_steps(message.steps)
            ),
        )
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


class HistoryWorker:
    """Runs every call to the history store on one worker thread.

    One thread keeps writes in the order they were asked for and off the event loop; the
    files are small, so a single worker is never the bottleneck.
    """

    def __init__(self, store: ChatHistoryStore) -> None:
        self.store = store
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chapyter-history")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Call ``fn(*args)`` on the history thread and await its result."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args))

    async def close(self) -> None:
        """Let queued writes finish, then stop the thread."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, partial(self._executor.shutdown, wait=True))
