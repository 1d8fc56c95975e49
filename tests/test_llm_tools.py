"""Model calls with tools (chapyter_ext.llm.calls) against the loopback server: the real
``openai`` SDK over real sockets, tool calls streamed and not, broken ones, refused tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chapyter_ext.agent.tools import ToolCall
from chapyter_ext.llm import Endpoint, LLMError, StepDelta, astream_step, complete_step
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply
from tests.endpoints import KEY, run
from tests.endpoints import loopback_endpoint as endpoint

USER = [{"role": "user", "content": "what is the mean?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run_code",
            "description": "Run Python code in a new cell.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "purpose": {"type": "string"}},
                "required": ["code"],
            },
        },
    }
]
RUN = {"name": "run_code", "arguments": {"code": "print(df['x'].mean())", "purpose": "mean"}}
READ = {"name": "read_cell", "arguments": {"cell": "3"}}


pytestmark = pytest.mark.usefixtures("llm_clients")


async def collect(ep: Endpoint, tools: list[dict] | None = TOOLS) -> list[StepDelta]:
    return [item async for item in astream_step(ep, USER, tools)]


def fails(kind: str, call: Any, *args: Any, **kwargs: Any) -> LLMError:
    with pytest.raises(LLMError) as caught:
        call(*args, **kwargs)
    err = caught.value
    assert err.kind == kind, str(err)
    assert "\n" not in str(err) and KEY not in str(err)
    return err


# -- streamed ----------------------------------------------------------------------------------


def test_astream_step_assembles_streamed_tool_calls(fake_openai: FakeOpenAIServer) -> None:
    # Small chunks: each call's arguments arrive in many pieces, told apart by index.
    fake_openai.script(Reply(content="Let me look.", chunk_size=5, tool_calls=[RUN, READ]))
    items = run(collect(endpoint(fake_openai)))
    *pieces, last = items
    assert "".join(p.text for p in pieces) == "Let me look."
    assert not any(p.done or p.tool_calls for p in pieces)
    assert last.done and last.finish_reason == "tool_calls" and last.model == "fake-model"
    assert [(c.name, c.arguments) for c in last.tool_calls] == [
        ("run_code", RUN["arguments"]),
        ("read_cell", {"cell": "3"}),
    ]
    assert all(isinstance(c, ToolCall) and c.id.startswith("call_fake_") for c in last.tool_calls)
    assert len({c.id for c in last.tool_calls}) == 2
    body = fake_openai.requests[-1].body
    assert body["tools"] == TOOLS and body["stream"] is True
    assert fake_openai.requests[-1].chunks_sent > 10


def test_astream_step_without_tools_is_plain_text(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="The mean is 2.5.", chunk_size=4))
    *pieces, last = run(collect(endpoint(fake_openai), tools=None))
    assert "".join(p.text for p in pieces) == "The mean is 2.5."
    assert last.done and last.tool_calls == [] and last.finish_reason == "stop"
    assert "tools" not in fake_openai.requests[-1].body


def test_tool_calls_alone_are_not_an_empty_answer(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(tool_calls=[{"name": "list_variables", "arguments": {}}]))
    items = run(collect(endpoint(fake_openai)))
    assert len(items) == 1 and items[0].done
    assert items[0].tool_calls[0].name == "list_variables"
    assert items[0].tool_calls[0].arguments == {}


def test_a_cut_among_tool_calls_is_retried(fake_openai: FakeOpenAIServer) -> None:
    # No prose reached the caller yet, so asking again is safe.
    fake_openai.script(Reply(tool_calls=[RUN], chunk_size=4, cut_after=3), Reply(tool_calls=[RUN]))
    items = run(collect(endpoint(fake_openai)))
    assert items[-1].tool_calls[0].arguments == RUN["arguments"]
    assert len(fake_openai.requests) == 2


def test_streamed_invalid_arguments_are_bad_response(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(tool_calls=[{"name": "run_code", "arguments": '{"code": "x'}]))
    err = fails("bad_response", run, collect(endpoint(fake_openai)))
    assert "run_code" in str(err) and "not valid JSON" in str(err)
    assert len(fake_openai.requests) == 1  # not retried


# -- not streamed ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_complete_step_returns_text_and_tool_calls(
    fake_openai: FakeOpenAIServer, stream: bool
) -> None:
    fake_openai.script(Reply(content="Running it.", chunk_size=3, tool_calls=[RUN]))
    pieces: list[str] = []
    reply = complete_step(endpoint(fake_openai), USER, TOOLS, pieces.append, stream=stream)
    assert reply.text == "Running it." == "".join(pieces)
    assert reply.finish_reason == "tool_calls" and reply.model == "fake-model"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("run_code", RUN["arguments"])]
    assert reply.attempts == 1
    assert fake_openai.requests[-1].body["tools"] == TOOLS


def test_complete_step_non_streamed_wire_form(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(tool_calls=[{**RUN, "id": "call_abc"}]))
    reply = complete_step(endpoint(fake_openai), USER, TOOLS, stream=False)
    assert reply.text == "" and reply.tool_calls == [
        ToolCall(id="call_abc", name="run_code", arguments=RUN["arguments"])
    ]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("arguments", "why"), [("{not json", "not valid JSON"), ("[1, 2]", "not an object")]
)
def test_invalid_arguments_are_bad_response(
    fake_openai: FakeOpenAIServer, stream: bool, arguments: str, why: str
) -> None:
    fake_openai.script(Reply(tool_calls=[{"name": "run_code", "arguments": arguments}]))
    err = fails("bad_response", complete_step, endpoint(fake_openai), USER, TOOLS, stream=stream)
    assert "'run_code'" in str(err) and why in str(err)
    assert not err.tools_rejected


@pytest.mark.parametrize("stream", [True, False])
def test_complete_step_retries_like_complete(fake_openai: FakeOpenAIServer, stream: bool) -> None:
    fake_openai.script(Reply(status=500), Reply(tool_calls=[RUN]))
    reply = complete_step(endpoint(fake_openai), USER, TOOLS, stream=stream)
    assert reply.attempts == 2 and reply.tool_calls[0].name == "run_code"


def test_empty_reply_is_still_empty(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content=""))
    fails("empty", complete_step, endpoint(fake_openai), USER, TOOLS)


# -- endpoints that refuse tools ---------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_rejected_tools_are_recognisable(fake_openai: FakeOpenAIServer, stream: bool) -> None:
    fake_openai.script(Reply(content="```python\nprint(1)\n```", reject_tools=True))
    err = fails("bad_request", complete_step, endpoint(fake_openai), USER, TOOLS, stream=stream)
    assert err.tools_rejected and err.status == 400
    assert "does not accept tool calls" in str(err)
    assert len(fake_openai.requests) == 1  # refused for good: not retried
    # The caller asks again without tools: the same scripted reply answers.
    reply = complete_step(endpoint(fake_openai), USER, None, stream=stream)
    assert reply.text.startswith("```python") and reply.tool_calls == []
    assert "tools" not in fake_openai.requests[-1].body
    assert fake_openai.pending == 0


def test_astream_step_rejected_tools(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="fine", reject_tools=True))
    err = fails("bad_request", run, collect(endpoint(fake_openai)))
    assert err.tools_rejected
    assert "".join(i.text for i in run(collect(endpoint(fake_openai), tools=None))) == "fine"


def test_other_400s_are_not_rejected_tools(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=400, error="max_tokens is too large"))
    err = fails("bad_request", complete_step, endpoint(fake_openai), USER, TOOLS)
    assert not err.tools_rejected
    # A 400 that mentions tools, but for a request without tools, is not about them either.
    fake_openai.script(Reply(status=400, error="tool_choice is invalid"))
    assert not fails("bad_request", complete_step, endpoint(fake_openai), USER, None).tools_rejected


def test_a_500_about_tools_is_rejected_without_retries(fake_openai: FakeOpenAIServer) -> None:
    # llama.cpp's server without --jinja answers 500 "tools param requires --jinja flag".
    fake_openai.script(Reply(status=500, error="tools param requires --jinja flag"))
    err = fails("bad_request", complete_step, endpoint(fake_openai), USER, TOOLS)
    assert err.tools_rejected and err.status == 500
    assert len(fake_openai.requests) == 1


def test_tool_messages_reach_the_server_whole(fake_openai: FakeOpenAIServer) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "run_code"}}
    call["function"]["arguments"] = json.dumps(RUN["arguments"])
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    messages = [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "2.5"},
        {"role": "user", "content": [{"type": "text", "text": "the figure:"}, image]},
    ]
    fake_openai.script("The mean is 2.5.")
    assert complete_step(endpoint(fake_openai), messages, TOOLS).text == "The mean is 2.5."
    assert fake_openai.requests[-1].messages == messages


def test_arguments_sent_as_an_object_are_taken(fake_openai: FakeOpenAIServer) -> None:
    # Not OpenAI's form (a JSON string), but some servers send the object itself.
    call = {"id": "c1", "type": "function", "function": {"name": "run_code"}}
    call["function"]["arguments"] = {"code": "print(1)"}
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
    }
    fake_openai.script(Reply(raw_body=json.dumps(body)))
    reply = complete_step(endpoint(fake_openai), USER, TOOLS, stream=False)
    assert reply.tool_calls == [ToolCall(id="c1", name="run_code", arguments={"code": "print(1)"})]
