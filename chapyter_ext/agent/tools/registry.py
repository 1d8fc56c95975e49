"""The tools one agent turn offers: the built-in ones, those other packages register, and the
MCP servers' tools of the moment.

Packages add tools the way Jupyter AI v3 adds personas: an entry point in the group
``chapyter_ext.tools`` naming a :class:`~.record.Tool` instance, a list of them, or a callable
returning either::

    [project.entry-points."chapyter_ext.tools"]
    my_tools = "my_package.tools:TOOLS"

Entry points are read once per process (:func:`installed_tools`); one that fails to load, or
whose tool is malformed or takes a name already used, is left out with one warning line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from .builtin import BUILTIN_TOOLS
from .record import KERNEL_OPS, OP_CALL, RUNS_KERNEL, RUNS_SERVER, Tool

ENTRY_POINT_GROUP = "chapyter_ext.tools"
#: What OpenAI accepts as a function name.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

log = logging.getLogger(__name__)


class ToolRegistry:
    """Tools by name, in the order they were added."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Add ``tool``; ``ValueError`` if its name is taken or it is malformed."""
        problem = malformed(tool)
        if problem:
            raise ValueError(problem)
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, if any."""
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> tuple[str, ...]:
        """The tools' names, in order."""
        return tuple(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` of a model request."""
        return [tool.schema() for tool in self]

    def public(self) -> list[dict[str, Any]]:
        """What the browser learns of each tool."""
        return [tool.public() for tool in self]

    def extended(self, tools: Iterable[Tool]) -> ToolRegistry:
        """A new registry: these tools, then ``tools`` (those whose name is taken are left out,
        with a warning)."""
        out = ToolRegistry(self)
        for tool in tools:
            try:
                out.add(tool)
            except ValueError as err:
                log.warning("chapyter-ext: tool %r left out: %s", getattr(tool, "name", "?"), err)
        return out


def malformed(tool: Any) -> str:
    """What is wrong with ``tool`` as a record ("" when nothing)."""
    if not isinstance(tool, Tool):
        return f"{tool!r} is not a chapyter_ext Tool"
    if not TOOL_NAME.match(tool.name or ""):
        return f"tool name {tool.name!r} must be 1-64 letters, digits, '_' or '-'"
    if tool.runs == RUNS_KERNEL and tool.op not in KERNEL_OPS:
        return f"kernel tool {tool.name!r} has op {tool.op!r}, not one of {', '.join(KERNEL_OPS)}"
    if tool.runs == RUNS_SERVER and tool.op != OP_CALL:
        return f"server tool {tool.name!r} must have op {OP_CALL!r}"
    if tool.runs not in (RUNS_KERNEL, RUNS_SERVER):
        return f"tool {tool.name!r} runs {tool.runs!r}, not 'kernel' or 'server'"
    if not isinstance(tool.parameters, dict) or tool.parameters.get("type") != "object":
        return f"tool {tool.name!r} needs a JSON schema of type 'object' as its parameters"
    return ""


def _entries(value: Any) -> list[Any]:
    value = value() if callable(value) and not isinstance(value, Tool) else value
    return list(value) if isinstance(value, (list, tuple)) else [value]


@lru_cache(maxsize=1)
def installed_tools() -> tuple[Tool, ...]:
    """The built-in tools, then those of the ``chapyter_ext.tools`` entry points."""
    from importlib.metadata import entry_points

    found: list[Tool] = list(BUILTIN_TOOLS)
    names = {tool.name for tool in found}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            candidates = _entries(point.load())
        except Exception as err:
            log.warning("chapyter-ext: tools entry point %r failed to load: %s", point.name, err)
            continue
        for tool in candidates:
            problem = malformed(tool) or (
                f"the name {tool.name!r} is taken" if tool.name in names else ""
            )
            if problem:
                log.warning(
                    "chapyter-ext: a tool of entry point %r left out: %s", point.name, problem
                )
                continue
            names.add(tool.name)
            found.append(tool)
    return tuple(found)


def default_registry() -> ToolRegistry:
    """A registry of the installed tools (a new one each time: turns extend it)."""
    return ToolRegistry(installed_tools())


@dataclass
class TurnTools:
    """More tools for one turn, and one line per source that could not give its tools."""

    tools: list[Tool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class ToolSource(Protocol):
    """Where a turn's extra tools come from (the MCP servers)."""

    async def turn_tools(self) -> TurnTools:
        """The tools now (starting what must start); never raises."""

    def public(self) -> dict[str, Any]:
        """What the browser may know before a turn: ``{"tools": [...], "servers": [...]}``
        (the tools known so far, the configured servers)."""

    async def close(self) -> None:
        """Stop what was started."""
