"""Where and how to ask (:class:`Endpoint`) and what came back (:class:`Completion`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from ..config import Chapyter
    from .usage import Usage


@dataclass(frozen=True, repr=False)
class Endpoint:
    """Where and how to ask: a base URL, the protocol spoken there, a key and sampling
    settings."""

    base_url: str
    api_key: str = field(default="", repr=False)
    model: str = "gpt-4o-mini"
    temperature: float = 0.2
    max_tokens: int = 2048
    timeout: float = 60.0
    max_retries: int = 2
    extra_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: The wire protocol, the name of a backend (:mod:`.backend`): ``openai`` (chat
    #: completions, any compatible server) or ``anthropic`` (the Messages API), or one that
    #: another package registers.
    protocol: str = "openai"

    @classmethod
    def from_settings(cls, settings: Chapyter, *, model: str | None = None) -> Endpoint:
        """The endpoint described by a ``Chapyter`` settings object (``model`` overrides)."""
        key = settings.api_key
        if key.startswith("chapyter-kernel-") and not settings.served:
            key = ""  # the server route's credential goes to that route only
        return cls(
            base_url=settings.effective_base_url,
            api_key=key,
            model=model or settings.model,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            extra_headers=tuple(sorted(settings.extra_headers.items())),
        )

    def __repr__(self) -> str:
        # Never the key, the header values or the password of a user:password@ URL.
        return (
            f"Endpoint(host={self.host!r}, model={self.model!r}, "
            f"temperature={self.temperature!r}, max_tokens={self.max_tokens!r}, "
            f"timeout={self.timeout!r}, max_retries={self.max_retries!r}"
            + (f", protocol={self.protocol!r})" if self.protocol != "openai" else ")")
        )

    @property
    def host(self) -> str:
        """Host (and port) of the base URL: safe to show, unlike userinfo or the key."""
        parts = urlsplit(self.base_url)
        if not parts.hostname:
            return "?"
        try:
            port = parts.port
        except ValueError:
            port = None
        name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # IPv6
        return name + (f":{port}" if port else "")

    @property
    def is_openai(self) -> bool:
        """True for OpenAI's own API, which always needs a key."""
        hostname = urlsplit(self.base_url).hostname or ""
        return hostname == "api.openai.com" or hostname.endswith(".api.openai.com")


@dataclass
class Completion:
    """A finished answer."""

    text: str
    model: str
    attempts: int
    finish_reason: str | None
    elapsed: float
    #: Tokens the endpoint reported (None if it reported none).
    usage: Usage | None = None
