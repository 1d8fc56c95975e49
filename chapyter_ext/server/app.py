"""The chapyter-ext server extension: configuration, shared services and routes of the chat."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Dict, Float, Int, TraitError, Unicode, default, validate

from .._version import __version__
from ..admin import SERVER, fall_back
from ..agent.service import AgentService
from ..agent.tools.mcp import McpToolSource
from ..chat import MAX_MESSAGE_CHARS, ChatService
from ..complete.service import CompletionService
from ..config import Chapyter
from ..config_values import check_server_setting, checked, load_each
from ..endpoints import ModelRegistry
from ..history import HistoryWorker
from ..history.contents_events import ContentsBridge, contents_root_name
from ..history.store import ChatHistoryStore
from ..llm import aclose_clients
from ..mcp import McpServers
from ..mcp.config import CALL_TIMEOUT, START_TIMEOUT
from ..outside import OutsideService
from ..redact import Redactor
from ..redact.logs import install_log_redaction
from .complete_handlers import completion_handlers
from .features import Features
from .handlers import handlers
from .history_handlers import history_handlers
from .kernel_access import KernelAccess, server_url
from .model_proxy import proxy_handlers
from .nodelay import kernel_websockets_without_nagle
from .outside_handlers import outside_handlers
from .overrides import hold_app_locks, mcp_files, model_registry
from .warm import warm_handlers

#: Seconds between two checks for deleted notebooks' chats past their retention.
PRUNE_INTERVAL = 3600.0


class ChapyterExtApp(ExtensionApp):
    """Serves the JupyterLab chat sidebar: named model endpoints, streamed replies, history.

    The endpoint settings shared with ``%%ai`` (``c.Chapyter.*``) are read from this server's
    configuration, so one ``jupyter_server_config.py`` sets up both.
    """

    name = "chapyter_ext"
    classes = [*ExtensionApp.classes, Chapyter]  # noqa: RUF012 (traitlets reads a plain list)
    load_other_extensions = True

    #: The services, built in ``initialize_settings`` (before any request is served);
    #: handlers reach them as ``self.extensionapp.<service>``.
    registry: ModelRegistry
    history: HistoryWorker
    chat: ChatService
    agent: AgentService
    completions: CompletionService
    contents: ContentsBridge
    #: The credentials of the kernels this server starts (their key stays here).
    kernel_access: KernelAccess
    #: The features on (``Chapyter.chat``, ``agent``, ``inline_completion``, ``mcp``).
    features = Features()
    #: One line per setting a lock or a refused value replaced (``server/overrides.py``):
    #: logged at start, in ``GET config``'s ``notices`` for the chat to show.
    notices: tuple[str, ...] = ()
    #: The server's ``c.Chapyter`` (``self.settings`` is the web app's), built with the services.
    shared_settings: Chapyter | None = None

    models = Dict(
        key_trait=Unicode(),
        value_trait=Dict(),
        config=True,
        help="Named model endpoints offered in the chat, e.g. "
        '{"local": {"model": "llama3", "base_url": "http://localhost:11434/v1"}}. Each value '
        "takes Endpoint fields (model, base_url, api_key, temperature, max_tokens, timeout, "
        "max_retries, extra_headers); missing ones come from c.Chapyter, except that the shared "
        "api_key and extra_headers only go to the shared base_url. Empty: one entry named after "
        "Chapyter.model.",
    )
    default_model = Unicode(
        "",
        config=True,
        help="Name (a key of `models`) the chat uses unless the user picks another; "
        "empty means the first.",
    )
    history_dir = Unicode(
        config=True,
        help="Folder holding the chat history of each notebook: one JSON file per notebook, "
        "named by the notebook's stable id and written atomically. Servers may share it: each "
        "finds only the chats of its own folder's notebooks. Default: chapyter-ext/chats under "
        "Jupyter's data directory.",
    )
    contents_root = Unicode(
        "",
        config=True,
        help="The name the chat history gives the folder this server serves: a notebook with "
        "no id yet is found by it and its path, so servers sharing history_dir never take "
        "each other's notebooks of the same path for their own. Empty: the real path of the "
        "contents manager's root_dir (for a contents manager that is not a local folder, its "
        "class and root_dir). Set it for a remote store whose root_dir does not say which "
        "one it is, e.g. 's3://bucket/prefix', or on machines that share a home folder and "
        "each serve a local folder at the same path, e.g. 'node1:/scratch/me/project'.",
    )
    max_history_messages = Int(
        200,
        config=True,
        help="Messages kept per chat; older ones are dropped first.",
    ).tag(bounds=(1, None))
    max_chats_per_notebook = Int(
        50,
        config=True,
        help="Past chats kept per notebook (after 'New chat'); the oldest go first.",
    ).tag(bounds=(1, None))
    deleted_chat_retention_days = Float(
        30.0,
        config=True,
        help="Days the chats of a deleted notebook are kept (a notebook restored with its id, "
        "e.g. from git or the trash, finds them again) before they are removed for good; "
        "checked at start and hourly. 0: removed at the next check.",
    ).tag(bounds=(0, None), unit="days")
    history_messages_sent = Int(
        20,
        config=True,
        help="Earlier messages of the chat sent to the model with each new one (0: none).",
    ).tag(bounds=(0, None))
    max_concurrent_streams = Int(
        4,
        config=True,
        help="Chat replies that may stream at once across all users and tabs; beyond it a "
        "request gets HTTP 429 (kind 'busy') instead of waiting.",
    ).tag(bounds=(1, None))
    stream_timeout = Float(
        300.0,
        config=True,
        help="Seconds one chat reply may take from request to last token before it is stopped "
        "(0: no limit). Chapyter.timeout still bounds each wait for the endpoint.",
    ).tag(bounds=(0, None), unit="seconds")
    max_message_chars = Int(
        MAX_MESSAGE_CHARS,
        config=True,
        help="Longest chat message accepted, in characters.",
    ).tag(bounds=(1, None))
    mcp_servers = Dict(
        config=True,
        help="MCP servers whose tools the agent may call, in the shape every MCP client uses: "
        '{"mcpServers": {"time": {"command": "mcp-server-time", "args": [], "env": {}}, '
        '"docs": {"url": "http://127.0.0.1:8931/mcp", "headers": {}}}} (stdio with command, '
        "streamable HTTP with url; optional timeout, disabled). Merged over the servers of "
        "chapyter_ext_mcp.json in Jupyter's config path (see `jupyter --paths`). Each starts "
        "on first use and stops with the server. See docs/tools-and-mcp.md.",
    )
    mcp_start_timeout = Float(
        START_TIMEOUT,
        config=True,
        help="Seconds an MCP server may take to start and answer; then its tools are left "
        "out of the turn, saying so in one line.",
    ).tag(above=0, unit="seconds")
    mcp_call_timeout = Float(
        CALL_TIMEOUT,
        config=True,
        help="Seconds one MCP tool call may take (a server's own 'timeout' wins); then the "
        "call fails with one line the model and the chat see.",
    ).tag(above=0, unit="seconds")
    # --- speed where the user waits
    kernel_nodelay = Bool(
        True,
        config=True,
        help="Turn Nagle's algorithm off on kernel websockets (TCP_NODELAY), so that each "
        "output reaches the browser at once instead of waiting up to 40 ms for the ACK of "
        "the message before it (see chapyter_ext/server/nodelay.py).",
    )

    @default("history_dir")
    def _default_history_dir(self) -> str:
        return os.path.join(jupyter_data_dir(), "chapyter-ext", "chats")

    @validate(*checked(locals()))
    def _validate_setting(self, proposal: Any) -> Any:
        # The bounds each setting declares (its metadata, as Chapyter's): one line naming it.
        problem = check_server_setting(proposal["trait"], proposal["value"])
        if problem:
            raise TraitError(f"{proposal['trait'].name} {problem}")
        return proposal["value"]

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        # A value one setting refuses (a typo in a user's config) must not take the extension
        # down: that setting falls back (server/overrides.py), the others stand.
        load = super()._load_config
        try:
            load(cfg, section_names=section_names, traits=traits)
        except TraitError:
            every = traits if traits is not None else self.traits(config=True)
            parts = load_each(lambda part: load(part, section_names, traits), cfg, every)
            lines = [fall_back(self, SERVER, name, err) for name, err in parts]
            # The server's config comes through here more than once: one line each.
            self.notices = (*self.notices, *(n for n in lines if n not in self.notices))

    @property
    def save_chat_in_notebook(self) -> bool:
        """``Chapyter.save_chat_in_notebook``, as this server reads it (``GET config`` says it)."""
        return bool(self.shared_settings and self.shared_settings.save_chat_in_notebook)

    @property
    def warm_up_sdk(self) -> bool:
        """``Chapyter.warm_up``: the SDK (~30 MB) loads on the page's or a kernel's hint
        (``server/warm.py``), never at start."""
        return bool(self.shared_settings and self.shared_settings.warm_up)

    def initialize_settings(self) -> None:
        """Build the shared services once: endpoints, history store, chat service."""
        # The administrator's locks on this app's settings, before any of them is read.
        notices = [*self.notices, *hold_app_locks(self, Chapyter)]
        # parent=self: c.Chapyter.* from the server's config files and command line applies.
        shared = Chapyter(parent=self, lenient=True)
        self.features = Features.from_settings(shared)
        # With no endpoint configured at all, the bundled local model (if installed), which
        # the registry starts on first use. A list that cannot be used falls back, saying so.
        registry, lines = model_registry(self.models, self.default_model, shared)
        notices.extend(lines)
        # The agent's MCP servers: none starts before an agent turn needs it.
        mcp = McpServers.from_config(
            self.mcp_servers if self.features.mcp else {},
            files=mcp_files(Chapyter) if self.features.mcp else [],
            start_timeout=self.mcp_start_timeout,
            call_timeout=self.mcp_call_timeout,
            log=self.log,
        )
        for problem in mcp.problems:
            self.log.warning("chapyter-ext: %s", problem)
        secrets = {
            *registry.secrets(),
            shared.api_key,
            *shared.extra_headers.values(),
            *mcp.secrets(),
        }
        secrets.discard("")
        # THE secret policy of this server: history, streamed events, error lines, logs.
        redactor = Redactor(secrets)
        # Every log line of this server, whoever writes it (the gateway client logs the kernel
        # environment at INFO): no key in it.
        for logger in {self.log, getattr(self.serverapp, "log", self.log)}:
            install_log_redaction(logger, secrets)
        self.notices = tuple(redactor(line) for line in (*shared.overridden, *notices))
        for line in self.notices:
            self.log.warning("chapyter-ext: %s", line)
        contents_manager = getattr(self.serverapp, "contents_manager", None)
        store = ChatHistoryStore(
            os.path.expanduser(self.history_dir),
            # A chat belongs to one notebook of one project.
            contents_root=self.contents_root
            or contents_root_name(contents_manager, getattr(self.serverapp, "root_dir", "")),
            max_messages=self.max_history_messages,
            max_chats=self.max_chats_per_notebook,
            redactor=redactor,
            log=self.log,
        )
        history = HistoryWorker(store)
        # Chats follow their notebook through the contents events, and (opt-in)
        # travel in its metadata.
        self.shared_settings = shared
        self.contents = ContentsBridge(
            history,
            self.serverapp.contents_manager if self.serverapp is not None else None,
            shared,
            redactor=redactor,
            log=self.log,
        )
        self.contents.connect()
        chat = ChatService(  # reads c.Chapyter when it uses a setting, as the agent does
            registry,
            history,
            shared,
            max_concurrent=self.max_concurrent_streams,
            stream_timeout=self.stream_timeout,
            history_sent=self.history_messages_sent,
            max_message_chars=self.max_message_chars,
            redactor=redactor,
            log=self.log,
            rules_root=getattr(self.serverapp, "root_dir", None),
        )
        # Agent turns run on the chat's slots; the caps and policy come from c.Chapyter.
        agent = AgentService(chat, shared, tool_source=McpToolSource(mcp) if mcp else None)
        self.registry, self.history, self.chat, self.agent = registry, history, chat, agent
        # Outside agents (MCP clients): the SDK's server starts on the first request.
        self.outside = OutsideService(shared, redactor, version=__version__, log=self.log)
        # The kernels this server starts call models through it, never with the key.
        self.kernel_access = KernelAccess(
            getattr(self.serverapp, "kernel_manager", None),
            secrets,
            server_url=lambda: server_url(self.serverapp),
            keep_keys=shared.kernel_keys,
            model=registry.model_name(None),
            local=registry.is_local(None),
            models_locked=_models_locked(shared),
            log=self.log,
        )
        gateway = getattr(getattr(self.serverapp, "gateway_config", None), "gateway_enabled", False)
        if not gateway:  # a gateway's kernels cannot reach this server: their own settings
            self.kernel_access.install()
        if self.kernel_nodelay:  # self.settings goes into the web app's settings
            kernel_websockets_without_nagle(self.settings)
        self.completions = CompletionService(  # Inline completion
            registry,
            shared,
            redactor=redactor,
            log=self.log,
            enabled=self.features.inline_completion,
        )
        # Names and hosts only: the URL may carry userinfo and the key must never be logged.
        self.log.info(
            "chapyter-ext: models %s (default %s); chat history in %s",
            ", ".join(f"{m['name']}@{m['host']}" for m in registry.public_info()),
            registry.default,
            store.root,
        )
        if registry.local is not None:
            self.log.info(
                "chapyter-ext: no endpoint configured; the bundled local model %s starts on "
                "first use (set OPENAI_API_KEY or c.Chapyter.base_url for a better one)",
                registry.local.model_path,
            )

    def initialize_handlers(self) -> None:
        """Register the routes, relative to the server's base_url."""
        self.handlers.extend(handlers())
        self.handlers.extend(history_handlers())
        self.handlers.extend(completion_handlers())
        self.handlers.extend(proxy_handlers())
        self.handlers.extend(warm_handlers())
        self.handlers.extend(outside_handlers())

    async def count_kernel_usage(self, kernel_id: str | None, model: str, usage: Any) -> None:
        """What a kernel asked of a model through the server, counted in the usage of its
        notebook (the one its session names), priced as the chat prices it."""
        from ..llm.usage import cost_of

        manager = getattr(self.serverapp, "session_manager", None)
        if kernel_id is None or manager is None:
            return
        try:
            sessions = await manager.list_sessions()
        except Exception:
            return
        path = next(
            (s.get("path") for s in sessions if (s.get("kernel") or {}).get("id") == kernel_id),
            None,
        )
        if not path or not path.endswith(".ipynb"):
            return
        record = usage.as_dict(cost_of(usage, model, self.chat.prices))
        try:
            await self.history.run(self.history.store.add_kernel_usage, path, record)
        except Exception as err:
            self.log.warning("chapyter-ext: could not count a kernel's usage: %s", err)

    async def _start_jupyter_server_extension(self, serverapp: object) -> None:
        """Once the loop runs: read the history's index, then prune deleted notebooks' chats
        now and every hour."""
        if getattr(self, "history", None) is None:
            return
        self._pruning = asyncio.ensure_future(self._prune_every(PRUNE_INTERVAL))

    async def _prune_every(self, seconds: float) -> None:
        store = self.history.store
        retention = self.deleted_chat_retention_days * 86400
        while True:
            try:
                await self.history.run(store.warm)
                removed = await self.history.run(store.prune, retention)
                if removed:
                    self.log.info(
                        "chapyter-ext: removed the chats of %d deleted notebooks", len(removed)
                    )
            except Exception as err:
                self.log.warning("chapyter-ext: could not prune the chat history: %s", err)
            await asyncio.sleep(seconds)

    async def stop_extension(self) -> None:
        """Stop streaming replies and agent turns (saving what they had), flush history, close
        HTTP clients.

        The local model's server stops too, if this server started it.
        """
        # Absent if initialize_settings failed half-way.
        agent: AgentService | None = getattr(self, "agent", None)
        chat: ChatService | None = getattr(self, "chat", None)
        history: HistoryWorker | None = getattr(self, "history", None)
        registry: ModelRegistry | None = getattr(self, "registry", None)
        completions: CompletionService | None = getattr(self, "completions", None)
        contents: ContentsBridge | None = getattr(self, "contents", None)
        if contents is not None:
            contents.disconnect()
        pruning: asyncio.Future[None] | None = getattr(self, "_pruning", None)
        if pruning is not None:
            pruning.cancel()
            with contextlib.suppress(BaseException):
                await pruning
        if completions is not None:
            await completions.close()
        outside: OutsideService | None = getattr(self, "outside", None)
        if outside is not None:
            await outside.close()
        if agent is not None:
            await agent.close()
            if agent.tool_source is not None:
                await agent.tool_source.close()  # the MCP servers stop
        if chat is not None:
            await chat.close()
        if history is not None:
            await history.close()
        await aclose_clients()
        if registry is not None:
            await registry.aclose()  # stops the local model's server if we started it


def _models_locked(settings: Chapyter) -> bool:
    """Whether the administrator locks which models a kernel may ask for: the endpoint or the
    model (``Chapyter.locked``), or the list and the default (``ChapyterExtApp``'s)."""
    locks = settings.admin_locks()
    return bool(
        {"model", "base_url"} & set(locks.values) or {"models", "default_model"} & set(locks.server)
    )
