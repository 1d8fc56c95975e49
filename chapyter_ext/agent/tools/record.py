"""One tool of the agent, as one record: what the model is told, where it runs, when it asks,
and how its result reads.

A :class:`Tool` holds its name, description and JSON schema (what the model sees), **where it
runs** (``runs``: the notebook's kernel, through the browser's own kernel connection or the
headless driver's nbclient, or the Jupyter server) and what the kernel side does (``op``: run a
new cell, read a cell of the notebook, evaluate an expression silently), its approval class
(``acts``: acts on the world, or reads only), how it is shown (``label``, :meth:`Tool.title`)
and how its result becomes text and images for the model (:meth:`Tool.observe`). Every driver
(the server's turn, the headless CLI, the browser through the ``step`` event) dispatches on
``runs`` and ``op`` only, so a new tool is a new record, not a new branch in each.

Pure: no I/O (a server tool's :meth:`Tool.call` is the one exception, and it is async).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...redact import Redactor
from ..results import ToolOutput

if TYPE_CHECKING:
    from ...policy.consent import Plan

#: Where a tool runs.
RUNS_KERNEL = "kernel"
RUNS_SERVER = "server"

#: What the kernel side does for a kernel tool (the browser and the headless driver know these
#: three), and the server side's one operation.
OP_RUN_CELL = "run_cell"  # insert a code cell holding arguments["code"], run it, read it back
OP_READ_CELL = "read_cell"  # read the source and outputs of an existing cell of the notebook
OP_EVALUATE = "evaluate"  # evaluate ``expression`` silently; its value is {"text": str}
OP_CALL = "call"  # the server calls the tool itself (MCP)
KERNEL_OPS = (OP_RUN_CELL, OP_READ_CELL, OP_EVALUATE)


class BadToolCall(ValueError):
    """A tool call that cannot be acted on; ``str()`` is one line to give back to the model."""


@dataclass(frozen=True)
class Approval:
    """Whether a call waits for the user, what the policy found, and (``refused``) why it must
    not run at all (one line ending the turn). ``plan``: code's decision
    (:func:`chapyter_ext.policy.consent.plan`); when it is a trial, ``needs`` holds only until
    the trial's report decides (:meth:`~chapyter_ext.agent.loop.AgentLoop.on_trial`)."""

    needs: bool
    reasons: tuple[str, ...] = ()
    refused: str = ""
    plan: Plan | None = None


@dataclass
class Observation:
    """What the model is told of a step's result, and the one line the chat shows."""

    text: str
    #: OpenAI image parts (``{"type": "image_url", ...}``), when the model takes images.
    images: list[dict] = field(default_factory=list)
    #: "ok", "error" or "read".
    status: str = "ok"
    outcome: str = ""


def clip(text: str, budget: int, redactor: Redactor) -> str:
    """``text`` redacted, within ``budget`` characters (a note says how much was cut)."""
    shown = redactor(text[: budget + redactor.margin])
    if len(shown) > budget:
        shown = shown[:budget] + f"\n… [{len(shown) - budget} more characters cut]"
    return shown


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class Tool:
    """A tool's record. Subclasses set the class attributes and override what differs."""

    name: str = ""
    description: str = ""
    #: The JSON schema of the arguments (an object).
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012 (never mutated)
    runs: str = RUNS_KERNEL
    op: str = OP_EVALUATE
    #: The approval class: True, it acts (changes the kernel, files, the world) and asks as the
    #: policy says; False, it only reads and never asks.
    acts: bool = False
    #: Shown in the panel ("run code", "time · get_current_time").
    label: str = ""
    #: The MCP server a tool comes from ("" for the built-in ones).
    server: str = ""

    # -- what the model sees ------------------------------------------------------------------

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling entry of the tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments, checked against the schema's required keys and top-level types;
        :class:`BadToolCall` (one line for the model) if they cannot be used."""
        args = arguments if isinstance(arguments, dict) else {}
        properties = self.parameters.get("properties") or {}
        for key in self.parameters.get("required") or []:
            if key not in args:
                raise BadToolCall(f"{self.name} needs an argument {key!r}.")
        for key, value in args.items():
            kind = (properties.get(key) or {}).get("type")
            if kind and not _has_type(value, kind):
                raise BadToolCall(f"{self.name}'s {key!r} must be of type {kind}.")
        return args

    # -- approval ----------------------------------------------------------------------------

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
        """Whether this call waits for the user under ``policy`` (ask, risky, never): a tool
        that only reads never asks; one that acts asks unless the policy is ``never``.
        ``known_types``, ``trials`` (whether a confined trial can be made) and
        ``secret_names`` (variables reading which asks) matter to tools that run code."""
        return Approval(needs=self.acts and policy != "never")

    # -- display -------------------------------------------------------------------------------

    def title(self, arguments: dict[str, Any]) -> str:
        """The step's line in the chat ("read cell 3")."""
        return self.label or self.name

    def public(self) -> dict[str, Any]:
        """What the browser learns of the tool (``GET config``'s ``agent.tools``)."""
        return {
            "name": self.name,
            "label": self.label or self.name,
            "runs": self.runs,
            "op": self.op,
            "acts": self.acts,
            "server": self.server,
            "description": one_line(self.description, 200),
        }

    # -- running -------------------------------------------------------------------------------

    def request(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """What the kernel side needs to carry the call out (the ``step`` event's fields):
        ``code`` for ``run_cell``, ``cell`` for ``read_cell``, ``expression`` for ``evaluate``."""
        return {}

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        """Carry out a server tool's call (``runs == "server"``)."""
        raise NotImplementedError(f"{self.name} does not run on the server")

    # -- results -------------------------------------------------------------------------------

    def observe(self, result: Any, *, budget: int, images: bool, redactor: Redactor) -> Observation:
        """What the model sees of ``result`` (a :class:`ToolOutput` or text) within
        ``budget`` characters, redacted, and its one-line outcome."""
        output = result if isinstance(result, ToolOutput) else ToolOutput(text=str(result))
        if output.error:
            text = clip(f"Could not be carried out: {output.error}", budget, redactor)
            return Observation(text, status="error", outcome=one_line(redactor(output.error)))
        notes = list(output.notes)
        parts = _image_parts(output.images) if images else []
        unsent = len(output.images) - len(parts)
        if unsent:
            why = "of a type the model cannot take" if images else "this model is not sent images"
            notes.append(f"[{unsent} image{'s' if unsent != 1 else ''} returned, not shown: {why}]")
        # The notes are short and say what is missing: they stay whatever the text's length.
        tail = redactor("\n".join(notes))[: budget // 2]
        room = max(0, budget - len(tail) - 1)
        text = clip(output.text.strip() or ("" if tail else "(nothing)"), room, redactor)
        text = f"{text}\n{tail}".strip() if tail else text
        if output.is_error:
            text = "The tool reported an error:\n" + text
        status = "error" if output.is_error else "ok"
        return Observation(text, parts, status, self.outcome(output, redactor))

    def outcome(self, output: ToolOutput, redactor: Redactor) -> str:
        """One line for the chat: what the call gave."""
        # The start of the text on one line: a JSON answer reads as its first fields.
        said = one_line(redactor(output.text[:400])) if output.text.strip() else "no text"
        return f"error: {said}" if output.is_error else said


#: Image types the OpenAI chat API takes as image parts.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _image_parts(images: list[tuple[str, str]]) -> list[dict]:
    return [
        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
        for mime, data in images
        if mime in IMAGE_TYPES
    ]


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _has_type(value: Any, kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    for name in kinds:
        types = _JSON_TYPES.get(name)
        if types is None:
            return True  # a type this check does not know: the tool decides
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, types):
            return True
    return False
