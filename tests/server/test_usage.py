"""Usage and budgets through the real server: each chat answer and agent turn carries the
tokens the endpoint reported (and the cost, where the administrator priced the model), the
history keeps them and sums them per notebook, and a spent budget is one clear line."""

from __future__ import annotations

from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import Browser, agent_body, run_code, stdout

PRICED = pytest.mark.chapyter_config(
    {"Chapyter": {"prices": {"fake-model": {"input": 2.0, "output": 10.0}}}}
)
NOTEBOOK = "work/agent.ipynb"  # the agent helpers' notebook, so both kinds of turn add up
BUDGET = "Budget has been exceeded! Current cost: 10.0124, Max budget: 10.0"


def used(prompt: int, completion: int) -> Reply:
    return Reply(
        "The answer is 42.", usage={"prompt_tokens": prompt, "completion_tokens": completion}
    )


@PRICED
async def test_chat_answers_carry_tokens_and_cost_and_the_notebook_keeps_the_total(
    post_chat, fake, get_json
):
    fake.script(used(1000, 100), used(2000, 200))
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "what is it?"})
    first = reader.first("done")["usage"]
    # 1000 in at $2/M and 100 out at $10/M.
    assert first == {
        "prompt_tokens": 1000,
        "completion_tokens": 100,
        "total_tokens": 1100,
        "cost": pytest.approx(0.003),
    }
    # A new chat of the same notebook: its total still counts the first one.
    status, _ = await get_json("chapyter-ext", "history", "new", method="POST",
                               body={"notebook": NOTEBOOK})  # fmt: skip
    assert status == 200
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "and now?"})
    assert reader.first("done")["usage"]["total_tokens"] == 2200

    status, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert status == 200
    assert [m.get("usage", {}).get("total_tokens") for m in view["messages"]] == [None, 2200]
    assert view["usage"]["total_tokens"] == 3300
    assert view["usage"]["cost"] == pytest.approx(0.003 + 0.006)


async def test_an_agent_turn_adds_up_its_model_calls(jp_fetch, get_json, fake):
    fake.script(
        Reply(tool_calls=[run_code("print(6 * 7)")], usage={"prompt_tokens": 300,
                                                            "completion_tokens": 20}),
        used(400, 30),
    )  # fmt: skip
    reader = await Browser(jp_fetch, get_json).run(agent_body(), lambda step: stdout("42\n"))
    done = reader.first("done")
    assert done["status"] == "complete"
    # No price for this model here: tokens only.
    assert done["usage"] == {"prompt_tokens": 700, "completion_tokens": 50, "total_tokens": 750}


async def test_an_endpoint_that_refuses_stream_options_still_chats(post_chat, fake):
    fake.refuse_stream_options = True
    fake.script("Fine without usage.")
    _, reader = await post_chat({"notebook": "a.ipynb", "message": "hello"})
    done = reader.first("done")
    assert done["text"] == "Fine without usage." and "usage" not in done


@pytest.mark.parametrize("agent", [False, True])
async def test_a_spent_budget_is_one_line_in_chat_and_agent(
    agent: bool, post_chat, jp_fetch, get_json, fake, secrets
):
    fake.script(Reply.budget_exceeded())
    if agent:
        reader = await Browser(jp_fetch, get_json).run(agent_body(), lambda step: None)
    else:
        _, reader = await post_chat({"notebook": NOTEBOOK, "message": "hello"})
    error: dict[str, Any] = reader.first("error")
    assert error["kind"] == "budget"
    assert error["message"] == (
        f"Your budget at 127.0.0.1:{fake.port} is used up (HTTP 400): {BUDGET}. "
        "Ask your administrator to raise it, or wait until it resets."
    )
    assert len(fake.requests) == 1  # not retried
    # The history keeps why, for a reload.
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert view["messages"][-1]["error"] == error["message"]
