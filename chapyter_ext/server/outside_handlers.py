"""Routes of outside agents (:mod:`chapyter_ext.outside`): the MCP endpoint ``chapyter-ext/mcp``
(the SDK's streamable-HTTP app behind :mod:`.asgi_bridge`, authenticated by a bearer token
before anything), and the browser's side under ``chapyter-ext/outside/``: the ``events``
stream, the open notebooks, the answers (``result``, ``trial``), Stop and the tokens."""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from typing import Any

import tornado.web
from jupyter_server.auth.decorator import allow_unauthenticated
from tornado.iostream import StreamClosedError

from ..chat import ChatError
from ..outside import OutsideService
from .asgi_bridge import serve_asgi
from .base_handler import ChapyterHandler
from .handlers import HEARTBEAT_SECONDS

#: The SDK's own default bound on a request body.
MAX_MCP_BODY_BYTES = 4 * 1024 * 1024
_PAGE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NO_TOKEN = "Send 'Authorization: Bearer <token>': an outside-agent token from the chat panel."
WRONG_TOKEN = "That token is not accepted here (revoked, mistyped or of another server)."


class OutsideHandler(ChapyterHandler):
    """Base of the outside routes: the service."""

    @property
    def outside(self) -> OutsideService:
        return self.app.outside


class McpHandler(OutsideHandler):
    """``chapyter-ext/mcp``: the MCP endpoint (streamable HTTP, the official SDK)."""

    max_body_bytes = MAX_MCP_BODY_BYTES
    _gone: asyncio.Event | None = None

    async def admit(self) -> None:
        """A bearer token (an outside-agent token or the server's own) before anything; then
        403 ``disabled`` when ``Chapyter.mcp_server`` is off. Jupyter's cookie login and XSRF
        do not apply: a client presents its token on every request."""
        if not self.check_host():
            raise tornado.web.HTTPError(403)
        scheme, _, token = self.request.headers.get("Authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise tornado.web.HTTPError(401, NO_TOKEN)
        server_token = str(getattr(self.identity_provider, "token", "") or "")
        own = bool(server_token) and hmac.compare_digest(
            token.encode("utf-8", "replace"), server_token.encode("utf-8", "replace")
        )
        if not own and self.outside.tokens.check(token) is None:
            raise tornado.web.HTTPError(403, WRONG_TOKEN)
        self.app.features.require("mcp_server")

    async def _bridge(self) -> None:
        self._gone = asyncio.Event()
        body = bytes(self._body or b"")
        self._body = None
        origin = _tool_call_origin(self.request.headers.get("mcp-session-id", ""), body)
        manager = await self.outside.manager()
        # The answer comes as small SSE writes: without this, Nagle holds the last one back.
        stream = getattr(self.request.connection, "stream", None)
        if stream is not None and hasattr(stream, "set_nodelay"):
            stream.set_nodelay(True)
        try:
            await serve_asgi(self, manager.handle_request, body, self._gone)
        finally:
            if origin is not None and self._gone.is_set():
                self.outside.relay.client_gone(origin)

    def on_connection_close(self) -> None:
        """The client went away: the SDK's request ends, its waiting tool call with it."""
        if self._gone is not None:
            self._gone.set()
        super().on_connection_close()

    @allow_unauthenticated  # authenticated in admit, by the bearer token
    async def get(self) -> None:
        """The SDK's server-to-client stream."""
        await self._bridge()

    @allow_unauthenticated
    async def post(self) -> None:
        """A JSON-RPC message: the answer is JSON or an SSE stream, as the SDK chooses."""
        await self._bridge()

    @allow_unauthenticated
    async def delete(self) -> None:
        """The client ends its session."""
        await self._bridge()


def _tool_call_origin(session: str, body: bytes) -> tuple[str, str] | None:
    """``(session id, request id)`` of a ``tools/call`` body (to cancel its call if the
    connection closes first), else None."""
    if b"tools/call" not in body:
        return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return (session, str(message.get("id")))
    return None


class EventsHandler(OutsideHandler):
    """``GET chapyter-ext/outside/events?page=<id>``: the calls for this page, as SSE."""

    _page: Any = None

    @tornado.web.authenticated
    async def get(self) -> None:
        """Events ``call`` and ``cancel`` (docs/protocol.md), a keepalive when quiet."""
        page_id = self.get_query_argument("page", "")
        if not _PAGE_ID.match(page_id):
            raise ChatError("bad_request", "'page' must be 1 to 64 letters, digits, - or _.")
        relay = self.outside.relay
        self._page = page = relay.connect(page_id)
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache, no-transform")
        self.set_header("X-Accel-Buffering", "no")
        stream = getattr(self.request.connection, "stream", None)
        if stream is not None and hasattr(stream, "set_nodelay"):
            stream.set_nodelay(True)
        try:
            self.write(b": connected\n\n")
            await self.flush()
            async for chunk in relay.events(page, HEARTBEAT_SECONDS):
                self.write(chunk)
                await self.flush()
        except (StreamClosedError, asyncio.CancelledError):
            pass
        finally:
            relay.disconnect(page)

    def on_connection_close(self) -> None:
        if self._page is not None:
            self.outside.relay.disconnect(self._page)
        super().on_connection_close()


class NotebooksHandler(OutsideHandler):
    """``POST chapyter-ext/outside/notebooks``: the notebooks a page has open."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"page", "notebooks": [{"path", "kernel"}]}`` -> ``{"ok": true}``."""
        body = self.json_body()
        page = body.get("page")
        if not isinstance(page, str):
            raise ChatError("bad_request", "'page' must be a string.")
        self.outside.relay.report(page, body.get("notebooks"))
        self.reply({"ok": True})


class ResultHandler(OutsideHandler):
    """``POST chapyter-ext/outside/result``: a page's answer to a call."""

    max_body_bytes = 32 * 1024 * 1024  # outputs with a few images

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"ok": true}``; 404 when no call waits for it."""
        self.outside.relay.result(self.json_body())
        self.reply({"ok": True})


class TrialHandler(OutsideHandler):
    """``POST chapyter-ext/outside/trial``: a call's trial report; the decision."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"needs_approval", "reasons", "concerns", "preview", "guard"}``."""
        self.reply(self.outside.relay.trial(self.json_body()))


class StopHandler(OutsideHandler):
    """``POST chapyter-ext/outside/stop``: Stop in the chat ends the running calls."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"client"?}`` -> ``{"stopped": n}``."""
        client = self.json_body().get("client")
        if client is not None and not isinstance(client, str):
            raise ChatError("bad_request", "'client' must be a string.")
        self.reply({"stopped": self.outside.relay.stop(client)})


class TokensHandler(OutsideHandler):
    """``chapyter-ext/outside/tokens``: list and create outside-agent tokens."""

    @tornado.web.authenticated
    def get(self) -> None:
        """``{"tokens": [{"id", "name", "created", "last_used"}]}`` (never a secret)."""
        self.reply({"tokens": self.outside.tokens.list()})

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"name"}`` -> ``{"id", "name", "token"}`` (the secret, shown this once)."""
        name = self.json_body().get("name")
        if not isinstance(name, str):
            raise ChatError("bad_request", "'name' must be a string.")
        try:
            self.reply(self.outside.tokens.create(name), 201)
        except ValueError as err:
            raise ChatError("bad_request", str(err)) from None


class TokenHandler(OutsideHandler):
    """``DELETE chapyter-ext/outside/tokens/<id>``: revoke a token."""

    @tornado.web.authenticated
    def delete(self, token_id: str) -> None:
        """204; 404 when there is no such token."""
        if not self.outside.tokens.revoke(token_id):
            raise ChatError("not_found", "No outside-agent token with that id.")
        self.set_status(204)
        self.finish()


def outside_handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns (the ExtensionApp prepends the server's base_url)."""
    return [
        (r"chapyter-ext/mcp", McpHandler),
        (r"chapyter-ext/outside/events", EventsHandler),
        (r"chapyter-ext/outside/notebooks", NotebooksHandler),
        (r"chapyter-ext/outside/result", ResultHandler),
        (r"chapyter-ext/outside/trial", TrialHandler),
        (r"chapyter-ext/outside/stop", StopHandler),
        (r"chapyter-ext/outside/tokens", TokensHandler),
        (r"chapyter-ext/outside/tokens/([0-9a-f]{1,64})", TokenHandler),
    ]
