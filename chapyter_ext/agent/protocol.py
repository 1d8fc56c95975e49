"""The bodies of the agent routes, validated: what the browser asks and what it posts back.

``POST chapyter-ext/agent`` takes a chat body plus ``policy``; ``POST chapyter-ext/agent/result``
takes one step's result; ``POST chapyter-ext/agent/trial`` one step's trial report. Everything a
browser sends is checked here, with one-line :class:`~chapyter_ext.chat.ChatError` (``bad_request``)
naming the field, so the turn and the loop only ever see well-formed values: nbformat outputs with
the types nbformat gives them, PNGs that are base64 PNGs, bounded in number and size.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..chat import MAX_MESSAGE_CHARS, ChatError, ChatRequest
from .results import StepResult

if TYPE_CHECKING:
    from ..trial.report import TrialReport

POLICIES = ("ask", "risky", "never")
STATUSES = ("ran", "skipped", "failed_to_run", "approved")
OUTPUT_TYPES = ("stream", "execute_result", "display_data", "error")

#: Bounds of one result: far above what a useful step shows, far below a denial of service.
MAX_OUTPUTS = 200
MAX_FIGURES = 20
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 4 * 1024 * 1024  # base64 characters of one PNG
MAX_TEXT_CHARS = 200_000  # a read_cell / list_variables answer
#: The largest ``agent/result`` body: a few PNGs and their outputs.
MAX_RESULT_BODY_BYTES = 24 * 1024 * 1024

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_DATA_URL = "data:image/png;base64,"


@dataclass(frozen=True)
class AgentRequest:
    """A parsed ``POST chapyter-ext/agent`` body: a chat message and the approval policy."""

    chat: ChatRequest
    #: ``ask``, ``risky`` or ``never``; None: the server's ``Chapyter.agent_policy``.
    policy: str | None = None

    @classmethod
    def parse(cls, body: Any, *, max_chars: int = MAX_MESSAGE_CHARS) -> AgentRequest:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        chat = ChatRequest.parse(body, max_chars=max_chars)
        policy = body.get("policy")
        if policy is not None and policy not in POLICIES:
            raise ChatError("bad_request", f"'policy' must be one of {', '.join(POLICIES)}.")
        return cls(chat=chat, policy=policy)


@dataclass(frozen=True)
class StepAnswer:
    """A parsed ``POST chapyter-ext/agent/result`` body: what became of one step."""

    message_id: str
    step_id: str
    #: ran | skipped | failed_to_run (kernel steps); approved | skipped (server steps that
    #: wait for the user).
    status: str
    cell_id: str = ""
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    #: Base64 PNGs (no data: prefix), each checked to be a PNG.
    images: list[str] = field(default_factory=list)
    #: A read step's answer (read_cell, list_variables), or why a run failed.
    text: str | None = None
    #: Whether the body carried a ``result`` object (a run step needs one when it ran).
    has_result: bool = False

    @classmethod
    def parse(cls, body: dict[str, Any]) -> StepAnswer:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        message_id, step_id = body.get("message_id"), body.get("step_id")
        for key, value in (("message_id", message_id), ("step_id", step_id)):
            if not isinstance(value, str) or not value:
                raise ChatError("bad_request", f"'{key}' must be a non-empty string.")
        ids: dict[str, Any] = {"message_id": message_id, "step_id": step_id}
        status = body.get("status")
        if status not in STATUSES:
            raise ChatError("bad_request", f"'status' must be one of {', '.join(STATUSES)}.")
        text = body.get("text")
        if text is not None and not isinstance(text, str):
            raise ChatError("bad_request", "'text' must be a string.")
        if text is not None and len(text) > MAX_TEXT_CHARS:
            raise ChatError("bad_request", f"'text' is longer than {MAX_TEXT_CHARS} characters.")
        result = body.get("result")
        if result is None:
            return cls(**ids, status=status, text=text)
        if not isinstance(result, dict):
            raise ChatError("bad_request", "'result' must be an object.")
        return cls(**ids, status=status, text=text, has_result=True, **_parse_result(result))

    def step_result(self) -> StepResult:
        """What the loop observes of a run step (``failed_to_run``: ``text`` says why)."""
        error = ""
        if self.status == "failed_to_run":
            error = " ".join((self.text or "the browser could not run the cell").split())
        return StepResult(
            outputs=self.outputs,
            execution_count=self.execution_count,
            cell_id=self.cell_id,
            figures=self.figures,
            images=self.images,
            error=error,
        )


@dataclass(frozen=True)
class TrialAnswer:
    """A parsed ``POST chapyter-ext/agent/trial`` body: what one step's trial in the kernel
    gave: its report, or the kernel's failure to start one (``failure``: ename, evalue)."""

    message_id: str
    step_id: str
    report: TrialReport

    @classmethod
    def parse(cls, body: dict[str, Any]) -> TrialAnswer:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        from ..trial.report import TrialReport

        ids = []
        for key in ("message_id", "step_id"):
            value = body.get(key)
            if not isinstance(value, str) or not value:
                raise ChatError("bad_request", f"'{key}' must be a non-empty string.")
            ids.append(value)
        failure = body.get("failure")
        if failure is not None:
            if not isinstance(failure, dict):
                raise ChatError("bad_request", "'failure' must be an object.")
            ename, evalue = failure.get("ename"), failure.get("evalue", "")
            if not isinstance(ename, str) or not isinstance(evalue, str):
                raise ChatError("bad_request", "'failure' needs string 'ename' and 'evalue'.")
            report = TrialReport.kernel_failed(ename[:100], evalue[:300])
        else:
            try:
                report = TrialReport.from_dict(body.get("report"))
            except ValueError as err:
                raise ChatError("bad_request", str(err)) from None
        return cls(ids[0], ids[1], report)


def _parse_result(result: dict[str, Any]) -> dict[str, Any]:
    cell_id = result.get("cell_id", "")
    if not isinstance(cell_id, str):
        raise ChatError("bad_request", "'result.cell_id' must be a string.")
    count = result.get("execution_count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        raise ChatError("bad_request", "'result.execution_count' must be a whole number or null.")
    outputs = _list_of(result, "outputs", dict, MAX_OUTPUTS)
    for index, output in enumerate(outputs):
        _check_output(output, f"result.outputs[{index}]")
    figures = _list_of(result, "figures", dict, MAX_FIGURES)
    images = [
        _png(image, f"result.images[{index}]")
        for index, image in enumerate(_list_of(result, "images", str, MAX_IMAGES))
    ]
    return {
        "cell_id": cell_id,
        "execution_count": count,
        "outputs": outputs,
        "figures": figures,
        "images": images,
    }


def _list_of(data: dict[str, Any], key: str, kind: type, limit: int) -> list[Any]:
    value = data.get(key, [])
    name = "an object" if kind is dict else "a string"
    if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
        raise ChatError("bad_request", f"'result.{key}' must be a list, each item {name}.")
    if len(value) > limit:
        raise ChatError("bad_request", f"'result.{key}' has more than {limit} items.")
    return value


def _is_text(value: Any) -> bool:
    """nbformat's multiline string: a str or a list of str."""
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


def _check_output(output: dict[str, Any], where: str) -> None:
    """One nbformat output with the types nbformat gives its fields."""
    kind = output.get("output_type")
    if kind not in OUTPUT_TYPES:
        raise ChatError(
            "bad_request", f"'{where}.output_type' must be one of {', '.join(OUTPUT_TYPES)}."
        )
    if kind == "stream":
        if not isinstance(output.get("name"), str) or not _is_text(output.get("text")):
            raise ChatError("bad_request", f"'{where}' needs a string 'name' and text 'text'.")
    elif kind == "error":
        traceback = output.get("traceback", [])
        if (
            not isinstance(output.get("ename"), str)
            or not isinstance(output.get("evalue"), str)
            or not isinstance(traceback, list)
            or not all(isinstance(line, str) for line in traceback)
        ):
            raise ChatError(
                "bad_request",
                f"'{where}' needs string 'ename' and 'evalue' and a list of string 'traceback'.",
            )
    else:
        data = output.get("data")
        if not isinstance(data, dict) or not all(
            _is_text(v) or isinstance(v, dict) for v in data.values()
        ):
            raise ChatError("bad_request", f"'{where}.data' must map MIME types to text.")


def _png(image: str, where: str) -> str:
    """A base64 PNG (a ``data:image/png;base64,`` prefix is dropped), bounded and checked."""
    if image.startswith(_DATA_URL):
        image = image[len(_DATA_URL) :]
    # nbformat keeps base64 with line breaks (at least a trailing one); a data URL takes none.
    image = image.replace("\n", "").replace("\r", "").strip()
    if len(image) > MAX_IMAGE_BYTES:
        raise ChatError("bad_request", f"'{where}' is larger than {MAX_IMAGE_BYTES} characters.")
    try:
        head = base64.b64decode(image[:12], validate=True)
    except (binascii.Error, ValueError):
        head = b""
    if not head.startswith(_PNG_MAGIC):
        raise ChatError("bad_request", f"'{where}' must be a base64 PNG.")
    return image
