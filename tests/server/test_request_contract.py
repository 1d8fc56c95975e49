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
from chapyter_ext.chat import ChatRequest
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
    for name in chat - {"context"}:
        assert getattr(parsed, name) == example[name]
    assert parsed.context.path == example["context"]["path"]
    assert AgentRequest.parse(ROUTES["agent"]["example"]).policy == "ask"
    result = StepAnswer.parse(ROUTES["agent/result"]["example"])
    assert (result.status, result.execution_count, result.has_result) == ("ran", 3, True)


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
    [*REQUIRED, ("agent/trial", "report")],  # report is required unless failure is given
    ids=[f"{r}-{m}" for r, m in [*REQUIRED, ("agent/trial", "report")]],
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
