"""Outside agents: any MCP client drives the user's open notebooks through the JupyterLab page
that has them open, under the built-in agent's guarantees (approval policy, trials, undo,
step caps, redaction). Its public surface: :class:`OutsideService` (the SDK's MCP server and
the calls), :class:`Relay` (the pages' events and answers), :class:`TokenStore`."""

from __future__ import annotations

from .relay import KEEPALIVE, Relay, not_open_line
from .service import OutsideService
from .tokens import TokenStore

__all__ = ["KEEPALIVE", "OutsideService", "Relay", "TokenStore", "not_open_line"]
