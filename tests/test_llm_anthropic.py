"""The provider seam: backends found by entry point, and the Anthropic backend (the official
``anthropic`` SDK) against the loopback server's ``POST /v1/messages``, through the same calls
the chat, the agent and ``%%ai`` make (:func:`chapyter_ext.llm.astream` and friends)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from importlib.metadata import entry_points
from typing import Any

import pytest
from traitlets.config import Config

from chapyter_ext.config import Chapyter
from chapyter_ext.endpoints import EndpointConfigError, ModelRegistry
from chapyter_ext.llm import (
    Endpoint,
    LLMError,
    Usage,
    alist_models,
    astream,
    astream_step,
    backend_for,
    complete,
    complete_step,
    protocols,
)
from chapyter_ext.llm.anthropic_backend import AnthropicBackend
from chapyter_ext.llm.anthropic_messages import to_anthropic
from chapyter_ext.llm.backend import ENTRY_POINT_GROUP, Backend
from chapyter_ext.llm.openai_backend import OpenAIBackend
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

KEY = "sk-ant-test-0123456789abcdef"
MESSAGES = [
    {"role": "system", "content": "You write Python."},
    {"role": "user", "content": "plot x"},
]


def settings(**values: Any) -> Chapyter:
    return Chapyter(config=Config({"Chapyter": values}))


def registry(server: FakeOpenAIServer, **entry: Any) -> ModelRegistry:
    fields = {"protocol": "anthropic", "base_url": server.base_url, "api_key": KEY, **entry}
    shared = settings(api_key="sk-openai-shared", base_url="https://api.openai.com/v1")
    return ModelRegistry.from_config({"claude-test": fields}, "", shared, local=None)


def endpoint(server: FakeOpenAIServer, **entry: Any) -> Endpoint:
    return registry(server, **{"max_retries": 0, **entry}).resolve(None)[1]


async def collect(ep: Endpoint, messages: list[dict]) -> tuple[str, list[Usage]]:
    usages: list[Usage] = []
    pieces = [piece async for piece in astream(ep, messages, on_usage=usages.append)]
    return "".join(pieces), usages


# -- the seam ----------------------------------------------------------------------------------


def test_builtin_backends_are_entry_points():
    points = {p.name: p.value for p in entry_points(group=ENTRY_POINT_GROUP)}
    assert points["openai"] == "chapyter_ext.llm.openai_backend:OpenAIBackend"
    assert points["anthropic"] == "chapyter_ext.llm.anthropic_backend:AnthropicBackend"
    assert {"openai", "anthropic"} <= set(protocols())
    assert isinstance(backend_for(Endpoint("http://x/v1")), OpenAIBackend)
    claude = backend_for(Endpoint("http://x", protocol="anthropic"))
    assert isinstance(claude, AnthropicBackend) and isinstance(claude, Backend)


def test_unknown_protocol_is_refused_at_configuration_and_at_call():
    with pytest.raises(EndpointConfigError, match="no backend speaks 'gopher'"):
        ModelRegistry.from_config({"m": {"protocol": "gopher"}}, "", settings(), local=None)
    with pytest.raises(LLMError, match="no backend speaks the protocol 'gopher'") as info:
        complete(Endpoint("http://127.0.0.1:9/v1", protocol="gopher"), MESSAGES)
    assert "\n" not in str(info.value)


def test_sdks_load_lazily():
    code = (
        "import sys, chapyter_ext, chapyter_ext.llm, chapyter_ext.endpoints\n"
        "loaded = {'openai', 'anthropic'} & set(sys.modules)\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_anthropic_entry_keeps_its_own_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    shared = settings(api_key="sk-openai-shared", base_url="https://api.openai.com/v1")
    models = {"claude": {"protocol": "anthropic", "model": "claude-sonnet-4-5"}}
    reg = ModelRegistry.from_config(models, "", shared, local=None)
    ep = reg.resolve("claude")[1]
    assert (ep.base_url, ep.api_key, ep.protocol) == ("https://api.anthropic.com", KEY, "anthropic")
    assert KEY in reg.secrets()  # redacted before anything is stored
    assert KEY not in repr(ep) and "sk-openai-shared" not in repr(ep)
    assert reg.public_info() == [
        {"name": "claude", "model": "claude-sonnet-4-5", "host": "api.anthropic.com"}
    ]


# -- the Anthropic backend against the loopback Messages API -----------------------------------


def test_chat_streams_through_the_messages_api_with_usage(fake_openai: FakeOpenAIServer):
    fake_openai.script(Reply(content="```python\nplt.plot(x)\n```", chunk_size=5,
                             usage={"prompt_tokens": 12, "completion_tokens": 9}))  # fmt: skip
    text, usages = asyncio.run(collect(endpoint(fake_openai), MESSAGES))

    assert text == "```python\nplt.plot(x)\n```"
    assert usages == [Usage(12, 9, 21)]
    request = fake_openai.requests[-1]
    assert request.path == "/v1/messages"
    sent_key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert sent_key in (KEY, f"Bearer {KEY}")  # the SDK's choice of header, by version
    assert "anthropic-version" in request.headers
    body = request.body
    assert body["stream"] is True and body["model"] == "claude-test"
    assert body["system"] == "You write Python."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "plot x"}]}]
    assert body["max_tokens"] == Chapyter().max_tokens
    assert request.chunks_sent > 1  # it streamed in pieces


def test_complete_streamed_and_whole(fake_openai: FakeOpenAIServer):
    fake_openai.script("first answer", "second answer")
    tokens: list[str] = []
    streamed = complete(endpoint(fake_openai), MESSAGES, on_token=tokens.append)
    whole = complete(endpoint(fake_openai), MESSAGES, stream=False)
    assert (streamed.text, "".join(tokens), whole.text) == ("first answer",) * 2 + (
        "second answer",
    )
    assert streamed.usage is not None and whole.usage is not None
    assert whole.finish_reason == "stop"
    assert "stream" not in fake_openai.requests[-1].body


def test_tool_calls_both_ways(fake_openai: FakeOpenAIServer):
    call = {"name": "run_code", "arguments": {"code": "print(1)"}}
    fake_openai.script(Reply(content="Running it.", tool_calls=[call]))
    parameters = {"type": "object", "properties": {"code": {"type": "string"}}}
    function = {"name": "run_code", "description": "Run code.", "parameters": parameters}
    tools = [{"type": "function", "function": function}]

    async def run() -> list[Any]:
        return [delta async for delta in astream_step(endpoint(fake_openai), MESSAGES, tools)]

    deltas = asyncio.run(run())
    done = deltas[-1]
    assert "".join(d.text for d in deltas) == "Running it."
    assert done.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in done.tool_calls] == [("run_code", {"code": "print(1)"})]
    sent = fake_openai.requests[-1].body["tools"]
    assert sent == [{"name": "run_code", "description": "Run code.",
                     "input_schema": tools[0]["function"]["parameters"]}]  # fmt: skip

    fake_openai.script(Reply(tool_calls=[call]))
    reply = complete_step(endpoint(fake_openai), MESSAGES, tools, stream=False)
    assert reply.tool_calls[0].arguments == {"code": "print(1)"}


def test_openai_history_becomes_anthropic_turns():
    system, turns = to_anthropic(
        [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "read_cell", "arguments": '{"n": 2}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "x = 1"},
            {"role": "user", "content": "go on"},
        ]
    )
    assert system == "Be brief."
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
    }
    assert turns[1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "read_cell", "input": {"n": 2}}
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "x = 1"},
        {"type": "text", "text": "go on"},
    ]


@pytest.mark.parametrize(
    ("reply", "kind", "words"),
    [
        (Reply(status=400, error=f"model: unknown model (key {KEY})"), "bad_request", "HTTP 400"),
        (Reply(status=401, error="invalid x-api-key"), "auth", "ANTHROPIC_API_KEY"),
        (Reply(status=529, error="Overloaded"), "server", "HTTP 529"),
        (Reply(content="a long answer", chunk_size=2, cut_after=2), "stream_cut", "dropped"),
    ],
)
def test_errors_are_one_line(fake_openai: FakeOpenAIServer, reply: Reply, kind: str, words: str):
    fake_openai.script(reply)
    with pytest.raises(LLMError) as info:
        asyncio.run(collect(endpoint(fake_openai), MESSAGES))
    err = info.value
    assert err.kind == kind and words in err.message
    assert "\n" not in str(err) and KEY not in str(err)
    assert f"127.0.0.1:{fake_openai.port}" in str(err)


def test_rate_limit_is_retried(fake_openai: FakeOpenAIServer):
    fake_openai.script(Reply(status=429, headers={"Retry-After": "0"}), "after the wait")
    text, _ = asyncio.run(collect(endpoint(fake_openai, max_retries=1), MESSAGES))
    assert text == "after the wait"
    assert [r.path for r in fake_openai.requests] == ["/v1/messages"] * 2


def test_models_list(fake_openai: FakeOpenAIServer):
    assert asyncio.run(alist_models(endpoint(fake_openai))) == ["fake-model"]
