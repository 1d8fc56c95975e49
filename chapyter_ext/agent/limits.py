"""How far one agent turn may go (:class:`AgentLimits`), the approval policy it runs under
(:func:`turn_policy`), and the lines that say so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..guards import review_first
from ..help_pointers import ENDPOINTS_HINT

__all__ = ["POLICIES", "AgentLimits", "small_model_notice", "time_cap_line", "turn_policy"]

POLICIES = ("ask", "risky", "never")


@dataclass(frozen=True)
class AgentLimits:
    """How far one turn may go: steps (runs and reads), seconds, and the characters of one
    result shown to the model."""

    max_steps: int = 10
    time_limit: float = 300.0
    result_chars: int = 4000

    @classmethod
    def from_settings(cls, settings: Any, *, small: bool = False) -> AgentLimits:
        """The limits set on a ``Chapyter`` settings object; ``small`` (the small-model
        profile, the bundled model): at most ``agent_local_max_steps`` steps."""
        steps = settings.agent_max_steps
        if small:
            steps = min(steps, settings.agent_local_max_steps)
        return cls(
            max_steps=steps,
            time_limit=settings.agent_time_limit,
            result_chars=settings.agent_result_chars,
        )


def turn_policy(policy: str, settings: Any, *, local: bool) -> str:
    """The approval policy a turn runs under: ``policy``, except that the bundled model's
    code waits for the user's review (``ask``) unless ``Chapyter.local_review`` is off."""
    return "ask" if review_first(settings, local=local) else policy


def small_model_notice(model: str, limits: AgentLimits, *, review: bool) -> str:
    """What to expect of agent mode with the bundled model, said at the start of a turn."""
    steps = "one step" if limits.max_steps == 1 else f"{limits.max_steps} simple steps"
    wait = ", each waits for your review (setting: Local review)" if review else ""
    return (
        f"Agent mode with {model}, the tiny bundled model: expect at most {steps}{wait}; it "
        f"often cannot finish. Configure an endpoint for real analysis ({ENDPOINTS_HINT})."
    )


def time_cap_line(limit: float) -> str:
    """The one line of a turn stopped by its time cap."""
    return f"Stopped after {limit:g} s (setting: Agent time limit)."
