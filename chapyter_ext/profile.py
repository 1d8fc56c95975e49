"""The prompt profile: what a model gets, asked by every feature instead of branching on it.

``Chapyter.prompt_style`` picks it ('auto': the small profile for the bundled model, known by
its name; 'small'; 'full'). ``%%ai``, the chat, Fix and the agent ask :func:`prompt_profile`
once and read their budgets from the :class:`PromptProfile`: a compact kernel summary with no
cell history, fewer rules and earlier messages, a capped answer. Each feature owns its prompts,
full and small, and lets the profile pick (:meth:`PromptProfile.pick`). The small profile's
candidates (several answers, each checked, the first one greedy and the others hotter) are
sampled here too, so that ``%%ai`` and Fix sample alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from .help_pointers import ENDPOINTS_HINT
from .local_model.server import is_bundled_model

if TYPE_CHECKING:
    from .llm import Endpoint

__all__ = [
    "CANDIDATES",
    "FULL_PROFILE",
    "SMALL_PROFILE",
    "PromptProfile",
    "candidate_request",
    "failed_message",
    "prompt_profile",
    "uses_small_prompt",
]

T = TypeVar("T")

#: Candidates asked for before giving up; the first greedy (temperature 0).
CANDIDATES = 3
#: The temperatures of the later candidates: a different answer, not the same mistake.
_HOTTER = (0.6, 0.9)
#: Characters of kernel summary sent to a small model: the variables the request names first.
SMALL_CONTEXT_BUDGET = 900
#: Longest chat reply from a small model (it rambles on, and each token costs on a laptop).
SMALL_CHAT_MAX_TOKENS = 256
#: Earlier chat messages sent to a small model: its window is small and it repeats old turns.
SMALL_CHAT_HISTORY = 2
#: Characters of project rules sent to a small model, whatever ``Chapyter.rules_chars`` says.
SMALL_RULES_CHARS = 600

#: Where the failure message points (in words: a path cannot be clicked in an output).
README_ENDPOINTS = ENDPOINTS_HINT


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

    #: The small-model profile.
    small: bool = False

    def pick(self, full: T, small: T) -> T:
        """The feature's ``full`` or ``small`` variant (a prompt, a grammar, a check)."""
        return small if self.small else full

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


#: The full profile: the configured budgets as they are.
FULL_PROFILE = PromptProfile()
#: The small-model profile, for the paths only a small model takes.
SMALL_PROFILE = PromptProfile(small=True)


def prompt_profile(style: str, model: str) -> PromptProfile:
    """The profile for ``model`` under the ``prompt_style`` setting ``style``."""
    return PromptProfile(small=uses_small_prompt(style, model))


def failed_message(problem: str = "", *, what: str = "write this") -> str:
    """The one line shown when no candidate passed; ``problem`` is the last one's."""
    why = f" (last try: {problem})" if problem else ""
    return (
        f"the small local model could not {what}{why}; configure an endpoint for harder "
        f"requests ({README_ENDPOINTS})"
    )


def candidate_request(
    endpoint: Endpoint, index: int, *, grammar: str, max_tokens: int
) -> tuple[Endpoint, dict | None]:
    """Where and how to ask for candidate ``index`` (0-based): the endpoint with that
    candidate's temperature and the length cap (``max_tokens``), and the request's
    ``extra_body`` (the feature's ``grammar`` and the candidate's seed when the endpoint is
    the bundled model's llama.cpp server)."""
    # The first is the model's most likely answer; the others sample around it.
    temperature = _HOTTER[min(index, len(_HOTTER)) - 1] if index else 0.0
    capped = dataclasses.replace(
        endpoint, temperature=temperature, max_tokens=min(endpoint.max_tokens, max_tokens)
    )
    # A fixed seed per candidate: the same request in the same kernel gets the same answers.
    extra = {"grammar": grammar, "seed": index} if is_bundled_model(endpoint.model) else None
    return capped, extra
