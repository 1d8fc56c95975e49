"""Which prompt profile a model gets, and everything the small one changes.

``Chapyter.prompt_style`` picks it ('auto': the small profile for the bundled model, known by
its name; 'small'; 'full'). ``%%ai``, the chat, Fix and the agent ask :func:`prompt_profile`
once and read their budgets from the :class:`PromptProfile`, instead of each branching on the
model: a short system prompt, a compact kernel summary with no cell history, fewer rules and
earlier messages, a capped answer.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..local_model.server import is_bundled_model
from .code_prompt import (
    SMALL_CHAT_HISTORY,
    SMALL_CHAT_MAX_TOKENS,
    SMALL_CHAT_SYSTEM_PROMPT,
    SMALL_CONTEXT_BUDGET,
    SMALL_RULES_CHARS,
)

if TYPE_CHECKING:
    from ..llm import Endpoint

__all__ = ["FULL_PROFILE", "SMALL_PROFILE", "PromptProfile", "prompt_profile", "uses_small_prompt"]


def uses_small_prompt(style: str, model: str) -> bool:
    """Whether ``model`` gets the small-model profile: ``style`` is the ``prompt_style``
    setting ('auto': only the bundled local model)."""
    if style == "small":
        return True
    if style == "full":
        return False
    return is_bundled_model(model)


@dataclass(frozen=True)
class PromptProfile:
    """The budgets of one request: the configured ones, cut down for a small model."""

    #: The small-model profile (:mod:`chapyter_ext.small_model`).
    small: bool = False

    def context_budget(self, budget: int) -> int:
        """Characters of kernel or notebook context sent, for the configured ``budget``."""
        return min(budget, SMALL_CONTEXT_BUDGET) if self.small else budget

    def rules_chars(self, chars: int) -> int:
        """Characters of project rules sent, for the configured ``chars``."""
        return min(chars, SMALL_RULES_CHARS) if self.small else chars

    @property
    def recent_cells(self) -> int | None:
        """Recent cells in the kernel's context: none for a small model (it echoes them back),
        else None (the context's own default)."""
        return 0 if self.small else None

    def chat_history(self, sent: int) -> int:
        """Earlier chat messages sent, for the configured ``sent``."""
        return SMALL_CHAT_HISTORY if self.small else sent

    def chat_endpoint(self, endpoint: Endpoint) -> Endpoint:
        """``endpoint`` with a chat reply's length capped for a small model."""
        if not self.small:
            return endpoint
        return dataclasses.replace(
            endpoint, max_tokens=min(endpoint.max_tokens, SMALL_CHAT_MAX_TOKENS)
        )

    def chat_system_prompt(self, full: str) -> str:
        """The chat's system prompt: ``full``, or the small model's short one."""
        return SMALL_CHAT_SYSTEM_PROMPT if self.small else full


#: The full profile: the configured budgets as they are.
FULL_PROFILE = PromptProfile()
#: The small-model profile, for the paths only a small model takes.
SMALL_PROFILE = PromptProfile(small=True)


def prompt_profile(style: str, model: str) -> PromptProfile:
    """The profile for ``model`` under the ``prompt_style`` setting ``style``."""
    return PromptProfile(small=uses_small_prompt(style, model))
