"""Every failure of a call as one :class:`LLMError` line: what went wrong, what to do next.

Classification is deliberately broad (the SDK's classes vary across versions, and a broken body
can surface from httpx, json, pydantic or elsewhere); failures that never left this process
(a bad setting, text that cannot be encoded) are named as ours, not blamed on the endpoint.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import re
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .endpoint import Endpoint

log = logging.getLogger("chapyter_ext.llm")

#: Every ``LLMError.kind``, for callers that map kinds to UI (icons, hints).
ERROR_KINDS = frozenset(
    {
        "no_key",
        "auth",
        "permission",
        "not_found",
        "bad_request",
        "rate_limit",
        "budget",
        "server",
        "connection",
        "timeout",
        "stream_cut",
        "bad_response",
        "empty",
    }
)
_RETRYABLE_KINDS = frozenset({"rate_limit", "server", "connection", "stream_cut"})
_DETAIL_CHARS = 160
# How gateways that issue per-user keys (LiteLLM proxy and the like) and OpenAI say that a
# key's money, not its rate, is used up: waiting a minute does not help.
_BUDGET_TYPES = frozenset({"budget_exceeded", "insufficient_quota"})
# Their words when no type says it (a 400 about "budget_tokens" is not one of these).
_BUDGET_WORDS = (
    "budget has been exceeded",
    "exceededbudget",
    "over budget",
    "insufficient_quota",
    "exceeded your current quota",
    "out of credits",
)
_BUDGET_STATUSES = frozenset({400, 402, 403, 429})


class LLMError(Exception):
    """A failed call to the model, as one line: what went wrong and what to do next."""

    kind: str
    status: int | None

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        message = " ".join(message.split())  # one line, whatever went in
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.message = message
        self.retry_after: float | None = None
        self.retryable = kind in _RETRYABLE_KINDS
        #: The endpoint refused the request's ``tools`` (function calling): ask without them.
        self.tools_rejected = False

    def __repr__(self) -> str:
        return f"LLMError({self.kind!r}, {self.message!r}, status={self.status!r})"


def check_request(endpoint: Endpoint, messages: list[dict]) -> None:
    """Refuse, before anything is sent, a request that could never leave this process intact.

    Such a failure is ours (a setting, or text that cannot be encoded), and saying so beats the
    SDK's view of it: a 0 s timeout looks like an endpoint that never answers, and a lone
    surrogate like a broken body.
    """
    from ..config import check_setting

    for name in ("base_url", "api_key", "temperature", "max_tokens", "timeout", "max_retries"):
        problem = check_setting(name, getattr(endpoint, name))
        if problem:
            raise LLMError(
                "bad_request",
                f"Nothing was sent to {endpoint.host}: the setting {name} {problem} "
                f"(%config Chapyter.{name}).",
            )
    problem = check_setting("extra_headers", endpoint.extra_headers)
    if problem:
        raise LLMError(
            "bad_request",
            f"Nothing was sent to {endpoint.host}: Chapyter.extra_headers {problem}.",
        )
    for number, message in enumerate(messages, 1):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            continue
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as err:
            char = content[err.start]
            raise LLMError(
                "bad_request",
                f"Nothing was sent to {endpoint.host}: message {number} of the request holds "
                f"U+{ord(char):04X} at character {err.start}, a lone surrogate that UTF-8 "
                "cannot encode (often text decoded with errors='surrogateescape'). Remove it "
                "and try again.",
            ) from None


# -- errors ------------------------------------------------------------------------------------


def to_llm_error(
    exc: BaseException, endpoint: Endpoint, *, attempts: int, progress: Any, what: str
) -> LLMError:
    """Classify any failure of one attempt. The SDK's classes vary across versions, and a broken
    body can surface from httpx2, json, pydantic or elsewhere, so this is deliberately broad."""
    if isinstance(exc, LLMError):
        return exc
    log.debug("LLM call to %s failed: %s", endpoint.host, type(exc).__name__)
    import openai

    endpoint = relayed_endpoint(exc, endpoint)
    host = endpoint.host
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APIStatusError) and isinstance(status, int):
        err = _status_error(exc, status, endpoint, tries=tries, what=what)
        err.retry_after = _retry_after(exc)
        return err
    if isinstance(exc, openai.APITimeoutError) or _is_timeout(exc):
        if progress.chunks:
            return LLMError(
                "timeout",
                f"The endpoint {host} went silent mid-answer for more than {endpoint.timeout:g} s. "
                "Try again, or raise %config Chapyter.timeout.",
            )
        return LLMError(
            "timeout",
            f"No answer from {host} within {endpoint.timeout:g} s. "
            "Try again, or raise %config Chapyter.timeout.",
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return bad_response(endpoint, "a body that does not fit the API")
    if isinstance(exc, openai.APIConnectionError) or _is_connection_error(exc):
        if progress.chunks:
            got = f" after {sum(map(len, progress.text))} characters" if progress.text else ""
            return LLMError(
                "stream_cut",
                f"The connection to {host} dropped mid-answer{got}{tries}. Run the request again.",
            )
        return LLMError(
            "connection",
            f"Could not reach {host}{tries}. Check that the server is running and that "
            "%config Chapyter.base_url is right.",
        )
    if isinstance(exc, openai.APIError):
        # An error event inside a 200 stream: the server gave up after starting to answer.
        detail = _detail(getattr(exc, "body", None), endpoint)
        return LLMError(
            "server", f"The endpoint {host} reported an error mid-answer{detail}. Try again."
        )
    if isinstance(exc, UnicodeEncodeError):
        # Raised while encoding our own request (a header or the body): nothing reached the
        # endpoint, so it must not be blamed.
        return LLMError(
            "bad_request",
            f"Nothing was sent to {host}: the request holds text that cannot be encoded "
            f"({exc.encoding} cannot encode U+{ord(exc.object[exc.start]):04X}). Check the "
            "request, Chapyter.api_key and Chapyter.extra_headers for unusual characters.",
        )
    if isinstance(exc, (ValueError, TypeError, AttributeError, KeyError, IndexError)):
        # json.JSONDecodeError, pydantic's ValidationError and UnicodeDecodeError are ValueErrors.
        return bad_response(endpoint, "invalid JSON" if _is_json_error(exc) else "a broken body")
    return bad_response(endpoint, f"something unexpected ({type(exc).__name__})")


def status_error(
    exc: Any, status: int, endpoint: Endpoint, *, attempts: int, what: str
) -> LLMError:
    """The :class:`LLMError` of an HTTP error ``status``, for a backend whose SDK is not
    OpenAI's: ``exc.body`` is the error object (``message``, ``type``), ``exc.response`` the
    response (its Retry-After)."""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    err = _status_error(exc, status, endpoint, tries=tries, what=what)
    err.retry_after = _retry_after(exc)
    return err


#: The header the Jupyter server's model route names the endpoint it relayed to with
#: (``chapyter_ext.server.model_proxy``), and what a host may look like there.
RELAYED_HEADER = "x-chapyter-endpoint"
_HOST = re.compile(r"[A-Za-z0-9.\-\[\]:]{1,255}")


def relayed_endpoint(exc: BaseException, endpoint: Endpoint) -> Endpoint:
    """``endpoint`` as the error names it: where the server's model route relayed the request
    (a kernel's errors name the real endpoint, not its own Jupyter server), else itself."""
    if not endpoint.base_url.rstrip("/").endswith("/chapyter-ext/v1"):
        return endpoint
    headers = getattr(getattr(exc, "response", None), "headers", None)
    relayed = headers.get(RELAYED_HEADER, "") if headers is not None else ""
    if not isinstance(relayed, str) or not _HOST.fullmatch(relayed):
        return endpoint
    return dataclasses.replace(endpoint, base_url=f"http://{relayed}/")


def _status_error(exc: Any, status: int, endpoint: Endpoint, *, tries: str, what: str) -> LLMError:
    host, model = endpoint.host, endpoint.model
    body = getattr(exc, "body", None)
    detail = _detail(body, endpoint)
    if _is_budget_refusal(body, status):
        return LLMError(
            "budget",
            f"Your budget at {host} is used up (HTTP {status}){detail or ': ' + _QUOTA}. "
            "Ask your administrator to raise it, or wait until it resets.",
            status=status,
        )
    if status == 401:
        return LLMError(
            "auth",
            f"The endpoint {host} rejected the API key (HTTP 401). "
            "Set OPENAI_API_KEY or %config Chapyter.api_key.",
            status=status,
        )
    if status == 403:
        return LLMError(
            "permission",
            f"The endpoint {host} refused access (HTTP 403){detail}. "
            f"Check that the API key may use model '{model}'.",
            status=status,
        )
    if status == 404:
        target = f"Model '{model}'" if what == "chat" else "The models list"
        return LLMError(
            "not_found",
            f"{target} was not found at {host} (HTTP 404){detail}. Check %config Chapyter.model "
            "and Chapyter.base_url (it usually ends in /v1).",
            status=status,
        )
    if status == 429:
        # The detail names the limit a gateway enforces (e.g. LiteLLM's "max rpm: 10").
        return LLMError(
            "rate_limit",
            f"The endpoint {host} is rate-limiting requests (HTTP 429){tries}{detail}. "
            "Wait a minute and try again.",
            status=status,
        )
    if status >= 500:
        return LLMError(
            "server",
            f"The endpoint {host} failed with HTTP {status}{tries}{detail}. Try again later.",
            status=status,
        )
    if status == 408:
        return LLMError(
            "timeout",
            f"The endpoint {host} timed out the request (HTTP 408). Try again.",
            status=status,
        )
    if 400 <= status < 500:
        return LLMError(
            "bad_request",
            f"The endpoint {host} rejected the request (HTTP {status}){detail}. "
            "Check %config Chapyter.model and Chapyter.max_tokens.",
            status=status,
        )
    return LLMError(
        "bad_response", f"The endpoint {host} answered with HTTP {status}.", status=status
    )


_QUOTA = "the quota of this API key is used up"


def _is_budget_refusal(body: Any, status: int) -> bool:
    """A refusal because the key's budget or quota is spent (LiteLLM's ``budget_exceeded``,
    OpenAI's ``insufficient_quota``, HTTP 402), as opposed to a rate limit."""
    if status == 402:
        return True
    if status not in _BUDGET_STATUSES or not isinstance(body, dict):
        return False
    if body.get("type") in _BUDGET_TYPES or body.get("code") in _BUDGET_TYPES:
        return True
    message = body.get("message")
    said = message.lower() if isinstance(message, str) else ""
    return any(word in said for word in _BUDGET_WORDS)


def bad_response(endpoint: Endpoint, what: str) -> LLMError:
    return LLMError(
        "bad_response",
        f"The endpoint {endpoint.host} sent {what} instead of an OpenAI-style response. "
        "Check that %config Chapyter.base_url points at an OpenAI-compatible API "
        "(usually ending in /v1).",
    )


def empty_error(endpoint: Endpoint, finish_reason: str | None) -> LLMError:
    why = {
        "length": " (it hit the token limit: raise %config Chapyter.max_tokens)",
        "content_filter": " (its content filter stopped it)",
    }.get(finish_reason or "", "")
    return LLMError(
        "empty",
        f"Model '{endpoint.model}' at {endpoint.host} returned an empty answer{why}. "
        "Rephrase the request or try another model.",
    )


def _detail(body: Any, endpoint: Endpoint) -> str:
    """': <server's error message>' from an OpenAI-shaped error body, scrubbed; else ''.

    Only JSON messages are used (never an HTML page), cut short, with anything that could be
    the key or an extra header value removed: servers echo keys back in their messages.
    """
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message.strip():
        return ""
    from ..redact import Redactor

    redactor = Redactor([endpoint.api_key, *(value for _, value in endpoint.extra_headers)])
    text = redactor(" ".join(message.split()))
    if len(text) > _DETAIL_CHARS:
        text = text[: _DETAIL_CHARS - 1].rstrip() + "…"
    return f": {text.rstrip('.')}"


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, Retry-After seconds or date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - time.time()
        if seconds == seconds:  # not NaN
            return max(0.0, seconds)
    return None


def _is_timeout(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, TimeoutError) or "TimeoutException" in names


def _is_connection_error(exc: BaseException) -> bool:
    # httpx2's transport errors, anyio's EndOfStream/BrokenResourceError, and plain OSErrors.
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, (OSError, EOFError)) or bool(
        names & {"RequestError", "TransportError", "EndOfStream", "BrokenResourceError"}
    )


def _is_json_error(exc: BaseException) -> bool:
    return isinstance(exc, json.JSONDecodeError)
