"""What a turn starts from: :class:`TurnSetup` (the accepted message, its context, the earlier
turns, the profile and rules), the chat read for it on the history thread, and the earlier
turns sent with it (:func:`history_for_model`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..history import ChatMessage, HistoryWorker
from ..llm import Endpoint
from ..profile import FULL_PROFILE, PromptProfile
from ..rules import ProjectRules

__all__ = ["TurnSetup", "history_for_model"]


@dataclass(frozen=True)
class TurnSetup:
    """What a turn (chat reply or agent turn) starts from, once the user's message is accepted."""

    notebook: str  # normalised
    chat_id: str
    model_name: str
    endpoint: Endpoint
    #: The user's message, redacted.
    message: str
    #: The context text for the model (assembled within the budget, redacted), or None.
    context: str | None
    #: Earlier turns of the chat for the model (:func:`history_for_model`).
    history: list[dict[str, str]]
    #: Told to the user right after ``start`` ("" if nothing).
    notice: str
    #: The model's prompt profile (``Chapyter.prompt_style``); the small one: a short system
    #: prompt, a compact context, two earlier messages and a capped answer.
    profile: PromptProfile = FULL_PROFILE
    #: The project's rules in force for the notebook (:mod:`chapyter_ext.rules`).
    rules: ProjectRules = dataclasses.field(default_factory=ProjectRules)
    #: What the request's server slash command adds to the system prompt ("" if none).
    instruction: str = ""
    #: The images attached to the message, as OpenAI ``image_url`` parts.
    images: tuple[dict[str, Any], ...] = ()

    @property
    def small(self) -> bool:
        """The small-model profile."""
        return self.profile.small

    @property
    def rules_prompt(self) -> str:
        """The rules' section of a system prompt ("" when none)."""
        return self.rules.prompt()


def _read_for_turn(
    history: HistoryWorker, notebook: str, chat_id: str | None, notebook_id: str | None
) -> tuple[str, tuple[ChatMessage, ...], str]:
    """On the history thread: the chat a message goes to, its messages, the pending notice."""
    store = history.store
    chat_id = store.resolve_chat(notebook, chat_id, notebook_id, history.exists)
    return chat_id, store.messages(notebook, chat_id), store.take_notice(notebook)


def history_for_model(messages: Sequence[ChatMessage], limit: int) -> list[dict[str, str]]:
    """Earlier turns to send with a new message: complete user/assistant pairs only.

    A question whose reply failed is left out with it, so the model sees strictly alternating
    roles (some chat templates refuse anything else); ``limit`` bounds the messages sent.
    """
    turns: list[dict[str, str]] = []
    pending: ChatMessage | None = None
    for msg in messages:
        if msg.role == "user":
            pending = msg
        elif pending is not None and msg.status != "error" and msg.content.strip():
            turns.append({"role": "user", "content": pending.content})
            turns.append({"role": "assistant", "content": msg.content})
            pending = None
        else:
            pending = None
    if limit <= 0:
        return []
    keep = turns[-limit:]
    # Never start with an assistant message cut from its question.
    return keep[1:] if keep and keep[0]["role"] == "assistant" else keep
