"""HTTP routes of the chat history: read, clear, start anew, export as Markdown (read, or
written next to the notebook), and take the chats a notebook carried in its metadata. Thin: the
store (:mod:`chapyter_ext.history.store`) and :mod:`chapyter_ext.history.export` decide, the shared
base handler reads the input and maps every error.

Every route takes the notebook's path and, when the notebook has one, the stable id from its
metadata (``notebook_id``), by which a notebook moved outside the server finds its chats.
"""

from __future__ import annotations

import posixpath
from typing import Any

import tornado.web

from .._version import __version__
from ..chat import ChatError
from ..contract import is_notebook_id
from ..history.export import ExportRefused, save_export
from ..history.markdown import chat_markdown, export_filename
from ..history.store import repair_text, utc_now
from ..history.stored import read_stored_chat
from ..history.unsaved import export_line
from ..redact import one_line
from .base_handler import ChapyterHandler


def notebook_id_value(value: Any) -> str | None:
    """A request's ``notebook_id``: None when absent or empty, else a well-formed id or a 400."""
    if value is None or value == "":
        return None
    if not is_notebook_id(value):
        raise ChatError("bad_request", "'notebook_id' must be 32 to 64 lower-case hex digits.")
    return str(value)


class HistoryRoute(ChapyterHandler):
    """What the history's routes share: the notebook id of the query, the store's calls."""

    def notebook_id_argument(self) -> str | None:
        """The ``notebook_id`` query argument (None when absent)."""
        return notebook_id_value(self.get_query_argument("notebook_id", ""))

    async def store(self, method: str, *args: Any) -> Any:
        """Call a store method on the history thread."""
        return await self.history.run(getattr(self.history.store, method), *args)


class HistoryHandler(HistoryRoute):
    """``GET``/``DELETE chapyter-ext/history?notebook=PATH[&notebook_id=ID]``."""

    @tornado.web.authenticated
    async def get(self) -> None:
        """``{"notebook", "notebook_id", "chat_id", "messages": [...], "chats": [ids],
        "notice"?}``."""
        notebook, notebook_id = self.notebook_argument(), self.notebook_id_argument()
        view = await self.store("get", notebook, notebook_id, self.history.exists)
        self.reply(view.to_json())

    @tornado.web.authenticated
    async def delete(self) -> None:
        """Forget every chat of the notebook (or only ``chat_id``); returns the emptied view."""
        chat_id = repair_text(self.get_query_argument("chat_id", "")) or None
        notebook, notebook_id = self.notebook_argument(), self.notebook_id_argument()
        view = await self.store("clear", notebook, chat_id, notebook_id, self.history.exists)
        self.reply(view.to_json())


class NewChatHandler(HistoryRoute):
    """``POST chapyter-ext/history/new``: start a fresh chat; the old ones stay listed."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Body ``{"notebook", "notebook_id"?}``; returns the new, empty view."""
        body = self.json_body()
        notebook_id = notebook_id_value(body.get("notebook_id"))
        view = await self.store(
            "new_chat", body.get("notebook", ""), notebook_id, self.history.exists
        )
        self.reply(view.to_json())


class ExportHandler(HistoryRoute):
    """``GET chapyter-ext/history/export?notebook=PATH[&notebook_id=ID][&chat_id=ID]`` (the
    Markdown, for a download) and ``POST chapyter-ext/history/export`` (written next to the
    notebook by the rules of :mod:`chapyter_ext.history.export`)."""

    async def export(
        self, notebook: str, notebook_id: str | None, chat_id: str
    ) -> tuple[str, str, str]:
        """The notebook's normalised path, the chat's id and its Markdown (the current chat
        unless ``chat_id``), redacted; 404 when the notebook has no such chat."""
        view = await self.store("get", notebook, notebook_id, self.history.exists)
        chat_id = chat_id or view.chat_id
        if not chat_id or chat_id not in view.chats:
            raise ChatError("not_found", "This notebook has no chat to export.")
        messages = await self.store("messages", view.notebook, chat_id)
        markdown = chat_markdown(
            view.notebook, messages, self.redact, exported=utc_now(), version=__version__
        )
        return view.notebook, chat_id, markdown

    @tornado.web.authenticated
    async def get(self) -> None:
        """``{"filename", "chat_id", "markdown"}``: one chat (the current one unless
        ``chat_id``) as Markdown, redacted; 404 when the notebook has no such chat."""
        notebook, notebook_id = self.notebook_argument(), self.notebook_id_argument()
        chat_id = repair_text(self.get_query_argument("chat_id", ""))
        notebook, chat_id, markdown = await self.export(notebook, notebook_id, chat_id)
        self.reply(
            {
                "filename": export_filename(notebook),
                "chat_id": chat_id,
                "markdown": markdown,
            }
        )

    @tornado.web.authenticated
    async def post(self) -> None:
        """Body ``{"notebook", "notebook_id"?, "chat_id"?, "replace"?}``: the chat's Markdown
        written as ``<notebook>.chat.md`` next to the notebook; ``{"path", "exists", "size"?,
        "modified"?, "filename", "chat_id", "written"}``. A file already there is replaced only
        when ``replace`` is its path (otherwise ``written`` is false and nothing changed); a
        symbolic link, a folder leading outside the root or anything but a regular file is a
        403 saying so, one line."""
        body = self.json_body()
        notebook_id = notebook_id_value(body.get("notebook_id"))
        chat_id, replace = body.get("chat_id") or "", body.get("replace") or None
        if not isinstance(chat_id, str) or not (replace is None or isinstance(replace, str)):
            raise ChatError("bad_request", "'chat_id' and 'replace' must be strings.")
        notebook, chat_id, markdown = await self.export(
            body.get("notebook", ""), notebook_id, chat_id
        )
        filename = export_filename(notebook)
        path = posixpath.join(posixpath.dirname(notebook), filename)
        try:
            target, written = await save_export(self.contents_manager, path, markdown, replace)
        except ExportRefused as err:
            raise ChatError("forbidden", str(err)) from None
        except OSError as err:
            # A full disk, a quota: one line for the chat, one log line per kind (not one per
            # export, and not the base handler's warning as well).
            self.history.exports.note(err)
            error = {
                "kind": "bad_request",
                "message": one_line(export_line(path, err), self.redact),
            }
            return self.reply({"error": error}, 400)
        self.history.exports.saved()
        self.reply(
            {**target.to_json(), "filename": filename, "chat_id": chat_id, "written": written}
        )


class ImportHandler(HistoryRoute):
    """``POST chapyter-ext/history/import``: the chats a notebook carries in its metadata."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Body ``{"notebook", "notebook_id"?, "chat": <metadata.chapyter.chat>}``; the view.

        Taken only when this server has no history for the notebook (its own copy wins); the view
        then carries a notice saying where the chat came from. Every message taken is marked
        ``imported`` (whatever the file says: :mod:`chapyter_ext.history.stored`), in the history
        and in every view of it. A stored chat that does not follow the schema is a 400 naming its
        first problem.
        """
        body = self.json_body()
        notebook_id = notebook_id_value(body.get("notebook_id"))
        try:
            carried = read_stored_chat(body.get("chat"))
        except ValueError as err:
            raise ChatError("bad_request", str(err)) from None
        view = await self.history.run(
            lambda: self.history.store.import_chats(
                body.get("notebook", ""),
                notebook_id,
                carried.chats,
                current=carried.current,
                notice=carried.notice(),
                exists=self.history.exists,
            )
        )
        self.reply(view.to_json())


def history_handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns of the history (the ExtensionApp prepends the base_url)."""
    return [
        (r"chapyter-ext/history", HistoryHandler),
        (r"chapyter-ext/history/new", NewChatHandler),
        (r"chapyter-ext/history/export", ExportHandler),
        (r"chapyter-ext/history/import", ImportHandler),
    ]
