"""A kernel reaches an Anthropic entry through the server's OpenAI-compatible model route: the
route asks the entry's backend (the loopback server's ``POST /v1/messages``, with the server's
key) and answers in OpenAI's wire format, read here by the official ``openai`` SDK with a
kernel's credential, and by ``%%ai`` in a kernel the server started."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chapyter_ext.server.kernel_access import ROUTE
from chapyter_ext.testing.openai_server import Reply

from .kernel_browser import KernelThread
from .test_kernel_access import NOTEBOOK, open_kernel

ANTHROPIC_KEY = "sk-ant-server-secret-0042"
ANSWER = "Group by city, then take the mean of each column."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def claude(fake):
    entry = {
        "protocol": "anthropic",
        "base_url": f"http://127.0.0.1:{fake.port}",
        "api_key": ANTHROPIC_KEY,
        "model": "claude-test",
    }
    return {"ChapyterExtApp": {"models": {"claude": entry}, "default_model": "claude"}}


def key_header(sent: Any) -> str:
    """Where the SDK put the key (``x-api-key``, or a bearer token in its newer versions)."""
    return sent.headers.get("x-api-key") or sent.headers.get("authorization", "")


async def kernel_client(serverapp: Any, ext_app: Any, port: int, base_url: str) -> Any:
    """``(AsyncOpenAI client, kernel id)``: the SDK at the model route with a kernel's
    credential, as ``%%ai`` in that kernel would call it (the test takes ``jp_fetch``: the
    server listens once its HTTP client fixture exists)."""
    from openai import AsyncOpenAI

    kernel_id = await serverapp.kernel_manager.start_kernel()
    token = ext_app.kernel_access.issue(kernel_id)
    url = f"http://127.0.0.1:{port}{base_url}{ROUTE}"
    return AsyncOpenAI(api_key=token, base_url=url, max_retries=0), kernel_id


@pytest.fixture
def thread():
    pool = KernelThread()
    yield pool
    pool.close()


@pytest.mark.chapyter_config.with_args(claude)
async def test_an_openai_client_streams_from_an_anthropic_entry(
    jp_fetch, jp_serverapp, ext_app, jp_http_port, jp_base_url, fake
):
    client, kernel_id = await kernel_client(jp_serverapp, ext_app, jp_http_port, jp_base_url)
    try:
        fake.script(Reply(content=ANSWER, chunk_size=8,
                          usage={"prompt_tokens": 30, "completion_tokens": 11}))  # fmt: skip
        stream = await client.chat.completions.create(
            model="claude",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "mean per city?"},
            ],
            stream=True,
            stream_options={"include_usage": True},
            max_tokens=300,
        )
        chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == ANSWER
        assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage.prompt_tokens == 30 and chunks[-1].usage.completion_tokens == 11
        sent = fake.requests[-1]
        assert sent.path == "/v1/messages" and sent.model == "claude-test"
        assert sent.body["system"] == "Be brief." and sent.body["max_tokens"] == 300
        assert ANTHROPIC_KEY in key_header(sent)

        # Tool calls come back as OpenAI's deltas, with their finish reason.
        call = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
        fake.script(Reply(content="", tool_calls=[call]))
        stream = await client.chat.completions.create(
            model="claude",
            messages=[{"role": "user", "content": "weather in Paris?"}],
            tools=[WEATHER_TOOL],
            stream=True,
        )
        chunks = [chunk async for chunk in stream]
        calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
        assert [(tc.id, tc.function.name) for tc in calls] == [("toolu_1", "get_weather")]
        assert json.loads(calls[0].function.arguments) == {"city": "Paris"}
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
        assert fake.requests[-1].body["tools"][0]["name"] == "get_weather"

        # A stream cut after prose reached the kernel ends in OpenAI's error event.
        import openai

        fake.script(Reply(content=ANSWER, chunk_size=4, cut_after=3))
        stream = await client.chat.completions.create(
            model="claude", messages=[{"role": "user", "content": "again?"}], stream=True
        )
        with pytest.raises(openai.APIError) as caught:
            _ = [chunk async for chunk in stream]
        assert "\n" not in caught.value.message and ANTHROPIC_KEY not in caught.value.message
    finally:
        await client.close()
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)


@pytest.mark.chapyter_config.with_args(claude)
async def test_a_whole_answer_the_models_list_and_an_upstream_401_in_one_line(
    jp_fetch, jp_serverapp, ext_app, jp_http_port, jp_base_url, fake
):
    import openai

    client, kernel_id = await kernel_client(jp_serverapp, ext_app, jp_http_port, jp_base_url)
    try:
        fake.script(Reply(content=ANSWER, usage={"prompt_tokens": 7, "completion_tokens": 5}))
        whole = await client.chat.completions.create(
            model="claude", messages=[{"role": "user", "content": "mean per city?"}]
        )
        assert whole.object == "chat.completion"
        assert whole.choices[0].message.content == ANSWER
        assert whole.choices[0].finish_reason == "stop"
        assert whole.usage.total_tokens == 12

        models = await client.models.list()
        assert [m.id for m in models.data] == ["fake-model"]  # the loopback server's list
        assert fake.requests[-1].path == "/v1/models"

        fake.script(Reply(status=401, error=f"invalid x-api-key {ANTHROPIC_KEY}"))
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.chat.completions.create(
                model="claude", messages=[{"role": "user", "content": "hi"}], stream=True
            )
        assert caught.value.status_code == 401
        message = caught.value.body["message"]
        assert "rejected the API key" in message and "\n" not in message
        assert ANTHROPIC_KEY not in caught.value.response.text

        # Fill in the middle has no Anthropic counterpart: refused, nothing sent.
        sent = len(fake.requests)
        with pytest.raises(openai.BadRequestError) as caught:
            await client.completions.create(model="claude", prompt="def f(", suffix="")
        assert "fill-in-the-middle" in caught.value.body["message"]
        assert len(fake.requests) == sent
    finally:
        await client.close()
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)


@pytest.mark.chapyter_config.with_args(claude)
async def test_ai_in_a_kernel_generates_from_an_anthropic_entry(
    jp_fetch, jp_serverapp, get_json, fake, thread
):
    kernel = await open_kernel(jp_fetch, jp_serverapp, thread)
    try:
        fake.script(Reply("```python\nanswer = 6 * 7\nprint(answer)\n```",
                          usage={"prompt_tokens": 120, "completion_tokens": 9}))  # fmt: skip
        generated = await kernel.run("%%ai\nmultiply six by seven", cell="prompt-cell")
        assert generated.status == "ok", generated.errors
        assert "answer = 6 * 7" in json.dumps(generated.payload)
        sent = [r for r in fake.requests if r.path == "/v1/messages"][-1]
        assert sent.model == "claude-test" and ANTHROPIC_KEY in key_header(sent)
        code, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
        assert code == 200 and view["usage"]["total_tokens"] == 129, view.get("usage")
    finally:
        kernel.stop()
        await jp_fetch("api", "kernels", kernel.kernel_id, method="DELETE")
