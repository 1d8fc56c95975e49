"""In a real kernel: a failed ``%%ai`` never becomes the user's "last error" (issue 10 item 8)."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply
from tests.kernel_harness import Kernel


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(models=("fake-model",)) as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server):
    k = Kernel(
        {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test-CONTEXTKERNEL-0123456789",
            "CHAPYTER_MODEL": "fake-model",
        }
    )
    assert k.run("%load_ext chapyter_ext").status == "ok"
    assert k.run("%config Chapyter.max_retries = 0\n%config Chapyter.timeout = 10.0").status == "ok"
    yield k
    k.shutdown()


def context_sent(request) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages)


def test_a_failed_ai_is_not_the_next_requests_last_error(server, kernel):
    server.clear()
    assert kernel.run("rain = [1, 2]\nrain['x']").status == "error"  # the user's own error
    server.script(Reply(status=500, error="the model is down"))
    failed = kernel.run("%%ai\nsum the rain")
    assert failed.status == "error"
    assert failed.error["ename"] == "ChapyterError"

    server.script("```python\nprint(sum(rain))\n```")
    assert kernel.run("%%ai\nsum the rain again").status == "ok"
    text = context_sent(server.requests[-1])
    assert "Last error:\nTypeError: list indices must be integers" in text
    assert "ChapyterError" not in text
    assert "the model is down" not in text

    # The chat reads the variables through describe_variables; nothing of ours leaks there.
    reply = kernel.kc.execute_interactive(
        "",
        user_expressions={
            "v": "__import__('chapyter_ext.context', fromlist=['x']).describe_variables("
            "get_ipython().user_ns, get_ipython().user_ns_hidden, budget=6000)"
        },
        timeout=30,
    )
    described = reply["content"]["user_expressions"]["v"]["data"]["text/plain"]
    assert "rain" in described
    assert "ChapyterError" not in json.dumps(described)
