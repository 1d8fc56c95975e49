"""What a call cost: the tokens the endpoint reports (``usage``) and their price.

Streams report usage only when asked (``stream_options={"include_usage": true}``, answered
with a last chunk that has no choices); some servers refuse that field, so a refusal that
names it is remembered per base URL and the request is sent again without it
(:func:`stream_options`, :func:`refuses_stream_options`). Prices are the administrator's
(``Chapyter.prices``, per million tokens): a model without one shows tokens only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Usage",
    "UsageMeter",
    "clean_usage",
    "cost_of",
    "refuses_stream_options",
    "stream_options",
    "sum_usage",
    "usage_line",
]

# Base URLs whose servers refused ``stream_options`` once: never sent there again.
_REFUSED: set[str] = set()
_REFUSED_LOCK = threading.Lock()
_REFUSAL_STATUSES = frozenset({400, 422})


@dataclass(frozen=True)
class Usage:
    """Tokens used by one or more calls (their sum)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def from_api(cls, value: Any) -> Usage | None:
        """The usage of an API object or dict (``usage`` of a response or chunk), else None."""
        if value is None:
            return None

        def read(name: str) -> int:
            raw = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
            return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else 0

        prompt, completion, total = (
            read("prompt_tokens"),
            read("completion_tokens"),
            read("total_tokens"),
        )
        if not (prompt or completion or total):
            return None
        return cls(prompt, completion, total or prompt + completion)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def as_dict(self, cost: float | None = None) -> dict[str, Any]:
        """The wire and history form: token counts, and ``cost`` when a price is known."""
        data: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if cost is not None:
            data["cost"] = round(cost, 8)
        return data


def cost_of(usage: Usage, model: str, prices: Mapping[str, Any]) -> float | None:
    """The price of ``usage`` for ``model`` (USD), from ``{model: {"input": x, "output": y}}``
    per million tokens; None when the administrator set no price for it."""
    price = prices.get(model) if prices else None
    if not isinstance(price, Mapping):
        return None
    rates = [price.get("input", 0.0), price.get("output", 0.0)]
    if not all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in rates):
        return None
    return (usage.prompt_tokens * rates[0] + usage.completion_tokens * rates[1]) / 1_000_000


def usage_line(usage: Usage, cost: float | None = None) -> str:
    """One short line: ``1,234 tokens (1,000 in, 234 out), $0.0012``."""
    line = (
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} in, "
        f"{usage.completion_tokens:,} out)"
    )
    return line + (f", ${cost:.4f}" if cost is not None else "")


def stream_options(base_url: str) -> dict[str, Any]:
    """The request field that asks a stream for its usage, unless this server refused it."""
    with _REFUSED_LOCK:
        refused = base_url in _REFUSED
    return {} if refused else {"stream_options": {"include_usage": True}}


def refuses_stream_options(exc: BaseException, base_url: str, params: Mapping[str, Any]) -> bool:
    """Whether ``exc`` is the endpoint refusing ``stream_options`` that ``params`` carried; if
    so it is remembered, and the caller sends the request again without it."""
    if "stream_options" not in params:
        return False
    if getattr(exc, "status_code", None) not in _REFUSAL_STATUSES:
        return False
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else body
    said = f"{message if isinstance(message, str) else ''} {getattr(exc, 'message', '')}"
    if "stream_options" not in said and "include_usage" not in said:
        return False
    with _REFUSED_LOCK:
        _REFUSED.add(base_url)
    return True


class UsageMeter:
    """The usage of one turn (a chat reply, an agent turn of several calls) and its cost."""

    def __init__(self, prices: Mapping[str, Any] | None, model: str) -> None:
        self.prices = prices or {}
        self.model = model
        self.total: Usage | None = None

    def add(self, usage: Usage | None) -> None:
        """Count one call's usage (None: the endpoint reported none)."""
        if usage is not None:
            self.total = usage if self.total is None else self.total + usage

    def as_dict(self) -> dict[str, Any] | None:
        """The wire and history form, with ``cost`` when the model has a price; None if no
        call reported usage."""
        if self.total is None:
            return None
        return self.total.as_dict(cost_of(self.total, self.model, self.prices))


def clean_usage(value: Any) -> dict[str, Any] | None:
    """A stored or sent usage record, checked: token counts (whole, not negative) and an
    optional ``cost``; None when it is missing or unreadable."""
    if not isinstance(value, Mapping):
        return None
    usage = Usage.from_api(value)
    if usage is None:
        return None
    cost = value.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        return usage.as_dict(float(cost))
    return usage.as_dict()


def sum_usage(records: Iterable[Any]) -> dict[str, Any] | None:
    """The sum of usage records (e.g. every reply of a notebook's chats); ``cost`` sums the
    records that have one. None when none has usage."""
    total: Usage | None = None
    cost: float | None = None
    for record in records:
        clean = clean_usage(record)
        if clean is None:
            continue
        usage = Usage.from_api(clean)
        assert usage is not None
        total = usage if total is None else total + usage
        if "cost" in clean:
            cost = (cost or 0.0) + clean["cost"]
    return total.as_dict(cost) if total is not None else None
