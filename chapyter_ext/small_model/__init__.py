"""Making a small model (the bundled SmolLM2-135M) write code that runs.

A prompt profile of its own (a short system prompt, worked request → code examples as earlier
turns, a compact kernel summary with no cell history to echo), a llama.cpp grammar that makes
the answer exactly one ```python block, a cap on its length, and a check of each candidate
(it parses, the names it reads exist, the DataFrame columns it reads exist, it does not
re-create existing data with sample values) before it is accepted; up to :data:`CANDIDATES`
are sampled, hotter each time. Pure functions: the ``%%ai`` magic drives the loop.
"""

from ..guards import Candidate, check_candidate, requested_target
from .code_prompt import (
    CANDIDATES,
    CODE_GRAMMAR,
    N_EXAMPLES,
    README_ENDPOINTS,
    SMALL_CHAT_HISTORY,
    SMALL_CHAT_MAX_TOKENS,
    SMALL_CHAT_SYSTEM_PROMPT,
    SMALL_CONTEXT_BUDGET,
    SMALL_MAX_TOKENS,
    SMALL_SYSTEM_PROMPT,
    build_small_messages,
    candidate_request,
    failed_message,
    pick_examples,
)
from .profile import FULL_PROFILE, SMALL_PROFILE, PromptProfile, prompt_profile, uses_small_prompt

__all__ = [
    "CANDIDATES",
    "CODE_GRAMMAR",
    "FULL_PROFILE",
    "N_EXAMPLES",
    "README_ENDPOINTS",
    "SMALL_CHAT_HISTORY",
    "SMALL_CHAT_MAX_TOKENS",
    "SMALL_CHAT_SYSTEM_PROMPT",
    "SMALL_CONTEXT_BUDGET",
    "SMALL_MAX_TOKENS",
    "SMALL_PROFILE",
    "SMALL_SYSTEM_PROMPT",
    "Candidate",
    "PromptProfile",
    "build_small_messages",
    "candidate_request",
    "check_candidate",
    "failed_message",
    "pick_examples",
    "prompt_profile",
    "requested_target",
    "uses_small_prompt",
]
