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

from traitlets import Dict, Int, TraitError, TraitType, Unicode

from .redact import REDACTED

__all__ = [
    "CHECK_TAGS",
    "FORMATS",
    "URL",
    "Secret",
    "SecretHeaders",
    "SecretUnicode",
    "SecretValues",
    "check_server_setting",
    "check_value",
    "checked",
    "from_env",
    "load_each",
]

# RFC 9110 token: what an HTTP header name may be made of.
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# What an HTTP header value may hold and still be sent as-is: visible ASCII, spaces and tabs.
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


#: Help of settings declared in ``Chapyter``, which has no lines to spare.
MORE_HELP = {
    "mcp_server": "Server setting: the MCP server for outside agents (Claude Code, Codex, VS "
    "Code, any MCP client) on or off, at chapyter-ext/mcp under the server's base URL. Its "
    "tool calls are carried out by the JupyterLab page that has the notebook open, under "
    "agent_policy, with trials, undo and agent_max_steps per session; a client needs an "
    "outside-agent token made in the chat panel (or the server's own token). False: the "
    "endpoint answers 403 'disabled' and nothing runs.",
    "local_review": "With the bundled local model, review first (messages name it 'Local "
    "review'): %%ai inserts its code below without running it, its progress line saying it "
    "waits for your review (%%ai --run still runs it); the chat offers Insert below instead "
    "of Insert and run, Fix offers no Accept and run, and agent steps always ask (its code is "
    "often wrong). False runs it at once, as with other models.",
    "prompt_style": "The prompt for %%ai and the chat: 'full' (for capable models); 'small': "
    "a short prompt with a few worked examples, only the variables (names, types, columns) "
    "as context, answers of at most 128 tokens (with the bundled model a llama.cpp grammar "
    "makes each one code block of at most two lines), each checked against the kernel (names "
    "and columns exist, no made-up data, the name the request asks for is defined, an "
    "existing variable is not overwritten unless the request asks to change it, the result "
    "is shown) and up to 3 asked for; the chat's code blocks get the same new name and last "
    "line, and in the chat 'small' is a short system prompt, a compact context, the last two "
    "messages and replies of at most 256 tokens. 'auto': small for the bundled local model, "
    "full otherwise.",
    "run_policy": "%%ai and Fix/Edit (messages name it 'Run policy'): when to hold the "
    "model's code for your review instead of running it at once: 'never' (run, as Chapyter "
    "does), 'risky' (the same analysis and trial runs as agent_policy's 'risky': code a "
    "static analysis cannot prove only computes, reads and plots, e.g. it writes or deletes "
    "files, opens the network, runs shell commands or calls something not known to be safe, "
    "runs only if its trial tried nothing; else it lands below unrun and the prompt cell "
    "gives the one-line reason; a Fix proposal is tried when you click Accept and run, and "
    "one with a named harm offers Accept only) or 'ask' (hold every answer).",
    "trials": "Trial runs (see docs/trials.md): before model code that the static analysis "
    "cannot prove harmless runs under agent_policy or run_policy 'risky' or 'ask', run it "
    "once in a confined copy of the kernel (Linux: a fork that may not write outside a "
    "scratch folder, open sockets or start programs; it sees every variable). Under 'risky' "
    "the code then runs unasked only if the trial tried nothing and showed nothing remote; "
    "otherwise, and under 'ask', the approval card lists what the trial tried and would "
    "show. With the bundled model, %%ai also tries each candidate this way and offers none "
    "that raises. False: the static analysis alone decides (and asks more).",
    "max_tokens": "Upper bound on the tokens of one answer.",
    "timeout": "Seconds to wait for the endpoint before giving up (also between the chunks "
    "of a streamed answer).",
    "max_retries": "Retries after a 429, a 5xx or a dropped connection (honouring Retry-After).",
    "undo_turns": "Undo (see docs/undo.md): the last turns (agent, %%ai, Fix's Accept and "
    "run) whose kernel state is kept to restore (0 to 50; 0: Undo removes cells only). "
    "Linux: a waiting copy-on-write fork of the kernel per step.",
    "undo_memory_mb": "Undo: megabytes the kept states may hold (64 to 1048576): the pages they "
    "hold that the kernel no longer shares (it changed them since), each counted once; the "
    "oldest turns are dropped first.",
    "kernel_keys": "Server setting: give kernels the endpoint's key, as before. By default a "
    "kernel the server starts holds no key (OPENAI_API_KEY and any variable holding a "
    "configured secret are left out of its environment) but a credential good only for the "
    "server's model route while it runs, so %%ai calls the model through the server (see "
    "SECURITY.md, keys never leave the server). True for notebooks whose own code calls a "
    "model SDK with the key; %ai status then says the kernel holds one.",
    "warm_up": "%load_ext starts a background thread that imports the openai SDK, builds the "
    "HTTP client and primes the kernel summary, so that the first %%ai does not wait for "
    "them. The server does the same on a hint, not at start (an idle server holds about 34 MB "
    "less): when the page first shows the chat (POST chapyter-ext/warm) or a kernel it "
    "started loads the extension (POST chapyter-ext/v1/warm); without a hint the first "
    "request loads it, off the event loop. It never starts the bundled local model nor sends "
    "a model a request; False: only the first request loads it.",
}


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


def _prices_problem(value: Any) -> str | None:
    for model, price in value.items():
        rates = price.items() if isinstance(price, dict) else [("", price)]
        for key, rate in rates:
            if key not in ("input", "output") or not _number(rate) or rate < 0:
                return (
                    f"needs {{'input': number, 'output': number}} (USD per million "
                    f"tokens, 0 or more) for each model; {model!r} has {price!r}"
                )
    return None


def _headers_problem(value: Any) -> str | None:
    items = value.items() if hasattr(value, "items") else value
    for key, val in items:
        if not isinstance(key, str) or not _HEADER_NAME.match(key):
            return f"has a header name that HTTP does not allow: {key!r}"
        if not isinstance(val, str) or not _HEADER_VALUE.match(val):
            return (
                f"has a value for {key!r} that HTTP does not allow "
                "(line breaks, control or non-ASCII characters)"
            )
    return None


def _api_key_problem(value: str) -> str | None:
    if not _HEADER_VALUE.match(value) or any(c.isspace() for c in value):
        return "must be printable ASCII without spaces or line breaks (it is sent as a header)"
    return None


def _model_problem(value: str) -> str | None:
    if not value.strip() or not value.isprintable():
        return "must be a model name: not empty, without control characters"
    return None


def _completion_model_problem(value: str) -> str | None:
    if value and not value.isprintable():
        return "must be the name of a configured model, without control characters"
    return None


def _path_problem(value: str) -> str | None:
    return "must be a file path (it holds a NUL character)" if "\0" in value else None


#: Settings whose values have a shape to check beyond a range or a word (also the fields of a
#: model entry of that name): the check, as the end of a sentence, or None.
FORMATS: dict[str, Callable[[Any], str | None]] = {
    "base_url": _base_url_problem,
    "api_key": _api_key_problem,
    "model": _model_problem,
    "extra_headers": _headers_problem,
    "completion_model": _completion_model_problem,
    "prices": _prices_problem,
    "local_model_path": _path_problem,
}

#: The metadata of a ``Chapyter`` trait (``.tag(...)``) that :func:`check_setting` reads:
#: ``bounds=(low, high)`` (inclusive, None: open), ``above=x`` (exclusive lower bound),
#: ``unit`` (named in the message), ``choices`` (one of these words, case-insensitive) and
#: ``problem`` (a fixed message instead of the generated one). A ``Float`` must be finite, an
#: ``Int`` whole. :mod:`chapyter_ext.admin` reads ``lock``, :mod:`chapyter_ext.settings_doc`
#: ``env`` and ``default_text`` too.
CHECK_TAGS = ("bounds", "above", "choices", "problem")


def checked(namespace: dict[str, Any]) -> list[str]:
    """The names of the traits in a class body's ``namespace`` that :func:`check_setting`
    checks (for ``@validate``)."""
    return [
        name
        for name, trait in namespace.items()
        if isinstance(trait, TraitType)
        and (name in FORMATS or any(tag in trait.metadata for tag in CHECK_TAGS))
    ]


def _range_problem(trait: TraitType, value: Any) -> str | None:
    tags = trait.metadata
    whole = isinstance(trait, Int)
    low, high = tags.get("bounds", (None, None))
    above = tags.get("above")
    fine = _number(value) and (
        (isinstance(value, int) or value.is_integer()) if whole else math.isfinite(value)
    )
    fine = fine and (low is None or value >= low) and (high is None or value <= high)
    if fine and (above is None or value > above):
        return None
    if "problem" in tags:
        return str(tags["problem"])
    kind = ("whole number" if whole else "number" if tags.get("unit") else "finite number") + (
        f" of {tags['unit']}" if tags.get("unit") else ""
    )
    if high is not None:
        valid = f"{kind} from {low} to {high}"
    elif above is not None:
        valid = f"{kind} above {above}"
    else:
        valid = f"{kind} of {low} or more" + (f" ({tags['note']})" if "note" in tags else "")
    return f"must be a {valid}, not {value!r}"


def check_value(name: str, trait: TraitType | None, value: Any) -> str | None:
    """What is wrong with ``value`` for the setting ``name`` (its ``Chapyter`` trait, or None
    for an ``Endpoint`` field that is none), as the end of a sentence; None when it is fine.
    The checks are the trait's metadata (:data:`CHECK_TAGS`) and :data:`FORMATS`
    (``config.check_setting`` finds the trait by name)."""
    if name in FORMATS:
        return FORMATS[name](value)
    if trait is None:
        return None
    choices = trait.metadata.get("choices")
    if choices:
        if not isinstance(value, str) or value.lower() not in choices:
            return f"must be one of {', '.join(choices)}, not {value!r}"
        return None
    if any(tag in trait.metadata for tag in ("bounds", "above")):
        return _range_problem(trait, value)
    return None


def check_server_setting(trait: TraitType, value: Any) -> str | None:
    """What is wrong with ``value`` for a ``ChapyterExtApp`` setting, from the same ``bounds``
    (its low end) and ``above`` metadata, as the end of a sentence; None when it is fine."""
    tags = trait.metadata
    if "above" in tags:
        return None if value > tags["above"] else f"must be above {tags['above']}"
    low = tags.get("bounds", (None, None))[0]
    if low is None or not value < low:
        return None
    return "must not be negative" if low == 0 else f"must be at least {low}"


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
    validate dynamic defaults; the variables hold a model, a URL or a key, so their
    :data:`FORMATS` are the checks): a bad one fails on use, as one line naming the variable."""
    value = os.environ.get(variable, "")
    problem = check_value(name, None, value) if value else None
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
