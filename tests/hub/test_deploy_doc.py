"""docs/deploy.md: every code block is a named snippet that a hub test runs."""

from __future__ import annotations

import json

from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

from .deploy_doc import ALL, fenced_blocks, snippets


def test_every_block_is_a_snippet_the_tests_run() -> None:
    found = snippets()
    assert set(found) == ALL
    assert fenced_blocks() == len(ALL)  # no unnamed block, which no test would run


def test_the_budget_refusal_is_what_the_loopback_gateway_sends() -> None:
    import httpx

    with FakeOpenAIServer() as server:
        server.script(Reply.budget_exceeded())
        response = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert response.status_code == 400
    assert response.json() == json.loads(snippets()["budget-refusal"])
