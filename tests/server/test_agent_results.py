"""POST chapyter-ext/agent/result and the agent's config: bad bodies are one-line errors
that leave the turn waiting; what ``GET config`` tells the browser."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chapyter_ext.agent import protocol as agent_protocol
from chapyter_ext.server import handlers as handlers_module
from chapyter_ext.testing.openai_server import Reply

from .agent_browser import Browser, agent_body, figure_result, run_code, stdout, tiny_png


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


# -- (h) bad results ---------------------------------------------------------------------------


async def test_bad_results_are_one_line_errors_and_the_turn_goes_on(
    browser, fake, monkeypatch, wait_until
):
    fake.script(Reply(tool_calls=[run_code("print(6 * 7)")]), "It is 42.")
    browser.start(agent_body())
    await wait_until(browser.steps, what="the step")
    ids = {"message_id": browser.message_id, "step_id": browser.steps()[0]["step_id"]}

    async def refused(body: dict[str, Any], status: int) -> str:
        code, data = await browser.post_result(body)
        assert code == status, data
        assert set(data) == {"error"} and data["error"]["message"]
        assert "\n" not in data["error"]["message"]
        return str(data["error"]["message"])

    await refused({**ids, "message_id": "f" * 32, **stdout("1")}, 404)
    await refused({**ids, "step_id": "nope", **stdout("1")}, 404)
    await refused({**ids, "status": "bogus"}, 400)
    await refused({**ids, "status": "ran", "result": []}, 400)
    await refused({**ids, "status": "ran", "result": {"outputs": {"a": 1}}}, 400)
    await refused({**ids, "status": "ran", "result": {"execution_count": "3"}}, 400)
    await refused({**ids, "status": "ran", "result": {"outputs": [{"output_type": "x"}]}}, 400)
    bad_stream = {"output_type": "stream", "name": "stdout", "text": 42}
    await refused({**ids, "status": "ran", "result": {"outputs": [bad_stream]}}, 400)
    assert "PNG" in await refused(
        {**ids, "status": "ran", "result": {"images": ["bm90IGEgcG5n"]}}, 400
    )
    await refused({**ids, "status": "ran", "result": {"images": [1]}}, 400)
    await refused({"step_id": ids["step_id"], "status": "ran"}, 400)
    assert "result" in await refused({**ids, "status": "ran"}, 400)  # a run needs its outputs
    huge = "A" * (agent_protocol.MAX_IMAGE_BYTES + 1)
    await refused({**ids, "status": "ran", "result": {"images": [huge]}}, 400)
    monkeypatch.setattr(handlers_module.AgentResultHandler, "max_body_bytes", 2000)
    big = {**ids, **stdout("x" * 5000)}
    assert "larger than 2000 bytes" in await refused(big, 413)
    monkeypatch.undo()

    assert not browser.task.done()  # the turn waits on
    assert await browser.post_result({**ids, **stdout("42\n")}) == (200, {"ok": True})
    await asyncio.wait_for(browser.task, 10)
    assert browser.reader.first("done")["text"] == "It is 42."
    # A step answers once.
    status, _ = await browser.post_result({**ids, **stdout("42\n")})
    assert status == 404


async def test_the_result_body_may_carry_a_few_megabytes_of_png(browser, fake, wait_until):
    fake.script(Reply(tool_calls=[run_code("plt.plot([1])")]), "ok")
    browser.start(agent_body())
    await wait_until(browser.steps, what="the step")
    result = figure_result({})
    # ~3 MB of PNG (valid header, then padding a browser would never send, bounded all the same)
    result["result"]["images"] = [tiny_png() + "A" * (3 * 1024 * 1024)]
    ids = {"message_id": browser.message_id, "step_id": browser.steps()[0]["step_id"]}
    assert await browser.post_result({**ids, **result}) == (200, {"ok": True})
    await asyncio.wait_for(browser.task, 10)


async def test_a_bad_agent_request_is_a_400(get_json, fake):
    status, data = await get_json(
        "chapyter-ext", "agent", method="POST", body=agent_body(policy="sometimes")
    )
    assert status == 400 and "policy" in data["error"]["message"]
    status, data = await get_json("chapyter-ext", "agent", method="POST", body={"message": "x"})
    assert status == 400 and "notebook" in data["error"]["message"]
    assert fake.requests == []


# -- config ------------------------------------------------------------------------------------


@pytest.mark.chapyter_config(
    {
        "Chapyter": {"agent_max_steps": 7, "agent_time_limit": 60.0},
        "ChapyterExtApp": {
            "models": {"vision": {"model": "gpt-4o"}, "plain": {"model": "fake-model"}}
        },
    }
)
async def test_config_tells_the_agent_settings_and_capabilities(get_json):
    _, config = await get_json("chapyter-ext", "config")
    agent = config["agent"]
    assert (agent["policy"], agent["max_steps"], agent["time_limit"]) == ("ask", 7, 60.0)
    # The browser learns the tools (and how to show them) from here, not from its own list.
    tools = {t["name"]: (t["runs"], t["op"], t["acts"], t["label"]) for t in agent["tools"]}
    assert tools == {
        "run_code": ("kernel", "run_cell", True, "run code"),
        "read_cell": ("kernel", "read_cell", False, "read a cell"),
        "list_variables": ("kernel", "evaluate", False, "list the variables"),
    }
    assert agent["mcp_servers"] == []
    caps = {m["name"]: (m["tools"], m["images"]) for m in config["models"]}
    assert caps == {"vision": (True, True), "plain": (True, False)}
