"""Redaction of text that arrives in pieces (a model's reply, token by token), without letting
a secret out in two halves."""

from __future__ import annotations

from .redactor import Redactor

# A word longer than this is let out even unfinished: no key-shaped pattern needs more.
_MAX_HELD = 4096
# How much of the current line is kept as left context, for ``api_key = "…"`` split at " ".
_MAX_CONTEXT = 512


class TokenRedactor:
    """Redacts text that arrives in pieces (a model's reply), without letting a secret out in
    two halves: the chat's and the agent's token events, ``%%ai``'s progress display.

    :meth:`push` takes a delta and returns the redacted text that is safe to send now; the
    rest waits. Held back: an unfinished word (key-shaped strings and the parts of known keys
    are words) and any tail that is the beginning of a verbatim secret (which may hold
    spaces). Each piece is redacted with the current line before it as context, so
    ``password = `` + ``"hunter2"`` is still seen.
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
