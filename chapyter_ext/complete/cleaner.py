"""Cleaning an inline completion as it grows (:class:`SuggestionCleaner`): no fences, no echo
of the line being typed, nothing that duplicates the text after the cursor; the ghost text only
ever grows. Pure: no tornado, no model."""

from __future__ import annotations

from ..parsing.fences import FENCE_MARK, may_become_fence
from .suggestions import overlap

__all__ = ["CURSOR", "MAX_LINES", "SuggestionCleaner"]

#: Where the cursor is, in the prompt; an echo of it in the answer is dropped.
CURSOR = "<CURSOR>"

#: Lines a suggestion may have (the local model's are shorter: its second line rambles).
MAX_LINES = 12

_OPENERS, _CLOSERS = "([{", ")]}"


class SuggestionCleaner:
    """Turns the model's raw deltas into the text to insert at the cursor, as it grows.

    :meth:`push` returns what may be shown now, :meth:`finish` the rest; together they only
    ever append (the ghost text grows, never changes). Held back while it could still go:
    an opening fence, an echo of the line being typed, trailing whitespace, a tail that starts
    the text after the cursor, a line that may turn out to be the first line after the cursor.
    ``done`` turns True once the suggestion is complete (a closing fence, the text after the
    cursor reached, ``max_lines``): the caller closes the upstream call then.
    """

    def __init__(self, prefix: str, suffix: str, *, chat: bool, max_lines: int = MAX_LINES):
        self.chat = chat
        self.max_lines = max(1, max_lines)
        line = prefix.rsplit("\n", 1)[-1]
        self._prefix_line = line
        # Echoes to drop: the prefix from any line start on (small models repeat the cell),
        # longest first; the last one is the line being typed.
        starts = [0] + [i + 1 for i, c in enumerate(prefix) if c == "\n"]
        self._echoes = [e for e in (prefix[i:].lstrip() for i in starts) if e.strip()][-8:]
        self._space_before = bool(line) and line[-1] in " \t"
        self._suffix = suffix
        first = next((s.strip() for s in suffix.split("\n") if s.strip()), "")
        # Short lines (")" or "pass") would cut a suggestion by accident: only real lines stop it.
        self._stop_line = first if len(first) >= 4 else ""
        self._raw = ""
        self._sent = ""
        self.done = False

    def push(self, delta: str) -> str:
        """Take a delta; the new text that may be shown now (often "")."""
        if self.done:
            return ""
        self._raw += delta
        return self._advance(self._clean(self._raw, end=False))

    def finish(self) -> str:
        """The model finished (or ``done``): the rest of the suggestion."""
        return self._advance(self._clean(self._raw, end=True))

    @property
    def text(self) -> str:
        """The suggestion shown so far."""
        return self._sent

    def _advance(self, text: str) -> str:
        if not text.startswith(self._sent):
            return ""  # never rewrite what is shown (does not happen; see the class doc)
        new, self._sent = text[len(self._sent) :], text
        return new

    def _clean(self, raw: str, *, end: bool) -> str:
        body = raw
        if self.chat:
            held = body.lstrip()
            if not end and may_become_fence(held) and "\n" not in held:
                return ""  # may be an opening fence
            if held.startswith(FENCE_MARK):
                newline = held.find("\n")
                body = held[newline + 1 :] if newline >= 0 else ""
            body = body.replace(CURSOR, "")
            echo = next((e for e in self._echoes if body.startswith(e)), None)
            if echo is not None:
                body = body[len(echo) :]
            elif not end and any(e.startswith(body) for e in self._echoes):
                return ""  # may still become an echo of the code before the cursor
        if self._space_before:
            stripped = body.lstrip(" \t")
            if not stripped and not end:
                return ""
            body = stripped
        body = self._cut_lines(body, end=end)
        if end or self.done:
            body = body.rstrip()
            body = body[: len(body) - self._duplicated(body)].rstrip()
            return body
        body = body.rstrip()
        return body[: len(body) - overlap(body, self._suffix)]

    def _duplicated(self, body: str) -> int:
        """How much of the end of ``body`` the text after the cursor repeats. Closing brackets
        count only as far as they would close more than was opened: ``sorted([x])`` typed as
        ``sorted(`` + ``[x])`` + ``)`` needs both of its parentheses."""
        k = overlap(body, self._suffix)
        tail = body[len(body) - k :]
        if not k or tail.strip(_CLOSERS):
            return k
        line = self._prefix_line + body + self._suffix.split("\n", 1)[0]
        balance = sum(line.count(c) for c in _OPENERS) - sum(line.count(c) for c in _CLOSERS)
        return min(k, -balance) if balance < 0 else 0

    def _cut_lines(self, body: str, *, end: bool) -> str:
        lines = body.split("\n")
        complete = len(lines) - 1  # the last one may still grow
        for index, line in enumerate(lines):
            finished = end or self.done or index < complete
            fence = self.chat and line.strip().startswith(FENCE_MARK)
            stop = bool(self._stop_line) and finished and line.strip() == self._stop_line
            if index and (fence or stop):
                self.done = True
                return "\n".join(lines[:index])
            if index >= self.max_lines:
                self.done = True
                return "\n".join(lines[:index])
            if not finished and index:
                partial = line.strip()
                maybe_stop = self._stop_line.startswith(partial) if self._stop_line else False
                maybe_fence = self.chat and may_become_fence(partial)
                if maybe_stop or maybe_fence:
                    return "\n".join(lines[:index])  # hold the line back for now
        return body
