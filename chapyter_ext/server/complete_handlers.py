"""``POST chapyter-ext/complete``: stream one inline-completion suggestion (see
:mod:`chapyter_ext.complete.service`).

Events, in order: any number of ``token`` (``text``: more of the suggestion), then ``done``
(``text``: all of it) or ``error`` (``kind``, ``message``). The suggestion is made in its own
task, so that a closed connection (the browser aborts the fetch when the user types on)
cancels it where it waits, which closes the upstream call at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re

import tornado.web
from tornado.iostream import StreamClosedError

from ..chat.events import Done, Error, Token, TokenRedactor, encode, hold_secret_starts
from ..complete.service import CompletionError, CompletionRequest, CompletionService
from ..llm import LLMError
from ..redact import one_line, redact_traceback
from .base_handler import ChapyterHandler

#: Ids of ``done`` events (the suggestion has none of its own).
DONE_ID = "completion"
#: The end of a run of characters a key, token or URL may be made of.
_KEYISH_TAIL = re.compile(r"[A-Za-z0-9+/_\-.~=:@%]*$")


class SuggestionRedactor(TokenRedactor):
    """The chat's :class:`TokenRedactor`, holding back less: code is rarely made of spaces,
    so waiting for a space would hold a one-line suggestion back to its end. Held back here:
    a trailing run of characters a key may be made of, a string literal still open on the
    current line (``password = "hun``), and any tail that begins a verbatim secret."""

    def _safe_cut(self, text: str) -> int:
        cut = len(text) - len(_KEYISH_TAIL.search(text).group())  # type: ignore[union-attr]
        start = text.rfind("\n", 0, cut) + 1
        before = self._line if start == 0 else ""
        line = before + text[start:cut]
        for quote in "'\"":
            if line.count(quote) % 2:
                cut = min(cut, max(start + line.rfind(quote) - len(before), start))
        return hold_secret_starts(text, cut, self._secrets)


class CompleteHandler(ChapyterHandler):
    """``POST chapyter-ext/complete``: the suggestion as server-sent events."""

    _task: asyncio.Task[None] | None = None
    _client_gone = False

    @property
    def completions(self) -> CompletionService:
        """The completion service."""
        return self.app.completions

    @tornado.web.authenticated
    async def post(self) -> None:
        """Events ``token``... then ``done`` or ``error`` (a failure of the model is an event,
        not an HTTP error, so the browser reads every outcome the same way)."""
        # Turned off for everyone: 403 "disabled", and the browser stops asking.
        self.app.features.require("inline_completion")
        try:
            request = CompletionRequest.parse(self.json_body())
        except CompletionError as err:
            self.set_status(400)
            self.finish(json.dumps({"error": {"kind": err.kind, "message": str(err)}}))
            return
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache, no-transform")
        self.set_header("X-Accel-Buffering", "no")
        self._task = asyncio.ensure_future(self._pump(request))
        if self._client_gone:
            self._task.cancel()
        try:
            await self._task
        except (asyncio.CancelledError, StreamClosedError):
            self._client_gone = True
        finally:
            self._task = None
        if not self._client_gone:
            self.finish()

    async def _pump(self, request: CompletionRequest) -> None:
        redact = self.redact
        tokens = SuggestionRedactor(redact)
        parts: list[str] = []
        try:
            async with contextlib.aclosing(self.completions.stream(request)) as deltas:
                async for delta in deltas:
                    parts.append(delta)
                    safe = tokens.push(delta)
                    if safe:
                        await self._send(Token(safe))
            rest = tokens.flush()
            if rest:
                await self._send(Token(rest))
            await self._send(Done(DONE_ID, redact("".join(parts)), "complete"))
        except (LLMError, CompletionError) as err:
            await self._send(Error(err.kind, one_line(err, redact)))
        except StreamClosedError:
            raise
        except Exception as err:  # a bug of ours: one event, the traceback in the log
            self.completions.failed("internal", redact_traceback(err, redact))
            await self._send(Error("internal", "Internal error; see the server log."))

    async def _send(self, event: Token | Done | Error) -> None:
        self.write(encode(event, self.redact))
        # Flush each event on its own: the first piece of ghost text is what users feel.
        await self.flush()

    def on_connection_close(self) -> None:
        """The browser aborted (the user typed on): cancel the suggestion and its upstream."""
        self._client_gone = True
        if self._task is not None:
            self._task.cancel()
        super().on_connection_close()


def completion_handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns (the ExtensionApp prepends the server's base_url)."""
    return [(r"chapyter-ext/complete", CompleteHandler)]
