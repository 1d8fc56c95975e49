"""One MCP server's connection through the official ``mcp`` SDK (imported here, lazily): start
on first use, keep, notice when it died, restart once, list its tools once and again when it
says they changed, call with a timeout, stop.

The SDK's transports and session are async context managers holding task groups, which must
be entered and left by the same task: one owner task per server holds them (:meth:`_own`) and
waits until told to stop; calls are made from any task of the same event loop. What the server
sends reaches the session through a pump (:meth:`_pump`), so its end (the process exited, the
HTTP stream closed) marks the server dead at once, not at the next call. A stdio server's
stderr goes to a temporary file: its last line says why a server would not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
from typing import Any

from .config import ServerConfig

#: Restarted at most once after a death, until a call succeeds again.
MAX_RESTARTS = 1
#: Seconds a server that would not start is not tried again (each turn says why at once).
RETRY_AFTER = 60.0


class McpFailure(Exception):
    """A server that cannot serve (it would not start, it died, a call timed out or failed);
    ``str()`` is one line naming the server."""


class McpServer:
    """One configured server, started on first use."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
        log: logging.Logger | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.start_timeout = start_timeout
        self.call_timeout = config.timeout or call_timeout
        self.log = log or logging.getLogger(__name__)
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._starting: asyncio.Future[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._tools: list[Any] | None = None
        self._restarts = 0
        self._failed_at: float | None = None
        self._stderr: Any = None
        #: Why the server cannot serve now ("" while it can).
        self.failure = ""
        #: Seconds its last start took.
        self.start_seconds = 0.0

    # -- state -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a session is up."""
        return self._session is not None

    @property
    def known_tools(self) -> list[Any]:
        """The tools listed last (none before the first start)."""
        return list(self._tools or [])

    # -- lifecycle -------------------------------------------------------------------------------

    async def ensure_started(self) -> None:
        """Start the server if it is not running (once more after it died); :class:`McpFailure`
        when it cannot."""
        if self._session is not None:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.running:  # another task started it while this one waited
                return
            if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER:
                # It just failed to start: say so at once rather than wait for it again.
                raise McpFailure(f"MCP server {self.name!r} could not start: {self.failure}")
            if self._owner is not None:  # it ran, and died
                if self._restarts >= MAX_RESTARTS:
                    raise McpFailure(
                        f"MCP server {self.name!r} stopped again after a restart: "
                        f"{self.failure or 'it exited'}"
                    )
                self._restarts += 1
                self.log.warning("chapyter-ext: MCP server %r died; restarting it", self.name)
                await self._reap()
            await self._start()

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._tools = None
        started = time.perf_counter()
        self._owner = loop.create_task(self._own(ready), name=f"chapyter-mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except asyncio.TimeoutError:
            self.failure = f"did not answer within {self.start_timeout:g} s"
            self._failed_at = time.monotonic()
            await self._reap()
            raise McpFailure(f"MCP server {self.name!r} could not start: {self.failure}") from None
        except McpFailure:
            self._failed_at = time.monotonic()
            await self._reap()
            raise
        self.failure = ""
        self._failed_at = None
        self.start_seconds = time.perf_counter() - started

    async def _own(self, ready: asyncio.Future[None]) -> None:
        """Hold the transport and the session until told to stop or the server goes away."""
        import anyio
        from mcp import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._connect(stack)
                send, receive = anyio.create_memory_object_stream[Any](0)
                group = await stack.enter_async_context(anyio.create_task_group())
                group.start_soon(self._pump, read, send)
                session = await stack.enter_async_context(
                    ClientSession(receive, write, message_handler=self._on_message)
                )
                await session.initialize()
                self._session = session
                if not ready.done():
                    ready.set_result(None)
                assert self._stop is not None
                await self._stop.wait()
                group.cancel_scope.cancel()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpFailure(f"MCP server {self.name!r} was stopped"))
            raise
        except BaseException as err:
            self.failure = self._why(err)
            if not ready.done():
                ready.set_exception(
                    McpFailure(f"MCP server {self.name!r} could not start: {self.failure}")
                )
            else:
                self.log.warning("chapyter-ext: MCP server %r stopped: %s", self.name, self.failure)
        finally:
            self._session = None

    async def _connect(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            # Kept open for the server's life (its stderr), closed in stop().
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace"
            )
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=config.env, cwd=config.cwd
            )
            streams = await stack.enter_async_context(stdio_client(params, errlog=self._stderr))
        else:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = await stack.enter_async_context(
                create_mcp_http_client(headers=config.headers or None)
            )
            streams = await stack.enter_async_context(
                streamable_http_client(config.url, http_client=client)
            )
        return streams[0], streams[1]

    async def _pump(self, read: Any, send: Any) -> None:
        """Forward what the server sends to the session; when it stops, the server is dead."""
        try:
            async with send:
                async for message in read:
                    await send.send(message)
        finally:
            if self._session is not None and self._stop is not None and not self._stop.is_set():
                self.failure = self._last_stderr() or "the server closed the connection"
                self._session = None
                self._stop.set()

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            self._tools = None  # listed again before the next turn

    async def stop(self) -> None:
        """Stop the server (its process ends) and forget its session."""
        await self._reap()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _reap(self) -> None:
        owner, self._owner = self._owner, None
        self._session = None
        if self._stop is not None:
            self._stop.set()
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), 10)
            except (asyncio.TimeoutError, Exception):
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await owner

    # -- use -------------------------------------------------------------------------------------

    async def tools(self) -> list[Any]:
        """The server's tools (``mcp.types.Tool``), listed once and again after it said they
        changed; starts it if needed."""
        await self.ensure_started()
        if self._tools is None:
            tools: list[Any] = []
            cursor: str | None = None
            for _ in range(20):  # pages; a server that never ends its list is cut off
                params = None
                if cursor:
                    from mcp.types import PaginatedRequestParams

                    params = PaginatedRequestParams(cursor=cursor)
                result = await asyncio.wait_for(
                    self._session.list_tools(params=params), self.call_timeout
                )
                tools.extend(result.tools)
                cursor = result.next_cursor
                if not cursor:
                    break
            self._tools = tools
        return list(self._tools)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool``; its ``CallToolResult``. :class:`McpFailure` (one line) when the server
        cannot be reached, the call times out or fails at the protocol level."""
        await self.ensure_started()
        session = self._session
        if session is None:
            raise McpFailure(f"MCP server {self.name!r} is not running: {self.failure}")
        timeout = self.call_timeout
        try:
            result = await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 1
            )
        except asyncio.TimeoutError:
            raise McpFailure(
                f"MCP server {self.name!r}: {tool} did not answer within {timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as err:
            if "timed out" in str(err).lower():  # the SDK's own read timeout
                raise McpFailure(
                    f"MCP server {self.name!r}: {tool} did not answer within {timeout:g} s"
                ) from None
            alive = self._session is not None
            why = self._why(err, stderr=False) if alive else (self.failure or self._why(err))
            raise McpFailure(f"MCP server {self.name!r}: {tool} failed: {why}") from None
        self._restarts = 0
        return result

    # -- messages --------------------------------------------------------------------------------

    def _last_stderr(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read()[-4000:].splitlines()]
        except (OSError, ValueError):
            return ""
        return next((line for line in reversed(lines) if line), "")[:300]

    def _why(self, err: BaseException, *, stderr: bool = True) -> str:
        """One line for ``err`` (inside an exception group, its first leaf), with what the
        server last wrote to stderr when that says more."""
        # An exception group (anyio's task groups raise them) says little: its first leaf.
        while isinstance(getattr(err, "exceptions", None), tuple) and err.exceptions:  # type: ignore[attr-defined]
            err = err.exceptions[0]  # type: ignore[attr-defined]
        said = " ".join(str(err).split()) or type(err).__name__
        if isinstance(err, FileNotFoundError):
            said = f"command not found: {self.config.command}"
        told = self._last_stderr() if stderr else ""
        if told and told not in said:
            said = f"{said} ({told})" if said not in ("", "Connection closed") else told
        return said[:400]
