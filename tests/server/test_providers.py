"""An endpoint of another protocol behind the server: the AI Chat streams from an Anthropic
Messages endpoint (the loopback server's ``POST /v1/messages``) with its own key, which never
reaches the browser; the kernels' OpenAI-compatible model route asks it and answers in
OpenAI's shape (tests/server/test_model_translate.py)."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.server.kernel_access import ROUTE
from chapyter_ext.testing.openai_server import Reply

ANTHROPIC_KEY = "sk-ant-server-secret-0042"
ANSWER = "Group by city, then take the mean of each column."


def claude(fake):
    entry = {
        "protocol": "anthropic",
        "base_url": f"http://127.0.0.1:{fake.port}",  # another URL: the shared key stays home
        "api_key": ANTHROPIC_KEY,
        "model": "claude-test",
    }
    return {"ChapyterExtApp": {"models": {"claude": entry}, "default_model": "claude"}}


@pytest.mark.chapyter_config.with_args(claude)
async def test_the_chat_streams_from_an_anthropic_endpoint(post_chat, fake, secrets):
    fake.script(Reply(content=ANSWER, chunk_size=8, usage={"prompt_tokens": 30,
                                                           "completion_tokens": 11}))  # fmt: skip
    response, reader = await post_chat({"notebook": "work/a.ipynb", "message": "mean per city?"})

    assert response.code == 200
    assert "".join(reader.tokens()) == ANSWER
    done = reader.first("done")
    assert done["status"] == "complete"
    assert done["usage"]["prompt_tokens"] == 30 and done["usage"]["completion_tokens"] == 11
    sent = fake.requests[-1]
    assert sent.path == "/v1/messages" and sent.model == "claude-test"
    assert sent.body["system"] and sent.body["stream"] is True
    key_header = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
    assert ANTHROPIC_KEY in key_header
    assert not any(s in json.dumps(sent.body) + key_header for s in secrets)  # not the OpenAI key
    assert ANTHROPIC_KEY not in json.dumps([data for _, data, _ in reader.events])


@pytest.mark.chapyter_config.with_args(claude)
async def test_the_kernels_model_route_translates_it_to_openais_shape(get_json, fake):
    """More in test_model_translate.py (streams, tools, errors, ``%%ai`` in a kernel)."""
    fake.script(Reply(content=ANSWER, usage={"prompt_tokens": 4, "completion_tokens": 6}))
    asked = {"model": "claude", "messages": [{"role": "user", "content": "hi"}]}
    code, body = await get_json(*ROUTE.split("/"), "chat", "completions", method="POST",
                                body=asked)  # fmt: skip
    assert code == 200 and body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": ANSWER}
    assert body["usage"]["total_tokens"] == 10
    assert fake.requests[-1].path == "/v1/messages"
    assert ANTHROPIC_KEY not in json.dumps(body)
