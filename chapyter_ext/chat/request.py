"""A chat request as the server reads it: :class:`ChatRequest`, the parsed body of
``POST chapyter-ext/chat`` (and the chat part of an agent request), each field checked with a
one-line :class:`ChatError`; the notebook snapshot it carries (:func:`parse_context`) and the
context text made of it within the budget (:func:`assemble_context`). Its fields are the
``requests`` of ``tests/vectors/contract.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context.notebook import NotebookSnapshot, chat_context
from ..contract import is_notebook_id
from ..redact import Redactor
from .attachments import Attachment, parse_attachments
from .commands import command_name
from .mentions import Mention, MentionError, parse_mentions
from .plans import PlanFieldError, plan_fields

__all__ = [
    "MAX_MESSAGE_CHARS",
    "ChatError",
    "ChatRequest",
    "ContextRequest",
    "assemble_context",
    "parse_context",
]

MAX_MESSAGE_CHARS = 32_000
TRUNCATED = "\n[… context truncated]"


class ChatError(Exception):
    """A chat request that cannot be served; ``kind`` says why, ``str()`` is one line.

    Kinds: ``bad_request``, ``not_found`` (unknown model or chat), ``busy`` (too many replies
    are streaming).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ChatRequest:
    """A parsed ``POST chapyter-ext/chat`` body."""

    notebook: str
    message: str
    chat_id: str | None = None
    #: Text (older frontends) or a parsed notebook snapshot, assembled by the service.
    context: Any = None
    model: str | None = None
    #: The stable id in the notebook's metadata (``contract.chat``), if it has one.
    notebook_id: str | None = None
    #: Answer with a plan's numbered steps only (:mod:`.plans`).
    plan: bool = False
    #: An agent turn's plan, as the user edited it: the steps it follows in order.
    plan_steps: tuple[str, ...] = ()
    #: A server slash command applied to the message (:mod:`.commands`), if one was named.
    command: str | None = None
    #: Files attached to the message, checked (:mod:`.attachments`).
    attachments: tuple[Attachment, ...] = ()
    #: What the user @-mentioned: always sent, pinned ahead of the context (:mod:`.mentions`).
    mentions: tuple[Mention, ...] = ()

    @classmethod
    def parse(cls, body: Any, *, max_chars: int = MAX_MESSAGE_CHARS) -> ChatRequest:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        if not isinstance(body, dict):
            raise ChatError("bad_request", "The body must be a JSON object.")
        notebook, message = body.get("notebook"), body.get("message")
        if not isinstance(notebook, str) or not notebook.strip():
            raise ChatError("bad_request", "'notebook' must be the notebook's path.")
        if not isinstance(message, str) or not message.strip():
            raise ChatError("bad_request", "'message' must be a non-empty string.")
        if len(message) > max_chars:
            raise ChatError("bad_request", f"'message' is longer than {max_chars} characters.")
        optional: dict[str, Any] = {}
        for key in ("chat_id", "model", "notebook_id"):
            value = body.get(key)
            if value is not None and not isinstance(value, str):
                raise ChatError("bad_request", f"'{key}' must be a string.")
            optional[key] = value or None
        if optional["notebook_id"] is not None and not is_notebook_id(optional["notebook_id"]):
            raise ChatError("bad_request", "'notebook_id' must be 32 to 64 lower-case hex digits.")
        try:
            optional.update(plan_fields(body))
        except PlanFieldError as err:
            raise ChatError("bad_request", str(err)) from None
        return cls(
            notebook=notebook,
            message=message,
            context=parse_context(body.get("context")),
            mentions=_mentions(body.get("mentions")),
            command=parse_command(body.get("command")),
            attachments=_attachments(body.get("attachments")),
            **optional,
        )


def _attachments(value: Any) -> tuple[Attachment, ...]:
    try:
        return parse_attachments(value)
    except ValueError as err:
        raise ChatError("bad_request", str(err)) from None


def _mentions(value: Any) -> tuple[Mention, ...]:
    try:
        return parse_mentions(value)
    except MentionError as err:
        raise ChatError("bad_request", str(err)) from None


def parse_context(value: Any) -> Any:
    """The request's ``context``: None, text, or a validated notebook snapshot (an object)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise ChatError("bad_request", "'context' must be a notebook snapshot (an object).")
    try:
        return NotebookSnapshot.parse(value)
    except ValueError as err:
        raise ChatError("bad_request", f"'context': {err}") from None


@dataclass(frozen=True)
class ContextRequest:
    """A parsed ``POST chapyter-ext/context`` body: the snapshot and the draft message."""

    snapshot: NotebookSnapshot
    #: The draft (its first 20,000 characters): what is relevant to it comes first.
    message: str | None = None

    @classmethod
    def parse(cls, body: Any) -> ContextRequest:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        if not isinstance(body, dict):
            raise ChatError("bad_request", "The body must be a JSON object.")
        try:
            snapshot = NotebookSnapshot.parse(body.get("snapshot"))
        except ValueError as err:
            raise ChatError("bad_request", f"'snapshot': {err}") from None
        message = body.get("message")
        return cls(snapshot, message[:20_000] if isinstance(message, str) else None)


def parse_command(value: Any) -> str | None:
    """The request's ``command``: None, or the name of an installed server slash command."""
    try:
        return command_name(value)
    except ValueError as err:
        raise ChatError("bad_request", str(err)) from None


def assemble_context(
    context: Any, budget: int, redactor: Redactor, request: str | None = None
) -> str | None:
    """The context text sent to the model, within ``budget`` characters, redacted.

    ``request`` (the user's message) picks what is relevant to it (``context.selection``).
    """
    if context is None or budget <= 0:
        return None
    if isinstance(context, str):
        clean = redactor(context)
        return clean[:budget] + TRUNCATED if len(clean) > budget else clean
    return chat_context(context, budget=budget, redactor=redactor, request=request).text or None
