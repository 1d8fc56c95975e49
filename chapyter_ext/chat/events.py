"""THE wire format of a streamed chat reply: typed events in, server-sent-event bytes out.

The contract both sides are tested against is ``events`` in ``tests/vectors/contract.json``
(``tests/test_wire_contract.py``, ``labextension/src/__tests__/wire-contract.spec.ts``); its
page, ``docs/protocol.md``, is generated from it: a new event or field goes there first.

Events, in order: ``start`` (``chat_id``, ``message_id``, ``model``), optionally ``notice``
(``message``: something the user should know, e.g. that part of the history was damaged), any
number of ``token`` (``text``), optionally a ``notice`` again (that the question or the reply
could not be saved: a full disk, a quota; the answer still comes), then ``done``
(``message_id``, ``text``, ``status``, and ``usage`` when the endpoint reported it:
``prompt_tokens``, ``completion_tokens``, ``total_tokens``, and ``cost`` where the
administrator priced the model; ``checks``: the verdicts of the answer's code blocks,
``{block_id, runnable, problem}``, when it has any: the browser offers to run only a block
whose verdict passed) or ``error`` (``kind``, ``message``). A comment line (``: keepalive``)
keeps idle proxies from closing the connection while the model thinks.

An agent turn (``POST chapyter-ext/agent``, :mod:`chapyter_ext.agent.service`) uses the same stream:
``start`` also carries ``policy``, ``tools`` and ``images``; each step is a ``step`` (``step_id``,
``kind``: the tool, ``op``, ``runs``, ``title``, the fields its op needs, ``needs_approval``,
``reasons``, and ``trial`` for code to try in a confined copy of the kernel first; see
:class:`Step`), and once its result is in a ``step_done`` (``step_id``, ``outcome``: one line,
``status``, ``result`` for server steps); ``done`` also carries ``steps`` (what ran) and ``halt``
(the one line saying which cap stopped the turn, or "").

Plan first (:mod:`chapyter_ext.chat.plans`): a ``/plan`` reply sends ``plan`` (``message_id``,
``steps``: ``{text, status, note}``) just before ``done``; an agent turn that follows a plan
sends it after ``start``, then a ``plan_step`` (``step``: 1-based, ``status``: done, failed or
skipped, ``note``) each time the model marks one.

Every string of every event (but the server's own random ids) passes the
:class:`~chapyter_ext.redact.Redactor` in :func:`encode`, so nothing a model echoes (the
configured key, a key the user pasted, a part of either) reaches the browser. A secret may come
split across two token deltas, so :class:`~chapyter_ext.redact.TokenRedactor` (the secret
policy's streaming side, shared with ``%%ai``'s progress display) holds back the tail that could
still be the start of one (a secret's prefix, or a word not yet finished) until the next delta
or the end of the reply shows what it is.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Union

from ..history import repair_text
from ..redact import Redactor, one_line
from ..redact import TokenRedactor as TokenRedactor  # the streams' side of the policy
from ..redact import hold_secret_starts as hold_secret_starts


@dataclass(frozen=True)
class Start:
    """The reply began: the ids the browser needs to stop it and to continue the chat."""

    chat_id: str
    message_id: str
    model: str


@dataclass(frozen=True)
class Notice:
    """Something the user should be told once (one line)."""

    message: str


@dataclass(frozen=True)
class Token:
    """More text of the reply."""

    text: str


@dataclass(frozen=True)
class Done:
    """The reply ended; ``text`` is all of it (redacted as a whole), ``status`` complete/stopped;
    ``checks``: its code blocks' verdicts (None: it has none)."""

    message_id: str
    text: str
    status: str
    #: Tokens (and cost) of the reply (:meth:`~chapyter_ext.llm.usage.UsageMeter.as_dict`).
    usage: dict[str, Any] | None = None
    checks: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class Error:
    """The reply failed; ``message`` is one line."""

    kind: str
    message: str


@dataclass(frozen=True)
class AgentStart:
    """An agent turn began: the ids, and how it will run (approval policy, tools, images)."""

    chat_id: str
    message_id: str
    model: str
    policy: str
    tools: bool
    images: bool


@dataclass(frozen=True)
class Step:
    """A step of an agent turn, as its tool's record describes it.

    ``kind`` is the tool's name; ``runs`` where it runs (``kernel``: the browser carries it out
    through the notebook's kernel connection, as ``op`` says: ``run_cell`` (``code``,
    ``purpose``), ``read_cell`` (``cell``), ``evaluate`` (``expression``); ``server``: the
    server calls it, ``op`` ``call``, once approved when ``needs_approval``). ``title``,
    ``label`` and ``server`` are how the chat shows it; ``arguments`` (server steps) what the
    call is given. Absent fields (None) are left out of the event.
    """

    step_id: str
    kind: str
    op: str = "run_cell"
    runs: str = "kernel"
    title: str = ""
    label: str | None = None
    server: str | None = None
    code: str | None = None
    purpose: str | None = None
    cell: str | None = None
    expression: str | None = None
    arguments: dict[str, Any] | None = None
    needs_approval: bool = False
    reasons: tuple[str, ...] = ()
    #: run_cell steps to try first: the user expression that runs the trial in the kernel
    #: (its report goes to ``agent/trial``, which answers whether the step asks).
    trial: str | None = None


@dataclass(frozen=True)
class StepDone:
    """A step's result arrived (or the server's call returned): ``outcome`` is the one-line
    summary, ``status`` ok/error/read/skipped, ``result`` what the model was told of a server
    step's result (shown in the chat; None for kernel steps, whose cell shows it)."""

    step_id: str
    outcome: str
    status: str | None = None
    result: str | None = None


@dataclass(frozen=True)
class AgentDone:
    """The agent turn ended: the final answer (or why it stopped) and what ran."""

    message_id: str
    text: str
    status: str
    steps: tuple[dict[str, Any], ...] = field(default=())
    halt: str = ""
    #: Tokens (and cost) of every model call of the turn together.
    usage: dict[str, Any] | None = None
    checks: tuple[dict[str, Any], ...] | None = None
    #: The final answer's numbers, each found or not in what the turn saw (None: none).
    numbers: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class Plan:
    """A plan's steps (``{text, status, note}``, :mod:`chapyter_ext.history.plans`): a ``/plan``
    answer's, read from it (before ``done``), or the plan an agent turn follows (after
    ``start``)."""

    message_id: str
    steps: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class PlanStep:
    """An agent turn marked step ``step`` (1-based) of its plan ``status`` (done, failed,
    skipped), ``note`` saying why in one line."""

    step: int
    status: str
    note: str = ""


@dataclass(frozen=True)
class Heartbeat:
    """Nothing happened for a while: a comment line to keep the connection open."""


ChatEvent = Union[
    Start,
    Notice,
    Token,
    Done,
    Error,
    Heartbeat,
    AgentStart,
    Step,
    StepDone,
    AgentDone,
    Plan,
    PlanStep,
]

_NAMES: dict[type, str] = {
    Start: "start",
    Notice: "notice",
    Token: "token",
    Done: "done",
    Error: "error",
    AgentStart: "start",
    Step: "step",
    StepDone: "step_done",
    AgentDone: "done",
    Plan: "plan",
    PlanStep: "plan_step",
}
KEEPALIVE = b": keepalive\n\n"


def encode(event: ChatEvent, redactor: Redactor) -> bytes:
    """One event as server-sent-event bytes, every string redacted.

    JSON keeps ``data`` on one line whatever the text holds; lone surrogates (which UTF-8 cannot
    carry) become U+FFFD rather than failing the stream.
    """
    if isinstance(event, Heartbeat):
        return KEEPALIVE
    data = {k: v for k, v in asdict(event).items() if v is not None}
    for key, value in data.items():
        if key.endswith("_id"):
            continue  # ours (random hex, which the policy would take for a key), never a secret
        data[key] = one_line(value, redactor) if key == "message" else _redacted(value, redactor)
    if isinstance(event, Error):
        data["kind"] = data["kind"] or "internal"
    text = f"event: {_NAMES[type(event)]}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
    return repair_text(text).encode("utf-8")


def _redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it redacted (but those under a key ending in ``_id``)."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, (list, tuple)):
        return [_redacted(v, redactor) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k.endswith("_id") and isinstance(v, str) else _redacted(v, redactor)
            for k, v in value.items()
        }
    return value  # numbers, booleans, None


def is_last(event: ChatEvent) -> bool:
    """Whether ``event`` ends the stream."""
    return isinstance(event, (Done, Error, AgentDone))
