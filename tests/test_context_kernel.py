"""In a real kernel: a failed ``%%ai`` is never the "last error"; ``%%ai`` and the chat's snapshot
carry the facts the request is about."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.testing.openai_server import Reply


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return "%config Chapyter.max_retries = 0\n%config Chapyter.timeout = 10.0"


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


def test_ai_sends_what_the_request_is_about_from_a_crowded_kernel(server, kernel):
    # Loaded earlier (not in the recent cells), then buried under 300 newer variables.
    setup = (
        "import pandas as _pd\n"
        "shipments = _pd.DataFrame({'ship_country': ['FR', 'France ', 'DE'] * 100, "
        "'weight_kg': [1.0, 2.0, 3.0] * 100})\n"
        "for _i in range(300):\n    globals()[f'tmp_{_i}'] = 'x' * 40"
    )
    assert kernel.run(setup).status == "ok"
    assert kernel.run("tmp_1").status == "ok"
    server.clear()
    server.script("```python\nprint(1)\n```")
    assert kernel.run("%%ai --no-run\ntotal weight of the parcels going to France").status == "ok"
    text = context_sent(server.requests[-1])
    assert "- shipments (DataFrame): 300 rows × 2 columns" in text
    assert "'FR'" in text and "'France '" in text and "near-duplicate labels" in text

    # The chat's snapshot carries the same facts, as JSON (IPython.display.JSON, as the
    # browser reads it).
    reply = kernel.kc.execute_interactive(
        "",
        user_expressions={
            "v": "__import__('IPython').display.JSON(__import__('chapyter_ext.context', "
            "fromlist=['x']).describe_variables(get_ipython().user_ns, "
            "get_ipython().user_ns_hidden, budget=6000))"
        },
        timeout=30,
    )
    data = reply["content"]["user_expressions"]["v"]["data"]["application/json"]
    (item,) = [v for v in data if v["name"] == "shipments"]
    assert item["facts"][0][0] == "'ship_country'"
    assert {lab for lab, _ in item["facts"][0][4]} == {"FR", "France ", "DE"}
