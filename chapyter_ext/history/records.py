"""What the chat history stores and serves: messages, views, ids, times and notebook paths.

Pure values and rules, shared by the store (:mod:`.store`), the chat turns and the routes.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..llm.usage import clean_usage
from .attachment_notes import clean_attachments, redact_attachments
from .checked_numbers import clean_numbers, redact_numbers
from .mention_notes import clean_mentions, redact_mentions
from .plans import clean_plan, redact_plan

ROLES = ("user", "assistant")
STATUSES = ("complete", "stopped", "error")
MAX_NOTEBOOK_PATH = 4096
_MESSAGE_FIELDS = ("id", "role", "content", "model", "created", "status", "error")
#: What an agent turn records of each step it ran (all strings), and how much of it is kept.
STEP_FIELDS = ("step_id", "tool", "title", "code", "cell_id", "outcome")
#: What a step of a tool other than run_code also keeps (strings, left out when empty): the
#: MCP server it belongs to, its arguments as JSON and what the model was told of its result.
STEP_DETAILS = ("server", "arguments", "result")
MAX_STEPS = 100
MAX_STEP_CODE = 20_000
#: Lines of a step's trial kept, and characters per line.
MAX_TRIAL_LINES = 40
MAX_TRIAL_LINE = 300
#: Code blocks of one answer whose verdicts are kept.
MAX_CHECKS = 100


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
    #: strings; tool and title are "" in histories older than the tool registry), with
    #: :data:`STEP_DETAILS` for tools other than run_code and ``trial`` when one was made.
    steps: tuple[dict[str, Any], ...] = ()
    #: What a reply used: token counts and ``cost`` (:func:`chapyter_ext.llm.usage.clean_usage`).
    usage: dict[str, Any] | None = None
    #: The verdicts of the answer's code blocks (``guards.answers.code_block_checks``):
    #: ``{block_id, runnable, problem}``; the browser offers to run only those that passed.
    checks: tuple[dict[str, Any], ...] = ()
    #: Taken from a chat a notebook carried in its metadata (set by this server on import,
    #: whatever the file said): shown read-only, its cell links and statuses not acted on.
    imported: bool = False
    #: A plan's steps (:mod:`.plans`): ``{text, status, note}``, a ``/plan`` answer's or the
    #: one an agent turn followed.
    plan: tuple[dict[str, Any], ...] = ()
    #: An agent answer's numbers, each found or not in what its turn saw
    #: (:mod:`.checked_numbers`: ``{text, start, end, value, status, where}``).
    numbers: tuple[dict[str, Any], ...] = ()
    #: A user message's attached files (:mod:`.attachment_notes`): ``{name, type, size}``,
    #: never their data.
    attachments: tuple[dict[str, Any], ...] = ()
    #: A user message's @-mentions (:mod:`.mention_notes`): ``{kind, label}`` and its
    #: ``name``, ``cellId`` or ``path``, never what was sent of it.
    mentions: tuple[dict[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The message as a JSON-ready dict (the shape the history endpoint returns).

        ``steps`` appears only on agent turns, ``usage`` only on replies that reported it,
        ``checks`` only on answers with code and ``imported`` only when true, so other
        messages keep their old shape.
        """
        data: dict[str, Any] = asdict(self)
        for key in ("steps", "checks", "plan", "numbers", "attachments", "mentions"):
            data[key] = list(getattr(self, key))
            if not data[key]:
                del data[key]
        if self.usage is None:
            del data["usage"]
        if not self.imported:
            del data["imported"]
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
        return cls(
            **fields,
            steps=clean_steps(data.get("steps")),
            usage=clean_usage(data.get("usage")),
            checks=clean_checks(data.get("checks")),
            imported=data.get("imported") is True,
            plan=clean_plan(data.get("plan")),
            numbers=clean_numbers(data.get("numbers")),
            attachments=clean_attachments(data.get("attachments")),
            mentions=clean_mentions(data.get("mentions")),
        )


def clean_checks(value: Any) -> tuple[dict[str, Any], ...]:
    """The readable code-block verdicts of ``value`` (``{block_id, runnable, problem}``);
    damaged ones are dropped, so their blocks are not offered to run."""
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(
        {"block_id": item["block_id"], "runnable": item["runnable"], "problem": item["problem"]}
        for item in value[:MAX_CHECKS]
        if isinstance(item, dict)
        and isinstance(item.get("block_id"), str)
        and isinstance(item.get("runnable"), bool)
        and isinstance(item.setdefault("problem", ""), str)
    )


def clean_trial(value: Any) -> dict[str, Any] | None:
    """A step's trial as kept (``{status, concerns, preview, ran}``: what the confined trial
    saw), every line a bounded string; None when ``value`` is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("status"), str):
        return None

    def lines(key: str) -> list[str]:
        found = value.get(key)
        if not isinstance(found, list):
            return []
        return [line[:MAX_TRIAL_LINE] for line in found[:MAX_TRIAL_LINES] if isinstance(line, str)]

    return {
        "status": value["status"][:20],
        "concerns": lines("concerns"),
        "preview": lines("preview"),
        "ran": value.get("ran") is True,
    }


def clean_steps(value: Any) -> tuple[dict[str, Any], ...]:
    """The readable steps of ``value``: damaged ones (not an object, a field that is not a
    string, no ``step_id``) are dropped rather than failing the message; bounded in number and
    code length; unknown fields are left out (a damaged ``trial`` or detail too)."""
    if not isinstance(value, (list, tuple)):
        return ()
    steps = []
    for item in value[:MAX_STEPS]:
        if not isinstance(item, dict):
            continue
        step: dict[str, Any] = {key: item.get(key, "") for key in STEP_FIELDS}
        if not all(isinstance(v, str) for v in step.values()) or not step["step_id"]:
            continue
        step["code"] = step["code"][:MAX_STEP_CODE]
        for key in STEP_DETAILS:
            detail = item.get(key)
            if isinstance(detail, str) and detail:
                step[key] = detail[:MAX_STEP_CODE]
        trial = clean_trial(item.get("trial"))
        if trial is not None:
            step["trial"] = trial
        steps.append(step)
    return tuple(steps)


def redact_message(message: ChatMessage, redact: Callable[[str], str]) -> ChatMessage:
    """``message`` as it may be stored or leave the server: its text, its error line, its
    steps' code, cell ids and outcomes and its code blocks' problems go through ``redact``
    (step and block ids are ours)."""
    return replace(
        message,
        content=redact(message.content),
        error=redact(message.error),
        steps=tuple(_redacted_step(step, redact) for step in clean_steps(message.steps)),
        checks=tuple(
            {**check, "problem": redact(check["problem"])} for check in clean_checks(message.checks)
        ),
        numbers=redact_numbers(message.numbers, redact),
        plan=redact_plan(message.plan, redact),
        attachments=redact_attachments(message.attachments, redact),
        mentions=redact_mentions(message.mentions, redact),
    )


def _redacted_step(step: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in step.items():
        if key == "trial":
            out[key] = {
                **value,
                "concerns": [redact(line) for line in value["concerns"]],
                "preview": [redact(line) for line in value["preview"]],
            }
        else:
            out[key] = value if key == "step_id" else redact(value)
    return out


@dataclass(frozen=True)
class ChatView:
    """What the frontend needs to show a notebook's chat: the current one and the others."""

    notebook: str
    chat_id: str
    messages: tuple[ChatMessage, ...]
    chats: tuple[str, ...]
    #: Told to the user once: e.g. that part of the history was damaged and where it was kept.
    notice: str = ""
    #: The notebook's stable id ("" until it has a history), for its metadata.
    notebook_id: str = ""
    #: What every chat of the notebook used together (None: no reply reported usage).
    usage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The view as the JSON body of ``GET chapyter-ext/history``."""
        data: dict[str, Any] = {
            "notebook": self.notebook,
            "notebook_id": self.notebook_id,
            "chat_id": self.chat_id,
            "messages": [m.to_json() for m in self.messages],
            "chats": list(self.chats),
        }
        if self.notice:
            data["notice"] = self.notice
        if self.usage is not None:
            data["usage"] = self.usage
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


def parse_time(text: str) -> datetime | None:
    """A time :func:`utc_now` wrote, or None."""
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
