"""MCP servers for the agent, through the official ``mcp`` SDK (imported only when a server
starts): :mod:`.config` (the ``mcpServers`` shape, the files and the setting), :mod:`.session`
(one server's life: start, keep, restart once, list, call with a timeout, stop),
:mod:`.manager` (all of them), :mod:`.background` (an event loop of their own, for the
synchronous headless CLI). The tools become agent tools in :mod:`chapyter_ext.agent.tools.mcp`.
"""

from __future__ import annotations

from .config import CONFIG_FILE, McpConfigError, ServerConfig, load_servers, parse_servers
from .manager import McpServers
from .session import McpFailure, McpServer

__all__ = [
    "CONFIG_FILE",
    "McpConfigError",
    "McpFailure",
    "McpServer",
    "McpServers",
    "ServerConfig",
    "load_servers",
    "parse_servers",
]
