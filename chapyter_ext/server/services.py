"""What the handlers reach through ``self.extensionapp``: the services the app builds once in
``initialize_settings`` (:class:`~.app.ChapyterExtApp`). A protocol, so that the handlers need
not import the app that imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..agent.service import AgentService
    from ..chat import ChatService
    from ..complete.service import CompletionService
    from ..endpoints import ModelRegistry
    from ..history import HistoryWorker
    from ..history.contents_events import ContentsBridge
    from ..outside import OutsideService
    from .features import Features

__all__ = ["Services"]


class Services(Protocol):
    """The extension app's services, as the handlers use them."""

    registry: ModelRegistry
    history: HistoryWorker
    chat: ChatService
    agent: AgentService
    completions: CompletionService
    contents: ContentsBridge
    #: Outside agents: the MCP server, its relay to the pages, the tokens.
    outside: OutsideService
    #: The features on (``Chapyter.chat``, ``agent``, ``inline_completion``, ``mcp``).
    features: Features
    #: One line per setting a lock or a value that could not be used replaced.
    notices: tuple[str, ...]

    @property
    def save_chat_in_notebook(self) -> bool:
        """``Chapyter.save_chat_in_notebook``, as the server reads it."""

    @property
    def warm_up_sdk(self) -> bool:
        """``Chapyter.warm_up``: whether a hint loads the SDK ahead of the first call
        (``warm.py``)."""
