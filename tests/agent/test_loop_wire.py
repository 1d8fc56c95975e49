"""The loop's requests on the wire: the real openai client against the loopback server."""

from __future__ import annotations

from chapyter_ext.agent import AgentLimits, AgentLoop, Finish, StepResult, ToolStep
from chapyter_ext.llm import complete_step
from chapyter_ext.llm.endpoint import Endpoint
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

PNG = "iVBORw0KGgo="


def drive(loop: AgentLoop, endpoint: Endpoint, results: list[StepResult]):
    """A minimal driver: ask, act, report, until the loop finishes."""
    actions = []
    while True:
        request = loop.request()
        reply = complete_step(endpoint, request.messages, request.tools)
        action = loop.on_reply(reply.text, reply.tool_calls)
        actions.append(action)
        if not isinstance(action, ToolStep):
            return actions
        loop.on_result(action.step_id, results.pop(0))


def test_tool_mode_on_the_wire(fake_openai: FakeOpenAIServer):
    fake_openai.script(
        Reply(tool_calls=[{"name": "run_code", "arguments": {"code": "total = 1/0"}}]),
        Reply(tool_calls=[{"name": "run_code", "arguments": {"code": "print(6 * 7)"}}]),
        "The total is 42.",
    )
    endpoint = Endpoint(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    loop = AgentLoop(
        question="What is the total?",
        context="x = 1",
        history=[],
        tools=True,
        images=True,
        policy="never",
        limits=AgentLimits(),
    )
    error = {
        "output_type": "error",
        "ename": "ZeroDivisionError",
        "evalue": "division by zero",
        "traceback": ["Cell In[1], line 1\n----> 1 total = 1/0\n"],
    }
    results = [
        StepResult(outputs=[error], images=[PNG]),
        StepResult(outputs=[{"output_type": "stream", "name": "stdout", "text": "42\n"}]),
    ]
    actions = drive(loop, endpoint, results)
    assert actions[-1] == Finish("The total is 42.")

    first, second, third = fake_openai.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == [
        "run_code",
        "read_cell",
        "list_variables",
    ]
    tool, figures = second.messages[-2:]
    assert tool["role"] == "tool" and tool["content"].startswith(
        "ZeroDivisionError: division by zero\n"
    )
    assert figures["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
    assert third.messages[-1] == {
        "role": "tool",
        "tool_call_id": third.messages[-2]["tool_calls"][0]["id"],
        "content": "42",
    }
    assert [s.outcome for s in loop.steps] == ["ZeroDivisionError: division by zero", "printed 42"]


def test_fenced_mode_on_the_wire(fake_openai: FakeOpenAIServer):
    fake_openai.script("Computing:\n```python\nprint(6 * 7)\n```", "It is 42.")
    endpoint = Endpoint(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    loop = AgentLoop(
        question="6 times 7?",
        context=None,
        history=[],
        tools=False,
        images=False,
        policy="ask",
        limits=AgentLimits(),
    )
    printed = StepResult(outputs=[{"output_type": "stream", "name": "stdout", "text": "42\n"}])
    actions = drive(loop, endpoint, [printed])
    first = actions[0]
    assert (first.kind, first.code, first.purpose, first.needs_approval) == (
        "run_code",
        "print(6 * 7)",
        "Computing:",
        True,
    )
    assert actions[-1] == Finish("It is 42.")
    assert all("tools" not in r.body for r in fake_openai.requests)
    last = fake_openai.requests[-1].messages[-1]
    assert last["role"] == "user"
    assert last["content"].startswith(
        "The output of the code you ran:\n<tool-result>\n42\n</tool-result>\n\n(Reply with one"
    )
