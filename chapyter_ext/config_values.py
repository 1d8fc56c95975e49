"""What a setting of :class:`chapyter_ext.config.Chapyter` may hold: one check per value
(:func:`check_setting`, also for a model entry's fields and the environment's defaults), and the
trait types that keep secrets out of reprs (:class:`SecretUnicode`, :class:`SecretHeaders`)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from traitlets import Dict, TraitError, Unicode

from .redact import REDACTED

__all__ = [
    "CHECKED",
    "CHOICES",
    "URL",
    "Secret",
    "SecretHeaders",
    "SecretUnicode",
    "SecretValues",
    "check_setting",
    "from_env",
    "load_each",
]

# RFC 9110 token: what an HTTP header name may be made of.
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# What an HTTP header value may hold and still be sent as-is: visible ASCII, spaces and tabs.
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


#: Settings that take one of a few words (case-insensitive).
CHOICES = {
    "agent_policy": ("ask", "risky", "never"),
    "run_policy": ("never", "risky", "ask"),
    "tool_calling": ("auto", "on", "off"),
    "image_input": ("auto", "on", "off"),
    "prompt_style": ("auto", "full", "small"),
}


#: Help of settings declared in ``Chapyter``, which has no lines to spare.
MORE_HELP = {
    "trials": "Before model code that the static analysis cannot prove harmless runs under "
    "agent_policy or run_policy 'risky' or 'ask', run it once in a confined copy of the "
    "kernel (Linux: a fork that may not write outside a scratch folder, open sockets or "
    "start programs; it sees every variable). Under 'risky' the code then runs unasked only "
    "if the trial tried nothing and showed nothing remote; otherwise, and under 'ask', the "
    "approval lists what the trial tried and showed. With the bundled model, %%ai also tries "
    "each candidate this way and offers none that raises. False: the static analysis alone "
    "decides (and asks more).",
    "undo_turns": "Undo: the last turns (agent, %%ai) whose kernel state is kept to restore (0 "
    "to 50; 0: Undo removes cells only). Linux: a waiting copy-on-write fork of the kernel per "
    "step.",
    "undo_memory_mb": "Undo: megabytes the kept states may hold (64 to 1048576): the pages they "
    "hold that the kernel no longer shares (it changed them since), each counted once; the "
    "oldest turns are dropped first.",
}


#: The other settings :func:`check_setting` checks when they are set.
CHECKED = (
    *("model", "base_url", "api_key", "temperature", "max_tokens", "timeout", "max_retries"),
    *("extra_headers", "context_budget", "local_model_path", "fix_retries", "rules_chars"),
    *("agent_max_steps", "agent_local_max_steps", "agent_time_limit", "agent_result_chars"),
    *("prices", "trial_time_limit", "trial_memory_mb", "save_chat_max_bytes"),
    *("undo_turns", "undo_memory_mb"),
    *("completion_model", "completion_max_tokens", "completion_context_chars"),
)


class Secret(str):
    """A setting's secret value: the string itself everywhere it is used (``str()``, f-strings,
    headers, JSON), but ``<redacted>`` wherever it is only shown: its repr, which is what
    ``%config Chapyter``, ``Chapyter.class_get_help(settings)``, ``print(settings)`` and
    IPython's output of ``%config Chapyter.api_key`` print."""

    __slots__ = ()

    def __repr__(self) -> str:
        return REDACTED if self else "''"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class SecretValues(dict):
    """Extra headers: every value is shown as ``<redacted>``, even one set in place."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {REDACTED}" for k in self) + "}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class URL(str):
    """A base URL, shown without the password of its ``user:password@`` part."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(re.sub(r"(://[^/@:]*:)[^/@]*@", rf"\1{REDACTED}@", str(self)))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def _refused(trait: Any, value: Any) -> TraitError:
    # traitlets' own messages show the value's repr: a key given as bytes would be printed.
    kind = "a dict of strings" if isinstance(trait, Dict) else "a string of ASCII characters"
    return TraitError(
        f"Chapyter.{trait.name} must be {kind}, not {type(value).__name__} "
        "(the value is a secret: not shown)."
    )


class SecretUnicode(Unicode):
    """A string setting whose value is a :class:`Secret`."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, bytes):
            try:
                value = value.decode("ascii")
            except UnicodeDecodeError:
                raise _refused(self, value) from None
        if not isinstance(value, str):
            raise _refused(self, value)
        return Secret(value)


class SecretHeaders(Dict):
    """Header names to :class:`Secret` values, held in a :class:`SecretValues`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(key_trait=Unicode(), value_trait=SecretUnicode(), **kwargs)

    def validate(self, obj: Any, value: Any) -> Any:
        value = super().validate(obj, value)
        return value if value is None else SecretValues(value)

    def element_error(self, obj: Any, element: Any, validator: Any, side: str = "") -> None:
        raise _refused(self, element)

    def error(self, obj: Any, value: Any, error: Any = None, info: Any = None) -> Any:
        raise _refused(self, value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _base_url_problem(value: str) -> str | None:
    if not value:
        return None
    if not _HEADER_VALUE.match(value) or any(c.isspace() for c in value):
        return "must be a URL without spaces or control characters, e.g. http://localhost:11434/v1"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises on a port that is not a number or out of range)
    except ValueError as err:
        return f"is not a valid URL ({err}), e.g. http://localhost:11434/v1"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host, e.g. http://localhost:11434/v1"
    return None


def check_setting(name: str, value: Any) -> str | None:
    """What is wrong with ``value`` for the setting ``name`` (a ``Chapyter`` trait or an
    ``Endpoint`` field), as the end of a sentence; None when it is fine."""
    if name == "base_url":
        return _base_url_problem(value)
    if name == "api_key":
        if not _HEADER_VALUE.match(value) or any(c.isspace() for c in value):
            return "must be printable ASCII without spaces or line breaks (it is sent as a header)"
    elif name == "model":
        if not value.strip() or not value.isprintable():
            return "must be a model name: not empty, without control characters"
    elif name == "temperature":
        if not _number(value) or not math.isfinite(value) or value < 0:
            return f"must be a finite number of 0 or more (usually 0 to 2), not {value!r}"
    elif name == "timeout":
        if not _number(value) or not math.isfinite(value) or value <= 0:
            return f"must be a number of seconds above 0, not {value!r}"
    elif name == "max_tokens":
        if not _number(value) or value < 1:
            return f"must be a whole number of 1 or more, not {value!r}"
    elif name in ("max_retries", "context_budget"):
        if not _number(value) or value < 0:
            return f"must be a whole number of 0 or more, not {value!r}"
    elif name == "extra_headers":
        items = value.items() if hasattr(value, "items") else value
        for key, val in items:
            if not isinstance(key, str) or not _HEADER_NAME.match(key):
                return f"has a header name that HTTP does not allow: {key!r}"
            if not isinstance(val, str) or not _HEADER_VALUE.match(val):
                return (
                    f"has a value for {key!r} that HTTP does not allow "
                    "(line breaks, control or non-ASCII characters)"
                )
    elif name == "completion_model":
        if value and not value.isprintable():
            return "must be the name of a configured model, without control characters"
    elif name in ("completion_max_tokens", "completion_context_chars"):
        least = 1 if name == "completion_max_tokens" else 0
        if not _number(value) or value < least:
            return f"must be a whole number of {least} or more, not {value!r}"
    elif name == "prices":
        for model, price in value.items():
            rates = price.items() if isinstance(price, dict) else [("", price)]
            for key, rate in rates:
                if key not in ("input", "output") or not _number(rate) or rate < 0:
                    return (
                        f"needs {{'input': number, 'output': number}} (USD per million "
                        f"tokens, 0 or more) for each model; {model!r} has {price!r}"
                    )
    elif name == "save_chat_max_bytes":
        if not _number(value) or value < 1024:
            return "must be at least 1024"
    elif name == "local_model_path" and "\0" in value:
        return "must be a file path (it holds a NUL character)"
    elif name in ("agent_max_steps", "agent_local_max_steps"):
        if not _number(value) or not float(value).is_integer() or not 1 <= value <= 100:
            return f"must be a whole number from 1 to 100, not {value!r}"
    elif name == "undo_turns":
        if not _number(value) or not float(value).is_integer() or not 0 <= value <= 50:
            return f"must be a whole number from 0 to 50, not {value!r}"
    elif name == "fix_retries":
        if not _number(value) or not float(value).is_integer() or not 0 <= value <= 5:
            return f"must be a whole number from 0 to 5, not {value!r}"
    elif name == "trial_time_limit":
        if not _number(value) or not math.isfinite(value) or not 0.5 <= value <= 300:
            return f"must be a number of seconds from 0.5 to 300, not {value!r}"
    elif name in ("trial_memory_mb", "undo_memory_mb"):
        if not _number(value) or not float(value).is_integer() or not 64 <= value <= 1048576:
            return f"must be a whole number of megabytes from 64 to 1048576, not {value!r}"
    elif name == "agent_time_limit":
        if not _number(value) or not math.isfinite(value) or value <= 0:
            return f"must be a number of seconds above 0, not {value!r}"
    elif name == "rules_chars":
        if not _number(value) or not float(value).is_integer() or value < 0:
            return f"must be a whole number of 0 or more, not {value!r}"
    elif name == "agent_result_chars":
        if not _number(value) or not float(value).is_integer() or value < 200:
            return f"must be a whole number of 200 or more, not {value!r}"
    elif name in CHOICES and (not isinstance(value, str) or value.lower() not in CHOICES[name]):
        return f"must be one of {', '.join(CHOICES[name])}, not {value!r}"
    return None


def load_each(
    load: Callable[[Any], None], cfg: Any, names: Iterable[str]
) -> list[tuple[str, TraitError]]:
    """Load the settings ``names`` of the config ``cfg`` one at a time, ``load(part)`` (after
    loading them all at once was refused): a bad value then refuses its own setting only. The
    settings refused, with why."""
    from traitlets.config import Config

    refused = []
    for name in names:
        part = Config()
        for section, values in cfg.items():
            if isinstance(values, Config) and name in values:
                part[section] = Config({name: values[name]})
        try:
            load(part)
        except TraitError as err:
            refused.append((name, err))
    return refused


def from_env(name: str, variable: str) -> str:
    """The environment's default for a setting, checked like a set value (traitlets does not
    validate dynamic defaults): a bad one fails on use, as one line naming the variable."""
    value = os.environ.get(variable, "")
    problem = check_setting(name, value) if value else None
    if problem:
        raise TraitError(f"Chapyter.{name} {problem} (from ${variable}).")
    return value


def served_environment() -> bool:
    """Whether the environment is that of a kernel whose server holds the key and gave it a
    credential for its model route (``chapyter_ext.server.kernel_access``)."""
    return bool(os.environ.get("CHAPYTER_SERVER_URL") and os.environ.get("CHAPYTER_KERNEL_TOKEN"))


def variables_holding(secrets: Iterable[str]) -> list[str]:
    """The names of this process's environment variables whose values hold one of ``secrets``
    (those of 8 characters or more)."""
    wanted = [s for s in secrets if len(s) >= 8]
    return sorted(n for n, v in os.environ.items() if any(s in v for s in wanted))
