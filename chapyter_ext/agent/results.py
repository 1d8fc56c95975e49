"""What a driver reports back for a step: a cell that ran (:class:`StepResult`), or what any
other tool gave (:class:`ToolOutput`: text, images, or why it could not run).

Pure data, no I/O: the browser's posts are parsed into these (``agent/protocol.py``), the
headless driver and MCP servers build them, and each tool's record turns them into what the
model sees (:meth:`chapyter_ext.agent.tools.Tool.observe`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StepResult:
    """What running a step's cell produced, as the driver collected it."""

    #: nbformat outputs (``{"output_type": "stream" | "execute_result" | "display_data" |
    #: "error", ...}``).
    outputs: list[dict] = field(default_factory=list)
    execution_count: int | None = None
    #: The id of the notebook cell it ran in ("" when none).
    cell_id: str = ""
    #: Figure digests read in the kernel (:func:`chapyter_ext.context.figures.take`).
    figures: list[dict] = field(default_factory=list)
    #: The figures as base64 PNGs.
    images: list[str] = field(default_factory=list)
    #: Set when the code could not be run at all (one line: "the kernel is dead").
    error: str = ""

    @property
    def failed(self) -> bool:
        """True when the code did not run or raised."""
        return bool(self.error) or any(o.get("output_type") == "error" for o in self.outputs)

    @classmethod
    def from_json(cls, data: Any) -> StepResult:
        """A result from decoded JSON (the browser's ``result``); raises ``ValueError`` naming
        the first field of the wrong type. Unknown keys are ignored."""
        if not isinstance(data, dict):
            raise ValueError("result must be an object")
        outputs = data.get("outputs", [])
        if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
            raise ValueError("result.outputs must be a list of nbformat outputs")
        count = data.get("execution_count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise ValueError("result.execution_count must be a whole number or null")
        cell_id = data.get("cell_id") or ""
        if not isinstance(cell_id, str):
            raise ValueError("result.cell_id must be a string")
        figures = data.get("figures", [])
        if not isinstance(figures, list) or not all(isinstance(f, dict) for f in figures):
            raise ValueError("result.figures must be a list of figure digests")
        images = data.get("images", [])
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            raise ValueError("result.images must be a list of base64 PNG strings")
        error = data.get("error") or ""
        if not isinstance(error, str):
            raise ValueError("result.error must be a string")
        return cls(outputs, count, cell_id, figures, images, error)


@dataclass
class ToolOutput:
    """What a tool other than a code cell gave: text (a cell read, the variables, an MCP
    server's answer), images, and whether it failed."""

    text: str = ""
    #: Images as (MIME type, base64 data).
    images: list[tuple[str, str]] = field(default_factory=list)
    #: One line each for parts that cannot be shown to the model (audio, a binary resource).
    notes: list[str] = field(default_factory=list)
    #: Set when the tool could not be carried out at all (one line: "the server is not
    #: running", "timed out after 30 s").
    error: str = ""
    #: The tool ran and said it failed (MCP's ``isError``): its text says why.
    is_error: bool = False

    @property
    def failed(self) -> bool:
        """True when the tool did not run or reported an error."""
        return bool(self.error) or self.is_error
