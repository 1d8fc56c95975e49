"""The request bodies against the wire contract (``requests`` in ``tests/vectors/contract.json``,
documented in docs/protocol.md): each example is what the server's own parsing accepts, and a
body without one of its required fields is a 400 with one line, through the real server.
``wire-contract.spec.ts`` holds the browser's clients to the same field names."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.agent.protocol import AgentRequest, StepAnswer, TrialAnswer
from chapyter_ext.chat import ChatRequest, ContextRequest
from chapyter_ext.complete.service import CompletionRequest
from chapyter_ext.fix.consent import FixTrial
from chapyter_ext.fix.service import parse_fix_request
from chapyter_ext.testing.wire_shape import body_problems, request_routes

VECTORS = json.loads(
    (Path(__file__).parents[2] / "tests" / "vectors" / "contract.json").read_text("ascii")
)
REQUESTS = VECTORS["requests"]
ROUTES = request_routes(REQUESTS)
#: The parsing each route's handler (server/handlers.py) runs on its body; chat/stop reads its
#: one field in the handler itself, so its example is posted instead.
PARSERS: dict[str, Any] = {
    "chat": ChatRequest.parse,
    "agent": AgentRequest.parse,
    "agent/result": StepAnswer.parse,
    "agent/trial": TrialAnswer.parse,
    "fix": parse_fix_request,
    "fix/trial": FixTrial.parse,
    "complete": CompletionRequest.parse,
    "context": ContextRequest.parse,
}
#: The dataclass each route's body is parsed into, and the contract fields it does not keep
#: as a field of its own (``failure`` becomes the trial's report).
PARSED: dict[str, tuple[Any, set[str]]] = {
    "fix": (parse_fix_request, set()),
    "fix/trial": (FixTrial.parse, {"failure"}),
    "complete": (CompletionRequest.parse, set()),
    "context": (ContextRequest.parse, set()),
}
REQUIRED = [
    (route, field["name"])
    for route, entry in ROUTES.items()
    for field in entry["fields"]
    if field["required"]
]


def test_every_route_the_browser_posts_to_is_in_the_contract():
    assert set(ROUTES) == {*PARSERS, "chat/stop"}
    for entry in REQUESTS["routes"]:
        assert entry["method"] == "POST"
        assert entry["response"] and entry["meaning"]
        assert body_problems(REQUESTS, entry["route"], entry["example"]) == []


@pytest.mark.parametrize("route", list(PARSERS))
def test_each_example_is_accepted_by_the_servers_parsing(route):
    parsed = PARSERS[route](ROUTES[route]["example"])
    assert parsed.message_id if route.startswith("agent/") else parsed


def test_the_chat_and_agent_requests_have_exactly_the_contracts_fields():
    # A field the server starts reading (or stops reading) must be added to the contract too.
    chat = {f.name for f in dataclasses.fields(ChatRequest)}
    assert chat == {f["name"] for f in ROUTES["chat"]["fields"]}
    agent = {f["name"] for f in ROUTES["agent"]["fields"]}
    assert agent == chat | {f.name for f in dataclasses.fields(AgentRequest)} - {"chat"}
    example = ROUTES["chat"]["example"]
    parsed = ChatRequest.parse(example)
    for name in chat - {"context", "mentions", "attachments"}:
        value = getattr(parsed, name)
        # Lists are kept as tuples (a request is frozen).
        assert (list(value) if isinstance(value, tuple) else value) == example[name], name
    assert parsed.context.path == example["context"]["path"]
    # A mention keeps what names it (stored so); a cell's text is read, not kept.
    named = ("kind", "label", "name", "cellId", "path")
    assert [m.stored() for m in parsed.mentions] == [
        {key: m[key] for key in named if key in m} for m in example["mentions"]
    ]
    assert parsed.mentions[1].source == example["mentions"][1]["source"]
    # An attachment keeps its data for the turn; the history keeps only its note.
    assert [{**a.note(), "data": a.data} for a in parsed.attachments] == example["attachments"]
    agent_request = AgentRequest.parse(ROUTES["agent"]["example"])
    assert agent_request.policy == "ask"
    assert list(agent_request.chat.plan_steps) == ROUTES["agent"]["example"]["plan_steps"]
    result = StepAnswer.parse(ROUTES["agent/result"]["example"])
    assert (result.status, result.execution_count, result.has_result) == ("ran", 3, True)


@pytest.mark.parametrize("route", list(PARSED))
def test_the_other_bodies_have_exactly_the_contracts_fields(route):
    # A field the server starts reading (or stops reading) must be added to the contract too.
    parse, extra = PARSED[route]
    parsed = parse(ROUTES[route]["example"])
    kept = {f.name for f in dataclasses.fields(parsed)}
    assert kept | extra == {f["name"] for f in ROUTES[route]["fields"]}


def test_a_body_off_the_contract_is_caught():
    example = ROUTES["agent/result"]["example"]
    assert body_problems(REQUESTS, "agent/result", {**example, "status": 1}) != []
    assert body_problems(REQUESTS, "agent/result", {**example, "extra": 1}) != []
    assert body_problems(REQUESTS, "chat/stop", {}) != []


async def test_the_stop_example_is_accepted(get_json):
    status, data = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body=ROUTES["chat/stop"]["example"]
    )
    assert (status, data["stopped"]) == (200, False)


@pytest.mark.parametrize(
    ("route", "missing"),
    [*REQUIRED, ("agent/trial", "report"), ("fix/trial", "report")],  # unless failure is given
    ids=[f"{r}-{m}" for r, m in [*REQUIRED, ("agent/trial", "report"), ("fix/trial", "report")]],
)
async def test_a_body_without_a_required_field_is_a_400_with_one_line(
    get_json, fake, route, missing
):
    body = {k: v for k, v in ROUTES[route]["example"].items() if k != missing}
    status, data = await get_json("chapyter-ext", *route.split("/"), method="POST", body=body)
    assert status == 400, data
    assert data["error"]["kind"] == "bad_request"
    message = data["error"]["message"]
    assert message and "\n" not in message
    assert fake.requests == []
