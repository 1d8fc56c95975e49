"""All configured MCP servers of one process (the Jupyter server, or one ``chapyter-ext agent``
run): each started on first use and kept, their tools listed together, calls routed by server,
every one stopped on shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .config import ServerConfig, load_servers
from .session import McpFailure, McpServer


class McpServers:
    """The configured servers, by name."""

    def __init__(
        self,
        servers: dict[str, ServerConfig],
        problems: list[str] | tuple[str, ...] = (),
        *,
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
        log: logging.Logger | None = None,
    ) -> None:
        self.log = log or logging.getLogger(__name__)
        #: One line per configuration entry that was left out (told at each turn).
        self.problems = list(problems)
        self.servers = {
            name: McpServer(
                config, start_timeout=start_timeout, call_timeout=call_timeout, log=self.log
            )
            for name, config in servers.items()
        }

    @classmethod
    def from_config(
        cls,
        setting: Any = None,
        *,
        files: list[str] | None = None,
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
        log: logging.Logger | None = None,
    ) -> McpServers:
        """The servers of the config files and ``setting`` (:func:`.config.load_servers`)."""
        servers, problems = load_servers(setting, files)
        return cls(
            servers,
            problems,
            start_timeout=start_timeout,
            call_timeout=call_timeout,
            log=log,
        )

    def __bool__(self) -> bool:
        return bool(self.servers) or bool(self.problems)

    def secrets(self) -> list[str]:
        """Every value of the servers' ``env`` and ``headers``."""
        return [s for server in self.servers.values() for s in server.config.secrets()]

    def public(self) -> list[dict[str, Any]]:
        """The servers as the browser may know them: name, transport, running, tools known."""
        return [
            {
                **server.config.public(),
                "running": server.running,
                "tools": [tool.name for tool in server.known_tools],
            }
            for server in self.servers.values()
        ]

    async def listing(self) -> tuple[list[tuple[McpServer, Any]], list[str]]:
        """Every server's tools (starting those not running, all at once), and one line per
        server that could not give them (and per configuration problem)."""
        servers = list(self.servers.values())
        results = await asyncio.gather(
            *(server.tools() for server in servers), return_exceptions=True
        )
        found: list[tuple[McpServer, Any]] = []
        problems = list(self.problems)
        for server, result in zip(servers, results):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                line = (
                    str(result)
                    if isinstance(result, McpFailure)
                    else (
                        f"MCP server {server.name!r} could not list its tools: "
                        f"{' '.join(str(result).split()) or type(result).__name__}"
                    )
                )
                problems.append(f"{line}; its tools are not offered.")
                continue
            found.extend((server, tool) for tool in result)
        return found, problems

    async def close(self) -> None:
        """Stop every server."""
        await asyncio.gather(
            *(server.stop() for server in self.servers.values()), return_exceptions=True
        )
