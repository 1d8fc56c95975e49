"""The chat's and agent's streamed events against the wire contract (``events`` in
``tests/vectors/contract.json``), which ``contract.spec.ts`` holds the browser to; and
``docs/protocol.md``, generated from it. The real streams are checked in
``tests/server/test_wire_contract.py``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from chapyter_ext.chat import events
from chapyter_ext.contract.protocol_doc import main, protocol_markdown
from chapyter_ext.redact import Redactor
from chapyter_ext.testing.sse import SSEReader
from chapyter_ext.testing.wire_shape import event_problems, event_types, fields_of

ROOT = Path(__file__).parent.parent
VECTORS = json.loads((ROOT / "tests" / "vectors" / "contract.json").read_text("ascii"))
EVENTS = VECTORS["events"]
EXAMPLES = [(entry["event"], ex) for entry in EVENTS["types"] for ex in entry["examples"]]
#: The class the server builds each event of a stream with (the agent's own start and done).
AGENT_CLASSES = {"start": events.AgentStart, "done": events.AgentDone}


def event_class(name: str, stream: str) -> type:
    if stream == "agent" and name in AGENT_CLASSES:
        return AGENT_CLASSES[name]
    [cls] = [c for c, n in events._NAMES.items() if n == name and c not in AGENT_CLASSES.values()]
    return cls


def streams_of(cls: type) -> list[str]:
    if cls in AGENT_CLASSES.values() or cls in (events.Step, events.StepDone, events.PlanStep):
        return ["agent"]
    if cls in (events.Start, events.Done):
        return ["chat"]
    return ["chat", "agent"]


def decode(raw: bytes) -> tuple[str, dict]:
    sse = SSEReader()
    sse.feed(raw)
    [(name, data, _)] = sse.events
    return name, data


def test_the_contract_has_every_event_type_the_server_emits():
    assert set(events._NAMES.values()) == set(event_types(EVENTS))
    assert f"{EVENTS['keepalive']}\n\n".encode() == events.KEEPALIVE


@pytest.mark.parametrize("cls", list(events._NAMES), ids=lambda c: c.__name__)
def test_each_event_class_has_the_contracts_fields(cls):
    # A field added to an event (or dropped from it) must be added to the contract too.
    entry = event_types(EVENTS)[events._NAMES[cls]]
    for stream in streams_of(cls):
        assert stream in entry["streams"]
        fields = {f["name"]: f for f in fields_of(entry, stream)}
        assert {f.name for f in dataclasses.fields(cls)} == set(fields), stream
        for field in dataclasses.fields(cls):
            has_default = field.default is not dataclasses.MISSING or (
                field.default_factory is not dataclasses.MISSING
            )
            if not fields[field.name]["required"]:
                # Optional on the wire: encode() leaves out None, so the default must be None.
                assert has_default and field.default is None, field.name


@pytest.mark.parametrize(
    ("name", "example"), EXAMPLES, ids=[f"{n}-{e['stream']}" for n, e in EXAMPLES]
)
def test_each_example_is_what_the_server_sends(name, example):
    data = example["data"]
    assert event_problems(EVENTS, name, example["stream"], data) == []
    cls = event_class(name, example["stream"])
    sent = encode_example(cls, data)
    assert sent == (name, data)


def encode_example(cls: type, data: dict) -> tuple[str, dict]:
    tuples = {"reasons", "steps", "checks"}
    kwargs = {k: tuple(v) if k in tuples else v for k, v in data.items()}
    return decode(events.encode(cls(**kwargs), Redactor()))


def test_an_event_off_the_contract_is_caught():
    start = {"chat_id": "c", "message_id": "m", "model": "x"}
    assert event_problems(EVENTS, "start", "chat", start) == []
    assert event_problems(EVENTS, "start", "chat", {**start, "policy": "ask"}) != []
    assert event_problems(EVENTS, "start", "agent", start) != []  # lacks policy, tools, images
    assert event_problems(EVENTS, "token", "chat", {"text": 3}) != []
    assert event_problems(EVENTS, "step", "chat", {}) != []
    assert event_problems(EVENTS, "retry", "chat", {}) != []
    done = {"message_id": "m", "text": "", "status": "complete", "checks": [{"block_id": "b"}]}
    assert event_problems(EVENTS, "done", "chat", done) != []  # a check lacks its verdict


def test_docs_protocol_md_is_generated_from_the_vectors(capsys):
    page = (ROOT / "docs" / "protocol.md").read_text("utf-8")
    expected = protocol_markdown(VECTORS)
    assert page == expected, (
        "docs/protocol.md drifted from tests/vectors/contract.json: run python -m "
        "chapyter_ext.contract.protocol_doc tests/vectors/contract.json > docs/protocol.md"
    )
    vectors = ROOT / "tests" / "vectors" / "contract.json"
    before = vectors.read_bytes()
    for _ in range(2):
        # Only reads the vectors: regenerating twice gives the same page and leaves them alone.
        assert main([str(vectors)]) == 0
        assert capsys.readouterr().out == expected
    assert vectors.read_bytes() == before
    for entry in EVENTS["types"]:
        assert f"## {entry['event']}\n" in page
    for entry in VECTORS["requests"]["routes"]:
        assert f"### {entry['method']} {entry['route']}\n" in page
