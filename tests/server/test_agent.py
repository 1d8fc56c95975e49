"""POST chapyter-ext/agent: agent turns through the real server.

The test plays the browser (:mod:`.agent_browser`): it reads ``step`` events from the stream
and posts each step's result back, as the frontend does after running the cell in its kernel.
The model is the loopback server, scripted with tool calls.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import (
    NOTEBOOK,
    QUESTION,
    Browser,
    agent_body,
    error,
    figure_result,
    run_code,
    stdout,
    tiny_png,
    tool_messages,
)


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


# -- (a) run -> error -> fixed -> answer -------------------------------------------------------


async def test_agent_fixes_its_error_and_answers_from_the_result(browser, fake, get_json):
    fake.script(
        Reply(content="Let me compute it.", tool_calls=[run_code("x = 6 * 7\nprint(y)")]),
        Reply(tool_calls=[run_code("x = 6 * 7\nprint(x)", "fixed")]),
        Reply(content="Six times seven is 42, as the cell printed."),
    )
    answers = iter([error("NameError", "name 'y' is not defined"), stdout("42\n", 2, "cell-1")])
    reader = await browser.run(agent_body(), lambda step: next(answers))

    start = reader.first("start")
    assert start["model"] == "fake-model"
    assert (start["policy"], start["tools"], start["images"]) == ("ask", True, False)
    assert start["chat_id"] and start["message_id"]
    names = reader.names
    assert names[0] == "start" and names[-1] == "done"
    assert [n for n in names if n in ("step", "step_done")] == ["step", "step_done"] * 2
    first, second = browser.steps()
    assert first["kind"] == "run_code" and first["code"] == "x = 6 * 7\nprint(y)"
    assert first["purpose"] == "compute"
    assert first["needs_approval"] is True  # policy "ask"
    assert second["code"] == "x = 6 * 7\nprint(x)"
    assert "Let me compute it." in "".join(reader.tokens())
    outcomes = [data["outcome"] for data in reader.all("step_done")]
    assert all(o and "\n" not in o for o in outcomes)
    assert "NameError" in outcomes[0]

    # Each request after a run carries that run's result in a tool message.
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert len(requests) == 3
    assert requests[0].body["tools"]  # function calling
    assert QUESTION in json.dumps(requests[0].messages)
    seen = "\n".join(tool_messages(requests[1]))
    assert "NameError" in seen and "name 'y' is not defined" in seen
    assert "\x1b[" not in seen  # ANSI stripped
    assert "42" in "\n".join(tool_messages(requests[2]))
    assert requests[2].messages[-1]["role"] == "tool"

    done = reader.first("done")
    assert done["status"] == "complete" and done["halt"] == ""
    assert "42" in done["text"]
    assert done["message_id"] == start["message_id"]
    assert [s["code"] for s in done["steps"]] == [first["code"], second["code"]]
    assert [s["cell_id"] for s in done["steps"]] == ["cell-0", "cell-1"]

    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    user, assistant = history["messages"]
    assert (user["role"], user["content"]) == ("user", QUESTION)
    assert assistant["id"] == start["message_id"] and "42" in assistant["content"]
    assert [s["step_id"] for s in assistant["steps"]] == [first["step_id"], second["step_id"]]
    assert assistant["steps"][1]["cell_id"] == "cell-1"
    assert "steps" not in user


# -- (b) Stop ----------------------------------------------------------------------------------


async def test_stop_mid_reply_closes_the_model_request(browser, fake, get_json, wait_until):
    fake.script(Reply(content="word " * 200, chunk_size=5, chunk_delay=0.05))
    browser.start(agent_body())
    await wait_until(lambda: len(browser.reader.tokens()) >= 2, what="first tokens")
    status, data = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body={"message_id": browser.message_id}
    )
    assert (status, data["stopped"]) == (200, True)
    await asyncio.wait_for(browser.task, 10)
    assert browser.reader.names[-1] == "done"
    done = browser.reader.first("done")
    assert done["status"] == "stopped"
    await wait_until(lambda: fake.requests[-1].disconnected, what="the model request closed")
    assert fake.requests[-1].chunks_sent < 200
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert history["messages"][-1]["status"] == "stopped"


async def test_stop_while_a_step_runs(browser, fake, get_json, chat_service, wait_until):
    fake.script(Reply(tool_calls=[run_code("import time; time.sleep(60)")]))
    browser.start(agent_body())
    await wait_until(browser.steps, what="the step")
    step = browser.steps()[0]
    status, _ = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body={"message_id": browser.message_id}
    )
    assert status == 200
    await asyncio.wait_for(browser.task, 10)
    assert browser.reader.first("done")["status"] == "stopped"
    await wait_until(lambda: chat_service.active == 0, what="slot released")
    # The step's late result finds nothing waiting for it.
    late = {"message_id": browser.message_id, "step_id": step["step_id"], **stdout("1")}
    status, data = await browser.post_result(late)
    assert status == 404 and data["error"]["kind"] == "not_found"


# -- (c) and (d) caps --------------------------------------------------------------------------


@pytest.mark.chapyter_config({"Chapyter": {"agent_max_steps": 3}})
async def test_a_model_that_never_stops_halts_at_the_step_cap(browser, fake):
    counter = iter(range(100))
    fake.script(*[Reply(tool_calls=[run_code(f"print({i})")]) for i in range(10)])
    reader = await browser.run(agent_body(), lambda step: stdout(f"{next(counter)}\n"))
    assert len(browser.steps()) == 3
    done = reader.first("done")
    assert done["halt"] and "\n" not in done["halt"]
    assert done["halt"] == "Stopped after 3 steps (setting: Agent max steps)."
    assert done["status"] == "stopped" and len(done["steps"]) == 3


async def test_a_model_that_repeats_itself_is_stopped_at_once(browser, fake):
    # The loop of the issue: the same code proposed again, whatever came of it.
    fake.default_reply = Reply(tool_calls=[run_code("def area(r):\n    return 3.14 * r * r")])
    reader = await browser.run(agent_body(), lambda step: stdout(""))
    assert len(browser.steps()) == 1
    done = reader.first("done")
    assert done["status"] == "stopped"
    assert done["halt"].startswith("Stopped: the model asked for the same step as step 1 again")
    # The one step that ran was sent back with the fact that it changed nothing.
    told = json.dumps(fake.requests[-1].body["messages"][-1])
    assert "made no progress" in told and "only defined area, never called" in told


async def test_two_steps_in_a_row_that_change_nothing_end_the_turn(browser, fake):
    fake.script(
        Reply(tool_calls=[run_code("def f(x):\n    return x")]),
        Reply(tool_calls=[run_code("def g(x):\n    return 2 * x")]),
        Reply(tool_calls=[run_code("print(f(1))")]),
    )
    reader = await browser.run(agent_body(), lambda step: stdout(""))
    assert len(browser.steps()) == 2 and len(fake.requests) == 2
    assert reader.first("done")["halt"] == (
        "Stopped: two steps in a row showed nothing and changed no variable."
    )


async def test_code_that_does_not_parse_is_never_offered(browser, fake):
    fake.script(Reply(tool_calls=[run_code("print(sum(x)")]))
    reader = await browser.run(agent_body(), lambda step: stdout(""))
    assert browser.steps() == []
    assert reader.first("done")["halt"] == (
        "Stopped: the model's code was not run: it does not parse (line 1: '(' was never closed)."
    )


@pytest.mark.chapyter_config({"Chapyter": {"agent_time_limit": 1.0}})
async def test_the_time_cap_ends_a_turn_whose_step_never_returns(browser, fake, chat_service):
    fake.script(Reply(tool_calls=[run_code("print(1)")]))
    started = time.monotonic()
    reader = await browser.run(agent_body(), lambda step: None)
    assert time.monotonic() - started < 8
    done = reader.first("done")
    assert done["status"] == "stopped"
    assert done["halt"] == "Stopped after 1 s (setting: Agent time limit)."
    assert chat_service.active == 0


# -- (e) approval ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "code", "needs", "reason"),
    [
        ("ask", "print(1)", True, False),
        ("never", "!pip install x", False, None),
        ("risky", "print(1)", False, False),
        ("risky", "!pip install x", True, True),
    ],
)
async def test_approval_follows_the_policy(browser, fake, policy, code, needs, reason):
    fake.script(Reply(tool_calls=[run_code(code)]), Reply(content="done"))
    reader = await browser.run(agent_body(policy=policy), lambda step: stdout("ok\n"))
    assert reader.first("start")["policy"] == policy
    step = browser.steps()[0]
    assert step["needs_approval"] is needs
    if reason:
        assert any("install" in r for r in step["reasons"])
    elif reason is False:
        assert step["reasons"] == []


@pytest.mark.chapyter_config({"Chapyter": {"agent_policy": "never"}})
async def test_the_default_policy_comes_from_the_settings(browser, fake, get_json):
    fake.script(Reply(tool_calls=[run_code("print(1)")]), Reply(content="done"))
    reader = await browser.run(agent_body(), lambda step: stdout("ok\n"))
    assert reader.first("start")["policy"] == "never"
    assert browser.steps()[0]["needs_approval"] is False
    _, config = await get_json("chapyter-ext", "config")
    assert config["agent"]["policy"] == "never"


def notebook_snapshot(variables: list[dict[str, str]] | None) -> dict[str, Any]:
    """A notebook whose cell above the active one defines ``clean`` (and ``wipe``, imported)."""
    above = "def clean(df):\n    return df.dropna()\n\ndef wipe(p):\n    pass"
    return {
        "path": NOTEBOOK,
        "cell_count": 2,
        "active": {"index": 1, "type": "code", "source": ""},
        "above": [{"index": 0, "type": "code", "source": above}],
        "variables": variables,
    }


# The analysis alone (trials, which decide such calls, are tested in test_agent_trials.py).
@pytest.mark.chapyter_config({"Chapyter": {"trials": False}})
@pytest.mark.parametrize(
    ("variables", "needs"),
    [
        ([{"name": "clean", "type": "function", "summary": "clean(df)"}], False),
        ([{"name": "clean", "type": "function", "summary": "posix.remove (imported)"}], True),
        ([], True),  # the cell did not run
        (None, True),  # the kernel could not tell
    ],
)
async def test_risky_lets_functions_of_cells_that_ran_run(browser, fake, variables, needs):
    fake.script(Reply(tool_calls=[run_code("clean(df)")]), Reply(content="done"))
    body = agent_body(policy="risky", context=notebook_snapshot(variables))
    await browser.run(body, lambda step: stdout("ok\n"))
    step = browser.steps()[0]
    assert step["needs_approval"] is needs
    assert step["reasons"] == (["calls `clean`, which is not known to be safe"] if needs else [])


async def test_risky_lets_a_function_an_earlier_step_defined_run(browser, fake):
    fake.script(
        Reply(tool_calls=[run_code("def norm(s):\n    return s / s.sum()")]),
        Reply(tool_calls=[run_code("norm(x)")]),
        Reply(content="done"),
    )
    await browser.run(agent_body(policy="risky"), lambda step: stdout("ok\n"))
    first, second = browser.steps()
    # The definition's body calls a method of a parameter (a guess by name), and a call of the
    # notebook's own function may be handed anything: both are tried first, and run.
    for step in (first, second):
        assert step["trial"] and browser.decisions[step["step_id"]]["needs_approval"] is False


async def test_a_skipped_step_is_told_to_the_model(browser, fake):
    fake.script(Reply(tool_calls=[run_code("import shutil; shutil.rmtree('/')")]), "ok, not run")
    reader = await browser.run(agent_body(), lambda step: {"status": "skipped"})
    assert reader.first("step_done")["outcome"]
    assert "skip" in "\n".join(tool_messages(fake.requests[-1])).lower()
    assert reader.first("done")["text"] == "ok, not run"


# -- (f) fenced fallback -----------------------------------------------------------------------


async def test_a_model_that_rejects_tools_falls_back_to_fenced_code(browser, fake):
    fenced = "I will compute it.\n```python\nprint(6 * 7)\n```\n"
    fake.script(  # a refused reply stays queued for the request without tools
        Reply(content=fenced, chunk_size=3, reject_tools=True),
        Reply(content="It is 42.", reject_tools=True),
    )
    reader = await browser.run(agent_body(), lambda step: stdout("42\n"))
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert len(requests) == 3
    assert requests[0].body.get("tools") and not requests[1].body.get("tools")
    assert not requests[2].body.get("tools")
    assert "notice" in reader.names
    (step,) = browser.steps()
    assert step["kind"] == "run_code" and step["code"].strip() == "print(6 * 7)"
    prose = "".join(reader.tokens())
    assert "I will compute it." in prose and "```" not in prose
    assert "42" in json.dumps(requests[2].messages[-2:])
    assert reader.first("done")["text"] == "It is 42."


@pytest.mark.chapyter_config({"Chapyter": {"tool_calling": "off"}})
async def test_tool_calling_off_uses_fenced_code_from_the_start(browser, fake, get_json):
    fake.script("```python\nprint(6 * 7)\n```", "It is 42.")
    reader = await browser.run(agent_body(), lambda step: stdout("42\n"))
    assert reader.first("start")["tools"] is False
    assert not any(r.body.get("tools") for r in fake.requests if r.path.endswith("completions"))
    assert reader.first("done")["text"] == "It is 42."
    _, config = await get_json("chapyter-ext", "config")
    assert config["models"][0]["tools"] is False


# -- (g) figures -------------------------------------------------------------------------------


@pytest.mark.chapyter_config({"ChapyterExtApp": {"models": {"vision": {"model": "gpt-4o"}}}})
async def test_a_figure_is_an_image_for_a_model_that_sees(browser, fake):
    fake.script(Reply(tool_calls=[run_code("plt.plot([1, 2])")]), "The line rises.")

    def with_line_breaks(step: dict) -> dict:  # as nbformat stores image/png
        result = figure_result(step)
        png = result["result"]["images"][0]
        result["result"]["images"] = [png[:20] + "\n" + png[20:] + "\n"]
        return result

    reader = await browser.run(agent_body(model="vision"), with_line_breaks)
    assert reader.first("start")["images"] is True
    last = json.dumps(fake.requests[-1].messages)
    assert "data:image/png;base64," + tiny_png() in last
    assert '"image_url"' in last


async def test_a_figure_is_a_digest_for_a_model_that_does_not(browser, fake):
    fake.script(Reply(tool_calls=[run_code("plt.plot([1, 2])")]), "The line rises.")
    reader = await browser.run(agent_body(), figure_result)
    assert reader.first("start")["images"] is False
    last = json.dumps(fake.requests[-1].messages)
    assert "Churn by plan" in last
    assert "image_url" not in last and tiny_png() not in last


# -- reads, slots, shutdown --------------------------------------------------------------------


async def test_read_steps_carry_the_browsers_text_to_the_model(browser, fake):
    fake.script(
        Reply(tool_calls=[{"name": "read_cell", "arguments": {"cell": "3"}}]),
        Reply(tool_calls=[{"name": "list_variables", "arguments": {}}]),
        "Cell 3 made df with 7 rows.",
    )
    texts = iter(["In [3]: df = load()\nOut: 7 rows", "df: DataFrame (7, 2)"])
    reader = await browser.run(agent_body(), lambda step: {"status": "ran", "text": next(texts)})
    read, variables = browser.steps()
    assert (read["kind"], read["cell"], read["needs_approval"]) == ("read_cell", "3", False)
    assert "code" not in read and variables["kind"] == "list_variables"
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert "Out: 7 rows" in "\n".join(tool_messages(requests[1]))
    assert "DataFrame (7, 2)" in "\n".join(tool_messages(requests[2]))
    assert reader.first("done")["text"] == "Cell 3 made df with 7 rows."


@pytest.mark.chapyter_config({"ChapyterExtApp": {"max_concurrent_streams": 1}})
async def test_agent_turns_share_the_chats_slots(browser, fake, get_json, post_chat, wait_until):
    fake.script(Reply(tool_calls=[run_code("print(1)")]))
    browser.start(agent_body())
    await wait_until(browser.steps, what="the step")
    status, data = await get_json("chapyter-ext", "chat", method="POST", body=agent_body("hi"))
    assert (status, data["error"]["kind"]) == (429, "busy")
    status, data = await get_json("chapyter-ext", "agent", method="POST", body=agent_body())
    assert status == 429
    await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body={"message_id": browser.message_id}
    )
    await asyncio.wait_for(browser.task, 10)
    fake.script("free again")
    _, reader = await post_chat(agent_body("hi"))
    assert reader.first("done")["text"] == "free again"


async def test_server_shutdown_saves_the_turn_with_its_steps(browser, fake, ext_app, wait_until):
    fake.script(Reply(tool_calls=[run_code("print(1)")]), Reply(tool_calls=[run_code("x = 2")]))
    browser.start(agent_body())
    await wait_until(browser.steps, what="the first step")
    first = {"message_id": browser.message_id, "step_id": browser.steps()[0]["step_id"]}
    assert await browser.post_result({**first, **stdout("1\n")}) == (200, {"ok": True})
    await wait_until(lambda: len(browser.steps()) == 2, what="the second step")
    await ext_app.stop_extension()
    await asyncio.wait_for(browser.task, 10)
    done = browser.reader.first("done")
    assert done["status"] == "stopped"
    assert [s["code"] for s in done["steps"]] == ["print(1)", "x = 2"]
    saved = ext_app.history.store.get(NOTEBOOK).messages
    assert [(m.role, m.status) for m in saved] == [("user", "complete"), ("assistant", "stopped")]
    assert [s["outcome"] for s in saved[1].steps][1] == ""  # never ran
    assert saved[1].steps[0]["outcome"]


async def test_a_stop_while_the_turn_is_saved_loses_nothing(
    browser, fake, ext_app, get_json, monkeypatch, wait_until
):
    store = ext_app.history.store
    append = store.append

    def slow_append(notebook, chat_id, message):
        if message.role == "assistant":
            time.sleep(0.5)  # on the history thread: the turn is saving its answer
        return append(notebook, chat_id, message)

    monkeypatch.setattr(store, "append", slow_append)
    fake.script("The answer is 42.")
    browser.start(agent_body())
    await wait_until(browser.reader.tokens, what="the answer")
    await asyncio.sleep(0.15)
    status, data = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body={"message_id": browser.message_id}
    )
    assert (status, data["stopped"]) == (200, False)  # already finishing
    await asyncio.wait_for(browser.task, 10)
    assert browser.reader.first("done")["status"] == "complete"
    assert store.get(NOTEBOOK).messages[-1].content == "The answer is 42."
