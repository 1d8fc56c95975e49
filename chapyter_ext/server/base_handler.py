"""The base of every chapyter-ext HTTP handler (:class:`ChapyterHandler`): the services, bounded
input, one error mapping. The routes are in :mod:`.handlers`, :mod:`.history_handlers` and
:mod:`.complete_handlers`.

Every error leaves as ``{"error": {"kind", "message"}}`` with a fitting status, from one place
(:meth:`ChapyterHandler.write_error`), so the frontend has a single shape to read. Every input
is read in one place too: :meth:`ChapyterHandler.json_body` bounds a body's size and nesting and
repairs invalid Unicode, :meth:`ChapyterHandler.notebook_argument` reads a query's notebook path
the same way, so no route meets a ``RecursionError`` or a lone surrogate further in.

Bodies are streamed (``@stream_request_body``), so nothing is read before
:meth:`ChapyterHandler.prepare` has run on the headers alone: a request without a user is
refused there (403), a declared ``Content-Length`` above the route's ``max_body_bytes`` too
(413), and a chunked body is cut off (413) as soon as it grows past it. What the connection
becomes is :mod:`.refusals`': a refused request with a small body (or none) is
answered once that body has been read and dropped, and the connection stays open for the next
request; a larger body is never read, and the answer says ``Connection: close`` before the
connection closes (without a reset, so that a proxy relays the answer and opens a new one).
"""

from __future__ import annotations

import json
from http.client import responses
from typing import Any, cast

import tornado.iostream
import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin

from ..chat import ChatError, ChatService
from ..endpoints import ModelRegistry
from ..history import HistoryWorker
from ..history.store import HistoryError, repair_text
from ..llm import LLMError
from ..redact import Redactor, one_line, redact_traceback
from .refusals import DRAIN_BYTES, drains, linger
from .services import Services

# Status for each error kind raised by our own code; an LLM failure is the upstream's fault.
KIND_STATUS = {"bad_request": 400, "forbidden": 403, "not_found": 404, "busy": 429}
KIND_STATUS["disabled"] = 403  # a feature turned off on this server (server/features.py)
UPSTREAM_STATUS = {"timeout": 504}
STATUS_KIND = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    # Too large is one more body the server refused: the browser reads it as it reads a 400
    # (the agent's runner then reports a step result that could not be sent).
    413: "bad_request",
    429: "busy",
}
# Bounds of a request body: far above a chat message with its notebook snapshot, far below
# what would make parsing it a denial of service.
MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_BODY_DEPTH = 32


def _repaired(value: Any, depth: int = 0) -> Any:
    """A parsed JSON value with every string repaired; ChatError if nested too deeply."""
    if isinstance(value, str):
        return repair_text(value)
    if depth >= MAX_BODY_DEPTH and isinstance(value, (dict, list)):
        raise ChatError("bad_request", f"The body is nested more than {MAX_BODY_DEPTH} deep.")
    if isinstance(value, dict):
        return {repair_text(k): _repaired(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired(v, depth + 1) for v in value]
    return value


def parse_json_body(raw: bytes | bytearray, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """A request body as a JSON object with repaired strings, or :class:`ChatError` (400).

    Refused: more than ``limit`` bytes (``MAX_BODY_BYTES`` unless a route allows more), not
    JSON, nested deeper than ``MAX_BODY_DEPTH`` (a deep body would otherwise exhaust the
    parser's recursion: a 500), not an object.
    Invalid UTF-8 bytes become U+FFFD.
    """
    if len(raw) > limit:
        raise ChatError("bad_request", f"The body is larger than {limit} bytes.")
    too_deep = f"The body is nested more than {MAX_BODY_DEPTH} deep."
    try:
        body = json.loads(raw.decode("utf-8", "replace") if raw else "{}")
    except RecursionError:
        raise ChatError("bad_request", too_deep) from None
    except ValueError:
        raise ChatError("bad_request", "The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise ChatError("bad_request", "The body must be a JSON object.")
    return _repaired(body)


def body_too_large(limit: int) -> tornado.web.HTTPError:
    """The 413 of a body above ``limit`` bytes (the same words as :func:`parse_json_body`)."""
    return tornado.web.HTTPError(413, f"The body is larger than {limit} bytes.")


@tornado.web.stream_request_body
class ChapyterHandler(ExtensionHandlerMixin, APIHandler):
    """Base of every chapyter-ext handler: shared services, bounded input, JSON errors.

    The body streams in through :meth:`data_received` once :meth:`prepare` has accepted the
    headers (see the module); a verb reads it with :meth:`json_body`.
    """

    @property
    def app(self) -> Services:
        """The extension app, which holds the services."""
        return cast(Services, self.extensionapp)

    @property
    def models(self) -> ModelRegistry:
        """The named model endpoints."""
        return self.app.registry

    @property
    def chat(self) -> ChatService:
        """The service that streams replies."""
        return self.app.chat

    @property
    def history(self) -> HistoryWorker:
        """The chat history store, behind its worker thread."""
        return self.app.history

    @property
    def redact(self) -> Redactor:
        """The server's secret policy (a bare one before the services exist)."""
        chat: ChatService | None = getattr(self.app, "chat", None)
        return chat.redact if chat is not None else Redactor()

    #: The largest body this route reads (a route with PNGs in its body allows more).
    max_body_bytes = MAX_BODY_BYTES
    #: Body bytes received so far (never more than ``max_body_bytes``).
    _body: bytearray | None = None
    #: Whether the body is still unread, so that an answer now is the connection's last (till
    #: :meth:`prepare` hands over to the body, or to a refusal answered after it).
    _before_body = True
    #: The refusal answered once the (small) body has been read and dropped, and how much of
    #: it was (:mod:`.refusals`).
    _refusal: tornado.web.HTTPError | None = None
    _dropped = 0
    #: Whether the answer ends the connection (it says ``Connection: close``).
    _closing = False

    async def prepare(self) -> None:  # type: ignore[override]  # as APIHandler's own
        """Decide on the headers alone, before any of the body is read (:meth:`admit`, then
        the declared size); a refusal waits for a small body (:mod:`.refusals`)."""
        try:
            await self.admit()
            if self._finished:  # jupyter_server answered itself: before the body
                return
            declared = self.request.headers.get("Content-Length", "")
            # A malformed length is tornado's to refuse (400) when it reads the body.
            if declared.strip().isdigit() and int(declared) > self.max_body_bytes:
                raise body_too_large(self.max_body_bytes)
        except tornado.web.HTTPError as err:
            if not drains(self.request.headers):
                await self._answer_before_body(err)
                return
            self._refusal = err
            # Tornado calls the verb once the body is in: the refusal answers in its place.
            setattr(self, (self.request.method or "get").lower(), self._answer_refusal)
        else:
            self._body = bytearray()
        self._before_body = False

    async def admit(self) -> None:
        """Who asks, on the headers alone; an ``HTTPError`` refuses.

        jupyter_server's own ``prepare`` comes first, in its order: host check, who the user
        is, CORS, XSRF for other verbs than GET/HEAD/OPTIONS (the ``X-XSRFToken`` header or a
        token: a streamed body is never searched for an ``_xsrf`` form field), then 403 for
        no user when the server requires one. Every verb here needs a user even where the
        server allows anonymous access elsewhere, and ``@authenticated`` on a verb only runs
        after the body: so no user is a 403 here (a CORS preflight, ``OPTIONS``, is marked
        ``@allow_unauthenticated`` by jupyter_server and passes).
        """
        await super().prepare()
        if self._finished:
            return
        verb = getattr(self, (self.request.method or "").lower(), None)
        if not self.current_user and not getattr(verb, "__allow_unauthenticated", False):
            raise tornado.web.HTTPError(403)

    def _answer_refusal(self, *args: Any, **kwargs: Any) -> None:
        """The verb of a refused request: its refusal, now that the body is read."""
        assert self._refusal is not None
        raise self._refusal

    def data_received(self, chunk: bytes) -> None:
        """Keep a piece of the body; past ``max_body_bytes``, answer 413 and stop reading.
        A refused request's body is dropped, and cut off past ``DRAIN_BYTES`` (chunked)."""
        if self._finished:
            return
        if self._refusal is not None:
            self._dropped += len(chunk)
            if self._dropped > DRAIN_BYTES:
                self._answer_mid_body(self._refusal)
            return
        if self._body is None:
            return
        if len(self._body) + len(chunk) > self.max_body_bytes:
            self._body = None
            self._answer_mid_body(body_too_large(self.max_body_bytes))
            return
        self._body.extend(chunk)

    def _answer_mid_body(self, err: tornado.web.HTTPError) -> None:
        """Answer ``err`` without reading the rest of the body: tornado closes the connection
        after it, as the answer says."""
        self._closing = True
        self.log_exception(type(err), err, None)
        self.send_error(err.status_code, exc_info=(type(err), err, None))

    def finish(self, *args: Any, **kwargs: Any) -> Any:
        """Finish; an answer that leaves the body unread says ``Connection: close``."""
        if (self._before_body or self._closing) and not self._headers_written:
            # Tornado closes such a connection without saying so: a proxy that keeps
            # connections open would send the next request on it.
            self._closing = True
            self.set_header("Connection", "close")
        return super().finish(*args, **kwargs)

    async def _answer_before_body(self, err: tornado.web.HTTPError) -> None:
        """Answer ``err`` and never read the body: the answer goes out saying the connection
        closes, the connection is held while the client reads it (:func:`.refusals.linger`),
        then tornado closes it."""
        self.log_exception(type(err), err, None)
        status, body = self._error_body(err, err.status_code)
        self.clear()
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.set_header("Content-Length", len(body))
        self.set_header("Connection", "close")
        self._closing = True
        self.write(body)
        stream = getattr(self.request.connection, "stream", None)
        try:
            await self.flush()
            if stream is not None:
                await linger(stream)
        except tornado.iostream.StreamClosedError:
            pass  # the client went first
        self.finish()

    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object (bounded, Unicode repaired), or a 400."""
        body = getattr(self, "_json_body", None)
        if body is None:
            # Parsed from the buffer itself, which is then let go: a body with attachments is
            # tens of MB, and a copy of it would only double that.
            raw, self._body = self._body or bytearray(), None
            body = self._json_body = parse_json_body(raw, self.max_body_bytes)
        return body

    def notebook_argument(self) -> str:
        """The ``notebook`` query argument, read as a JSON body's would be.

        Not through tornado's ``get_query_argument``, which turns control characters into
        spaces and strips them, so ``a.ipynb%00`` would pass here and fail in a body. Invalid
        UTF-8 becomes U+FFFD; the store normalises the path, the same way for every route.
        """
        values = self.request.query_arguments.get("notebook") or [b""]
        return values[-1].decode("utf-8", "replace")

    def reply(self, data: Any, status: int = 200) -> None:
        """Finish with a JSON body."""
        self.set_status(status)
        self.finish(json.dumps(data))

    def _error_for(self, err: BaseException | None, status: int) -> tuple[int, str, str]:
        if isinstance(err, (ChatError, HistoryError)):
            return KIND_STATUS.get(err.kind, 400), err.kind, one_line(err, self.redact)
        if isinstance(err, LLMError):
            return UPSTREAM_STATUS.get(err.kind, 502), err.kind, one_line(err, self.redact)
        if isinstance(err, tornado.web.HTTPError):
            status = err.status_code
            message = err.log_message if status < 500 and err.log_message else None
            return status, STATUS_KIND.get(status, "error"), message or responses.get(status, "")
        if err is not None:
            return 500, "internal", "Internal error; see the server log."
        return status, STATUS_KIND.get(status, "error"), responses.get(status, "Error")

    def _error_body(self, err: BaseException | None, status_code: int) -> tuple[int, bytes]:
        """The status and body of an error: ``{"error": {"kind", "message"}}``."""
        status, kind, message = self._error_for(err, status_code)
        return status, json.dumps({"error": {"kind": kind, "message": message}}).encode()

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Every error as ``{"error": {"kind", "message"}}``: no traceback, no secret."""
        exc_info = kwargs.get("exc_info")
        status, body = self._error_body(exc_info[1] if exc_info else None, status_code)
        self.clear()
        self.set_status(status)
        self.finish(body)

    def send_error(self, status_code: int = 500, **kwargs: Any) -> None:
        """Tornado calls this for uncaught exceptions; our own kinds pick their status."""
        exc_info = kwargs.get("exc_info")
        if exc_info and isinstance(exc_info[1], (ChatError, HistoryError, LLMError)):
            status_code = self._error_for(exc_info[1], status_code)[0]
        super().send_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """Expected failures are one warning line; others a traceback with secrets scrubbed."""
        if isinstance(value, (ChatError, HistoryError, LLMError, tornado.web.HTTPError)):
            if isinstance(value, tornado.web.HTTPError) and value.status_code < 500:
                return super().log_exception(typ, value, tb)
            status, kind, message = self._error_for(value, 500)
            self.log.warning(
                "%s %s -> %d %s: %s", self.request.method, self.request.path, status, kind, message
            )
            return None
        self.log.error(
            "Uncaught exception in %s %s:\n%s",
            self.request.method,
            self.request.path,
            redact_traceback(value, self.redact),
        )
        return None
