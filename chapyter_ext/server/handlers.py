"""HTTP handlers of the chat sidebar: thin wrappers over :mod:`.chat` (the history's routes are
in :mod:`.history_handlers`).

Every error leaves as ``{"error": {"kind", "message"}}`` with a fitting status, from one place
(:meth:`ChapyterHandler.write_error`), so the frontend has a single shape to read. Every input
is read in one place too: :meth:`ChapyterHandler.json_body` bounds a body's size and nesting and
repairs invalid Unicode, :meth:`ChapyterHandler.notebook_argument` reads a query's notebook path
the same way, so no route meets a ``RecursionError`` or a lone surrogate further in.

Bodies are streamed (``@stream_request_body``), so nothing is read before
:meth:`ChapyterHandler.prepare` has run on the headers alone: a request without a user is
refused there (403), a declared ``Content-Length`` above the route's ``max_body_bytes`` too
(413), and a chunked body is cut off (413) as soon as it grows past it. The connection is then
closed, unread.
"""

from __future__ import annotations

import json
from http.client import responses
from typing import TYPE_CHECKING, Any, cast

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado.iostream import StreamClosedError

from .._version import __version__
from ..config import Chapyter
from ..context.notebook import ChatContext, NotebookSnapshot, chat_context
from ..endpoints import ModelRegistry
from ..llm import LLMError, alist_models
from ..redact import Redactor, one_line, redact_traceback
from .agent import AgentTurn
from .agent_protocol import MAX_RESULT_BODY_BYTES, AgentRequest, StepAnswer
from .chat import ChatError, ChatRequest, ChatService, ChatTurn, HistoryWorker
from .events import encode
from .fix import parse_fix_request, propose_fix
from .history import HistoryError, repair_text

if TYPE_CHECKING:
    from .app import ChapyterExtApp

# Status for each error kind raised by our own code; an LLM failure is the upstream's fault.
KIND_STATUS = {"bad_request": 400, "not_found": 404, "busy": 429}
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
HEARTBEAT_SECONDS = 15.0
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


def parse_json_body(raw: bytes, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
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
    def app(self) -> ChapyterExtApp:
        """The extension app, which holds the services."""
        return cast("ChapyterExtApp", self.extensionapp)

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

    async def prepare(self) -> None:  # type: ignore[override]  # as APIHandler's own
        """Decide on the headers alone, before any of the body is read.

        jupyter_server's own ``prepare`` comes first, in its order: host check, who the user
        is, CORS, XSRF for other verbs than GET/HEAD/OPTIONS (the ``X-XSRFToken`` header or a
        token: a streamed body is never searched for an ``_xsrf`` form field), then 403 for
        no user when the server requires one. Every verb here needs a user even where the
        server allows anonymous access elsewhere, and ``@authenticated`` on a verb only runs
        after the body: so no user is a 403 here (a CORS preflight, ``OPTIONS``, is marked
        ``@allow_unauthenticated`` by jupyter_server and passes). Then the declared size.
        """
        await super().prepare()
        if self._finished:
            return
        verb = getattr(self, (self.request.method or "").lower(), None)
        if not self.current_user and not getattr(verb, "__allow_unauthenticated", False):
            raise tornado.web.HTTPError(403)
        self._body = bytearray()
        declared = self.request.headers.get("Content-Length", "")
        # A malformed length is tornado's to refuse (400) when it reads the body.
        if declared.strip().isdigit() and int(declared) > self.max_body_bytes:
            raise body_too_large(self.max_body_bytes)

    def data_received(self, chunk: bytes) -> None:
        """Keep a piece of the body; past ``max_body_bytes``, answer 413 and stop reading."""
        if self._body is None or self._finished:
            return
        if len(self._body) + len(chunk) > self.max_body_bytes:
            self._body = None
            err = body_too_large(self.max_body_bytes)
            self.log_exception(type(err), err, None)
            self.send_error(413, exc_info=(type(err), err, None))
            return
        self._body.extend(chunk)

    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object (bounded, Unicode repaired), or a 400."""
        body = getattr(self, "_json_body", None)
        if body is None:
            raw = bytes(self._body or b"")
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

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Every error as ``{"error": {"kind", "message"}}``: no traceback, no secret."""
        exc_info = kwargs.get("exc_info")
        err = exc_info[1] if exc_info else None
        status, kind, message = self._error_for(err, status_code)
        self.clear()
        self.set_status(status)
        self.finish(json.dumps({"error": {"kind": kind, "message": message}}))

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


class ConfigHandler(ChapyterHandler):
    """``GET chapyter-ext/config``: the models the sidebar may offer."""

    @tornado.web.authenticated
    def get(self) -> None:
        """``{"models": [{"name", "model", "host", "tools", "images"}], "default", "version",
        "context_budget", "agent": {"policy", "max_steps", "time_limit"}, "inline_completion"}``.

        ``context_budget`` (``Chapyter.context_budget``) is also what the browser asks the
        kernel's ``describe_variables`` for: there is one budget for the whole context.
        ``tools``/``images``: whether agent turns with that model use function calling and
        send figures as images (``Chapyter.tool_calling``, ``Chapyter.image_input``).
        The bundled local model's entry adds ``local``, ``notice`` and ``review_first``
        (``Chapyter.local_review``: the chat inserts its code without running it).
        """
        models = self.models.public_info()
        # The bundled local model's code is inserted for review, not run (issue 13).
        review = Chapyter(parent=self.app).local_review
        for entry in models:
            entry["tools"], entry["images"] = self.app.agent.capabilities(entry["name"])
            if entry.get("local"):
                entry["review_first"] = review
        self.reply(
            {
                "models": models,
                "default": self.models.default,
                "version": __version__,
                "context_budget": self.chat.context_budget,
                "agent": self.app.agent.public_info(),
                # Issue 23: whether saving a notebook stores its chats in it (the panel says so).
                "save_chat_in_notebook": self.app.save_chat_in_notebook,
                "inline_completion": self.app.completions.enabled,
            }
        )


class ContextHandler(ChapyterHandler):
    """``POST chapyter-ext/context``: the context a chat message would send now (the chip)."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Body ``{"snapshot": {...}, "message"?: str}`` -> ``{"text", "summary", "chars",
        "rules"}`` (``rules``: ``[{"path", "chars"}]``, the project rules in force).

        Assembled exactly as ``POST chat`` assembles its ``context`` (same budget, same
        redaction) for ``message`` (the draft; what is relevant to it comes first); the text
        is empty when the server sends no context (``send_context``).
        """
        body = self.json_body()
        try:
            snapshot = NotebookSnapshot.parse(body.get("snapshot"))
        except ValueError as err:
            raise ChatError("bad_request", f"'snapshot': {err}") from None
        message = body.get("message")
        context = chat_context(
            snapshot,
            budget=self.chat.context_budget,
            redactor=self.chat.redact,
            request=message[:20_000] if isinstance(message, str) else None,
        )
        if not self.chat.send_context:
            context = ChatContext(text="", summary=context.summary, chars=0)
        rules = await self.chat.rules(snapshot.path) if snapshot.path else None
        self.reply({**context.to_json(), "rules": rules.to_json() if rules else []})


class ModelsHandler(ChapyterHandler):
    """``GET chapyter-ext/models?name=``: what the endpoint behind a name serves."""

    @tornado.web.authenticated
    async def get(self) -> None:
        """``{"name", "models": [ids]}``; an unreachable endpoint is a 502 error."""
        name = self.get_query_argument("name", "") or None
        try:
            # Starts the bundled local model if that is the endpoint, as a chat message does.
            name, endpoint = await self.models.aresolve(name)
        except KeyError:
            raise ChatError("not_found", f"Unknown model {name!r}.") from None
        self.reply({"name": name, "models": await alist_models(endpoint)})


class ChatHandler(ChapyterHandler):
    """``POST chapyter-ext/chat``: stream one reply as server-sent events."""

    _turn: ChatTurn | AgentTurn | None = None
    _client_gone = False

    @tornado.web.authenticated
    async def post(self) -> None:
        """Events ``start``, ``token``..., then ``done`` or ``error`` (see the README)."""
        request = ChatRequest.parse(self.json_body(), max_chars=self.chat.max_message_chars)
        await self.stream(await self.chat.start(request))

    async def stream(self, turn: ChatTurn | AgentTurn) -> None:
        """Send a started turn's events until its last one (a closed tab stops the turn)."""
        self._turn = turn
        if self._client_gone:
            # The tab closed while the user's message was being saved.
            turn.stop("disconnected")
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache, no-transform")
        # Reverse proxies (nginx) buffer responses by default, which would hold tokens back.
        self.set_header("X-Accel-Buffering", "no")
        # Each event is a small write of its own: with Nagle's algorithm on, the first token
        # waits for the browser to ACK `start`, which Linux delays by up to 40 ms.
        connection = self.request.connection
        stream = getattr(connection, "stream", None)
        if stream is not None and hasattr(stream, "set_nodelay"):
            stream.set_nodelay(True)
        try:
            async for event in turn.events(HEARTBEAT_SECONDS):
                if self._client_gone:
                    continue  # drain to the end so the reply is saved, but write nothing
                self.write(encode(event, self.chat.redact))
                # Flush each event on its own: the first token's latency is what users feel.
                await self.flush()
        except StreamClosedError:
            self._client_gone = True
            turn.stop("disconnected")
            await turn.wait()
        finally:
            self._turn = None
        if not self._client_gone:
            self.finish(set_content_type="text/event-stream; charset=utf-8")

    def on_connection_close(self) -> None:
        """The tab closed or the fetch was aborted: stop the model call now."""
        self._client_gone = True
        if self._turn is not None:
            self._turn.stop("disconnected")
        super().on_connection_close()


class AgentHandler(ChatHandler):
    """``POST chapyter-ext/agent``: run one agent turn, its events as server-sent events."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Events ``start``, then ``token``/``step``/``step_done``..., then ``done`` or
        ``error`` (docs/agent.md). Stop it with ``chat/stop`` and its ``message_id``."""
        body = self.json_body()
        request = AgentRequest.parse(body, max_chars=self.chat.max_message_chars)
        await self.stream(await self.app.agent.start(request))


class AgentResultHandler(ChapyterHandler):
    """``POST chapyter-ext/agent/result``: the browser's result of one step."""

    # A result may carry a few PNGs (each bounded in agent_protocol).
    max_body_bytes = MAX_RESULT_BODY_BYTES

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"ok": true}``; 404 when no running turn waits for that step."""
        self.app.agent.answer(StepAnswer.parse(self.json_body()))
        self.reply({"ok": True})


class StopHandler(ChapyterHandler):
    """``POST chapyter-ext/chat/stop``: stop a streaming reply or an agent turn by its
    ``message_id``."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"message_id", "stopped": bool}``; false when it had already finished."""
        message_id = self.json_body().get("message_id")
        if not isinstance(message_id, str) or not message_id:
            raise ChatError("bad_request", "'message_id' must be a string.")
        self.reply({"message_id": message_id, "stopped": self.chat.stop(message_id)})


class FixHandler(ChapyterHandler):
    """``POST chapyter-ext/fix``: a proposed change to one cell (Fix, Edit with AI)."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """``{"cell_id", "code", "explanation", "model", "kind", "request_sha256", "hold"}``
        (see ``server/fix.py``); a model failure is a 502 with its one line, no code
        ``no_code``."""
        request = parse_fix_request(self.json_body())
        settings = self.app.agent.settings
        self.reply(
            await propose_fix(
                request,
                registry=self.models,
                chat=self.chat,
                run_policy=str(settings.run_policy),
                local_review=bool(settings.local_review),
            )
        )


def handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns (the ExtensionApp prepends the server's base_url)."""
    return [
        (r"chapyter-ext/config", ConfigHandler),
        (r"chapyter-ext/context", ContextHandler),
        (r"chapyter-ext/models", ModelsHandler),
        (r"chapyter-ext/chat", ChatHandler),
        (r"chapyter-ext/chat/stop", StopHandler),
        (r"chapyter-ext/agent", AgentHandler),
        (r"chapyter-ext/agent/result", AgentResultHandler),
        (r"chapyter-ext/fix", FixHandler),
    ]
