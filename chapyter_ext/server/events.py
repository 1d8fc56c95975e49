"""THE wire format of a streamed chat reply: typed events in, server-sent-event bytes out.

Events, in order: ``start`` (``chat_id``, ``message_id``, ``model``), optionally ``notice``
(``message``: something the user should know, e.g. that part of the history was damaged), any
number of ``token`` (``text``), then ``done`` (``message_id``, ``text``, ``status``) or ``error``
(``kind``, ``message``). A comment line (``: keepalive``) keeps idle proxies from closing the
connection while the model thinks.

An agent turn (``POST chapyter-ext/agent``, :mod:`.agent`) uses the same stream: ``start`` also
carries ``policy``, ``tools`` and ``images``; each step the browser must run (or read) is a
``step`` (``step_id``, ``kind``, ``code``/``purpose``/``cell`` when they apply,
``needs_approval``, ``reasons``), and once its result was posted back a ``step_done``
(``step_id``, ``outcome``: one line); ``done`` also carries ``steps`` (what ran) and ``halt``
(the one line saying which cap stopped the turn, or "").

Every string of every event (but the server's own random ids) passes the
:class:`~chapyter_ext.redact.Redactor` in :func:`encode`, so nothing a model echoes (the
configured key, a key the user pasted) reaches the browser. A secret may come split across two
token deltas, so :class:`TokenRedactor` holds back the tail that could still be the start of one
(a secret's prefix, or a word not yet finished) until the next delta or the end of the reply
shows what it is.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Union

from ..redact import Redactor, one_line
from .history import repair_text


@dataclass(frozen=True)
class Start:
    """The reply began: the ids the browser needs to stop it and to continue the chat."""

    chat_id: str
    message_id: str
    model: str


@dataclass(frozen=True)
class Notice:
    """Something the user should be told once (one line)."""

    message: str


@dataclass(frozen=True)
class Token:
    """More text of the reply."""

    text: str


@dataclass(frozen=True)
class Done:
    """The reply ended; ``text`` is all of it (redacted as a whole), ``status`` complete/stopped."""

    message_id: str
    text: str
    status: str


@dataclass(frozen=True)
class Error:
    """The reply failed; ``message`` is one line."""

    kind: str
    message: str


@dataclass(frozen=True)
class AgentStart:
    """An agent turn began: the ids, and how it will run (approval policy, tools, images)."""

    chat_id: str
    message_id: str
    model: str
    policy: str
    tools: bool
    images: bool


@dataclass(frozen=True)
class Step:
    """The browser must run (``run_code``) or read (``read_cell``, ``list_variables``) now.

    Absent fields (None) are left out of the event.
    """

    step_id: str
    kind: str
    code: str | None = None
    purpose: str | None = None
    cell: str | None = None
    needs_approval: bool = False
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class StepDone:
    """The browser's result for a step arrived; ``outcome`` is the server's one-line summary."""

    step_id: str
    outcome: str


@dataclass(frozen=True)
class AgentDone:
    """The agent turn ended: the final answer (or why it stopped) and what ran."""

    message_id: str
    text: str
    status: str
    steps: tuple[dict[str, Any], ...] = field(default=())
    halt: str = ""


@dataclass(frozen=True)
class Heartbeat:
    """Nothing happened for a while: a comment line to keep the connection open."""


ChatEvent = Union[
    Start, Notice, Token, Done, Error, Heartbeat, AgentStart, Step, StepDone, AgentDone
]

_NAMES: dict[type, str] = {
    Start: "start",
    Notice: "notice",
    Token: "token",
    Done: "done",
    Error: "error",
    AgentStart: "start",
    Step: "step",
    StepDone: "step_done",
    AgentDone: "done",
}
KEEPALIVE = b": keepalive\n\n"


def encode(event: ChatEvent, redactor: Redactor) -> bytes:
    """One event as server-sent-event bytes, every string redacted.

    JSON keeps ``data`` on one line whatever the text holds; lone surrogates (which UTF-8 cannot
    carry) become U+FFFD rather than failing the stream.
    """
    if isinstance(event, Heartbeat):
        return KEEPALIVE
    data = {k: v for k, v in asdict(event).items() if v is not None}
    for key, value in data.items():
        if key.endswith("_id"):
            continue  # ours (random hex, which the policy would take for a key), never a secret
        data[key] = one_line(value, redactor) if key == "message" else _redacted(value, redactor)
    if isinstance(event, Error):
        data["kind"] = data["kind"] or "internal"
    text = f"event: {_NAMES[type(event)]}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
    return repair_text(text).encode("utf-8")


def _redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it redacted (but those under a key ending in ``_id``)."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, (list, tuple)):
        return [_redacted(v, redactor) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k.endswith("_id") and isinstance(v, str) else _redacted(v, redactor)
            for k, v in value.items()
        }
    return value  # numbers, booleans, None


def is_last(event: ChatEvent) -> bool:
    """Whether ``event`` ends the stream."""
    return isinstance(event, (Done, Error, AgentDone))


# A word longer than this is let out even unfinished: no key-shaped pattern needs more.
_MAX_HELD = 4096
# How much of the current line is kept as left context, for ``api_key = "…"`` split at " ".
_MAX_CONTEXT = 512


class TokenRedactor:
    """Redacts a reply that arrives in pieces, without letting a secret out in two halves.

    :meth:`push` takes a delta and returns the redacted text that is safe to send now; the
    rest waits. Held back: an unfinished word (key-shaped strings are words) and any tail that
    is the beginning of a verbatim secret (which may hold spaces). Each piece is redacted with
    the current line before it as context, so ``password = `` + ``"hunter2"`` is still seen.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redact = redactor
        self._secrets = [s for s in redactor.secrets if len(s) <= _MAX_HELD]
        self._pending = ""
        self._line = ""

    def push(self, delta: str) -> str:
        """Take a delta; the redacted text that may be sent now (often empty)."""
        self._pending += delta
        cut = self._safe_cut(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return self._emit(ready)

    def flush(self) -> str:
        """The reply ended: whatever was held back, redacted."""
        ready, self._pending = self._pending, ""
        return self._emit(ready)

    def _safe_cut(self, text: str) -> int:
        cut = len(text)
        # Hold the unfinished last word, unless it has grown past any key.
        space = max(text.rfind(" ", 0, cut), text.rfind("\n", 0, cut), text.rfind("\t", 0, cut))
        if cut - (space + 1) <= _MAX_HELD:
            cut = space + 1
        return hold_secret_starts(text, cut, self._secrets)

    def _emit(self, ready: str) -> str:
        if not ready:
            return ""
        context = self._line
        whole = self._redact(context + ready)
        head = self._redact(context) if context else ""
        out = whole[len(head) :] if whole.startswith(head) else self._redact(ready)
        line = context + ready
        newline = line.rfind("\n")
        self._line = (line[newline + 1 :] if newline >= 0 else line)[-_MAX_CONTEXT:]
        return out


def hold_secret_starts(text: str, cut: int, secrets) -> int:
    """``cut`` moved back before any tail of ``text[:cut]`` that begins one of ``secrets``
    (moving the cut can expose another), so a secret split over two tokens never shows."""
    moved = True
    while moved and cut:
        moved = False
        for secret in secrets:
            held = _secret_prefix_at_end(text, cut, secret)
            if held:
                cut -= held
                moved = True
    return cut


def _secret_prefix_at_end(text: str, end: int, secret: str) -> int:
    """The length of the longest proper prefix of ``secret`` that ``text[:end]`` ends with."""
    first = secret[0]
    start = max(0, end - len(secret) + 1)
    i = text.find(first, start, end)
    while i >= 0:
        if secret.startswith(text[i:end]):
            return end - i
        i = text.find(first, i + 1, end)
    return 0
