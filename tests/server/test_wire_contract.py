"""Every event the real server streams, chat and agent, follows the wire contract (``events``
in ``tests/vectors/contract.json``, which ``contract.spec.ts`` holds the browser to)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply
from chapyter_ext.testing.sse import SSEReader
from chapyter_ext.testing.wire_shape import event_problems

from .agent_browser import Browser, agent_body, error, run_code, stdout

VECTORS = Path(__file__).parent.parent / "vectors" / "contract.json"
EVENTS = json.loads(VECTORS.read_text("ascii"))["events"]


def problems(reader: SSEReader, stream: str) -> list[str]:
    return [
        p for name, data, _ in reader.events for p in event_problems(EVENTS, name, stream, data)
    ]


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


async def test_a_chat_reply_and_a_failed_one_follow_the_contract(post_chat, fake):
    fake.script(
        Reply(content="Like this:\n\n```python\nprint(6 * 7)\n```\n", chunk_size=5),
        Reply(status=401, error="Incorrect API key provided."),
    )
    _, reader = await post_chat({"notebook": "work/wire.ipynb", "message": "six times seven?"})
    assert reader.names[0] == "start" and reader.names[-1] == "done"
    assert "token" in reader.names and reader.first("done")["checks"]  # the nested fields too
    assert problems(reader, "chat") == []

    _, failed = await post_chat({"notebook": "work/wire.ipynb", "message": "again?"})
    assert failed.names[-1] == "error"
    assert problems(failed, "chat") == []


async def test_an_agent_turn_follows_the_contract(browser, fake):
    fake.script(
        Reply(content="Let me compute it.", tool_calls=[run_code("x = 6 * 7\nprint(y)")]),
        Reply(tool_calls=[run_code("x = 6 * 7\nprint(x)", "fixed")]),
        Reply(content="Six times seven is 42, as the cell printed."),
    )
    answers = iter([error("NameError", "name 'y' is not defined"), stdout("42\n", 2, "cell-1")])
    reader = await browser.run(agent_body(), lambda step: next(answers))
    assert {"start", "token", "step", "step_done", "done"} <= set(reader.names)
    assert reader.first("done")["steps"]
    assert problems(reader, "agent") == []
    # A stream is one kind or the other: the agent's start and done are not a chat's.
    assert problems(reader, "chat") != []
