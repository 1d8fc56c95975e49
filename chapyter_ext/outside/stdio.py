"""``chapyter-ext mcp``: a stdio MCP server for clients that speak only stdio, relaying to a
running Jupyter server's ``chapyter-ext/mcp`` endpoint (streamable HTTP) through the official
``mcp`` SDK (imported only when the command runs).

It holds no tool of its own: it lists the server's tools, forwards every call and returns the
server's result, so approvals, trials, Undo and provenance stay the server's and the page's.
The upstream session opens on the first request, once the client has said who it is: the
approval card names that client (or ``--name``). Before serving, one plain request checks that
the server answers and takes the token, so a wrong URL, a wrong token or an endpoint switched off
ends the command with one line on stderr instead of a client that silently lists no tools.
The token comes from the environment only: an argument would show in ``ps``.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

__all__ = ["ENV_TOKEN", "ENV_URL", "RelayConfig", "RelayError", "endpoint_url", "probe", "serve"]

#: The variable holding the server's URL (with its base_url) when ``--url`` is not given.
ENV_URL = "CHAPYTER_MCP_URL"
#: The variable holding the token (an outside-agent token or the Jupyter server's own).
ENV_TOKEN = "CHAPYTER_MCP_TOKEN"
#: The endpoint's path below the server's base_url.
ENDPOINT = "chapyter-ext/mcp"
#: Seconds a relayed call may wait for its answer: above the longest approval wait the server
#: allows (``Chapyter.outside_timeout`` <= 3600), so the server, not the relay, says "timed out".
CALL_READ_TIMEOUT = 3700.0


class RelayError(Exception):
    """Why the relay cannot work; ``str()`` is one line for the user."""


@dataclass(frozen=True)
class RelayConfig:
    """Where the relay connects and how it introduces itself."""

    url: str
    token: str
    name: str | None = None


def endpoint_url(url: str) -> str:
    """The MCP endpoint of the server at ``url`` (its root with the base_url, or the endpoint
    itself); :class:`RelayError` for what is not an http(s) URL."""
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RelayError(
            f"--url must be the Jupyter server's http(s) URL with its base_url, such as "
            f"http://127.0.0.1:8888/ (got {url[:80]!r})"
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/" + ENDPOINT) and path != ENDPOINT:
        path = f"{path}/{ENDPOINT}"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _one_line(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    with contextlib.suppress(ValueError, AttributeError):
        data = json.loads(text)
        text = str(data.get("message") or data.get("reason") or data.get("error") or text)
    line = " ".join(text.split())
    return line[:200]


def probe(url: str, token: str, timeout: float = 10.0) -> None:
    """One request to the endpoint: return if it is there and takes the token, else raise
    :class:`RelayError` saying which of server, token or endpoint is wrong."""
    if not token:
        raise RelayError(
            f"no token: set {ENV_TOKEN} to a token from the AI Chat's Outside agents "
            "(or the Jupyter server's token)"
        )
    request = urllib.request.Request(
        url,
        method="GET",
        headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return
    except urllib.error.HTTPError as err:
        status, line = err.code, _one_line(err.read())
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise RelayError(
            f"no Jupyter server answers at {url} ({reason}); start JupyterLab or pass its URL "
            f"with --url or {ENV_URL}"
        ) from None
    if status == 401:
        raise RelayError(
            f"the server refused the token (401): check {ENV_TOKEN}; tokens are made and "
            "revoked in the AI Chat's Outside agents"
        )
    if status == 403:
        if "disabled" in line.lower():
            raise RelayError(
                "the server's MCP endpoint is switched off (Chapyter.mcp_server is False)"
            )
        raise RelayError(f"the server refused the token (403): {line or 'forbidden'}")
    if status == 404:
        raise RelayError(
            f"no MCP endpoint at {url}: is chapyter-ext installed and enabled on that server, "
            "and does the URL include its base_url?"
        )
    if status >= 500:
        raise RelayError(f"the server failed ({status}): {line or 'no message'}")
    # Anything else (400, 405, 406: no session yet) means the endpoint is there and let us in.


class _Upstream:
    """The session with the Jupyter server. The SDK's transports hold task groups that must be
    entered and left by one task, so one owner task holds them until the relay ends."""

    def __init__(self, config: RelayConfig) -> None:
        self.config = config
        self.session: Any = None
        self.downstream: Any = None  # the client's session, told when the tool list changes
        self._ready: Any = None
        self._failure: str = ""
        self._group: Any = None
        self._lock: Any = None

    def attach(self, group: Any) -> None:
        import anyio

        self._group = group
        self._lock = anyio.Lock()

    async def get(self, ctx: Any) -> Any:
        """The upstream session, opened on first use with the client's name."""
        import anyio

        if self.session is not None:
            return self.session
        async with self._lock:
            if self.session is None:
                self.downstream = ctx.session
                params = getattr(ctx.session, "client_params", None)
                info = getattr(params, "client_info", None)
                self._ready = anyio.Event()
                self._failure = ""
                self._group.start_soon(self._own, info)
                await self._ready.wait()
        session = self._current()  # set (or not) by the owner task meanwhile
        if session is None:
            raise _error(self._failure or "could not connect to the Jupyter server")
        return session

    def _current(self) -> Any:
        return self.session

    async def _own(self, info: Any) -> None:
        import anyio
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp.types import Implementation

        name = self.config.name or getattr(info, "name", None) or "chapyter-ext mcp"
        version = getattr(info, "version", None) or ""
        client_info = Implementation(name=name, version=version)
        headers = {"Authorization": f"Bearer {self.config.token}"}
        timeout = httpx2.Timeout(30.0, read=CALL_READ_TIMEOUT)
        try:
            async with contextlib.AsyncExitStack() as stack:
                http = await stack.enter_async_context(
                    create_mcp_http_client(headers=headers, timeout=timeout)
                )
                read, write, *_ = await stack.enter_async_context(
                    streamable_http_client(self.config.url, http_client=http)
                )
                session = await stack.enter_async_context(
                    ClientSession(
                        read, write, client_info=client_info, message_handler=self._on_message
                    )
                )
                await session.initialize()
                self.session = session
                self._ready.set()
                await anyio.sleep_forever()
        except BaseException as err:  # the cancellation at the end, or a failure to say
            self._failure = _why(err, self.config.url)
            raise
        finally:
            self.session = None
            self._ready.set()

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", "") or getattr(
            getattr(message, "root", None), "method", ""
        )
        if method == "notifications/tools/list_changed" and self.downstream is not None:
            with contextlib.suppress(Exception):
                await self.downstream.send_tool_list_changed()


def _why(err: BaseException, url: str) -> str:
    """One line for a failed connection, never the token (it is in no exception's text)."""
    group = getattr(err, "exceptions", None)  # an ExceptionGroup (3.11+, or anyio's backport)
    if group:
        inner = [e for e in group if not _cancelled(e)]
        if inner:
            return _why(inner[0], url)
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return f"the Jupyter server at {url} refused the token ({status})"
    text = " ".join(str(err).split())[:200] or type(err).__name__
    return f"the Jupyter server at {url} did not answer: {text}"


def _cancelled(err: BaseException) -> bool:
    import anyio

    return isinstance(err, anyio.get_cancelled_exc_class())


def _error(message: str) -> Exception:
    from mcp.shared.exceptions import MCPError
    from mcp.types import INTERNAL_ERROR

    return MCPError(code=INTERNAL_ERROR, message=f"chapyter-ext mcp: {message}")


async def _relay(config: RelayConfig) -> None:
    import anyio
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    from .._version import __version__

    upstream = _Upstream(config)

    async def relayed(ctx: Any, call: Any) -> Any:
        session = await upstream.get(ctx)
        try:
            return await call(session)
        except MCPError as err:  # the server's own error: passed on as one line
            raise type(err)(err.code, " ".join(str(err.message).split())[:500]) from None
        except Exception as err:
            raise _error(_why(err, config.url)) from None

    async def list_tools(ctx: Any, params: Any) -> Any:
        return await relayed(ctx, lambda s: s.list_tools(params=params))

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await relayed(ctx, lambda s: s.call_tool(params.name, params.arguments or {}))

    server: Any = Server(
        "chapyter-ext",
        version=__version__,
        instructions="The tools of the notebooks open in JupyterLab, relayed to its server.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with anyio.create_task_group() as group:
        upstream.attach(group)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()


def serve(config: RelayConfig) -> None:
    """Check the server, then relay stdio to it until the client closes stdin;
    :class:`RelayError` (one line) when the server, the token or the endpoint is wrong."""
    import anyio

    probe(config.url, config.token)
    anyio.run(_relay, config)
