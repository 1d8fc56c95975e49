"""The model client: sync and async, streaming, retries and one-line typed errors.

Works with any server that speaks OpenAI's chat completions API (OpenAI, Ollama, vLLM, LM Studio,
llama.cpp, OpenRouter, ...) through the ``openai`` backend (:mod:`.openai_backend`), and with
Anthropic's Messages API through the ``anthropic`` one (:mod:`.anthropic_backend`); an endpoint
names its ``protocol`` and :mod:`.backend` finds the backend by entry point. The internal message
shape is OpenAI's whatever the backend. SDKs are imported on first use, not on import, so that
``%load_ext chapyter_ext`` stays fast. The SDK's own retries are off (``max_retries=0``): we
retry ourselves (:mod:`.retry`) so that we know how many attempts a call took and never retry
once text has reached the caller. Every request goes through :mod:`.calls` (the one call path);
every failure leaves this package as an :class:`LLMError` (:mod:`.errors`); the pooled SDK
clients live in :mod:`.clients`, tool calls in :mod:`.tool_calls`, tokens and cost in
:mod:`.usage`.
"""

from __future__ import annotations

from .backend import Backend, backend_for, protocols
from .calls import (
    StepDelta,
    StepReply,
    alist_models,
    astream,
    astream_fim,
    astream_step,
    complete,
    complete_step,
    list_models,
)
from .clients import aclose_clients, close_clients
from .endpoint import Completion, Endpoint
from .errors import ERROR_KINDS, LLMError
from .tool_calls import ToolCall
from .usage import Usage, cost_of, usage_line

__all__ = [
    "ERROR_KINDS",
    "Backend",
    "Completion",
    "Endpoint",
    "LLMError",
    "StepDelta",
    "StepReply",
    "ToolCall",
    "Usage",
    "aclose_clients",
    "alist_models",
    "astream",
    "astream_fim",
    "astream_step",
    "backend_for",
    "close_clients",
    "complete",
    "complete_step",
    "cost_of",
    "list_models",
    "protocols",
    "usage_line",
]
