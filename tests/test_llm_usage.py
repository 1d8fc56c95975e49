"""Usage (tokens and cost) and budget refusals, against the loopback server: real sockets, the
real ``openai`` SDK."""

from __future__ import annotations

from typing import Any

import pytest

from chapyter_ext.llm import Endpoint, LLMError, Usage, astream, astream_step, complete
from chapyter_ext.llm.usage import cost_of, usage_line
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply
from tests.endpoints import loopback_endpoint, run

USER = [{"role": "user", "content": "make a plot"}]
BUDGET_LINE = "Budget has been exceeded! Current cost: 10.0124, Max budget: 10.0"


pytestmark = pytest.mark.usefixtures("llm_clients")


def endpoint(server: FakeOpenAIServer, **changes: Any) -> Endpoint:
    """The loopback endpoint with a user's key from a gateway."""
    return loopback_endpoint(
        server, **{"api_key": "sk-user-alice-0123456789", "timeout": 5.0, **changes}
    )


def stream_usage(ep: Endpoint) -> tuple[str, list[Usage]]:
    seen: list[Usage] = []

    async def go() -> str:
        text = ""
        async for piece in astream(ep, USER, on_usage=seen.append):
            text += piece
        return text

    return run(go()), seen


def test_streams_ask_for_usage_and_report_it(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply("x = 1", usage={"prompt_tokens": 120, "completion_tokens": 7}))
    text, seen = stream_usage(endpoint(fake_openai))
    assert text == "x = 1"
    assert seen == [Usage(120, 7, 127)]
    assert fake_openai.requests[-1].body["stream_options"] == {"include_usage": True}


def test_sync_calls_report_usage_streamed_or_not(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(
        Reply("a = 1", usage={"prompt_tokens": 50, "completion_tokens": 5}),
        Reply("b = 2", usage={"prompt_tokens": 60, "completion_tokens": 6}),
    )
    ep = endpoint(fake_openai)
    assert complete(ep, USER, stream=True).usage == Usage(50, 5, 55)
    assert complete(ep, USER, stream=False).usage == Usage(60, 6, 66)
    # Only streams carry the field: a plain call reports usage anyway.
    assert "stream_options" not in fake_openai.requests[-1].body


def test_agent_steps_report_usage(fake_openai: FakeOpenAIServer) -> None:
    call = {"name": "run_code", "arguments": {"code": "1 + 1"}}
    fake_openai.script(Reply(tool_calls=[call], usage={"prompt_tokens": 9, "completion_tokens": 3}))

    async def go() -> Any:
        last = None
        async for delta in astream_step(endpoint(fake_openai), USER, [{"type": "function"}]):
            last = delta
        return last

    done = run(go())
    assert done.done and done.tool_calls[0].name == "run_code"
    assert done.usage == Usage(9, 3, 12)


def test_endpoint_that_refuses_stream_options_still_answers(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.refuse_stream_options = True
    fake_openai.script("first", "second", "third")
    ep = endpoint(fake_openai, max_retries=0)  # the fallback is not a retry
    text, seen = stream_usage(ep)
    assert (text, seen) == ("first", [])
    assert complete(ep, USER).text == "second"
    bodies = [r.body for r in fake_openai.requests]
    # Refused once, asked again without it, and never sent to this endpoint again.
    assert ["stream_options" in b for b in bodies] == [True, False, False]
    text, _ = stream_usage(ep)
    assert text == "third" and "stream_options" not in fake_openai.requests[-1].body


@pytest.mark.parametrize("stream", [True, False])
def test_a_spent_budget_is_one_line_naming_the_limit(
    fake_openai: FakeOpenAIServer, stream: bool
) -> None:
    fake_openai.script(Reply.budget_exceeded())
    with pytest.raises(LLMError) as caught:
        complete(endpoint(fake_openai), USER, stream=stream)
    err = caught.value
    assert err.kind == "budget" and err.status == 400
    assert str(err) == (
        f"Your budget at {endpoint(fake_openai).host} is used up (HTTP 400): {BUDGET_LINE}. "
        "Ask your administrator to raise it, or wait until it resets."
    )
    assert len(fake_openai.requests) == 1  # never retried: waiting does not refill a budget


def test_a_gateway_rate_limit_names_its_limit(fake_openai: FakeOpenAIServer) -> None:
    limit = "LiteLLM Rate Limit Handler: Crossed TPM, RPM Limit. current rpm: 11, max rpm: 10"
    fake_openai.script(Reply(status=429, error=limit, headers={"Retry-After": "0"}))
    with pytest.raises(LLMError) as caught:
        complete(endpoint(fake_openai, max_retries=0), USER)
    assert caught.value.kind == "rate_limit"
    assert "max rpm: 10" in str(caught.value) and "\n" not in str(caught.value)


def test_cost_comes_from_the_administrators_prices() -> None:
    usage = Usage(1_000_000, 500_000, 1_500_000)
    prices = {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}
    assert cost_of(usage, "gpt-4o-mini", prices) == pytest.approx(0.45)
    assert cost_of(usage, "other-model", prices) is None
    assert cost_of(usage, "gpt-4o-mini", {"gpt-4o-mini": {"input": "free"}}) is None
    assert usage_line(Usage(1200, 34, 1234), 0.00123) == "1,234 tokens (1,200 in, 34 out), $0.0012"
    assert usage_line(Usage(10, 2, 12)) == "12 tokens (10 in, 2 out)"
    assert Usage.from_api({"prompt_tokens": 3, "completion_tokens": 4}) == Usage(3, 4, 7)
    assert Usage.from_api({"prompt_tokens": None}) is None


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (429, "ExceededBudget: User=alice over budget. Spend=5.1, Budget=5.0", "budget"),
        (402, "Payment required.", "budget"),
        (400, "budget_tokens must be less than max_tokens", "bad_request"),
    ],
)
def test_what_reads_as_a_spent_budget(
    fake_openai: FakeOpenAIServer, status: int, message: str, kind: str
) -> None:
    fake_openai.script(Reply(status=status, error=message, headers={"Retry-After": "0"}))
    with pytest.raises(LLMError) as caught:
        complete(endpoint(fake_openai, max_retries=0), USER)
    assert caught.value.kind == kind
