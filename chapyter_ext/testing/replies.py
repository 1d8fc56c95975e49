"""What the loopback OpenAI-compatible server answers and records: scripted replies and recorded
requests (see :mod:`chapyter_ext.testing.openai_server`; the answers' OpenAI shapes are
:mod:`.wire`'s)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: What the server answers when nothing was scripted: a short fenced Python block.
DEFAULT_CONTENT = '```python\nprint("hello from the fake model")\n```'


@dataclass
class Reply:
    """One scripted answer, and how to deliver it (or fail to)."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: Message of OpenAI's error JSON, sent when ``status`` is not 200.
    error: str | None = None
    #: Characters per SSE chunk when the client streams.
    chunk_size: int = 16
    #: Seconds between SSE chunks.
    chunk_delay: float = 0.0
    #: Seconds before answering at all (for client timeouts).
    delay: float = 0.0
    #: Close the socket after this many content chunks: a stream cut mid-way.
    cut_after: int | None = None
    #: Sent verbatim with ``status`` and ``application/json`` (invalid JSON tests), streaming or
    #: not; a ``Content-Type`` in ``headers`` overrides the type (e.g. a proxy's HTML page).
    raw_body: str | None = None
    #: Close the connection without any response.
    drop: bool = False
    #: ``error.code`` of the error JSON (e.g. ``insufficient_quota``); derived from status if None.
    error_code: str | None = None
    #: Function calls to make: ``[{"name": str, "arguments": dict | str, "id"?: str}]``, served
    #: as the message's ``tool_calls`` (streamed as ``delta.tool_calls`` chunks) with
    #: finish_reason ``tool_calls``; ``content`` (if any) is the prose before them. A str
    #: ``arguments`` is sent verbatim (invalid JSON tests).
    tool_calls: list[dict[str, Any]] | None = None
    #: Answer 400 "tools are not supported" to a request that has ``tools``, as servers without
    #: function calling do; a request without them gets the reply as usual (a scripted reply
    #: stays queued until then).
    reject_tools: bool = False
    #: ``error.type`` of the error JSON (e.g. LiteLLM's ``budget_exceeded``); derived from
    #: status if None.
    error_type: str | None = None
    #: The ``usage`` reported (``prompt_tokens``, ``completion_tokens``); None: an estimate of
    #: four characters per token. Streams report it only when the request asks
    #: (``stream_options.include_usage``), in a last chunk without choices, as OpenAI does.
    usage: dict[str, int] | None = None

    def __post_init__(self) -> None:
        for call in self.tool_calls or []:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ValueError('each tool call needs {"name": str, "arguments": dict | str}')
            if not isinstance(call.get("arguments", {}), (dict, str)):
                raise ValueError("tool call arguments must be a dict or a JSON string")
            unknown = sorted(set(call) - {"name", "arguments", "id"})
            if unknown:
                raise ValueError(f"unknown tool call fields: {', '.join(unknown)}")

    @classmethod
    def budget_exceeded(cls, spent: float = 10.0124, limit: float = 10.0) -> Reply:
        """The refusal of a LiteLLM proxy whose key has spent its ``max_budget``."""
        return cls(
            status=400,
            error=f"Budget has been exceeded! Current cost: {spent}, Max budget: {limit}",
            error_type="budget_exceeded",
            error_code="400",
        )

    @classmethod
    def coerce(cls, value: Reply | str | dict[str, Any]) -> Reply:
        """A Reply from a Reply, a plain string (the content) or a dict of fields (JSON)."""
        if isinstance(value, Reply):
            return value
        if isinstance(value, str):
            return cls(content=value)
        if isinstance(value, dict):
            known = {f.name for f in fields(cls)}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"unknown Reply fields: {', '.join(unknown)}")
            return cls(**value)
        raise TypeError(f"expected a Reply, str or dict, not {type(value).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain JSON-ready data."""
        return asdict(self)


@dataclass
class RecordedRequest:
    """A request the server received on ``/v1``, and what it did about it."""

    method: str
    path: str
    #: Header names lower-cased.
    headers: dict[str, str]
    #: The parsed JSON body, or None (no body or not JSON).
    body: Any
    #: The reply that served it (None for requests that are not chat completions).
    reply: Reply | None = None
    #: Where the reply came from: ``route:<when>``, ``script`` or ``default``.
    source: str | None = None
    #: SSE content chunks written successfully.
    chunks_sent: int = 0
    #: True when the client went away while the server was still writing.
    disconnected: bool = False
    #: Wall-clock time (``time.time()``, epoch seconds) at which the first SSE content chunk was
    #: written, or None: lets a benchmark in another process time from the model's first byte.
    first_chunk_at: float | None = None

    @property
    def model(self) -> str | None:
        """The ``model`` of the JSON body, if any."""
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` of the JSON body ([] if none)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as ``GET /_control/requests`` returns it."""
        data = asdict(self)
        data["reply"] = self.reply.to_dict() if self.reply else None
        return data


def last_user_text(body: Any) -> str:
    """Text of the last ``user`` message of a chat request ('' if none), parts joined."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # multimodal form: [{"type": "text", "text": ...}]
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content if isinstance(content, str) else ""
    return ""


def fim_text(body: Any) -> str:
    """Prompt and suffix of a ``/v1/completions`` request, joined ('' if none): what routes
    match for fill-in-the-middle."""
    if not isinstance(body, dict):
        return ""
    prompt, suffix = body.get("prompt"), body.get("suffix")
    prompt = (
        "".join(p for p in prompt if isinstance(p, str)) if isinstance(prompt, list) else prompt
    )
    return (prompt if isinstance(prompt, str) else "") + (suffix if isinstance(suffix, str) else "")
