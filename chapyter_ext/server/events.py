"""THE wire format of a streamed chat reply: typed events in, server-sent-event bytes out.

Events, in order: ``start`` (``chat_id``, ``message_id``, ``model``), optionally ``notice``
(``message``: something the user should know, e.g. that part of the history was damaged), any
number of ``token`` (``text``), then ``done`` (``message_id``, ``text``, ``status``) or ``error``
(``kind``, ``message``). A comment line (``: keepalive``) keeps idle proxies from closing the
connection while the model thinks.

Every string of every event (but the server's own random ids) passes the
:class:`~chapyter_ext.redact.Redactor` in :func:`encode`, so nothing a model echoes (the
configured key, a key the user pasted) reaches the browser. A secret may come split across two
token deltas, so :class:`TokenRedactor` holds back the tail that could still be the start of one
(a secret's prefix, or a word not yet finished) until the next delta or the end of the reply
shows what it is.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Union

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
class Heartbeat:
    """Nothing happened for a while: a comment line to keep the connection open."""


ChatEvent = Union[Start, Notice, Token, Done, Error, Heartbeat]

_NAMES = {Start: "start", Notice: "notice", Token: "token", Done: "done", Error: "error"}
KEEPALIVE = b": keepalive\n\n"


def encode(event: ChatEvent, redactor: Redactor) -> bytes:
    """One event as server-sent-event bytes, every string redacted.

    JSON keeps ``data`` on one line whatever the text holds; lone surrogates (which UTF-8 cannot
    carry) become U+FFFD rather than failing the stream.
    """
    if isinstance(event, Heartbeat):
        return KEEPALIVE
    data = asdict(event)
    for key, value in data.items():
        if key.endswith("_id"):
            continue  # ours (random hex, which the policy would take for a key), never a secret
        data[key] = one_line(value, redactor) if key == "message" else redactor(value)
    if isinstance(event, Error):
        data["kind"] = data["kind"] or "internal"
    text = f"event: {_NAMES[type(event)]}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
    return repair_text(text).encode("utf-8")


def is_last(event: ChatEvent) -> bool:
    """Whether ``event`` ends the stream."""
    return isinstance(event, (Done, Error))


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
        # Hold any tail that begins a verbatim secret; moving the cut can expose another.
        moved = True
        while moved and cut:
            moved = False
            for secret in self._secrets:
                held = _secret_prefix_at_end(text, cut, secret)
                if held:
                    cut -= held
                    moved = True
        return cut

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
