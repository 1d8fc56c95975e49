"""Where the chat history meets jupyter_server's contents: its events, its saves, its files.

- **Events.** The contents manager emits ``rename``, ``copy`` and ``delete`` on the server's
  event bus (schema :data:`CONTENTS_SCHEMA`) for every change made through the server (the
  file browser, Save As, the REST API). A listener hands each to the history, on its worker
  thread, so the chats follow their notebook. Nothing of the contents manager is patched.
- **Saves.** A pre-save hook (``ContentsManager.register_pre_save_hook``) replaces the
  server's configured keys and header values in the notebook's outputs
  (:func:`~chapyter_ext.redact.redact_outputs`), writes the notebook's stable id into its
  metadata (``chapyter.notebook_id``) and, with ``Chapyter.save_chat_in_notebook``, its chats
  (``chapyter.chat``, :mod:`.stored`). Once the contents manager says the file was saved,
  a save that replaced something is announced on the event bus (schema
  :data:`REDACTED_SCHEMA_ID`: the path and how many outputs, never a value), which JupyterLab
  delivers to the page over ``/api/events/subscribe`` (authenticated, like every route).
  A notebook whose metadata carries the id of another live notebook (Save As, Duplicate, an
  upload, a file copied by hand) is saved with an id of its own, and its history is a copy.
- **Files.** :meth:`ContentsBridge.exists` answers the history's one question about the
  disk (is a notebook still where it was?) through the contents manager, whatever it stores;
  :func:`contents_root_name` names the folder it serves, which the history keys notebooks by.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from typing import TYPE_CHECKING, Any

from ..contract import (
    METADATA_KEY,
    NOTEBOOK_ID_KEY,
    STORED_CHAT_KEY,
    is_notebook_id,
    notebook_chat_info,
    with_notebook_id,
)
from ..redact import (
    CleanValues,
    OutputRedaction,
    Redactor,
    redact_outputs,
    redact_traceback,
)
from .records import HistoryError
from .store import HistoryWorker
from .stored import build_stored_chat

if TYPE_CHECKING:
    from ..config import Chapyter

#: The contents manager's events (jupyter_server/event_schemas/contents_service/v1.yaml).
CONTENTS_SCHEMA = "https://events.jupyter.org/jupyter_server/contents_service/v1"
#: How long the history thread waits for the contents manager to say whether a file exists.
EXISTS_TIMEOUT = 10.0
#: Our event: a save replaced configured secrets in a notebook's outputs.
REDACTED_SCHEMA_ID = "urn:chapyter-ext:event:saved-outputs-redacted:v1"
#: The most cell ids an event names; past it the page checks every cell.
MAX_EVENT_CELLS = 1000
REDACTED_SCHEMA: dict[str, Any] = {
    "$id": REDACTED_SCHEMA_ID,
    "version": "1",
    "title": "chapyter-ext replaced secrets in a saved notebook's outputs",
    "personal-data": True,
    "description": "A notebook was saved through the server with a configured key or header "
    "value in its outputs; the file holds <redacted> in its place. Says where and how many, "
    "never the value.",
    "type": "object",
    "required": ["path", "outputs"],
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string", "description": "The notebook's API path."},
        "outputs": {
            "type": "integer",
            "minimum": 1,
            "description": "How many outputs held a secret.",
        },
        "cells": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_EVENT_CELLS,
            "description": "The ids of the cells whose outputs changed; absent when some "
            "cell has no id or there are too many.",
        },
    },
}


def contents_root_name(contents_manager: Any, fallback: str = "") -> str:
    """The name of the folder a contents manager serves, as the chat history keys notebooks.

    A local folder (jupyter_server's file managers): its real path, so servers on one folder
    agree and servers on two never do, whatever their relative paths. Any other store (S3, a
    database, a remote file system): its class and ``root_dir``, which say which store only
    as far as the manager's ``root_dir`` does (``ChapyterExtApp.contents_root`` says more).
    ``fallback`` (the server's ``root_dir``) where there is no contents manager.
    """
    root = getattr(contents_manager, "root_dir", None)
    root = root if isinstance(root, str) and root else fallback
    if contents_manager is None or _is_local(contents_manager):
        return os.path.realpath(os.path.expanduser(root)) if root else ""
    kind = type(contents_manager)
    return f"{kind.__module__}.{kind.__qualname__}:{root}"


def _is_local(contents_manager: Any) -> bool:
    """Whether the contents manager stores files in a folder of this machine."""
    from jupyter_server.services.contents.fileio import FileManagerMixin

    return isinstance(contents_manager, FileManagerMixin)


class ContentsBridge:
    """The history's listener on the contents events, its pre-save hook and its view of the
    files. ``settings``: the server's ``c.Chapyter``, whose ``save_chat_in_notebook`` and
    ``save_chat_max_bytes`` each save reads."""

    def __init__(
        self,
        history: HistoryWorker,
        contents_manager: Any,
        settings: Chapyter,
        *,
        redactor: Redactor,
        log: logging.Logger | None = None,
    ) -> None:
        self.history = history
        self.contents_manager = contents_manager
        self.settings = settings
        self.redact = redactor
        self.log = log or logging.getLogger(__name__)
        self._connected = False
        #: Events handed to the history and not yet done (tests wait on them).
        self.pending: set[asyncio.Future[Any]] = set()
        #: What the last pre-save of a path replaced, until the contents manager says it saved.
        self._redacted: dict[str, OutputRedaction] = {}
        #: Output values already found clean: the next save checks only what changed.
        self._clean = CleanValues(redactor)

    @property
    def save_chat(self) -> bool:
        """``Chapyter.save_chat_in_notebook``: whether a save stores the notebook's chats."""
        return bool(self.settings.save_chat_in_notebook)

    @property
    def max_bytes(self) -> int:
        """``Chapyter.save_chat_max_bytes``: the most those stored chats may take."""
        return int(self.settings.save_chat_max_bytes)

    @property
    def event_logger(self) -> Any:
        """The event bus the contents manager emits on (the server's own, unless configured)."""
        return getattr(self.contents_manager, "event_logger", None)

    def connect(self) -> None:
        """Listen to the contents events and hook into saves."""
        if self._connected:
            return
        bus = self.event_logger
        if bus is not None:
            bus.add_listener(schema_id=CONTENTS_SCHEMA, listener=self.on_event)
            # Before any page subscribes: a subscriber hears only the schemas known then.
            if REDACTED_SCHEMA_ID not in bus.schemas.schema_ids:
                bus.register_event_schema(REDACTED_SCHEMA)
        else:
            self.log.warning("chapyter-ext: no contents events; chats will not follow renames")
        register = getattr(self.contents_manager, "register_pre_save_hook", None)
        if register is not None:
            register(self.pre_save)
        self._connected = True
        self.history.exists = self.exists

    def disconnect(self) -> None:
        """Stop listening; the hook (which cannot be unregistered) does nothing from now on."""
        if not self._connected:
            return
        self._connected = False
        bus = self.event_logger
        if bus is not None:
            bus.remove_listener(schema_id=CONTENTS_SCHEMA, listener=self.on_event)
        self.history.exists = None

    # -- events ---------------------------------------------------------------------------

    async def on_event(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """One contents event (jupyter_events calls this as a task of its own)."""
        if not self._connected:
            return
        action, path, source = data.get("action"), data.get("path"), data.get("source_path")
        if action == "save":
            self._announce(logger, path)
            return
        store = self.history.store
        if action == "rename" and source:
            call: tuple[Any, ...] = (store.rename, source, path)
        elif action == "copy" and source:
            call = (store.copy, source, path)
        elif action == "delete":
            call = (store.delete, path)
        else:
            return
        done = asyncio.ensure_future(self.history.run(*call))
        self.pending.add(done)
        try:
            await done
        except HistoryError:
            pass  # a path no notebook can have (the root): nothing of ours
        except Exception as err:
            self.log.error(
                "chapyter-ext: could not follow %s of %s:\n%s",
                action,
                path,
                redact_traceback(err, self.redact),
            )
        finally:
            self.pending.discard(done)

    # -- files ----------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        """Whether the contents manager has a file at ``path``; called on the history thread.

        When it cannot tell (no loop yet, a failure, a timeout) the answer is True: the chats
        are then copied rather than moved, and nothing is lost.
        """
        loop = self.history.loop
        try:
            result = self.contents_manager.file_exists(path)
            if not inspect.isawaitable(result):
                return bool(result)
            if loop is None or not loop.is_running() or _on_loop_thread(loop):
                _close(result)
                return True
            future = asyncio.run_coroutine_threadsafe(_awaited(result), loop)
            return bool(future.result(EXISTS_TIMEOUT))
        except Exception as err:  # a contents manager of any kind may fail in its own way
            self.log.warning("chapyter-ext: could not tell whether %s exists: %s", path, err)
            return True

    def exists_now(self, path: str) -> bool | None:
        """Whether a file is at ``path``, without waiting (for the pre-save hook, on the event
        loop): asked of the folder for a local contents manager, else of the manager when it
        answers at once; None when it cannot tell."""
        manager = self.contents_manager
        try:
            if _is_local(manager):
                from jupyter_server.utils import ApiPath, to_os_path

                return os.path.isfile(to_os_path(ApiPath(path), manager.root_dir))
            result = manager.file_exists(path)
        except Exception:
            return None
        if inspect.isawaitable(result):
            _close(result)
            return None
        return bool(result)

    # -- saves ----------------------------------------------------------------------------

    def pre_save(self, model: dict[str, Any], path: str, **kwargs: Any) -> None:
        """Before a notebook is written: the configured secrets out of its outputs; its id,
        and (opt-in) its chats, into its metadata.

        Runs on the event loop, inside the contents manager's save: it reads only the index
        in memory, plus the history's file when chats are saved with notebooks. A notebook
        with no history here is left as it is (a chat it carries stays untouched), unless the
        id it carries is another live notebook's: then it is a copy, saved with an id of its
        own, whose history (a copy of the chats) the history thread makes.
        """
        if not self._connected or model.get("type") != "notebook":
            return
        content = model.get("content")
        if not isinstance(content, dict):
            return
        self._redact_outputs(content, path)
        store = self.history.store
        metadata = content.get("metadata")
        try:
            owner = store.bound_id(path)
            copied = ""
            if not owner:
                carried = notebook_chat_info(metadata)["notebook_id"]
                copied = store.copy_id(path, carried, self.exists_now) if carried else ""
                owner = copied
            data = store.snapshot(path) if owner and not copied and self.save_chat else None
        except HistoryError:
            return
        if not owner:
            return
        if copied:
            self._settle_copy(path)
        if not isinstance(metadata, dict):
            metadata = content["metadata"] = {}
        chapyter = metadata.get(METADATA_KEY)
        if not isinstance(chapyter, dict) or chapyter.get(NOTEBOOK_ID_KEY) != owner:
            chapyter = with_notebook_id(chapyter, owner)
        if self.save_chat and data is not None and is_notebook_id(owner):
            stored = build_stored_chat(data, self.redact, self.max_bytes)
            if stored is None:
                chapyter.pop(STORED_CHAT_KEY, None)
            else:
                chapyter[STORED_CHAT_KEY] = stored
        metadata[METADATA_KEY] = chapyter

    def _settle_copy(self, path: str) -> None:
        """Make the copy's history on the history thread (queued before any later call)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next look-up at that path makes it
        done = asyncio.ensure_future(self.history.run(self.history.store.settle, path))
        self.pending.add(done)
        done.add_done_callback(self._copy_settled)

    def _copy_settled(self, done: asyncio.Future[Any]) -> None:
        self.pending.discard(done)
        if not done.cancelled() and done.exception() is not None:
            self.log.error(
                "chapyter-ext: could not copy a notebook's chats: %s",
                redact_traceback(done.exception(), self.redact),  # type: ignore[arg-type]
            )

    def _redact_outputs(self, content: dict[str, Any], path: str) -> None:
        """The configured secrets out of the outputs about to be written.

        A failure here refuses the save (an ``HTTPError`` is the one kind the contents manager
        lets stop it): a file written with a key in it cannot be taken back.
        """
        from tornado.web import HTTPError

        try:
            replaced = redact_outputs(content, self._clean)
        except Exception as err:
            self.log.error(
                "chapyter-ext: could not check the outputs of %s for secrets:\n%s",
                path,
                redact_traceback(err, self.redact),
            )
            raise HTTPError(
                500, f"chapyter-ext could not check the outputs for secrets; {path} not saved"
            ) from None
        if replaced:
            self._redacted[path] = replaced
            self.log.info("chapyter-ext: %s", replaced.note(path, "saving it"))
        else:
            self._redacted.pop(path, None)

    def _announce(self, bus: Any, path: Any) -> None:
        """The contents manager saved ``path``: tell the page what its pre-save replaced."""
        replaced = self._redacted.pop(path, None) if isinstance(path, str) else None
        if replaced is None:
            return
        event: dict[str, Any] = {"path": path, "outputs": replaced.outputs}
        if not replaced.unnamed and len(replaced.cells) <= MAX_EVENT_CELLS:
            event["cells"] = replaced.cells
        bus.emit(schema_id=REDACTED_SCHEMA_ID, data=event)


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    # The loop's own thread would wait on itself.
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def _awaited(result: Any) -> Any:
    return await result


def _close(result: Any) -> None:
    close = getattr(result, "close", None)
    if close is not None:
        close()
