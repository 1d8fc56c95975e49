"""Which MCP servers the agent may use: the ``mcpServers`` shape every MCP client reads.

::

    {"mcpServers": {
        "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
        "docs": {"url": "http://127.0.0.1:8931/mcp", "headers": {"Authorization": "Bearer …"}}
    }}

A server with ``command`` (and optional ``args``, ``env``, ``cwd``) runs over stdio; one with
``url`` (and optional ``headers``) over streamable HTTP. Optional in either: ``timeout`` (the
seconds one call may take), ``disabled: true``. The servers come from
``chapyter_ext_mcp.json`` in each folder of Jupyter's config path (``jupyter --paths``, its
``config:`` list; as for Jupyter's own config, a folder earlier in that list wins) and then
``c.ChapyterExtApp.mcp_servers``, which wins over every file; a server is replaced whole by a
later definition of its name.
The Jupyter server and ``chapyter-ext agent`` read the same. Secrets in ``env`` and
``headers`` are redacted from everything the agent shows or sends.

Pure: no ``mcp`` import, no I/O but reading those files.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

#: The file read in each folder of Jupyter's config path.
CONFIG_FILE = "chapyter_ext_mcp.json"
#: What a server's name may hold once made safe for tool names (``name__tool``).
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: how to reach it."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds one call may take (None: the app's ``mcp_call_timeout``).
    timeout: float | None = None
    #: Where it was defined (a file, or the setting), for error lines.
    source: str = ""

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def secrets(self) -> list[str]:
        """The values of ``env`` and ``headers``: redacted wherever they could show."""
        return [v for v in (*self.env.values(), *self.headers.values()) if len(v) >= 8]

    def public(self) -> dict[str, Any]:
        """What the browser may know: the name and the transport (never commands or keys)."""
        return {"name": self.name, "transport": self.transport}


class McpConfigError(ValueError):
    """A server definition that cannot be used; ``str()`` is one line naming it."""


def safe_name(name: str) -> str:
    """``name`` with what a tool name cannot hold replaced by ``_`` (at most 24 characters)."""
    return _NAME.sub("_", name).strip("_")[:24] or "server"


def _strings(value: Any, what: str, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise McpConfigError(f"{where}: '{what}' must map names to strings")
    return dict(value)


def parse_server(name: str, value: Any, source: str) -> ServerConfig | None:
    """One entry of ``mcpServers``; None when it is ``disabled``. :class:`McpConfigError`
    names what is wrong."""
    where = f"MCP server {name!r} ({source})"
    if not isinstance(value, dict):
        raise McpConfigError(f"{where}: must be an object with 'command' or 'url'")
    if value.get("disabled") is True:
        return None
    kind = value.get("type") or value.get("transport")
    if kind in ("sse",):
        raise McpConfigError(f"{where}: the SSE transport is not supported; use streamable HTTP")
    command, url = value.get("command"), value.get("url")
    if bool(command) == bool(url):
        raise McpConfigError(f"{where}: needs either 'command' (stdio) or 'url' (HTTP)")
    timeout = value.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        raise McpConfigError(f"{where}: 'timeout' must be a number of seconds above 0")
    if command:
        args = value.get("args", [])
        if not isinstance(command, str) or not isinstance(args, list):
            raise McpConfigError(f"{where}: 'command' must be a string and 'args' a list")
        if not all(isinstance(a, str) for a in args):
            raise McpConfigError(f"{where}: every item of 'args' must be a string")
        cwd = value.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise McpConfigError(f"{where}: 'cwd' must be a folder path")
        return ServerConfig(
            name=safe_name(name),
            command=command,
            args=tuple(args),
            env=_strings(value.get("env"), "env", where),
            cwd=os.path.expanduser(cwd) if cwd else None,
            timeout=timeout,
            source=source,
        )
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise McpConfigError(f"{where}: 'url' must be an http:// or https:// URL")
    return ServerConfig(
        name=safe_name(name),
        url=url,
        headers=_strings(value.get("headers"), "headers", where),
        timeout=timeout,
        source=source,
    )


def parse_servers(data: Any, source: str) -> tuple[dict[str, ServerConfig], list[str]]:
    """The servers of ``{"mcpServers": {...}}`` (or of the inner mapping itself), and one line
    per entry that was left out."""
    if isinstance(data, dict) and isinstance(data.get("mcpServers"), dict):
        data = data["mcpServers"]
    if not isinstance(data, dict):
        return {}, [f'{source}: expected {{"mcpServers": {{...}}}}']
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for name, value in data.items():
        try:
            server = parse_server(str(name), value, source)
        except McpConfigError as err:
            problems.append(str(err))
            continue
        if server is not None:
            servers[server.name] = server
    return servers, problems


def config_files() -> list[str]:
    """The ``chapyter_ext_mcp.json`` paths of Jupyter's config path, lowest priority first."""
    from jupyter_core.paths import jupyter_config_path

    return [os.path.join(folder, CONFIG_FILE) for folder in reversed(jupyter_config_path())]


def load_servers(
    setting: Any = None, files: list[str] | None = None
) -> tuple[dict[str, ServerConfig], list[str]]:
    """The servers of the config files, then of ``setting`` (``ChapyterExtApp.mcp_servers``),
    later names replacing earlier ones; and one line per problem (a file that is not JSON, an
    entry that cannot be used)."""
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for path in config_files() if files is None else files:
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as err:
            problems.append(f"{path}: cannot be read as JSON ({' '.join(str(err).split())})")
            continue
        found, bad = parse_servers(data, path)
        servers.update(found)
        problems.extend(bad)
    if setting:
        found, bad = parse_servers(setting, "ChapyterExtApp.mcp_servers")
        servers.update(found)
        problems.extend(bad)
    return servers, problems


#: Defaults of ``ChapyterExtApp.mcp_start_timeout`` and ``mcp_call_timeout``.
START_TIMEOUT = 30.0
CALL_TIMEOUT = 60.0


def app_config() -> tuple[Any, float, float]:
    """``c.ChapyterExtApp``'s ``mcp_servers``, ``mcp_start_timeout`` and ``mcp_call_timeout``
    as the Jupyter server would read them (``jupyter_server_config.py`` and ``.json`` in
    Jupyter's config path), for ``chapyter-ext agent``."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    merged = Config()
    for folder in reversed(jupyter_config_path()):
        for loader in (JSONFileConfigLoader, PyFileConfigLoader):
            name = "jupyter_server_config." + ("json" if loader is JSONFileConfigLoader else "py")
            if not os.path.isfile(os.path.join(folder, name)):
                continue
            try:
                merged.merge(loader(name, path=folder).load_config())
            except Exception:
                continue
    section = merged.get("ChapyterExtApp", {})
    setting = section.get("mcp_servers") or {}

    def seconds(key: str, default: float) -> float:
        value = section.get(key, default)
        return float(value) if isinstance(value, (int, float)) and value > 0 else default

    return (
        setting,
        seconds("mcp_start_timeout", START_TIMEOUT),
        seconds("mcp_call_timeout", CALL_TIMEOUT),
    )
