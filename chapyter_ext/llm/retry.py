"""THE retry policy, for every call to an endpoint: 429s, 5xx and dropped connections are
retried (the server's Retry-After, else exponential backoff, both capped) until ``max_retries``
is used up or text has reached the caller, since a retry would repeat it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .endpoint import Endpoint
from .errors import to_llm_error

__all__ = [
    "BACKOFF_BASE",
    "MAX_RETRY_WAIT",
    "CallbackError",
    "Progress",
    "wait_or_raise",
    "with_retries",
]

log = logging.getLogger("chapyter_ext.llm")

T = TypeVar("T")

#: Seconds before the first retry when the server gives no Retry-After.
BACKOFF_BASE = 0.5
#: Cap on a server's Retry-After: longer than this feels like a hang.
MAX_RETRY_WAIT = 30.0


@dataclass
class Progress:
    """What one attempt got before it ended: decides whether a retry is still safe."""

    chunks: int = 0
    text: list[str] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def delivered(self) -> bool:
        return bool(self.text)


class CallbackError(Exception):
    """Carries an exception raised by the caller's on_token past our error mapping."""


def with_retries(
    endpoint: Endpoint, attempt: Callable[[Progress], T], *, what: str
) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds or fails for good; returns (result, attempts)."""
    attempts = 0
    while True:
        attempts += 1
        progress = Progress()
        try:
            return attempt(progress), attempts
        except CallbackError as wrapped:
            original = wrapped.__cause__  # the caller's own bug: not ours to relabel
            assert original is not None
            raise original from original.__cause__
        except Exception as exc:
            time.sleep(wait_or_raise(exc, endpoint, attempts, progress, what=what))


def wait_or_raise(
    exc: Exception, endpoint: Endpoint, attempts: int, progress: Progress, *, what: str = "chat"
) -> float:
    """THE retry policy, for every loop: seconds to wait before attempt ``attempts + 1``, or
    raise the :class:`LLMError` for ``exc`` when it is final.

    Final: an error that is not transient (only 429s, 5xx and dropped connections are), text
    that already reached the caller (a retry would repeat it), or ``max_retries`` used up.
    The wait is the server's Retry-After if it sent one, else exponential backoff; both capped.
    """
    err = to_llm_error(exc, endpoint, attempts=attempts, progress=progress, what=what)
    if not err.retryable or progress.delivered or attempts > endpoint.max_retries:
        raise err from None
    if err.retry_after is not None:
        wait = min(max(err.retry_after, 0.0), MAX_RETRY_WAIT)
    else:
        wait = min(BACKOFF_BASE * 2 ** (attempts - 1), MAX_RETRY_WAIT)
    log.debug("retrying %s in %.2f s (%s)", endpoint.host, wait, err.kind)
    return wait
