"""The agent loop with scripted model replies: tools and fenced protocol, caps, skip, reads."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.agent import (
    AgentLimits,
    AgentLoop,
    Finish,
    Halt,
    StepResult,
    ToolCall,
    ToolStep,
)
from chapyter_ext.agent.system_prompts import FENCED_SYSTEM_PROMPT, TOOLS_SYSTEM_PROMPT
from chapyter_ext.agent.tools import default_registry

SECRET = "sk-proj-LOOPTEST0123456789abcdefXYZ"


def make(**kw) -> AgentLoop:
    args = dict(
        question="What is the mean of x?",
        context="Variables:\nx: list, 3 items",
        history=[],
        tools=True,
        images=False,
        policy="ask",
        limits=AgentLimits(),
    )
    args.update(kw)
    return AgentLoop(**args)


def run_code(code: str, call_id: str = "call_1", purpose: str = "") -> ToolCall:
    args = {"code": code, "purpose": purpose} if purpose else {"code": code}
    return ToolCall(id=call_id, name="run_code", arguments=args)


def printed(text: str, count: int = 1) -> StepResult:
    return StepResult(
        outputs=[{"output_type": "stream", "name": "stdout", "text": text}],
        execution_count=count,
        cell_id=f"cell-{count}",
    )


def failed(ename: str, evalue: str, count: int = 1) -> StepResult:
    return StepResult(
        outputs=[
            {
                "output_type": "error",
                "ename": ename,
                "evalue": evalue,
                "traceback": [f"Cell In[{count}], line 1\n----> 1 boom\n", f"{ename}: {evalue}"],
            }
        ],
        execution_count=count,
        cell_id=f"cell-{count}",
    )


def shown(action) -> tuple:
    """A step as (tool, id, code, purpose, needs approval, reasons)."""
    assert isinstance(action, ToolStep), action
    return (
        action.kind,
        action.step_id,
        action.code,
        action.purpose,
        action.needs_approval,
        action.reasons,
    )


def tool_messages(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["role"] == "tool"]


def test_tool_mode_run_fix_answer():
    loop = make()
    first = loop.request()
    assert first.tools == default_registry().schemas()
    assert [t["function"]["name"] for t in first.tools] == [
        "run_code",
        "read_cell",
        "list_variables",
    ]
    assert first.messages[0] == {"role": "system", "content": TOOLS_SYSTEM_PROMPT}
    assert "<kernel-state>\nVariables:\nx: list, 3 items" in first.messages[-1]["content"]
    assert first.messages[-1]["content"].endswith("What is the mean of x?")

    action = loop.on_reply("Let me look.", [run_code("sum(x) / len(y)", "call_a", "mean")])
    assert shown(action) == ("run_code", "step-1", "sum(x) / len(y)", "mean", True, ())
    assert loop.pending == "step-1"
    with pytest.raises(RuntimeError):
        loop.request()
    loop.on_result("step-1", failed("NameError", "name 'y' is not defined"))

    second = loop.request()
    assistant, tool = second.messages[-2:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Let me look."
    call = assistant["tool_calls"][0]
    assert call["id"] == "call_a" and call["function"]["name"] == "run_code"
    assert json.loads(call["function"]["arguments"])["code"] == "sum(x) / len(y)"
    assert tool["tool_call_id"] == "call_a"
    assert "NameError: name 'y' is not defined" in tool["content"]
    assert "Cell In[1], line 1" in tool["content"]

    action = loop.on_reply("", [run_code("print(sum(x) / len(x))", "call_b")])
    assert isinstance(action, ToolStep) and action.step_id == "step-2"
    loop.on_result("step-2", printed("2.0\n", count=2))
    third = loop.request()
    assert len(tool_messages(third.messages)) == 2
    assert "2.0" in tool_messages(third.messages)[-1]["content"]

    assert loop.on_reply("The mean of x is 2.0.", []) == Finish("The mean of x is 2.0.")
    assert loop.over
    assert [s.as_dict() for s in loop.steps] == [
        {
            "step_id": "step-1",
            "tool": "run_code",
            "title": "ran code",
            "code": "sum(x) / len(y)",
            "cell_id": "cell-1",
            "outcome": "NameError: name 'y' is not defined",
        },
        {
            "step_id": "step-2",
            "tool": "run_code",
            "title": "ran code",
            "code": "print(sum(x) / len(x))",
            "cell_id": "cell-2",
            "outcome": "printed 2.0",
        },
    ]
    assert [s.status for s in loop.steps] == ["error", "ok"]
    with pytest.raises(RuntimeError):
        loop.on_reply("again", [])


def test_fenced_mode_runs_the_first_python_block_and_ends_without_one():
    loop = make(tools=False)
    request = loop.request()
    assert request.tools is None
    assert request.messages[0]["content"] == FENCED_SYSTEM_PROMPT
    reply = (
        "I will compute it.\n```python\nprint(6 * 7)\n```\n```python\nprint('second')\n```\n"
        "Then more prose."
    )
    action = loop.on_reply(reply, [ToolCall("ignored", "run_code", {"code": "1/0"})])
    assert shown(action) == ("run_code", "step-1", "print(6 * 7)", "I will compute it.", True, ())
    loop.on_result("step-1", printed("42\n"))
    messages = loop.request().messages
    assert messages[-2] == {"role": "assistant", "content": reply}
    assert messages[-1]["role"] == "user" and "42" in messages[-1]["content"]
    assert not any("tool_calls" in m or m["role"] == "tool" for m in messages)
    assert loop.on_reply("The answer is 42.", []) == Finish("The answer is 42.")


def test_fenced_mode_untagged_block_runs_other_languages_do_not():
    loop = make(tools=False)
    assert shown(loop.on_reply("```\nx = 1\n```", [])) == (
        "run_code",
        "step-1",
        "x = 1",
        "",
        True,
        (),
    )
    loop = make(tools=False)
    answer = "Use this query:\n```sql\nSELECT 1\n```"
    assert loop.on_reply(answer, []) == Finish(answer)


def test_step_cap_halts_in_one_line():
    loop = make(limits=AgentLimits(max_steps=2), policy="never")
    for i in (1, 2):
        action = loop.on_reply("", [run_code(f"x = {i}", f"c{i}")])
        assert isinstance(action, ToolStep) and not action.needs_approval
        loop.on_result(action.step_id, printed(""))
    halt = loop.on_reply("", [run_code("x = 3", "c3")])
    assert isinstance(halt, Halt)
    # A setting's name as a newcomer reads it; nothing that contradicts "Undo this turn".
    assert halt.reason == "Stopped after 2 steps (setting: Agent max steps)."
    assert len(loop.steps) == 2 and loop.over


def test_time_cap_with_an_injected_clock():
    now = [100.0]
    loop = make(limits=AgentLimits(time_limit=30), clock=lambda: now[0])
    assert loop.remaining() == 30
    action = loop.on_reply("", [run_code("import time")])
    now[0] = 125.0
    assert loop.remaining() == 5
    loop.on_result(action.step_id, printed(""))
    assert loop.halt() is None
    now[0] = 130.5
    halt = loop.halt()
    assert halt is not None and "(setting: Agent time limit)" in halt.reason
    assert halt.reason.startswith("Stopped after 30 s")
    # A driver that did not ask still gets it from the next reply.
    assert loop.on_reply("", [run_code("x = 2", "c2")]) == halt
    assert loop.over


def test_the_same_code_again_ends_the_turn_before_it_runs_twice():
    loop = make()
    a = loop.on_reply("", [run_code("df['missing']", "c1")])
    loop.on_result(a.step_id, failed("KeyError", "'missing'"))
    assert loop.halt() is None
    b = loop.on_reply("", [run_code("df['other']", "c2")])
    loop.on_result(b.step_id, failed("KeyError", "'other'"))
    halt = loop.on_reply("", [run_code("df['other']\n", "c3")])  # the same code again
    assert halt == Halt(
        "Stopped: the model asked for the same step as step 2 again (KeyError: 'other'); "
        "it would change nothing."
    )
    assert len(loop.steps) == 2 and loop.over  # it never ran a second time


@pytest.mark.parametrize(
    "result", [printed("ok"), printed(""), failed("E", "1")], ids=["printed", "silent", "failed"]
)
def test_the_same_code_twice_ends_the_turn_whatever_came_of_it(result):
    loop = make(policy="never")
    action = loop.on_reply("", [run_code("flaky()", "c1")])
    loop.on_result(action.step_id, result)
    again = loop.on_reply("", [run_code("flaky()", "c2")])
    assert isinstance(again, Halt) and "same step as step 1" in again.reason
    assert len(loop.steps) == 1


def test_a_skipped_step_proposed_again_ends_the_turn():
    loop = make()
    action = loop.on_reply("", [run_code("import os; os.remove('x')", "c1")])
    loop.on_skipped(action.step_id)
    again = loop.on_reply("", [run_code("import os; os.remove('x')", "c2")])
    assert isinstance(again, Halt) and "(skipped by the user)" in again.reason


def test_the_same_read_twice_ends_the_turn():
    loop = make()
    loop.on_reply("", [ToolCall("r1", "read_cell", {"cell": 3})])
    loop.on_result("step-1", "x = 1")
    again = loop.on_reply("", [ToolCall("r2", "read_cell", {"cell": "3"})])
    assert isinstance(again, Halt) and "same step as step 1" in again.reason


def test_a_step_that_changes_nothing_is_sent_back_once_then_ends_the_turn():
    # The loop of the issue: a function defined, never called, proposed again and again.
    loop = make(policy="never", limits=AgentLimits(max_steps=10))
    first = loop.on_reply("", [run_code("def area(r):\n    return 3.14 * r * r", "c1")])
    loop.on_result(first.step_id, printed(""))
    assert loop.halt() is None
    told = tool_messages(loop.request().messages)[-1]["content"]
    assert "made no progress" in told and "it only defined area, never called" in told
    second = loop.on_reply("", [run_code("def area2(r):\n    return r ** 2 * 3.14", "c2")])
    loop.on_result(second.step_id, printed(""))
    halt = loop.halt()
    assert halt == Halt("Stopped: two steps in a row showed nothing and changed no variable.")
    assert loop.on_reply("", [run_code("area(2)", "c3")]) == halt
    assert len(loop.steps) == 2


@pytest.mark.parametrize(
    ("code", "result"),
    [
        ("def f():\n    return 1", printed("1\n")),  # it showed something
        ("x = 5", printed("")),  # a variable changed
        ("import math", printed("")),  # a name bound
        ("data.sort()", printed("")),  # a call may change data in place
        ("%matplotlib inline", printed("")),  # IPython syntax: assumed to do something
    ],
)
def test_steps_that_show_or_change_something_are_progress(code, result):
    loop = make(policy="never")
    first = loop.on_reply("", [run_code("def g():\n    pass", "c0")])
    loop.on_result(first.step_id, printed(""))  # no progress: told once
    action = loop.on_reply("", [run_code(code, "c1")])
    loop.on_result(action.step_id, result)
    assert loop.halt() is None
    told = tool_messages(loop.request().messages)[-1]["content"]
    assert "made no progress" not in told
    # And the count starts again: one idle step after it is only told, not stopped.
    idle = loop.on_reply("", [run_code("def h():\n    pass", "c2")])
    loop.on_result(idle.step_id, printed(""))
    assert loop.halt() is None


def test_code_that_fails_the_guard_rails_is_never_offered():
    loop = make(policy="never")
    halt = loop.on_reply("", [run_code("print(sum(x)", "c1")])
    assert isinstance(halt, Halt)
    assert halt.reason == (
        "Stopped: the model's code was not run: it does not parse (line 1: '(' was never closed)."
    )
    assert loop.steps == []


def test_the_small_profile_checks_names_and_says_so():
    from chapyter_ext.guards import LiveNames, check_code

    names = LiveNames({"x": [1, 2, 3]})
    loop = make(policy="never", small=True, check=lambda c: check_code(c, names, small=True))
    halt = loop.on_reply("", [run_code("print(mean(y))", "c1")])
    assert isinstance(halt, Halt)
    assert "it reads undefined name(s) mean, y" in halt.reason
    assert "small local model could not write this" in halt.reason
    ok = make(policy="never", small=True, check=lambda c: check_code(c, names, small=True))
    assert isinstance(ok.on_reply("", [run_code("print(sum(x))", "c1")]), ToolStep)


def test_a_final_answer_that_only_echoes_the_context_is_one_honest_line():
    loop = make(
        tools=False, small=True, context="Variables:\n- total (int): 6\n- prices (list): 3 items"
    )
    echo = (
        "The current state of the notebook's kernel:\n<kernel-state>\nVariables:\n"
        "- total (int): 6\n- prices (list): 3 items\n```"
    )
    answer = loop.on_reply(echo, [])
    assert isinstance(answer, Finish)
    assert answer.answer.startswith("The small local model only repeated its instructions")
    fine = make(tools=False).on_reply("The mean of x is 2.", [])
    assert fine == Finish("The mean of x is 2.")


def test_the_bundled_model_runs_few_steps_and_waits_for_review():
    from traitlets.config import Config

    from chapyter_ext.agent.limits import small_model_notice, turn_policy
    from chapyter_ext.config import Chapyter

    settings = Chapyter(config=Config({"Chapyter": {"agent_max_steps": 10}}))
    assert AgentLimits.from_settings(settings, small=True).max_steps == 3
    assert AgentLimits.from_settings(settings).max_steps == 10
    settings.agent_max_steps = 2
    assert AgentLimits.from_settings(settings, small=True).max_steps == 2
    assert turn_policy("never", settings, local=True) == "ask"
    assert turn_policy("never", settings, local=False) == "never"
    settings.local_review = False
    assert turn_policy("never", settings, local=True) == "never"
    notice = small_model_notice("SmolLM2", AgentLimits(max_steps=3), review=True)
    assert "at most 3 simple steps" in notice and "(setting: Local review)" in notice


def test_skip_tells_the_model_nothing_ran():
    loop = make()
    action = loop.on_reply("", [run_code("import shutil; shutil.rmtree('data')")])
    loop.on_skipped(action.step_id)
    tool = tool_messages(loop.request().messages)[-1]
    assert "skipped" in tool["content"] and "NOT run" in tool["content"]
    assert loop.steps[0].status == "skipped"
    assert loop.steps[0].outcome == "skipped by the user"
    assert loop.steps[0].cell_id == ""


def test_read_cell_and_list_variables():
    loop = make(limits=AgentLimits(result_chars=300))
    action = loop.on_reply("", [ToolCall("r1", "read_cell", {"cell": 3})])
    assert (action.kind, action.step_id, action.arguments) == ("read_cell", "step-1", {"cell": "3"})
    assert not action.needs_approval
    loop.on_result("step-1", f"In [3]: key = '{SECRET}'\n" + "long line\n" * 100)
    tool = tool_messages(loop.request().messages)[-1]
    assert SECRET not in tool["content"] and "<redacted>" in tool["content"]
    assert len(tool["content"]) < 360 and "more characters cut" in tool["content"]
    assert loop.steps[0].outcome == "read cell 3"

    action = loop.on_reply("", [ToolCall("r2", "list_variables", {})])
    assert (action.kind, action.step_id, action.needs_approval) == (
        "list_variables",
        "step-2",
        False,
    )
    loop.on_result("step-2", "df: DataFrame 3 x 2")
    assert tool_messages(loop.request().messages)[-1] == {
        "role": "tool",
        "tool_call_id": "r2",
        "content": "df: DataFrame 3 x 2",
    }
    with pytest.raises(KeyError):
        loop.on_result("step-2", "again")


def test_only_the_first_of_several_calls_is_carried_out():
    loop = make()
    calls = [run_code("a = 1", "c1"), run_code("b = 2", "c2")]
    action = loop.on_reply("", calls)
    assert action.code == "a = 1"
    loop.on_result(action.step_id, printed(""))
    messages = loop.request().messages
    assert len(messages[-3]["tool_calls"]) == 2  # every call is answered, as OpenAI requires
    first, second = tool_messages(messages)
    assert first["tool_call_id"] == "c1" and second["tool_call_id"] == "c2"
    assert second["content"].startswith("Not carried out")


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (ToolCall("c", "delete_everything", {}), "There is no tool named 'delete_everything'"),
        (ToolCall("c", "run_code", {"code": "  "}), "run_code needs a non-empty string"),
        (ToolCall("c", "read_cell", {}), "read_cell needs an argument 'cell'"),
        (ToolCall("c", "run_code", {"code": "%ai plot x"}), "calls %ai"),
    ],
)
def test_unusable_calls_halt_in_one_line(call, says):
    action = make().on_reply("", [call])
    assert isinstance(action, Halt) and says in action.reason and "\n" not in action.reason


@pytest.mark.parametrize(
    ("policy", "code", "needs"),
    [
        ("ask", "x = 1", True),
        ("risky", "x = 1", False),
        ("risky", "df.to_csv('out.csv')", True),
        ("never", "!pip install x", False),
    ],
)
def test_policy_decides_approval(policy, code, needs):
    action = make(policy=policy).on_reply("", [run_code(code)])
    assert isinstance(action, ToolStep) and action.needs_approval is needs
    assert bool(action.reasons) == (code != "x = 1")


def test_risky_lets_the_notebooks_own_functions_run():
    code = "clean(df)\nsummarize(df)"
    assert make(policy="risky").on_reply("", [run_code(code)]).needs_approval is True
    loop = make(policy="risky", known_functions=["clean", "summarize"])
    action = loop.on_reply("", [run_code(code)])
    assert isinstance(action, ToolStep) and not action.needs_approval and action.reasons == ()


def test_functions_a_step_defines_are_known_once_it_ran():
    loop = make(policy="risky", known_functions={"report"})
    a = loop.on_reply("", [run_code("def norm(s):\n    return s / s.sum()", "c1")])
    assert not a.needs_approval
    loop.on_result(a.step_id, printed(""))
    assert loop.known_functions == {"report", "norm"}
    b = loop.on_reply("", [run_code("norm(x)", "c2")])
    assert not b.needs_approval
    # A step that rebinds a known name (approved by the user) makes it unknown again.
    loop.on_result(b.step_id, printed("", 2))
    c = loop.on_reply("", [run_code("report = df.to_csv", "c3")])
    assert c.needs_approval
    loop.on_result(c.step_id, printed("", 3))
    d = loop.on_reply("", [run_code("report('out.csv')", "c4")])
    assert d.needs_approval and loop.known_functions == {"norm"}


def test_a_skipped_step_defines_nothing():
    loop = make(policy="risky")
    a = loop.on_reply("", [run_code("import os\ndef wipe():\n    os.remove('x')", "c1")])
    assert a.needs_approval
    loop.on_skipped(a.step_id)
    assert loop.on_reply("", [run_code("wipe()", "c2")]).needs_approval


def test_an_empty_final_reply_halts():
    assert make().on_reply("  ", []) == Halt("The model ended the turn without an answer.")


def test_images_go_in_a_user_message_after_the_tool_result_latest_step_only():
    loop = make(images=True)
    png = "iVBORw0KGgo="
    a = loop.on_reply("", [run_code("plt.plot(x)", "c1")])
    loop.on_result(a.step_id, StepResult(images=[png], figures=[{"axes": []}]))
    messages = loop.request().messages
    tool, user = messages[-2:]
    assert tool["role"] == "tool" and "attached as image" in tool["content"]
    assert user["role"] == "user"
    assert user["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{png}"},
    }
    b = loop.on_reply("", [run_code("print(1)", "c2")])
    loop.on_result(b.step_id, printed("1"))
    later = loop.request().messages
    assert not any(isinstance(m["content"], list) for m in later)  # the old image is dropped


def test_disable_tools_renders_earlier_tool_steps_as_fenced_blocks():
    loop = make()
    a = loop.on_reply("First:", [run_code("print(1)", "c1")])
    loop.on_result(a.step_id, printed("1\n"))
    loop.disable_tools()
    request = loop.request()
    assert request.tools is None and request.messages[0]["content"] == FENCED_SYSTEM_PROMPT
    assert request.messages[-2] == {
        "role": "assistant",
        "content": "First:\n\n```python\nprint(1)\n```",
    }
    assert request.messages[-1]["role"] == "user" and "1" in request.messages[-1]["content"]
    assert loop.on_reply("```python\nprint(2)\n```", []).code == "print(2)"


def test_history_and_question_are_validated():
    with pytest.raises(ValueError):
        make(question="   ")
    with pytest.raises(ValueError):
        make(history=[{"role": "system", "content": "x"}])
    with pytest.raises(ValueError):
        make(policy="sometimes")
    loop = make(
        history=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    )
    assert [m["role"] for m in loop.request().messages] == ["system", "user", "assistant", "user"]


def test_step_result_from_json():
    result = StepResult.from_json(
        {"outputs": [], "execution_count": 3, "cell_id": "abc", "figures": [], "images": ["x"]}
    )
    assert result.execution_count == 3 and result.images == ["x"] and not result.failed
    assert StepResult.from_json({"error": "kernel died"}).failed
    for bad in ([], {"outputs": "x"}, {"execution_count": True}, {"images": [1]}):
        with pytest.raises(ValueError):
            StepResult.from_json(bad)


def test_calls_without_ids_get_unique_ones_and_thinking_is_not_the_answer():
    loop = make()
    action = loop.on_reply("", [run_code("a = 1", ""), run_code("b = 2", "")])
    loop.on_result(action.step_id, printed(""))
    messages = loop.request().messages
    ids = [c["id"] for c in messages[-3]["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    assert [m["tool_call_id"] for m in tool_messages(messages)] == ids
    assert loop.on_reply("<think>a is 1</think>\na is 1.", []) == Finish("a is 1.")
