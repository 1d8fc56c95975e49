"""Which features this server offers (``Chapyter.chat``, ``agent``, ``inline_completion``,
``mcp``), what ``GET config`` tells the browser of them, and the one line of a request to a
feature that is off (HTTP 403, kind ``disabled``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..chat import ChatError

if TYPE_CHECKING:
    from ..config import Chapyter

__all__ = ["OFF", "Features"]

#: What a request to a feature that is off is answered, one line naming the setting.
OFF = {
    "chat": "The AI Chat is turned off on this server (Chapyter.chat).",
    "agent": "Agent mode is turned off on this server (Chapyter.agent).",
    "inline_completion": "Inline completion is turned off on this server "
    "(Chapyter.inline_completion).",
    "mcp": "MCP tools are turned off on this server (Chapyter.mcp).",
    "mcp_server": "The MCP server for outside agents is turned off on this server "
    "(Chapyter.mcp_server).",
}

#: What each feature runs in.
_NEEDS = {"agent": ("chat",), "mcp": ("chat", "agent")}


@dataclass(frozen=True)
class Features:
    """The features on: agent turns run in the chat and MCP tools in agent turns, so each is
    off when the one it runs in is."""

    chat: bool = True
    agent: bool = True
    inline_completion: bool = True
    mcp: bool = True
    #: The MCP server for outside agents (``Chapyter.mcp_server``), on its own.
    mcp_server: bool = True

    @classmethod
    def from_settings(cls, settings: Chapyter) -> Features:
        """The features ``settings`` turn on (after the administrator's locks)."""
        chat = bool(settings.chat)
        agent = chat and bool(settings.agent)
        return cls(
            chat,
            agent,
            bool(settings.inline_completion),
            agent and bool(settings.mcp),
            bool(settings.mcp_server),
        )

    def require(self, name: str) -> None:
        """Raise :class:`ChatError` ``disabled`` (403) if feature ``name`` is off, naming the
        first setting that turned it off."""
        if getattr(self, name):
            return
        for needed in (*_NEEDS.get(name, ()), name):
            if not getattr(self, needed):
                raise ChatError("disabled", OFF[needed])

    def to_json(self) -> dict[str, Any]:
        """``GET config``'s ``features``: each feature's name, and whether it is on."""
        return asdict(self)
