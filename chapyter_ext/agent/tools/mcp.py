"""MCP servers' tools as agent tools: one :class:`McpTool` record per tool of a running server,
named ``<server>__<tool>`` so names never clash, run by the Jupyter server (or the headless
CLI), never in the kernel.

Approval follows the agent policy: ``ask``, every call asks; ``risky``, a tool whose MCP
annotations say ``readOnlyHint: true`` runs unasked and any other asks, with its arguments
shown; ``never``, none asks. A result's text, structured content and images (as image parts
when the model takes them, else a short note) go back within ``Chapyter.agent_result_chars``,
redacted like every result (:meth:`.record.Tool.observe`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..results import ToolOutput
from .record import OP_CALL, RUNS_SERVER, Approval, Tool
from .registry import TurnTools

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ...mcp import McpServer, McpServers

#: Between a server's name and its tool's in a tool's name.
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
#: Characters of structured content added to a result as JSON.
STRUCTURED_CHARS = 20_000


def tool_name(server: str, tool: str) -> str:
    """The agent's name for ``tool`` of ``server``: ``server__tool``, within OpenAI's 64."""
    return f"{server}{SEPARATOR}{_UNSAFE.sub('_', tool)}"[:64]


class McpTool(Tool):
    """One tool of one MCP server."""

    runs = RUNS_SERVER
    op = OP_CALL

    def __init__(self, server: McpServer, spec: Any) -> None:
        self._server = server
        self.tool = str(spec.name)
        self.name = tool_name(server.name, self.tool)
        self.server = server.name
        annotations = getattr(spec, "annotations", None)
        title = getattr(spec, "title", None) or getattr(annotations, "title", None)
        self.description = (spec.description or title or self.tool).strip()
        schema = getattr(spec, "input_schema", None)
        self.parameters = (
            schema
            if isinstance(schema, dict) and schema.get("type") == "object"
            else {"type": "object", "properties": {}}
        )
        #: The server says the tool does not modify its environment (a hint, from the server).
        self.read_only = getattr(annotations, "read_only_hint", None) is True
        self.acts = not self.read_only
        self.label = f"{server.name} · {self.tool}"

    def approval(
        self,
        policy: str,
        arguments: dict[str, Any],
        known_functions: set[str],
        *,
        known_types: Mapping[str, str] | None = None,
        trials: bool = False,
        secret_names: Iterable[str] = (),
    ) -> Approval:
        if policy == "never":
            return Approval(needs=False)
        if policy == "risky" and self.read_only:
            return Approval(needs=False)
        why = (
            "an MCP tool: every call asks (policy 'ask')"
            if policy == "ask"
            else "an MCP tool the server does not mark read-only"
        )
        return Approval(needs=True, reasons=(why,))

    def title(self, arguments: dict[str, Any]) -> str:
        return self.label

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        from ...mcp import McpFailure

        try:
            result = await self._server.call(self.tool, arguments)
        except McpFailure as err:
            return ToolOutput(error=str(err))
        return result_output(result)


def result_output(result: Any) -> ToolOutput:
    """An MCP ``CallToolResult`` as a :class:`ToolOutput`: its text blocks and text resources,
    its structured content as JSON (when no text block already says it), its images; a note
    for what cannot be shown (audio, binary resources, links)."""
    texts: list[str] = []
    images: list[tuple[str, str]] = []
    notes: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append((block.mime_type, block.data))
        elif kind == "audio":
            notes.append(f"[audio ({block.mime_type}) returned; not shown to the model]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                texts.append(f"[resource {resource.uri}]\n{text}")
            else:
                mime = getattr(resource, "mime_type", None) or "binary"
                notes.append(f"[resource {resource.uri} ({mime}) returned; not shown]")
        elif kind == "resource_link":
            notes.append(f"[resource link: {getattr(block, 'name', '')} {block.uri}]".strip())
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        shown = json.dumps(structured, ensure_ascii=False, indent=1, default=str)
        if not any(_says(t, structured) for t in texts):
            texts.append(shown[:STRUCTURED_CHARS])
    return ToolOutput(
        text="\n".join(texts),
        images=images,
        notes=notes,
        is_error=bool(getattr(result, "is_error", False)),
    )


def _says(text: str, value: Any) -> bool:
    """Whether ``text`` already says the structured ``value``: the same JSON, or the value of a
    ``{"result": ...}`` wrapper (how SDK servers return a plain value)."""
    if isinstance(value, dict) and set(value) == {"result"}:
        inner = value["result"]
        if isinstance(inner, str) and text.strip() == inner.strip():
            return True
        value = inner
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


class McpToolSource:
    """The MCP servers as a :class:`~.registry.ToolSource`: each turn gets the tools of the
    moment (a server starts when a turn first needs it)."""

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers

    async def turn_tools(self) -> TurnTools:
        found, problems = await self.servers.listing()
        tools: list[Tool] = []
        names: set[str] = set()
        for server, spec in found:
            tool = McpTool(server, spec)
            if tool.name in names:
                problems.append(
                    f"MCP server {server.name!r}: two tools are named {tool.name!r}; "
                    "the second is not offered."
                )
                continue
            names.add(tool.name)
            tools.append(tool)
        return TurnTools(tools, problems)

    def public(self) -> dict[str, Any]:
        tools = [
            McpTool(server, spec).public()
            for server in self.servers.servers.values()
            for spec in server.known_tools
        ]
        return {"tools": tools, "servers": self.servers.public()}

    async def close(self) -> None:
        await self.servers.close()


class BlockingToolSource:
    """The MCP tool source for a synchronous driver (the headless CLI): the servers live on a
    loop of their own (:class:`chapyter_ext.mcp.background.BackgroundLoop`)."""

    def __init__(self, servers: McpServers) -> None:
        from ...mcp.background import BackgroundLoop

        self.source = McpToolSource(servers)
        self._loop = BackgroundLoop()

    def secrets(self) -> list[str]:
        """The servers' ``env`` and ``headers`` values."""
        return self.source.servers.secrets()

    def turn_tools(self) -> TurnTools:
        """The tools now, starting the servers."""
        return self._loop.run(self.source.turn_tools())

    def call(self, tool: Tool, arguments: dict[str, Any]) -> ToolOutput:
        """Carry out a server tool's call; every failure is a :class:`ToolOutput` error."""
        try:
            return self._loop.run(tool.call(arguments))
        except Exception as err:
            return ToolOutput(error=" ".join(str(err).split()) or type(err).__name__)

    def close(self) -> None:
        """Stop the servers and the loop."""
        try:
            self._loop.run(self.source.close(), timeout=30)
        finally:
            self._loop.close()
