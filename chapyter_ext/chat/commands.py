"""The chat's server slash commands: what ``/name`` does to a message on the server, listed by
``GET chapyter-ext/commands`` and named by a chat request's ``command`` field.

A command is one :class:`SlashCommand` record; the built-in ones and other packages' come
through the ``chapyter_ext.slash_commands`` entry point, as tools come through
``chapyter_ext.tools``::

    [project.entry-points."chapyter_ext.slash_commands"]
    review = "my_package.commands:REVIEW"

The value is a record, a list of them, or a callable returning either. Entry points are read
once per process (:func:`installed_commands`); one that fails to load, is malformed or takes a
name already used is left out with one warning line. (Commands that act in the browser only,
such as ``/clear``, are added through the chat token, ``IChatExtension.addSlashCommand``.)
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "ENTRY_POINT_GROUP",
    "SlashCommand",
    "apply_command",
    "command_name",
    "command_named",
    "installed_commands",
]

ENTRY_POINT_GROUP = "chapyter_ext.slash_commands"
#: What the browser's registry accepts as a name (``chat/slashCommands.ts``).
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: Bounds of what a record says: it is sent to the browser and to the model.
MAX_DESCRIPTION = 200
MAX_PROMPT = 4000

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SlashCommand:
    """A server slash command: how ``/name args`` is listed and what it does to the turn.

    ``template`` rewrites the message the model gets: ``{input}`` stands for what the user
    typed after ``/name`` (``default_input`` when nothing was). ``instruction`` is added to
    the chat reply's system prompt for that turn. The stored message stays as typed.
    """

    name: str
    description: str
    args: str = ""
    template: str = "{input}"
    instruction: str = ""
    default_input: str = ""

    def public(self) -> dict[str, str]:
        """What ``GET commands`` says of it."""
        return {"name": self.name, "description": self.description, "args": self.args}


def malformed(command: Any) -> str:
    """What is wrong with ``command`` as a record ("" when nothing)."""
    if not isinstance(command, SlashCommand):
        return f"{command!r} is not a chapyter_ext SlashCommand"
    if not COMMAND_NAME.match(command.name or ""):
        return f"command name {command.name!r} must be a-z, then up to 31 of a-z 0-9 _ -"
    if not command.description or len(command.description) > MAX_DESCRIPTION:
        return f"command {command.name!r} needs a description of 1-{MAX_DESCRIPTION} characters"
    if "{input}" not in command.template:
        return f"command {command.name!r}: its template must contain {{input}}"
    if max(len(command.template), len(command.instruction)) > MAX_PROMPT:
        return f"command {command.name!r}: template or instruction over {MAX_PROMPT} characters"
    return ""


def _entries(value: Any) -> list[Any]:
    value = value() if callable(value) and not isinstance(value, SlashCommand) else value
    return list(value) if isinstance(value, (list, tuple)) else [value]


@lru_cache(maxsize=1)
def installed_commands() -> tuple[SlashCommand, ...]:
    """The commands of the ``chapyter_ext.slash_commands`` entry points, by entry point name."""
    from importlib.metadata import entry_points

    found: dict[str, SlashCommand] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            candidates = _entries(point.load())
        except Exception as err:  # a broken plug-in must not take the chat down
            log.warning("chapyter-ext: slash command entry point %r left out: %s", point.name, err)
            continue
        for command in candidates:
            problem = malformed(command) or (
                f"a command named {command.name!r} is already registered"
                if command.name in found
                else ""
            )
            if problem:
                log.warning("chapyter-ext: slash command from %r left out: %s", point.name, problem)
            else:
                found[command.name] = command
    return tuple(found.values())


def command_named(name: str) -> SlashCommand | None:
    """The installed command called ``name``, if any."""
    return next((c for c in installed_commands() if c.name == name), None)


def command_name(value: Any) -> str | None:
    """A request's ``command``: None, or the name of an installed server command;
    ``ValueError`` (one line naming the field) otherwise."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError("'command' must be the name of a server slash command.")
    if command_named(value) is None:
        known = ", ".join("/" + c.name for c in installed_commands()) or "none"
        raise ValueError(f"'command': unknown slash command /{value[:32]} (known: {known}).")
    return value


def apply_command(name: str | None, message: str) -> tuple[str, str]:
    """The message the model gets and the system prompt's addition ("" for none).

    ``message`` is what the user typed (``/name args`` or just ``args``); the template gets
    the arguments.
    """
    command = command_named(name) if name else None
    if command is None:
        return message, ""
    text = message.strip()
    prefix = "/" + command.name
    if text.lower() == prefix or text.lower().startswith(prefix + " "):
        text = text[len(prefix) :].strip()
    return command.template.replace("{input}", text or command.default_input), command.instruction


#: The built-in server command, registered in pyproject.toml like any other.
DESCRIBE = SlashCommand(
    name="describe",
    args="NAME",
    description="Describe a DataFrame (or any variable): columns, types, gaps, what stands out",
    template=(
        "Describe {input}: what it holds (shape and what a row is), each column with its type "
        "and range or main values, missing values, and anything that stands out (duplicates, "
        "outliers, odd types). Use only what the notebook's context shows of it; where it shows "
        "too little, say which one line of code would show more."
    ),
    default_input="the DataFrame this notebook works on",
    instruction=(
        "This turn describes data: answer with a one-line summary, then one bullet per column "
        "(or per field), then what stands out. No code unless it is one line to look further."
    ),
)
